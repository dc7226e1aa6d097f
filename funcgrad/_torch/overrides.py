"""funcgrad.overrides (torch.overrides): the `__torch_function__` protocol.

torch calls `type(a).__torch_function__(func, types, args, kwargs)` when a torch function is given an argument `a`
whose type defines it (a Tensor subclass such as NestedTensor or MaskedTensor, or any Tensor-like class), instead
of running the function. funcgrad does the same for the functions of its torch namespaces (torch, nn.functional,
linalg, fft, special: each module calls `install` once it holds its functions): one check is put at the top of
each function's own code (no wrapper, so no extra call): its tensor arguments' classes are compared with `Tensor`
(and the classes already seen not to override), and only an argument of another class reaches `_dispatch`, which
finds the overriding types. Plain tensors pay that class comparison and nothing else. `func` is the public
function the user called: a namespace's name for a function another name holds gets a function object of its own.
The recompiled code objects are cached (marshal, one file per namespace, keyed by the interpreter and the source
files' identity), so an import with a current cache only assigns them: ~5 ms instead of ~0.25 s of
signature/parse/compile.

`Tensor.__torch_function__` is torch's default: it runs the function with dispatch disabled and returns Tensor
results as the subclass (so a subclass that does not override it keeps its type, and an override may end in
`super().__torch_function__(...)`); nn.Parameter opts out with `_disabled_torch_function_impl`, as in torch.
`DisableTorchFunction[Subclass]` (torch._C's, funcgrad._C) switch dispatch off; the helpers below
(`has_torch_function`, `handle_torch_function`, ...) let a library's own functions dispatch too.
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
from types import CodeType as _CodeType, FunctionType as _FunctionType
from typing import Any, Callable, Iterable

from ._tensor import Tensor as _Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "get_ignored_functions", "get_overridable_functions",
           "get_testing_overrides", "wrap_torch_function", "is_tensor_method_or_property", "resolve_name"]


def _tensor_type():
    return _Tensor


# --- the protocol --------------------------------------------------------------------------------------------
class _State(threading.local):
    disabled = 0      # > 0: no `__torch_function__` is dispatched to (Tensor.__torch_function__'s default, and the
    all_disabled = 0  # two context managers below; all_disabled counts DisableTorchFunction alone)
    skip = False      # the next installed function called runs its own code (_skip_one_hop)


_STATE = _State()


class DisableTorchFunctionSubclass:
    """torch._C.DisableTorchFunctionSubclass: inside it torch functions ignore the arguments' `__torch_function__`
    (they run as on plain tensors); what Tensor.__torch_function__'s default runs the function in."""

    def __enter__(self) -> None:
        _STATE.disabled += 1

    def __exit__(self, *exc) -> None:
        _STATE.disabled -= 1


class DisableTorchFunction:
    """torch._C.DisableTorchFunction: as DisableTorchFunctionSubclass (funcgrad has no torch function modes for it
    to disable as well), and `_is_torch_function_all_disabled()` is True inside it."""

    def __enter__(self) -> None:
        _STATE.disabled += 1
        _STATE.all_disabled += 1

    def __exit__(self, *exc) -> None:
        _STATE.disabled -= 1
        _STATE.all_disabled -= 1


def _is_torch_function_enabled() -> bool:
    """torch._C._is_torch_function_enabled: False inside either context manager above."""
    return not _STATE.disabled


def _is_torch_function_all_disabled() -> bool:
    """torch._C._is_torch_function_all_disabled: True inside DisableTorchFunction."""
    return _STATE.all_disabled > 0


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: NotImplemented unless cls is a subclass of every type taking part; else
    func(*args, **kwargs) with dispatch disabled, its Tensor results as cls."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    _STATE.disabled += 1
    try:
        ret = func(*args, **(kwargs or {}))
    finally:
        _STATE.disabled -= 1
    return _convert(ret, cls)


def _disabled_torch_function_impl(cls, func, types, args=(), kwargs=None):
    """torch._C._disabled_torch_function_impl: a subclass that sets this as its `__torch_function__` is never
    dispatched on (nn.Parameter); called directly, it runs func with dispatch disabled."""
    _STATE.disabled += 1
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _STATE.disabled -= 1


