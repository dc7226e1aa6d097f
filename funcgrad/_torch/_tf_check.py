"""The check overrides.install puts first in a torch function's code: its source (from the function's parameters:
those named as torch's tensor parameters are tested), the function recompiled with it, and the cache of the
recompiled code objects (marshal, one file per namespace)."""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import linecache
import marshal
import os
import sys
import tempfile

# parameter names that take tensors (or sequences of them) in torch's functions: the arguments checked
TENSOR_NAMES = frozenset({
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


def relevant(f) -> tuple[list, list]:
    """f's tensor parameters: [(position, name)] among the positional ones (of the function f wraps, when f is a
    `*args, **kwargs` wrapper), and the name of its `*args` when it has one."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return [], []
    pos, star = [], []
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name in TENSOR_NAMES:
            pos.append((i, p.name))
        elif p.kind is p.VAR_POSITIONAL:
            star.append(p.name)
    return pos, star


def block(code) -> tuple[str, int] | None:
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


def check_source(key: int, code, pos, star) -> str:
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


def generate(f, key: int):
    """f's code with the dispatch check first (passing key), recompiled from its source; None where f's source
    cannot be recompiled to the same shape (f is then left as it is)."""
    code = f.__code__
    if code.co_flags & _CO_GEN or "__class__" in code.co_freevars:
        return None
    pos, star = relevant(f)
    check = check_source(key, code, pos, star)
    found = check and block(code)
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
    new = find_code(mod, code.co_name, bool(code.co_freevars))
    return new if new is not None and fits(new, code) else None


def fits(new, code) -> bool:
    """new can replace code as a function's __code__ (same name, free variables and parameter counts)."""
    return (new.co_name == code.co_name and new.co_freevars == code.co_freevars and
            new.co_argcount == code.co_argcount and new.co_kwonlyargcount == code.co_kwonlyargcount and
            new.co_posonlyargcount == code.co_posonlyargcount)


def find_code(mod, name: str, nested: bool):
    for c in mod.co_consts:
        if hasattr(c, "co_name"):
            if nested and c.co_name == "_tf_outer":
                return find_code(c, name, False)
            if c.co_name == name:
                return c
    return None


# --- the cache of the generated code ---------------------------------------------------------------------------
# Generating the checks (signature, source, parse, compile for ~740 functions) costs ~0.25 s, so the code objects
# are kept, marshalled, in one file per namespace keyed by the interpreter (cache_tag, bytecode magic) and by the
# identity (path, mtime_ns, size) of this file, overrides.py and every source file the functions (and the functions
# they wrap) come from.
_CACHE_FORMAT = 2
_CACHE_NAME = "torch_function"


def cache_paths(space: str = "torch") -> list[str]:
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


def identity(funcs: list, base: int):
    """What the generated code depends on: the interpreter, the functions (in order, from base), the files."""
    files = {__file__, os.path.join(os.path.dirname(__file__), "overrides.py")}
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


def load(path: str, ident) -> tuple | None:
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


def store(path: str, ident, codes: tuple) -> bool:
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


# --- how a function was called: the keywords of the call (what the check cannot see in its function's locals) ------
_SITES: dict = {}  # code object -> [(offset of a call instruction, offset after it, argc, keyword names)]


def _call_sites(code) -> list:
    import dis
    out, kw, const = [], (), None
    ins = list(dis.get_instructions(code))
    for i, x in enumerate(ins):
        if x.opname == "KW_NAMES":  # (3.11, 3.12: the keywords of the CALL that follows)
            kw = code.co_consts[x.arg]
        elif x.opname in ("CALL", "CALL_KW"):  # (3.13: CALL_KW takes the names from the LOAD_CONST before it)
            names = kw if x.opname == "CALL" else const
            end = ins[i + 1].offset if i + 1 < len(ins) else len(code.co_code)
            out.append((x.offset, end, x.arg, names if type(names) is tuple else ()))
            kw = ()
        const = x.argval if x.opname == "LOAD_CONST" else None
    return out


def call_keywords(frame) -> tuple[int, tuple] | None:
    """(the number of arguments, the names of those given by keyword) of the call that `frame` is running (its
    last instruction is a call); None where it is not running one this can read (a call with `*args`/`**kwargs`)."""
    if frame is None:
        return None
    code = frame.f_code
    sites = _SITES.get(code)
    if sites is None:
        if len(_SITES) > 4096:
            _SITES.clear()
        sites = _SITES[code] = _call_sites(code)
    i = frame.f_lasti
    for start, end, argc, names in sites:  # (3.11 reports an offset inside the call's inline caches)
        if start <= i < end:
            return argc, names
    return None
