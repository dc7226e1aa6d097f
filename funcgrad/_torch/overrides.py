"""funcgrad.overrides (torch.overrides): the `__torch_function__` protocol.

torch calls `type(a).__torch_function__(func, types, args, kwargs)` when a torch function is given an argument `a`
whose type defines it (a Tensor subclass such as NestedTensor or MaskedTensor, or any Tensor-like class), instead
of running the function. funcgrad does the same for the functions of its torch namespace: `install` puts one check
at the top of each function's own code (no wrapper, so no extra call): its tensor arguments' classes are compared
with `Tensor` (and the classes already seen not to override), and only an argument of another class reaches
`_dispatch`, which finds the overriding types. Plain tensors pay that class comparison and nothing else.
The recompiled code objects are cached (marshal, keyed by the interpreter and the source files' identity), so an
import with a current cache only assigns them: ~3 ms instead of ~0.18 s of signature/parse/compile.

`Tensor.__torch_function__` is torch's default: it runs the function with dispatch disabled and returns Tensor
results as the subclass (so a subclass's override can end in `super().__torch_function__(...)`). A subclass that
does not override it is not dispatched on (torch dispatches it to the default, which only re-wraps results).
The helpers below (`has_torch_function`, `handle_torch_function`, ...) let a library's own functions dispatch too.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import linecache
import marshal
import os
import sys
import tempfile
import threading
from types import CodeType as _CodeType
from typing import Any, Callable, Iterable

from ._tensor import Tensor as _Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "get_ignored_functions", "get_overridable_functions",
           "get_testing_overrides", "wrap_torch_function", "is_tensor_method_or_property", "resolve_name"]


def _tensor_type():
    return _Tensor


# --- the protocol --------------------------------------------------------------------------------------------
class _State(threading.local):
    disabled = 0  # > 0 inside Tensor.__torch_function__'s default (the function runs as on plain tensors)


_STATE = _State()


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: func(*args, **kwargs) with dispatch disabled, Tensor results as cls."""
    _STATE.disabled += 1
    try:
        ret = func(*args, **(kwargs or {}))
    finally:
        _STATE.disabled -= 1
    return _convert(ret, cls)


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_function_impl: a subclass that sets this as its `__torch_function__` is never
    dispatched on (called directly, it runs func with dispatch disabled)."""
    _STATE.disabled += 1
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _STATE.disabled -= 1


def _convert(ret, cls):
    if cls is _Tensor:
        return ret
    if isinstance(ret, _Tensor) and not isinstance(ret, cls):
        new = object.__new__(cls)
        for k in ("_v", "_a", "_st", "_rg", "_gfn"):
            setattr(new, k, getattr(ret, k))
        return new
    if isinstance(ret, (list, tuple)) and type(ret) in (list, tuple):
        return type(ret)(_convert(r, cls) for r in ret)
    return ret


_Tensor.__torch_function__ = classmethod(_default_torch_function)
_INERT = (_default_torch_function, _disabled_torch_function_impl)


def _overrides_type(t: type) -> bool:
    """t defines a `__torch_function__` of its own (not Tensor's default nor the disabled one)."""
    f = getattr(t, "__torch_function__", None)
    return f is not None and getattr(f, "__func__", f) not in _INERT


def _overrides(obj) -> bool:
    return _overrides_type(type(obj))


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """True when some argument's type (other than plain Tensor) defines `__torch_function__`."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    return _overrides(obj)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    """Arguments whose types override `__torch_function__` (and plain Tensors, which take no part), one per
    type, subclasses before their bases."""
    types, args = [], []
    T = _tensor_type()
    for a in relevant_args:
        t = type(a)
        if t in types or not (_overrides_type(t) or t is T):
            continue
        pos = len(args)
        for i, other in enumerate(args):
            if issubclass(t, type(other)):
                pos = i
                break
        types.insert(pos, t)
        args.insert(pos, a)
    return args


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args, **kwargs):
    """Call the first `__torch_function__` among relevant_args' types that does not return NotImplemented
    (TypeError if all do); with none defined, call `public_api(*args, **kwargs)`."""
    overloaded = _overloaded_args(relevant_args)
    T = _tensor_type()
    if not any(type(a) is not T for a in overloaded):
        return public_api(*args, **kwargs)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        if type(a) is T:  # plain Tensors take no part in dispatch (torch's default handler declines here)
            continue
        result = type(a).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[t for t in types if t is not T]}")


# --- the check in the torch namespace's functions -------------------------------------------------------------
_NO = object()  # _dispatch's answer when no argument overrides: the function goes on
# classes seen not to override (the check's fast test); list/tuple are looked into, so never added
_PLAIN = {_Tensor, type(None), bool, int, float, complex, str}
_FUNCS: list = []  # the installed functions, by the index their check passes to _dispatch


def _flat(relevant):
    for a in relevant:
        if a.__class__ is list or a.__class__ is tuple:
            yield from a
        else:
            yield a


def _dispatch(key: int, relevant: tuple, args: tuple, kwargs: dict):
    """The slow half of the check: the overriding arguments' `__torch_function__`, or _NO."""
    flat = list(_flat(relevant))
    over = False
    for a in flat:
        t = type(a)
        if _overrides_type(t):
            over = True
        elif t is not list and t is not tuple:
            _PLAIN.add(t)
    if not over or _STATE.disabled:
        return _NO
    f = _FUNCS[key]
    args, kwargs = _given(f, args, kwargs)
    return handle_torch_function(f, flat, *args, **kwargs)


def _same(a, d) -> bool:
    return a is d or type(a) is type(d) and type(d) in (bool, int, float, str) and a == d


def _given(f, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs without the trailing defaults the check filled in (the call as the caller wrote it, so
    that an override may pass it on to a method with fewer parameters)."""
    defaults = f.__defaults__ or ()
    n = f.__code__.co_argcount
    args = list(args)
    while args and len(args) <= n and n - len(args) < len(defaults) and \
            _same(args[-1], defaults[len(defaults) - (n - len(args)) - 1]):
        args.pop()
    kwd = f.__kwdefaults__ or {}
    return tuple(args), {k: v for k, v in kwargs.items() if not (k in kwd and _same(v, kwd[k]))}


# parameter names that take tensors (or sequences of them) in torch's functions: the arguments checked
_TENSOR_NAMES = frozenset({
    "input", "other", "self", "tensor", "tensors", "x", "x1", "x2", "y", "condition", "weight", "bias", "mat",
    "mat1", "mat2", "vec", "vec1", "vec2", "tensor1", "tensor2", "batch1", "batch2", "A", "B", "mask", "source",
    "src", "index", "target", "query", "key", "value", "end", "exponent", "boundaries", "sorted_sequence",
    "elements", "test_elements", "indices", "values", "LU_data", "LU_pivots", "input1", "input2", "anchor",
    "positive", "negative", "log_probs", "targets", "grid", "theta", "running_mean", "running_var", "matrices",
    "operands", "a", "b", "u", "v", "lower", "upper", "min", "max", "mean", "std", "real", "imag", "abs", "angle"})
_CO_GEN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _relevant(f) -> tuple[list, list]:
    """f's tensor parameters: [(position, name)] among the positional ones (of the function f wraps, when f is a
    `*args, **kwargs` wrapper), and the name of its `*args` when it has one."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return [], []
    pos, star = [], []
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name in _TENSOR_NAMES:
            pos.append((i, p.name))
        elif p.kind is p.VAR_POSITIONAL:
            star.append(p.name)
    return pos, star


def _block(code) -> tuple[str, int] | None:
    """The source of code's `def` (decorators dropped, dedented) and its first line number."""
    lines = linecache.getlines(code.co_filename)
    i = code.co_firstlineno - 1
    while i < len(lines) and not lines[i].lstrip().startswith(("def ", "async def ")):
        i += 1
    if i >= len(lines) or f"def {code.co_name}" not in lines[i]:
        return None
    ind = len(lines[i]) - len(lines[i].lstrip())
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind
                              or lines[j].lstrip().startswith(")")):
        j += 1
    body = [ln[ind:] if ln[:ind].isspace() or not ln[:ind] else ln for ln in lines[i:j]]
    return "".join(body), i + 1