def _convert(ret, cls):
    """torch.overrides' _convert: ret's Tensors as cls (the same data and autograd history), into lists, tuples and
    named tuples (torch.return_types)."""
    if cls is _Tensor:
        return ret
    if isinstance(ret, _Tensor) and not isinstance(ret, cls):
        new = object.__new__(cls)
        for k in ("_v", "_a", "_st", "_rg", "_gfn"):
            setattr(new, k, getattr(ret, k))
        new.__dict__.update(ret.__dict__)
        return new
    t = type(ret)
    if t is list or t is tuple:
        return t(_convert(r, cls) for r in ret)
    if isinstance(ret, tuple) and hasattr(t, "_make"):
        return t._make(_convert(r, cls) for r in ret)
    return ret


_Tensor.__torch_function__ = classmethod(_default_torch_function)


def _overrides_type(t: type) -> bool:
    """Arguments of type t are dispatched on: t defines `__torch_function__` and is not Tensor itself nor a class
    that opted out with `_disabled_torch_function_impl` (a subclass inheriting Tensor's default is dispatched on:
    the default gives results the subclass's type)."""
    f = getattr(t, "__torch_function__", None)
    return f is not None and t is not _Tensor and getattr(f, "__func__", f) is not _disabled_torch_function_impl


def _overrides(obj) -> bool:
    return _overrides_type(type(obj))


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """True when some argument's type (other than plain Tensor) defines `__torch_function__` and dispatch is not
    disabled (inside Tensor.__torch_function__'s default or DisableTorchFunction[Subclass])."""
    return not _STATE.disabled and any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    return not _STATE.disabled and _overrides(obj)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    """torch's _get_overloaded_args: the arguments whose types define `__torch_function__` (plain Tensors too: their
    default declines), one per type, subclasses before their bases."""
    types, args = [], []
    for a in relevant_args:
        t = type(a)
        if t in types or not (t is _Tensor or _overrides_type(t)):
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
    return _handle(public_api, relevant_args, args, kwargs, None)


def _handle(func, relevant, args: tuple, kwargs: dict, shown):
    """handle_torch_function's work; `shown` is (builtin, name) for the functions of funcgrad's torch namespaces:
    where torch's function is a builtin its C++ parser leaves plain Tensors out of `types` and words the error
    its own way."""
    overloaded = _overloaded_args(relevant)
    if not any(type(a) is not _Tensor for a in overloaded):
        return func(*args, **kwargs)
    if shown is not None and shown[0]:
        overloaded = [a for a in overloaded if type(a) is not _Tensor]
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        if type(a) is _Tensor:  # (its default declines: Tensor is no subclass of the other types)
            continue
        result = type(a).__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if shown is not None and shown[0]:
        listed = "".join(f"  - tensor subclass {t}\n" for t in types)
        raise TypeError(f"Multiple dispatch failed for '{shown[1]}'; all __torch_function__ handlers returned "
                        f"NotImplemented:\n\n{listed}\nFor more information, try re-running with "
                        f"TORCH_LOGS=not_implemented")
    name = shown[1] if shown is not None else f"{func.__module__}.{func.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{list(types)}")


# --- the check in the torch namespace's functions -------------------------------------------------------------
_NO = object()  # _dispatch's answer when no argument overrides: the function goes on
# classes seen not to override (the check's fast test); list/tuple are looked into, so never added
_PLAIN = {_Tensor, type(None), bool, int, float, complex, str}
_FUNCS: list = []  # the installed functions, by the index their check passes to _dispatch
_SHOWN: list = []  # by the same index: (torch's function is a builtin, the name torch's dispatch errors give it)
_INSTALLED: set = set()  # ids of the functions in _FUNCS
_SPACE_OF: dict = {}  # id of an installed function -> its namespace's tag
_SPACES: dict = {}  # namespace tag -> (the public module's name, the names given to install, as dict keys)


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
    if _STATE.skip:
        _STATE.skip = False
        return _NO
    f = _FUNCS[key]
    args, kwargs = _given(f, args, kwargs)
    return _handle(f, flat, args, kwargs, _SHOWN[key])


def _skip_one_hop(func, args: tuple = (), kwargs: dict | None = None):
    """func(*args, **kwargs) running func's own code without dispatching it again, while the torch functions it
    calls still dispatch: the fallback of a `__torch_function__` (QTensor, NestedTensor) given a function of
    nn.functional, linalg, fft or special that it has no rule for, whose code is written with torch functions it
    has rules for (as torch's subclasses run such a function's Python body)."""
    _STATE.skip = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _STATE.skip = False


