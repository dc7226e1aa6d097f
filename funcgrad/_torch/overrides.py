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
The override is handed the arguments as torch hands them: a builtin's as the caller wrote them (the check sees its
function's parameters bound, so which were given by keyword is read from the calling instruction, on this slow
path only: _tf_check.call_keywords), a function torch writes in Python (most of nn.functional) as its
handle_torch_function call passes them (_PY_LEAD). Tensor's methods, operators and properties dispatch on a
subclass through the forms _subclass.py sets on it.

`Tensor.__torch_function__` is torch's default: it runs the function with dispatch disabled and returns Tensor
results as the subclass (so a subclass that does not override it keeps its type, and an override may end in
`super().__torch_function__(...)`); nn.Parameter opts out with `_disabled_torch_function_impl`, as in torch.
`DisableTorchFunction[Subclass]` (torch._C's, funcgrad._C) switch dispatch off; the helpers below
(`has_torch_function`, `handle_torch_function`, ...) let a library's own functions dispatch too.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
from types import CodeType as _CodeType, FunctionType as _FunctionType
from typing import Any, Callable, Iterable

from . import _tf_check
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
    func(*args, **kwargs) with dispatch disabled, its Tensor results as cls (but for those of _NOWRAP)."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    _STATE.disabled += 1
    try:
        ret = func(*args, **(kwargs or {}))
    finally:
        _STATE.disabled -= 1
    return ret if func in _NOWRAP else _convert(ret, cls)


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
# torch's get_default_nowrap_functions: what the default passes on as it is (a subclass's .grad keeps its own type)
_NOWRAP = frozenset({_Tensor.__dict__["grad"].__get__})


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
    """has_torch_function((obj,)) for one argument (torch's fast form)."""
    return not _STATE.disabled and _overrides(obj)


def has_torch_function_variadic(*args) -> bool:
    """has_torch_function(args) with the arguments given separately (torch's fast form)."""
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
_LEAD: list = []  # by the same index: for a function torch writes in Python, how many parameters it passes on
#                   positionally (_PY_LEAD), else None
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
    shown = _SHOWN[key]  # (torch's builtins pass no kwargs as None, its Python functions as {})
    args, kwargs = _as_called(f, _LEAD[key], args, kwargs, sys._getframe(1))
    return _handle(f, flat, args, kwargs if kwargs or not shown[0] else None, shown)


def _as_called(f, lead: int | None, args: tuple, kwargs: dict, frame) -> tuple[tuple, dict]:
    """args and kwargs as torch hands them to `__torch_function__`: a builtin's as the caller wrote them (those given
    by keyword as keywords: read from the call, `frame` being f's own); a function torch writes in Python as its
    handle_torch_function passes them: the first `lead` parameters positionally, every other by keyword."""
    if lead is not None:
        return _leading(f, lead, args, kwargs)
    code = f.__code__
    names = code.co_varnames[:code.co_argcount]
    if not names:  # (a *args, **kwargs wrapper: the call as given)
        return _given(f, args, kwargs)
    site = _tf_check.call_keywords(frame.f_back) if frame is not None and frame.f_code is code else None
    if site is None or not set(site[1]) <= set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]) \
            and not code.co_flags & inspect.CO_VARKEYWORDS:
        return _given(f, args, kwargs)
    argc, given = site
    first = min([names.index(k) for k in given if k in names] + [len(args)])
    short, _ = _given(f, args[:first], {})
    # the positional count: the call's arguments less its keywords, plus one for a method's self
    fits = [n for n in (argc - len(given), argc - len(given) + 1) if len(short) <= n <= first]
    pos = args[:fits[0]] if len(fits) == 1 else short
    return pos, {k: (args[names.index(k)] if k in names else kwargs[k]) for k in given}