def _check_source(key: int, code, pos, star) -> str:
    """The statements put first in a function: the class test of its tensor arguments, then _dispatch."""
    names = code.co_varnames
    nargs = code.co_argcount
    kwonly = names[nargs:nargs + code.co_kwonlyargcount]
    k = nargs + code.co_kwonlyargcount
    varargs = names[k] if code.co_flags & inspect.CO_VARARGS else None
    varkw = names[k + (varargs is not None)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    # (a list/tuple argument, e.g. cat's tensors, reaches _dispatch only when an element is of a class not seen plain)
    test = "{0}.__class__ is not _tf_T and {0}.__class__ not in _tf_P and " \
           "({0}.__class__ is not list and {0}.__class__ is not tuple or _tf_any({0}))"
    if nargs == 0 and varargs is not None:  # a (*args, **kwargs) wrapper: the wrapped function's positions
        vals = [f"({varargs}[{i}] if len({varargs}) > {i} else " +
                (f"{varkw}.get({n!r}))" if varkw else "None)") for i, n in pos]
        tests = [f"(len({varargs}) > {i} and " + test.format(f"{varargs}[{i}]") + ")" for i, _ in pos]
        if varkw:
            tests += [f"({n!r} in {varkw} and " + test.format(f"{varkw}[{n!r}]") + ")" for _, n in pos]
        if star:
            vals.append(f"*{varargs}")
            tests.append(f"_tf_any({varargs})")
        args = f"{varargs}"
    else:
        own = {n for _, n in pos} & set(names[:nargs])
        vals = [n for n in names[:nargs] if n in own]
        tests = [test.format(n) for n in vals]
        args = "(" + "".join(f"{n}, " for n in names[:nargs]) + (f"*{varargs}" if varargs else "") + ")"
        if varargs and varargs in star:
            vals.append(f"*{varargs}")
            tests.append(f"_tf_any({varargs})")
    if not tests:
        return ""
    kw = "{" + ", ".join([f"{n!r}: {n}" for n in kwonly] + ([f"**{varkw}"] if varkw else [])) + "}"
    rel = "(" + "".join(f"{v}, " for v in vals) + ")"
    return (f"if {' or '.join(tests)}:\n"
            f"    _tf_r = _tf_dispatch({key}, {rel}, {args}, {kw})\n"
            f"    if _tf_r is not _tf_NO:\n"
            f"        return _tf_r\n")


def _tf_any(xs) -> bool:
    for x in xs:  # (a loop, not any(genexpr): this runs on every cat/stack call)
        if x.__class__ not in _PLAIN:
            return True
    return False


def _generate(f, key: int):
    """f's code with the dispatch check first (passing key), recompiled from its source; None where f's source
    cannot be recompiled to the same shape (f is then left as it is)."""
    code = f.__code__
    if code.co_flags & _CO_GEN or "__class__" in code.co_freevars:
        return None
    pos, star = _relevant(f)
    check = _check_source(key, code, pos, star)
    found = check and _block(code)
    if not found:
        return None
    src, first = found
    pad = "\n" * (first - 1)  # (parsed at their lines in the file: tracebacks point at the source)
    try:
        tree = ast.parse(pad + src)
    except SyntaxError:
        return None
    fn = tree.body[0]
    if not isinstance(fn, ast.FunctionDef) or fn.name != code.co_name:
        return None
    fn.decorator_list = []
    doc = 1 if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
        and isinstance(fn.body[0].value.value, str) else 0
    fn.body[doc:doc] = ast.parse(pad + check).body
    if code.co_freevars:  # a closure: compiled inside a function binding the same free names
        outer = ast.parse(f"{pad}def _tf_outer({', '.join(code.co_freevars)}):\n    return {fn.name}").body[0]
        outer.body.insert(0, fn)
        tree.body = [outer]
    try:
        mod = compile(tree, code.co_filename, "exec")
    except (SyntaxError, ValueError):
        return None
    new = _find_code(mod, code.co_name, bool(code.co_freevars))
    return new if new is not None and _fits(new, code) else None


def _fits(new, code) -> bool:
    """new can replace code as a function's __code__ (same name, free variables and parameter counts)."""
    return (new.co_name == code.co_name and new.co_freevars == code.co_freevars and
            new.co_argcount == code.co_argcount and new.co_kwonlyargcount == code.co_kwonlyargcount and
            new.co_posonlyargcount == code.co_posonlyargcount)


def _find_code(mod, name: str, nested: bool):
    for c in mod.co_consts:
        if hasattr(c, "co_name"):
            if nested and c.co_name == "_tf_outer":
                return _find_code(c, name, False)
            if c.co_name == name:
                return c
    return None


# --- the cache of the generated code ---------------------------------------------------------------------------
# Generating the checks (signature, source, parse, compile for ~500 functions) costs ~0.15 s, so the code objects
# are kept, marshalled, in one file keyed by the interpreter (cache_tag, bytecode magic) and by the identity (path,
# mtime_ns, size) of this file and of every source file the functions (and the functions they wrap) come from.
_CACHE_FORMAT = 1
_CACHE_NAME = "torch_function"
cache_source = "none"  # where the last install's code came from: "cache", "generated" (then stored) or "none"


def _cache_paths() -> list[str]:
    """Where the cache may live, best first: beside this module's bytecode (__pycache__, unless the user asked
    Python not to write bytecode), then the user's cache dir (one file per funcgrad location)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return []
    name = f"{_CACHE_NAME}.{tag}.marshal"
    out = []
    if not sys.dont_write_bytecode:
        out.append(os.path.join(os.path.dirname(importlib.util.cache_from_source(__file__)), name))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = hashlib.sha1(os.path.dirname(os.path.abspath(__file__)).encode()).hexdigest()[:16]
    out.append(os.path.join(base, "funcgrad", f"{_CACHE_NAME}.{where}.{tag}.marshal"))
    return out


def _identity(funcs: list, base: int):
    """What the generated code depends on: the interpreter, the functions (in order, from base), the files."""
    files = {__file__}
    entries = []
    for n, f in funcs:
        g = f
        while g is not None:  # (a wrapper's check reads the parameters of the function it wraps)
            c = getattr(g, "__code__", None)
            if c is not None:
                files.add(c.co_filename)
            g = getattr(g, "__wrapped__", None)
        entries.append((n, f.__qualname__, f.__code__.co_filename, f.__code__.co_firstlineno))
    stats = []
    for p in sorted(files):
        try:
            st = os.stat(p)
        except OSError:
            return None
        stats.append((p, st.st_mtime_ns, st.st_size))
    return (_CACHE_FORMAT, importlib.util.MAGIC_NUMBER, sys.implementation.cache_tag, base, tuple(stats),
            tuple(entries))


def _load(path: str, ident) -> tuple | None:
    """The cached codes (one per function, None for one left as it is) when path holds them for ident."""
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if type(data) is not tuple or len(data) != 2 or data[0] != ident or type(data[1]) is not tuple or \
            len(data[1]) != len(ident[-1]):
        return None
    return data[1]


def _store(path: str, ident, codes: tuple) -> bool:
    """Write the cache atomically (a temporary file beside it, then os.replace); False where path's dir is not
    writable."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".marshal")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            marshal.dump((ident, codes), fh)
        os.chmod(tmp, (os.stat(__file__).st_mode | 0o200) & 0o666)  # (as importlib writes .pyc files)
        os.replace(tmp, path)
        return True
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def _codes(funcs: list, base: int) -> tuple:
    """The new code of each function (None where it is left as it is), from the cache when it is current, else
    generated (and stored in the first cache location that can be written)."""
    global cache_source
    ident = _identity(funcs, base)
    paths = _cache_paths() if ident is not None else []
    for p in paths:
        codes = _load(p, ident)
        if codes is not None and all(c is None or (type(c) is _CodeType and _fits(c, f.__code__))
                                     for c, (_, f) in zip(codes, funcs)):
            cache_source = "cache"
            return codes
    codes, key = [], base
    for _, f in funcs:
        c = _generate(f, key)
        codes.append(c)
        key += c is not None
    codes = tuple(codes)
    cache_source = "generated"
    for p in paths:
        if _store(p, ident, codes):
            break
    return codes


def install(namespace: dict, names: Iterable[str]) -> list:
    """Make the functions namespace[name] dispatch on `__torch_function__` (each once, however many names it
    has); returns the names left without the check (no tensor parameter, or source unavailable)."""
    funcs, done = [], set()
    for n in names:
        f = namespace.get(n)
        if inspect.isfunction(f) and id(f) not in done:
            done.add(id(f))
            funcs.append((n, f))
    skipped = []
    for (n, f), code in zip(funcs, _codes(funcs, len(_FUNCS))):
        if code is None:
            skipped.append(n)
            continue
        f.__globals__.update(_tf_T=_Tensor, _tf_P=_PLAIN, _tf_NO=_NO, _tf_dispatch=_dispatch, _tf_any=_tf_any)
        f.__code__ = code
        _FUNCS.append(f)
    return skipped


def is_tensor_like(inp) -> bool:
    """A funcgrad Tensor, or anything whose type defines `__torch_function__`."""
    return isinstance(inp, _tensor_type()) or getattr(inp, "__torch_function__", None) is not None


def wrap_torch_function(dispatcher: Callable):
    """Decorator: the wrapped function dispatches on the arguments that `dispatcher(*args, **kwargs)` returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def get_ignored_functions() -> set:
    return set()


def get_overridable_functions() -> dict:
    return {}


def get_testing_overrides() -> dict:
    return {}


def is_tensor_method_or_property(func: Callable) -> bool:
    T = _tensor_type()
    name = getattr(func, "__name__", None)
    return name is not None and getattr(T, name, None) is func


def resolve_name(f):
    return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', getattr(f, '__name__', repr(f)))}"