def _space(func) -> str | None:
    """The namespace ("torch", "nn.functional", "linalg", "fft", "special") whose installed function func is."""
    return _SPACE_OF.get(id(func))


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
    "operands", "a", "b", "u", "v", "lower", "upper", "min", "max", "mean", "std", "real", "imag", "abs", "angle",
    # nn.functional's and torch.linalg's
    "LD", "LU", "pivots", "logits", "var", "pos_weight", "offsets", "per_sample_weights", "input_lengths",
    "target_lengths", "linear_weight", "linear_bias", "attn_mask", "key_padding_mask", "in_proj_weight",
    "in_proj_bias", "bias_k", "bias_v", "out_proj_weight", "out_proj_bias", "q_proj_weight", "k_proj_weight",
    "v_proj_weight", "static_k", "static_v", "_random_samples"})
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
_CACHE_FORMAT = 2
_CACHE_NAME = "torch_function"
cache_source = "none"  # where the installs' code came from: "cache", "generated" (any namespace's) or "none"
_SOURCES: dict = {}  # namespace tag -> where its code came from


def _cache_paths(space: str = "torch") -> list[str]:
    """Where the cache of namespace `space` may live, best first: beside this module's bytecode (__pycache__,
    unless the user asked Python not to write bytecode), then the user's cache dir (one file per funcgrad
    location)."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return []
    name = f"{_CACHE_NAME}.{space}.{tag}.marshal"
    out = []
    if not sys.dont_write_bytecode:
        out.append(os.path.join(os.path.dirname(importlib.util.cache_from_source(__file__)), name))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    where = hashlib.sha1(os.path.dirname(os.path.abspath(__file__)).encode()).hexdigest()[:16]
    out.append(os.path.join(base, "funcgrad", f"{_CACHE_NAME}.{space}.{where}.{tag}.marshal"))
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


def _codes(funcs: list, base: int, space: str = "torch") -> tuple:
    """The new code of each function (None where it is left as it is), from namespace space's cache when it is
    current, else generated (and stored in the first cache location that can be written)."""
    global cache_source
    ident = _identity(funcs, base)
    paths = _cache_paths(space) if ident is not None else []
    codes = None
    for p in paths:
        codes = _load(p, ident)
        if codes is not None and all(c is None or (type(c) is _CodeType and _fits(c, f.__code__))
                                     for c, (_, f) in zip(codes, funcs)):
            _SOURCES[space] = "cache"
            break
        codes = None
    if codes is None:
        codes, key = [], base
        for _, f in funcs:
            c = _generate(f, key)
            codes.append(c)
            key += c is not None
        codes = tuple(codes)
        _SOURCES[space] = "generated"
        for p in paths:
            if _store(p, ident, codes):
                break
    cache_source = "generated" if "generated" in _SOURCES.values() else "cache"
    return codes


# --- installing the check in a namespace -----------------------------------------------------------------------
# torch's top-level functions written in Python (torch/functional.py): its errors name them by that module
_TORCH_PY = frozenset("atleast_1d atleast_2d atleast_3d block_diag broadcast_tensors cartesian_prod cdist "
                      "chain_matmul einsum istft lu meshgrid norm pca_lowrank split stft svd_lowrank tensordot "
                      "unique unique_consecutive unravel_index".split())
# nn.functional's functions that are builtins in torch: torch.<name>, and torch._C._nn's (torch.nn.<name>)
_F_TOP = frozenset("adaptive_avg_pool1d avg_pool1d bilinear celu_ channel_shuffle conv1d conv2d conv3d conv_tbc "
                   "conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity hardshrink "
                   "native_channel_shuffle pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ rrelu_ "
                   "selu_ threshold_".split())
_F_NN = {**{n: n for n in "avg_pool2d avg_pool3d elu_ gelu hardtanh_ leaky_relu_ linear one_hot "
            "scaled_dot_product_attention softplus softshrink".split()}, "logsigmoid": "log_sigmoid"}
_BUILTIN_PREFIX = {"torch": "torch.", "linalg": "torch.linalg.linalg_", "fft": "torch.fft.fft_",
                   "special": "torch.special.special_"}


def _shown(space: str, name: str) -> tuple[bool, str]:
    """(torch's function is a builtin, the name torch's dispatch error gives it) for namespace space's name."""
    if space == "torch" and name in _TORCH_PY:
        return False, f"torch.functional.{name}"
    if space == "nn.functional":
        if name in _F_TOP:
            return True, f"torch.{name}"
        if name in _F_NN:
            return True, f"torch.nn.{_F_NN[name]}"
        return False, f"torch.nn.functional.{name}"
    return True, _BUILTIN_PREFIX.get(space, f"torch.{space}.") + name