def _leading(f, lead: int, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """f's first `lead` parameters as args, every other (defaults included) as kwargs, as torch's Python functions
    pass them; args and kwargs are those f's check gives (or a wrapper's call: bound to the wrapped signature)."""
    try:
        params = [p for p in inspect.signature(f).parameters.values() if p.kind not in (p.VAR_POSITIONAL,
                                                                                         p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return args[:lead], kwargs
    pos = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    vals = {**{p.name: p.default for p in params if p.default is not p.empty}, **dict(zip(pos, args)), **kwargs}
    if any(n not in vals for n in pos[:lead]):
        return args[:lead], kwargs
    return tuple(vals[n] for n in pos[:lead]), {k: v for k, v in vals.items() if k not in pos[:lead]}


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


def _tf_any(xs) -> bool:
    for x in xs:  # (a loop, not any(genexpr): this runs on every cat/stack call)
        if x.__class__ not in _PLAIN:
            return True
    return False


# --- the checks' code: generated by _tf_check, or loaded from its cache --------------------------------------------
cache_source = "none"  # where the installs' code came from: "cache", "generated" (any namespace's) or "none"
_SOURCES: dict = {}  # namespace tag -> where its code came from


def _codes(funcs: list, base: int, space: str = "torch") -> tuple:
    """The new code of each function (None where it is left as it is), from namespace space's cache when it is
    current, else generated (and stored in the first cache location that can be written)."""
    global cache_source
    ident = _tf_check.identity(funcs, base)
    paths = _tf_check.cache_paths(space) if ident is not None else []
    codes = None
    for p in paths:
        codes = _tf_check.load(p, ident)
        if codes is not None and all(c is None or (type(c) is _CodeType and _tf_check.fits(c, f.__code__))
                                     for c, (_, f) in zip(codes, funcs)):
            _SOURCES[space] = "cache"
            break
        codes = None
    if codes is None:
        codes, key = [], base
        for _, f in funcs:
            c = _tf_check.generate(f, key)
            codes.append(c)
            key += c is not None
        codes = tuple(codes)
        _SOURCES[space] = "generated"
        for p in paths:
            if _tf_check.store(p, ident, codes):
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


# torch's functions written in Python (nn.functional's, torch.functional's) hand handle_torch_function their first k
# parameters positionally and every other by keyword, defaults included: k of each
_PY_LEAD = {**{("nn.functional", n): k for k, names in (
    (1, "alpha_dropout celu dropout dropout1d dropout2d dropout3d elu feature_alpha_dropout glu gumbel_softmax "
        "hardsigmoid hardswish hardtanh instance_norm interpolate leaky_relu log_softmax mish normalize relu relu6 "
        "rrelu selu silu softmax softmin softsign tanhshrink"),
    (2, "adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d fractional_max_pool2d fractional_max_pool3d "
        "max_pool1d max_pool2d max_pool3d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d_with_indices "
        "adaptive_max_pool2d_with_indices adaptive_max_pool3d_with_indices affine_grid binary_cross_entropy "
        "binary_cross_entropy_with_logits cross_entropy embedding embedding_bag fractional_max_pool2d_with_indices "
        "fractional_max_pool3d_with_indices grid_sample group_norm hinge_embedding_loss huber_loss kl_div l1_loss "
        "layer_norm local_response_norm max_pool1d_with_indices max_pool2d_with_indices max_pool3d_with_indices "
        "mse_loss multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss nll_loss pad "
        "poisson_nll_loss rms_norm smooth_l1_loss soft_margin_loss unfold"),
    (3, "threshold batch_norm cosine_embedding_loss fold gaussian_nll_loss linear_cross_entropy lp_pool1d lp_pool2d "
        "lp_pool3d margin_ranking_loss max_unpool1d max_unpool2d max_unpool3d triplet_margin_loss "
        "triplet_margin_with_distance_loss"),
    (4, "ctc_loss"), (13, "multi_head_attention_forward")) for n in names.split()},
    **{("torch", n): k for k, names in ((1, "lu norm unique unique_consecutive unravel_index"),
                                       (2, "cdist split stft tensordot")) for n in names.split()}}


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
        _LEAD.append(_PY_LEAD.get((space, n)))
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
    """Whether func is a Tensor method or property (what __torch_function__ receives for x.op(...))."""
    T = _tensor_type()
    name = getattr(func, "__name__", None)
    return name is not None and getattr(T, name, None) is func


def resolve_name(f):
    """The dotted name of a function (module and qualified name), as torch.overrides names it in messages."""
    return f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', getattr(f, '__name__', repr(f)))}"
