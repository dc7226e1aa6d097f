"""torch's errors for complex tensors given to operations that have no complex kernel (rounding, ordering,
special functions, sorting, ...): funcgrad's primitives would compute something (or raise a TypeError of
their own), torch raises NotImplementedError or RuntimeError. The rules are data (RULES, KIND_RULES); they are
applied where names are installed: to each Tensor method as _methods.install sets it (`guard_method`), and to
the torch namespace once it is assembled (`guard_namespace`)."""
from __future__ import annotations

import functools

from ._tensor import Tensor
from ._errors import _legacy

_NI, _RT = NotImplementedError, RuntimeError


def _kernel(name):
    return _NI, f"\"{name}\" not implemented for '{{dt}}'"


# name: (exception class, message; {dt} is torch's dtype name) -- the checked operands are the tensors
# among the first two positional arguments (and `other`)
RULES = {
    "floor": (_NI, "floor is not supported for complex inputs"),
    "ceil": (_NI, "ceil is not supported for complex inputs"),
    "trunc": (_NI, "trunc is not supported for complex inputs"),
    "fix": (_NI, "trunc is not supported for complex inputs"),
    "frac": _kernel("frac_cpu"),
    "round": _kernel("round_vml_cpu"),
    "sign": (_NI, "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                  "torch.sgn instead."),
    "signbit": (_NI, "signbit is not implemented for complex tensors."),
    "isposinf": (_RT, "isposinf does not support complex inputs."),
    "isneginf": (_RT, "isneginf does not support complex inputs."),
    "deg2rad": (_RT, "deg2rad is not supported for complex tensors."),
    "rad2deg": (_RT, "rad2deg is not supported for complex tensors."),
    "erf": _kernel("erf_vml_cpu"), "erfc": _kernel("erfc_vml_cpu"), "erfinv": _kernel("erfinv_vml_cpu"),
    "lgamma": _kernel("lgamma_vml_cpu"), "digamma": _kernel("digamma"), "i0": _kernel("i0_vml_cpu"),
    "logit": _kernel("logit_cpu"), "relu": (_NI, "clamp is not supported for complex types"),
    "clamp": (_NI, "clamp is not supported for complex types"),
    "clip": (_NI, "clamp is not supported for complex types"),
    "clamp_min": (_NI, "clamp is not supported for complex types"),
    "clamp_max": (_NI, "clamp is not supported for complex types"),
    "lt": _kernel("lt_cpu"), "le": _kernel("le_cpu"), "gt": _kernel("gt_cpu"), "ge": _kernel("ge_cpu"),
    "less": _kernel("lt_cpu"), "less_equal": _kernel("le_cpu"), "greater": _kernel("gt_cpu"),
    "greater_equal": _kernel("ge_cpu"),
    "maximum": (_RT, "maximum not implemented for complex tensors."),
    "minimum": (_RT, "minimum not implemented for complex tensors."),
    "fmax": (_RT, "fmax not implemented for complex tensors."),
    "fmin": (_RT, "fmin not implemented for complex tensors."),
    "atan2": _kernel("atan2_cpu"), "arctan2": _kernel("atan2_cpu"), "hypot": _kernel("hypot_cpu"),
    "fmod": _kernel("fmod_cpu"), "remainder": _kernel("remainder_cpu"), "floor_divide": _kernel("div_floor_cpu"),
    "copysign": _kernel("copysign_cpu"), "xlogy": _kernel("xlogy_cpu"),
    "sort": (_RT, " Sort does not support complex dtypes on CPU"),
    "argsort": (_RT, " Sort does not support complex dtypes on CPU"),
    "msort": (_RT, " Sort does not support complex dtypes on CPU"),
    "topk": (_RT, "topk does not support complex dtypes on CPU"),
    "max": _kernel("max_all"), "min": _kernel("min_all"), "amax": _kernel("max_all"), "amin": _kernel("min_all"),
    "argmax": (_RT, "argmax(): does not support complex input"),
    "argmin": (_RT, "argmin(): does not support complex input"),
    "aminmax": _kernel("aminmax_all"), "cummax": _kernel("cummax_cpu"), "cummin": _kernel("cummin_cpu"),
    "median": _kernel("median_cpu"), "nanmedian": _kernel("nanmedian_cpu"), "kthvalue": _kernel("kthvalue_cpu"),
    "mode": _kernel("mode_cpu"), "unique": _kernel("unique"), "unique_consecutive": _kernel("unique"),
    "searchsorted": _kernel("searchsorted_out_cpu"),
    "bucketize": _kernel("bucketize_cpu"), "isin": (_RT, "isin_default_cpu not implemented for complex"),
    "nansum": (_RT, "nansum does not support complex inputs"),
    "nanmean": (_RT, "nansum does not support complex inputs"),
    "softmax": _kernel("softmax_lastdim_kernel_impl"), "log_softmax": _kernel("log_softmax_lastdim_kernel_impl"),
    "histc": _kernel("histogram_histc_cpu"), "cdist": (_RT, "cdist only supports floating-point dtypes, X1 got: {dt}"),
}
_SPECIAL = ("erf", "erfc", "erfinv", "digamma", "i0", "logit", "xlogy", "xlog1py", "softmax", "log_softmax")


def _kind(t) -> str:
    v = t._v
    return (v.dtype if v is not None else t._a.dtype).kind


def _raise(exc, msg, t):
    raise exc(msg.format(dt=_legacy(t._np_dtype())))


def reject_complex(fn, exc, msg):
    """fn, raising exc(msg) when one of its first two operands (or `other`) is a complex Tensor. (The
    checks are written out: they sit in front of hot operations such as relu, lt and max.)"""
    if getattr(fn, "_rejects_complex", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if args:
            a = args[0]
            if isinstance(a, Tensor) and _kind(a) == "c":
                _raise(exc, msg, a)
            if len(args) > 1:
                b = args[1]
                if isinstance(b, Tensor) and _kind(b) == "c":
                    _raise(exc, msg, b)
                if b.__class__ is complex and isinstance(a, Tensor):  # a Python complex promotes to complex
                    raise exc(msg.format(dt="ComplexDouble" if a._np_dtype() == "float64" else "ComplexFloat"))
        if kwargs:
            o = kwargs.get("other")
            if isinstance(o, Tensor) and _kind(o) == "c":
                _raise(exc, msg, o)
        return fn(*args, **kwargs)
    wrapper._rejects_complex = True
    return wrapper


def _bool_mm(kernel):
    return "b", _NI, f"\"{kernel}\" not implemented for '{{dt}}'"


# name: (dtype kinds, exception, message): raised when every tensor among the first two operands is of one of
# the kinds (bool matrix products, integer lerp, ...)
KIND_RULES = {
    "mm": _bool_mm("addmm_impl_cpu_"), "matmul": _bool_mm("addmm_impl_cpu_"), "addmm": _bool_mm("addmm_impl_cpu_"),
    "inner": _bool_mm("addmm_impl_cpu_"), "tensordot": _bool_mm("addmm_impl_cpu_"), "bmm": _bool_mm("bmm"),
    "baddbmm": _bool_mm("bmm"), "mv": _bool_mm("addmv_impl_cpu"), "addmv": _bool_mm("addmv_impl_cpu"),
    "dot": _bool_mm("dot"), "vdot": _bool_mm("dot"),
    "lerp": ("biu", _NI, "\"lerp_kernel_scalar\" not implemented for '{dt}'"),
    "topk": ("b", _RT, "topk does not support bool dtypes on CPU"),
    "einsum": _bool_mm("bmm"), "cross": _bool_mm("cross"),
}


def reject_kinds(fn, kinds, exc, msg):
    """fn, raising exc(msg) when every Tensor among its first two operands has a dtype kind in `kinds`."""
    first = 1 if fn.__name__ == "einsum" else 0  # (einsum's operands follow the equation)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        hit = None
        for a in args[first:first + 2]:
            if isinstance(a, Tensor):
                if _kind(a) not in kinds:
                    return fn(*args, **kwargs)
                hit = a
        if hit is not None:
            _raise(exc, msg, hit)
        return fn(*args, **kwargs)
    return wrapper


# torch.<name>(input, other): functions whose input (and, for the second set, other) must be a Tensor; a
# Python number there is torch's TypeError (the Tensor methods and operators take numbers)
TENSOR_INPUT = frozenset("""eq ne lt le gt ge greater less greater_equal less_equal not_equal maximum minimum fmax
fmin atan2 arctan2 hypot copysign fmod logaddexp logaddexp2 dist isclose ldexp igamma igammac kron""".split())
TENSOR_OTHER = frozenset("maximum minimum fmax fmin atan2 arctan2 hypot logaddexp logaddexp2 dist isclose ldexp "
                         "igamma igammac kron".split())


def require_tensor_operands(fn, name, complex_rule=None):
    """fn, raising torch's TypeError when input (and for TENSOR_OTHER, other) is not a Tensor, and with
    `complex_rule` (exc, msg) also rejecting complex operands (one wrapper rather than two)."""
    other_too = name in TENSOR_OTHER
    exc, msg = complex_rule if complex_rule is not None else (None, None)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        a = args[0] if args else kwargs.get("input")
        if not isinstance(a, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
        b = args[1] if len(args) > 1 else kwargs.get("other")
        if other_too and not isinstance(b, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}")
        if exc is not None:
            if _kind(a) == "c":
                _raise(exc, msg, a)
            if isinstance(b, Tensor) and _kind(b) == "c":
                _raise(exc, msg, b)
            if b.__class__ is complex:
                raise exc(msg.format(dt="ComplexDouble" if a._np_dtype() == "float64" else "ComplexFloat"))
        return fn(*args, **kwargs)
    return wrapper


# Tensor's operators and the rule each follows
_DUNDERS = {"__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__mod__": "remainder",
            "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide", "__rmod__": "remainder",
            "__imod__": "remainder", "__ifloordiv__": "floor_divide"}


def guard_method(name: str, attr):
    """Tensor attribute `name` (x.name, its in-place form x.name_, or an operator) with the rules for its op:
    the dtype-kind rule inside, the complex rule outside. Anything not callable is returned as it is."""
    if not callable(attr):
        return attr
    op = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    kind_rule = KIND_RULES["matmul"] if name == "__matmul__" else KIND_RULES.get(op)
    if kind_rule is not None and not getattr(attr, "_rejects_kinds", False):  # (unless attr applies them itself)
        attr = reject_kinds(attr, *kind_rule)
    rule = RULES[_DUNDERS[name]] if name in _DUNDERS else RULES.get(op)
    if rule is not None:
        attr = reject_complex(attr, *rule)
    if name in ("abs_", "absolute_"):  # (abs itself takes complex input)
        attr = reject_complex(attr, _RT, "In-place abs is not supported for complex tensors.")
    return attr


def guard_namespace(namespace: dict) -> None:
    """The rules applied to the torch functions of `namespace` (funcgrad._torch's, once it holds them all), and
    torch's TypeError for a number where TENSOR_INPUT's functions take a Tensor."""
    for name, rule in KIND_RULES.items():
        f = namespace.get(name)
        if callable(f):
            namespace[name] = reject_kinds(f, *rule)
    lin = namespace.get("linalg")
    if lin is not None and callable(getattr(lin, "cross", None)):
        lin.cross = reject_kinds(lin.cross, *KIND_RULES["cross"])
    for name, (exc, msg) in RULES.items():
        f = namespace.get(name)
        if callable(f):
            namespace[name] = reject_complex(f, exc, msg)
    for name in TENSOR_INPUT:  # (last: one wrapper does both checks where a complex rule applies too)
        f = namespace.get(name)
        if callable(f):
            rule = RULES.get(name) if getattr(f, "_rejects_complex", False) else None
            namespace[name] = require_tensor_operands(f.__wrapped__ if rule else f, name, rule)


# torch.special's functions with no float16/bfloat16 kernel (each `<name>_cpu`): a half result dtype raises
NO_HALF = frozenset("""airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1
modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 erfcx
log_ndtr ndtri zeta chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w
shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l
legendre_polynomial_p""".split())
_HALF = {"float16": "Half", "bfloat16": "BFloat16"}


def reject_half(fn, name):
    """fn, raising torch's NotImplementedError when the result dtype of its (first two) operands is float16 or
    bfloat16."""
    from .ops._common import _result_type_many  # (the ops sit above this module's users)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        given = list(args[:2]) + [kwargs[k] for k in ("input", "other", "n") if k in kwargs]
        ops = [a for a in given if isinstance(a, Tensor) or a.__class__ in (int, float, bool)]
        if any(isinstance(a, Tensor) for a in ops):
            dt = _HALF.get(_result_type_many(ops).name)
            if dt is not None:
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dt}'")
        return fn(*args, **kwargs)
    return wrapper


def install_special(namespace: dict) -> None:
    """The same for torch.special's names, and torch's missing half kernels (NO_HALF)."""
    rules = dict(RULES, xlog1py=_kernel("xlog1py_cpu"), psi=_kernel("digamma"), gammaln=_kernel("lgamma_vml_cpu"))
    for name in _SPECIAL + ("psi", "gammaln", "round"):
        f = namespace.get(name)
        if callable(f) and name in rules:
            namespace[name] = reject_complex(f, *rules[name])
    for name in NO_HALF:
        f = namespace.get(name)
        if callable(f):
            g = namespace[name] = reject_half(f, name)
            g.__qualname__, g.__module__ = name, namespace.get("__name__", g.__module__)  # (pickle finds it there)