def _copy(f, module: str, name: str):
    """A function object of its own running f's code, for module's name `name` when another name holds f (named
    after its place, so that pickle finds it there)."""
    g = _FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = dict(f.__kwdefaults__) if f.__kwdefaults__ else None
    g.__dict__.update(f.__dict__)
    g.__qualname__, g.__module__, g.__doc__ = name, module, f.__doc__
    g.__annotations__ = dict(f.__annotations__)
    return g


def install(namespace: dict, names: Iterable[str], space: str = "torch", module: str = "funcgrad",
            distinct: bool = False) -> list:
    """Make the functions namespace[name] dispatch on `__torch_function__`: one class test put first in each one's
    code. `space` names the namespace (its cache file, the names in torch's errors), `module` is its public
    module (get_overridable_functions' key). A function another namespace already holds gets a copy of its own
    here, and with `distinct` so does each alias (torch's namespaces hold distinct builtins: the `func` an
    override sees is the one the user called); without, an alias shares its function. Returns the names left
    without the check (no tensor parameter, or source unavailable)."""
    names = list(names)
    funcs, seen = [], set()
    for n in names:
        f = namespace.get(n)
        if not inspect.isfunction(f) or (id(f) in seen or id(f) in _INSTALLED) and not distinct:
            continue
        funcs.append((n, f))
        seen.add(id(f))
    skipped, first = [], set()
    for (n, f), code in zip(funcs, _codes(funcs, len(_FUNCS), space)):
        if code is None:
            skipped.append(n)
            continue
        g = f if id(f) not in _INSTALLED and id(f) not in first else _copy(f, module, n)
        first.add(id(f))
        g.__globals__.update(_tf_T=_Tensor, _tf_P=_PLAIN, _tf_NO=_NO, _tf_dispatch=_dispatch, _tf_any=_tf_any)
        g.__code__ = code
        namespace[n] = g
        _FUNCS.append(g)
        _SHOWN.append(_shown(space, n))
        _INSTALLED.add(id(g))
        _SPACE_OF[id(g)] = space
    _SPACES.setdefault(space, (module, {}))[1].update(dict.fromkeys(names))
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


def _namespaces():
    """(public module, [its functions]) of each namespace install was given."""
    for modname, names in _SPACES.values():
        mod = sys.modules.get(modname)
        if mod is not None:
            fs = {id(f): f for f in (getattr(mod, n, None) for n in names) if inspect.isfunction(f)}
            yield mod, list(fs.values())


def get_ignored_functions() -> set:
    """The public functions of funcgrad's torch namespaces that do not dispatch on `__torch_function__` (no tensor
    parameter: creation functions, fftfreq, ...)."""
    return {f for _, fs in _namespaces() for f in fs if id(f) not in _INSTALLED}


def get_overridable_functions() -> dict:
    """{namespace module: [its functions that dispatch on `__torch_function__`]}: funcgrad (torch), its
    nn.functional, linalg, fft and special."""
    return {mod: [f for f in fs if id(f) in _INSTALLED] for mod, fs in _namespaces()}


def get_testing_overrides() -> dict:
    """{overridable function: a dummy of the same signature returning -1}, as torch's (for testing that a
    Tensor-like class's `__torch_function__` is reached by each function)."""
    out = {}
    for _, fs in _namespaces():
        for f in fs:
            if id(f) in _INSTALLED and f not in out:
                out[f] = _dummy(f)
    return out


def _dummy(f):
    def dummy(*args, **kwargs):
        return -1
    dummy.__name__ = dummy.__qualname__ = f.__name__
    try:
        dummy.__signature__ = inspect.signature(f)
    except (TypeError, ValueError):
        pass
    return dummy


def is_tensor_method_or_property(func: Callable) -> bool:
    T = _tensor_type()
    name = getattr(func, "__name__", None)
    return name is not None and getattr(T, name, None) is func


def resolve_name(f):
    return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', getattr(f, '__name__', repr(f)))}"
