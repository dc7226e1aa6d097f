"""torch-style functions over tensors (also installed as Tensor methods), with PyTorch's semantics:
type promotion (tensors over zero-dim tensors over Python scalars), `dim=`/`keepdim=`, integer
division rules, (values, indices) named tuples, views that alias their base.

Each op is an Array-level function of funcgrad primitives / funcgrad.numpy applied through
`_apply*` (which records it for autograd when needed); derivative formulas come from the primitives.
"""
from __future__ import annotations

import builtins
import collections
import math

import numpy as np

from . import _jnp as jnp
from .._jax import nn as _jnn
from .._src.core.array import Array
from .._src.core.dtypes import is_float as _is_float
from .._src.prims import elementwise as ew
from .._src.prims import special as _sp
from .._src.prims import stop_gradient as _stop_gradient
from .._src.prims.linalg import dot_general as _dot_general
from .._src.prims.reduction import reduce_sum as _reduce_sum, reduce_sum_p as _reduce_sum_p
from .._src.prims.shape import reshape as _reshape
from .._src.prims.shape import broadcast_in_dim as _broadcast_in_dim
from . import _dtype as D
from . import _functional
from . import _torch_select
from . import _tensor as _TM
from ..autograd.grad_mode import state as _gs
from ._argcheck import (DtypeName, check_out_dtype as _check_out_dtype, check_same_dtype as _check_same_dtype,
                        dtype_error as _dtype_error)
from ._tensor import (Tensor, _apply, _apply1, _apply_nograd, _apply_prim, _apply_prim_scalar, _dim, _make,
                      _req, _view, _views, _wrap)

_bool = builtins.bool
_int = builtins.int
_float = builtins.float
_min = builtins.min
_max = builtins.max
_sum = builtins.sum
_abs = builtins.abs
_any = builtins.any
_all = builtins.all
_range = builtins.range
_NPB = np.dtype(np.bool_)
_NPI64 = np.dtype(np.int64)


# --- named tuples (torch.return_types) --------------------------------------------------------------------
from . import return_types  # noqa: E402  (torch.return_types: every named result, defined once)
from ._tensor import _legacy


# --- helpers -------------------------------------------------------------------------------------------

def _is_scalar(x) -> bool:
    return isinstance(x, (_bool, _int, _float, complex, np.generic)) and not isinstance(x, Tensor)


def _as_tensor(x, dtype=None):
    if isinstance(x, Tensor):
        return x
    from ._creation import tensor
    return tensor(x, dtype=dtype)


def _cast(a, dt):
    return a if a.dtype == dt else ew.convert_element_type(a, dt)


def _scalar_arr(s, dt):
    if isinstance(s, Tensor):
        s = s.item()
    try:
        b = np.array(s, dt)
    except (OverflowError, ValueError):
        b = np.array(s).astype(dt)
    return Array(b)


def _bshape(sa, sb):
    """Broadcast shape of two shapes, with torch's error message."""
    na, nb = len(sa), len(sb)
    n = _max(na, nb)
    out = []
    for i in _range(n):
        a = sa[i - n + na] if i - n + na >= 0 else 1
        b = sb[i - n + nb] if i - n + nb >= 0 else 1
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                               f"non-singleton dimension {i}")
        out.append(b if a == 1 else a)
    return tuple(out)


def _bid(x, shape):
    n = len(shape)
    return _broadcast_in_dim(x, shape, tuple(_range(n - x.ndim, n)))


def _bc(prim):
    """An elementwise binary primitive with broadcasting. NumPy broadcasts concrete operands itself; so it
    does a concrete 0-d constant against an operand being recorded on a tape over concrete values (its
    cotangent is never needed); otherwise operands are broadcast explicitly."""
    def f(p, q):
        sp, sq = p.shape, q.shape
        if sp != sq:
            pa, qa = p.__class__ is Array, q.__class__ is Array
            if pa and qa:
                return prim(p, q)
            if qa and not sq and getattr(p, "val", None).__class__ is Array:
                return prim(p, q)
            if pa and not sp and getattr(q, "val", None).__class__ is Array:
                return prim(p, q)
            shape = _bshape(sp, sq)
            if sp != shape:
                p = _bid(p, shape)
            if sq != shape:
                q = _bid(q, shape)
        return prim(p, q)
    return f


def _promote(x, y):
    """torch.result_type of two operands (tensors or Python scalars)."""
    return _result_type_many((x, y))


def _result_type_many(xs):
    """torch's promotion over operands: dimensioned tensors, then 0-d tensors, then Python scalars."""
    dims, zeros, scal = [], [], []
    for v in xs:
        if isinstance(v, Tensor):
            (dims if v.ndim else zeros).append(v._np_dtype())
        else:
            scal.append(D.scalar_dtype(v))
    return D.result_type(dims, zeros, scal)


def _norm_scalar(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return _as_tensor(v)
    return v


_ARITH, _TRUEDIV, _CMP = 0, 1, 2


def _binop(name, afn, x, y, kind=_ARITH, cdt=None, prim=None):
    """x op y with torch promotion; afn works on Arrays of one dtype (broadcasting via _bc). prim: the
    primitive afn binds (alone) on operands of one numeric dtype, which then take the direct path."""
    if isinstance(x, Tensor):
        xv = x._v
        if isinstance(y, Tensor):
            yv = y._v
            # the hot path: two concrete tensors of one dtype
            if xv is not None and yv is not None and xv.dtype == yv.dtype and cdt is None and \
                    (kind != _TRUEDIV or D.kind(xv.dtype) in "fc"):
                if xv.shape != yv.shape:
                    _bshape(xv.shape, yv.shape)
                if prim is not None and D.kind(xv.dtype) in "fciu":
                    return _apply_prim(name, prim, afn, (x, y))
                if not (_gs.enabled and (x._rg or y._rg or x._base is not None and _req(x)
                                         or y._base is not None and _req(y))) and not _TM._fw_on:
                    return _wrap(afn(x._arr(), y._arr()))
        elif prim is not None and xv is not None and (y.__class__ is _float or y.__class__ is _int) and \
                D.kind(xv.dtype) == "f":  # a float tensor and a Python number: the tensor's dtype
            return _apply_prim_scalar(name, prim, afn, x, y, False)
    elif prim is not None and (x.__class__ is _float or x.__class__ is _int) and isinstance(y, Tensor) and \
            y._v is not None and D.kind(y._v.dtype) == "f":
        return _apply_prim_scalar(name, prim, afn, y, x, True)
    y = _norm_scalar(y)
    x = _norm_scalar(x)
    xt = isinstance(x, Tensor)
    yt = isinstance(y, Tensor)
    if xt and yt:
        dx, dy = x._np_dtype(), y._np_dtype()
        dt = dx if dx == dy else _promote(x, y)
    elif xt or yt:  # a tensor t and a scalar s (a Python number on a float tensor keeps its dtype)
        t, s, arg = (x, y, "other") if xt else (y, x, "input")
        if not _is_scalar(s):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor or Number, not {type(s).__name__}")
        dt = t._np_dtype()
        if D.kind(dt) != "f" or (s.__class__ is not _float and s.__class__ is not _int):
            dt = _promote(x, y)
    else:
        raise TypeError(f"{name}(): expected a Tensor operand")
    if kind == _TRUEDIV and dt.kind in "biu":
        dt = D.default_float()
    if cdt is not None:
        dt = cdt(dt)
    if xt and yt:
        sx = x._v.shape if x._v is not None else x._a.shape
        sy = y._v.shape if y._v is not None else y._a.shape
        if sx != sy:
            _bshape(sx, sy)

        def fn(p, q):
            return afn(_cast(p, dt), _cast(q, dt))
        if kind == _CMP:
            return _apply_nograd(fn, (x, y))
        return _apply(name, fn, (x, y))
    s = _scalar_arr(s, dt)
    if xt:
        def fn(p):
            return afn(_cast(p, dt), s)
    else:
        def fn(q):
            return afn(s, _cast(q, dt))
    if kind == _CMP:
        return _apply_nograd(fn, (t,))
    return _apply1(name, fn, t)


def _dims(dim, ndim, dup_ok=False):
    """A dim argument (int, tuple/list, or None) as a sorted tuple of axes (None: all; a 0-d tensor's dim 0
    or -1 reduces nothing, ())."""
    if dim is None:
        return None
    if ndim == 0:
        for i, d in enumerate(dim if isinstance(dim, (list, tuple)) else (dim,)):
            _dim(d, 0)
            if i and not dup_ok:  # (0 and -1 both name a 0-d tensor's dim 0)
                raise RuntimeError("dim 0 appears multiple times in the list of dims")
        return None if isinstance(dim, (list, tuple)) and len(dim) == 0 else ()
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        ds = [_dim(d, ndim) for d in dim]
        for i, d in enumerate(ds):
            if d in ds[:i] and not dup_ok:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(sorted(set(ds)))
    return (_dim(dim, ndim),)


def _np(dt):
    return None if dt is None else D.to_np(dt)


# --- elementwise unary ---------------------------------------------------------------------------------

def _float_unary(name, prim, card=None):
    """A float-valued elementwise function (integer inputs computed in the default float dtype); card: the
    primitive prim binds, for the direct path on float tensors."""
    def fn_for(dt):
        if D.kind(dt) in "fc":
            return prim
        fdt = D.default_float()
        return lambda a: prim(ew.convert_element_type(a, fdt))

    def op(input, *, out=None):
        if card is not None:
            v = input._v
            if v is not None and D.kind(v.dtype) in "fc":
                r = _apply_prim(name, card, prim, (input,))
                return r if out is None else _out(r, out)
        r = _apply1(name, fn_for(input._np_dtype()), input)
        return _out(r, out)
    op.__name__ = op.__qualname__ = name.lower()
    return op


def _out(r, out):
    """r written into out= (torch's error where r's dtype cannot be cast to out's: float -> int, ...)."""
    if out is None:
        return r
    if isinstance(r, Tensor) and r._np_dtype() != out._np_dtype() and not D.can_cast(r._np_dtype(), out._np_dtype()):
        raise _dtype_error("result type {0} can't be cast to the desired output type {1}", r, out)
    return _out_cast(r, out)


def _out_cast(r, out):
    """r written into out=, cast to its dtype whatever it is (torch.sum computes in out's dtype)."""
    if out is None:
        return r
    out.copy_(r) if out.shape == r.shape else out.set_(r)
    return out


def _sigmoid(a):
    return ew.logistic(a)


def _rsqrt(a):
    return ew.rsqrt(a)


def _log_sigmoid(a):
    return -jnp.logaddexp(ew.neg(a), _scalar_arr(0, a.dtype))


exp = _float_unary("Exp", ew.exp, ew.exp_p)
exp2 = _float_unary("Exp2", ew.exp2)
expm1 = _float_unary("Expm1", ew.expm1, ew.expm1_p)
log = _float_unary("Log", ew.log, ew.log_p)
log2 = _float_unary("Log2", ew.log2)
log10 = _float_unary("Log10", ew.log10)
log1p = _float_unary("Log1p", ew.log1p, ew.log1p_p)
sqrt = _float_unary("Sqrt", ew.sqrt, ew.sqrt_p)
rsqrt = _float_unary("Rsqrt", _rsqrt, ew.rsqrt_p)
sin = _float_unary("Sin", ew.sin, ew.sin_p)
cos = _float_unary("Cos", ew.cos, ew.cos_p)
tan = _float_unary("Tan", ew.tan)
asin = arcsin = _float_unary("Asin", ew.asin)
acos = arccos = _float_unary("Acos", ew.acos)
atan = arctan = _float_unary("Atan", ew.atan)
sinh = _float_unary("Sinh", ew.sinh)
cosh = _float_unary("Cosh", ew.cosh)
tanh = _float_unary("Tanh", ew.tanh, ew.tanh_p)
asinh = arcsinh = _float_unary("Asinh", ew.asinh)
acosh = arccosh = _float_unary("Acosh", ew.acosh)
atanh = arctanh = _float_unary("Atanh", ew.atanh)
sigmoid = _float_unary("Sigmoid", _sigmoid, ew.logistic_p)
erf = _float_unary("Erf", _sp.erf)
erfc = _float_unary("Erfc", _sp.erfc)
erfinv = _float_unary("Erfinv", _sp.erf_inv)
lgamma = _float_unary("Lgamma", _sp.lgamma)
digamma = _float_unary("Digamma", _sp.digamma)
reciprocal = _float_unary("Reciprocal", lambda a: ew.div(_scalar_arr(1, a.dtype), a))


def _same_unary(name, afn, bool_ok=True):
    def op(input, *, out=None):
        if not bool_ok and input._np_dtype() == _NPB:
            raise RuntimeError(f"{name.lower()}: bool input is not supported")
        return _out(_apply1(name, afn, input), out)
    op.__name__ = op.__qualname__ = name.lower()
    return op


def _zero_for(a):
    """0 of a's dtype: a 0-d Array where NumPy broadcasts it (concrete a, or a recorded over concrete
    values, see _bc), a full array under abstract tracing."""
    if a.__class__ is Array or getattr(a, "val", None).__class__ is Array:
        return Array(np.zeros((), a.dtype))
    return jnp.zeros_like(a)


def _zeros_like_arr(a):
    return jnp.zeros_like(a)


def _abs_fn(a):
    if a.dtype == _NPB:
        return a
    return ew.abs_p.bind(a, kink="torch")  # torch's derivative at 0: sign(x), and 0 at a complex 0


def _tabs(a):
    return ew.abs_p.bind(a, kink="torch")


def _neg_fn(a):
    if a.dtype == _NPB:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return ew.neg(a)


def _sign_fn(a):
    if a.dtype == _NPB:
        return a
    if D.kind(a.dtype) == "f":  # torch's sign(nan) is 0
        return ew.select(ew.ne(a, a), _zero_for(a) + jnp.zeros_like(a), ew.sign(a))
    return ew.sign(a)


def _int_id(f):
    return lambda a: a if a.dtype.kind in "biu" else f(a)


def _not_impl(kernel, kinds="b"):
    """A dtype check raising torch's NotImplementedError for a kernel without a bool (or integer) version."""
    def check(dt):
        dt = np.dtype(dt)
        if dt.kind in kinds:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy_name(dt)}'")
        return dt
    return check


def _checked_unary(op, check):
    def f(input, *args, **kwargs):
        check(input._np_dtype())
        return op(input, *args, **kwargs)
    f.__name__ = f.__qualname__ = op.__name__
    f.__doc__ = op.__doc__
    return f


abs = absolute = _checked_unary(_same_unary("Abs", _abs_fn), _not_impl("abs_cpu"))  # noqa: A001
neg = negative = _same_unary("Neg", _neg_fn)
sign = _same_unary("Sign", _sign_fn)
sgn = sign
floor = _checked_unary(_same_unary("Floor", _int_id(ew.floor)), _not_impl("floor_vml_cpu"))
ceil = _checked_unary(_same_unary("Ceil", _int_id(ew.ceil)), _not_impl("ceil_vml_cpu"))
trunc = fix = _checked_unary(_same_unary("Trunc", _int_id(lambda a: jnp.trunc(a))), _not_impl("trunc_vml_cpu"))
frac = _checked_unary(_same_unary("Frac", lambda a: ew.sub(a, jnp.trunc(a))), _not_impl("frac_cpu", "biu"))
_square = _same_unary("Square", lambda a: ew.integer_pow(a, 2))


def square(input, *, out=None):
    """input ** 2 (a bool tensor squares as int64, as torch's pow(x, 2) promotes it)."""
    if input._np_dtype() == _NPB:
        input = input.to(D.from_np(np.dtype(np.int64)))
    return _square(input, out=out)
_RELU_P = ew.relu_p
_TORCH_KINK = {"kink": "torch"}


def _relu_torch(a):
    return _RELU_P.bind(a, kink="torch")


_MAX_P = ew.max_p


def relu(input, *, out=None):
    """torch.relu: the relu card with torch's convention (one recorded node; NaN stays NaN, -0.0 stays -0.0,
    derivative 1 at NaN; jax.nn.relu binds the same card with JAX's). Unrecorded on
    concrete floats its impl runs straight on the buffer."""
    v = input._v
    if v is not None and D.kind(v.dtype) == "f" and \
            not (_gs.enabled and (input._rg or input._base is not None and _req(input))) and not _TM._fw_on:
        r = _RELU_P.impl(v, kink="torch")
        r = _make(r if r.__class__ is np.ndarray and r.base is None else np.array(r))
        return r if out is None else _out(r, out)
    kind = input._np_dtype().kind
    if kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if kind == "c":  # (checked here, off the float fast path, rather than by _complex_reject's wrapper)
        raise NotImplementedError("clamp is not supported for complex types")
    r = _apply_prim("Relu", _RELU_P, _relu_torch, (input,), _TORCH_KINK) if v is not None else \
        _apply1("Relu", _relu_torch, input)
    return r if out is None else _out(r, out)


relu._rejects_complex = True  # (see _complex_reject.py: no wrapper needed)


_positive = _same_unary("Positive", lambda a: a)


def positive(input):
    if input._np_dtype() == _NPB:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return _positive(input)


def round(input, *, decimals=0, out=None):  # noqa: A001
    _not_impl("round_vml_cpu")(input._np_dtype())
    return _out(_apply1("Round", _int_id(lambda a: jnp.round(a, decimals)), input), out)


def logical_not(input, *, out=None):
    return _out(_apply_nograd(lambda a: ew.eq(a, _scalar_arr(0, a.dtype)) if a.dtype != _NPB
                              else jnp.logical_not(a), (input,)), out)


def bitwise_not(input, *, out=None):
    if D.kind(input._np_dtype()) in "fc":
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for '{_legacy_name(input._np_dtype())}'")
    return _out(_apply_nograd(lambda a: jnp.logical_not(a) if a.dtype == _NPB else ew.bitwise_not(a),
                              (input,)), out)


def _predicate(test):
    """The torch predicate of the same name (isnan, signbit, ...): ``test`` elementwise, a bool Tensor that
    carries no gradient."""
    def predicate(input):
        return _apply_nograd(test, (input,))
    predicate.__name__ = predicate.__qualname__ = test.__name__
    return predicate


isnan = _predicate(jnp.isnan)
isinf = _predicate(jnp.isinf)
isfinite = _predicate(jnp.isfinite)
isposinf = _predicate(jnp.isposinf)
isneginf = _predicate(jnp.isneginf)
signbit = _predicate(jnp.signbit)
isreal = _predicate(jnp.isreal)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return _out(_apply1("NanToNum", lambda a: jnp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)
                        if D.kind(a.dtype) in "fc" else a, input), out)


# --- elementwise binary --------------------------------------------------------------------------------

_add = _bc(ew.add)
_sub = _bc(ew.sub)
_mul = _bc(ew.mul)
_div = _bc(ew.div)
_eq = _bc(ew.eq)
_ne = _bc(ew.ne)
_lt = _bc(ew.lt)
_le = _bc(ew.le)
_gt = _bc(ew.gt)
_ge = _bc(ew.ge)
_maximum = _bc(ew.max)
_minimum = _bc(ew.min)


def _bool_add(p, q):
    return _maximum(p, q) if p.dtype == _NPB else _add(p, q)


def _bool_mul(p, q):
    return _minimum(p, q) if p.dtype == _NPB else _mul(p, q)


def _sub_fn(p, q):
    if p.dtype == _NPB:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                           "`^` or `logical_xor()` operator instead.")
    return _sub(p, q)


_ADD_P, _SUB_P, _MUL_P, _DIV_P = ew.add_p, ew.sub_p, ew.mul_p, ew.div_p


def _scaled(input, other, alpha):
    """alpha * other for add/sub(alpha=): in the result's dtype, as torch (a bfloat16 `other` added to a float32
    tensor is scaled in float32, not rounded to bfloat16 first)."""
    if not isinstance(other, Tensor):
        return other * alpha
    if isinstance(input, Tensor) and input._np_dtype() != other._np_dtype():
        dt = D.promote_types(input._np_dtype(), other._np_dtype())
        if input.ndim or not other.ndim:  # (a 0-d input does not decide the dtype of a dimensioned other)
            other = other.to(D.from_np(dt))
    return mul(other, alpha)


def add(input, other, *, alpha=1, out=None):
    if alpha != 1:
        other = _scaled(input, other, alpha)
    r = _binop("Add", _bool_add, input, other, prim=_ADD_P)
    return r if out is None else _out(r, out)


def _is_bool(x):
    return x.__class__ is _bool or isinstance(x, Tensor) and x._np_dtype() == _NPB


def sub(input, other, *, alpha=1, out=None):
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if alpha != 1:
        other = _scaled(input, other, alpha)
    r = _binop("Sub", _sub_fn, input, other, prim=_SUB_P)
    return r if out is None else _out(r, out)


subtract = sub


def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    r = _binop("Mul", _bool_mul, input, other, prim=_MUL_P)
    return r if out is None else _out(r, out)


multiply = mul


def _float_floor_div(a, b):
    """Python's float floor division: (a - fmod(a, b)) / b, one less where fmod's sign differs from b's,
    rounded to the nearest integer; a signed zero keeps the sign of a / b and b == 0 gives a / b."""
    z = jnp.zeros_like(a)
    m = jnp.fmod(a, b)
    d = ew.div(ew.sub(a, m), b)
    d = ew.select(ew.bitwise_and(ew.ne(m, z), ew.ne(ew.lt(b, z), ew.lt(m, z))), ew.sub(d, jnp.ones_like(d)), d)
    fl = ew.floor(d)
    fl = ew.select(ew.gt(ew.sub(d, fl), jnp.full_like(d, 0.5)), ew.add(fl, jnp.ones_like(fl)), fl)
    q = ew.div(a, b)
    fl = ew.select(ew.eq(d, z), jnp.copysign(z, q), fl)
    return ew.select(ew.eq(b, z), q, fl)


def _floor_div_fn(p, q):
    if p.dtype.kind in "iu":
        return _bc(lambda a, b: jnp.floor_divide(a, b))(p, q)
    return _bc(_float_floor_div)(p, q)


def _int_trunc_div(a, b):
    q = jnp.floor_divide(a, b)
    r = ew.sub(a, ew.mul(q, b))
    z = jnp.zeros_like(a)
    fix = ew.bitwise_and(ew.ne(r, z), ew.ne(ew.lt(a, z), ew.lt(b, z)))
    return ew.select(fix, ew.add(q, jnp.ones_like(q)), q)


def _trunc_div_fn(p, q):
    if p.dtype.kind in "iu":
        return _bc(_int_trunc_div)(p, q)
    return _bc(lambda a, b: jnp.trunc(ew.div(a, b)))(p, q)


def _check_int_div(name, input, other):
    """torch raises for integer division by zero (and has no bool kernel for floor/remainder/fmod)."""
    dt = _promote(input, other)
    if dt == _NPB and name is not None:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    if dt.kind not in "biu":
        return
    if isinstance(other, Tensor):
        v = other._v if other._v is not None else getattr(other._a, "val", None)
        if v is None and other._a.__class__ is Array:  # (an in-place op's operand, handed over as an Array)
            v = other._a._buf
        if v is None:
            return
        if isinstance(input, Tensor) and 0 in _bshape(tuple(input.shape), tuple(other.shape)):
            return  # (nothing is divided)
        if not np.all(np.asarray(v)):
            raise RuntimeError("ZeroDivisionError")
    elif _is_scalar(other) and other == 0:
        raise RuntimeError("ZeroDivisionError")


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return _out(_binop("Div", _div, input, other, _TRUEDIV, prim=_DIV_P), out)
    if rounding_mode == "floor":
        _check_int_div("div_floor_cpu", input, other)
        return _out(_binop("Div", _floor_div_fn, input, other), out)
    if rounding_mode == "trunc":
        _check_int_div("div_trunc_cpu", input, other)
        return _out(_binop("Div", _trunc_div_fn, input, other), out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


divide = true_divide = div


def floor_divide(input, other, *, out=None):
    _check_int_div("div_floor_cpu", input, other)
    return _out(_binop("FloorDivide", _floor_div_fn, input, other), out)


def remainder(input, other, *, out=None):
    _check_int_div("remainder_cpu", input, other)
    return _out(_binop("Remainder", _bc(_remainder_fn), input, other), out)


def _remainder_fn(a, b):
    """Python's modulo, as torch: fmod(a, b), plus b where that is nonzero with a sign unlike b's. Through
    the rem card, so d/da is 1 everywhere (also at a == 0) and d/db is -floor(a / b)."""
    if D.kind(a.dtype) != "f":
        return jnp.remainder(a, b)
    m = ew.rem(a, b)
    z = jnp.zeros_like(m)
    fix = ew.bitwise_and(ew.ne(m, z), ew.ne(ew.lt(m, z), ew.lt(b, z)))
    return ew.select(fix, ew.add(m, b), m)


def fmod(input, other, *, out=None):
    _check_int_div("fmod_cpu", input, other)
    return _out(_binop("Fmod", _bc(lambda a, b: jnp.fmod(a, b)), input, other), out)


def _int_pow(a, b):
    """Integer a ** b, torch's values at a negative exponent (NumPy raises): 1 ** b = 1, (-1) ** b = +-1 by
    b's parity, and 0 for every other base (0 included)."""
    z = jnp.zeros_like(b)
    neg = ew.lt(b, z)
    r = ew.pow(a, ew.select(neg, z, b))
    one = jnp.ones_like(a)
    odd = ew.ne(ew.bitwise_and(b, jnp.ones_like(b)), z)
    at_neg = ew.select(ew.eq(a, one), one,
                       ew.select(ew.eq(a, ew.neg(one)), ew.select(odd, ew.neg(one), one), jnp.zeros_like(a)))
    return ew.select(neg, at_neg, r)


def _float_pow(a, b):
    """a ** b with C's pow at a = -inf and a non-integer b: +inf for b > 0, +0 for b < 0 (NumPy gives NaN)."""
    if a.dtype.kind == "i":
        return _int_pow(a, b)
    r = ew.pow(a, b, "torch")  # (torch's derivative: 0 wherever the exponent is 0)
    if D.kind(a.dtype) != "f":
        return r
    z = jnp.zeros_like(r)
    fix = ew.bitwise_and(ew.eq(a, jnp.full_like(a, -np.inf)), ew.ne(b, ew.floor(b)))
    fix = ew.bitwise_and(fix, ew.eq(b, b))
    return ew.select(fix, ew.select(ew.gt(b, jnp.zeros_like(b)), jnp.full_like(r, np.inf), z), r)


def _pow_fn(p, q):
    return _bc(_float_pow)(p, q)


def pow(input, exponent, *, out=None):  # noqa: A001
    if isinstance(input, Tensor) and isinstance(exponent, _int) and not isinstance(exponent, _bool):
        dt = input._np_dtype()
        if dt.kind in "biu" and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if dt != _NPB:
            e = exponent
            return _out(_apply1("Pow", lambda a: ew.integer_pow(a, e), input), out)
    if isinstance(input, Tensor) and isinstance(exponent, _float) and exponent in (0.5, -0.5) and \
            D.kind(input._np_dtype()) in "fc":  # torch's sqrt / rsqrt (rsqrt(-0.0) is -inf)
        return _out(_apply1("Pow", ew.sqrt if exponent > 0 else _rsqrt, input), out)
    if isinstance(input, Tensor) and exponent.__class__ is _bool and input._np_dtype() == _NPB:
        return _out(input.clone() if exponent else input.new_ones(input.shape), out)
    if _promote(input, exponent) == _NPB:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    return _out(_binop("Pow", _pow_fn, input, exponent), out)


def float_power(input, exponent, *, out=None):
    """pow in double precision: float64, or complex128 when either operand is complex (a Python complex
    exponent included), as torch."""
    cplx = _any(isinstance(v, complex) or isinstance(v, Tensor) and v._np_dtype().kind == "c"
                for v in (input, exponent))
    dt = D.complex128 if cplx else D.float64
    return _out(pow(input.to(dt) if isinstance(input, Tensor) else input,
                    exponent.to(dt) if isinstance(exponent, Tensor) else exponent), out)


def _tensor_arg(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _nan_both(extremum):
    """maximum / minimum with torch's gradient at NaN: where either operand is NaN both operands get the
    whole cotangent (elsewhere the card's: ties split it in halves). Concrete operands without a NaN skip
    the extra passes (the values are the card's either way)."""
    def f(a, b):
        r = extremum(a, b)
        if D.kind(a.dtype) != "f" or (a.__class__ is Array and b.__class__ is Array and
                                   not (np.isnan(a._buf).any() or np.isnan(b._buf).any())):
            return r
        if a.shape != b.shape:
            a, b = jnp.broadcast_arrays(a, b)
        return ew.select(ew.bitwise_or(ew.ne(a, a), ew.ne(b, b)), ew.add(a, b), r)
    return f


_maximum_nan = _nan_both(_maximum)
_minimum_nan = _nan_both(_minimum)


def maximum(input, other, *, out=None):
    _tensor_arg("maximum", other)
    return _out(_binop("Maximum", _maximum_nan, input, other), out)


def minimum(input, other, *, out=None):
    _tensor_arg("minimum", other)
    return _out(_binop("Minimum", _minimum_nan, input, other), out)


def _fextremum(keep_a):
    """fmax / fmin as torch: a where b is NaN or a wins (ties included, so -0.0 vs 0.0 gives a), else b;
    the cotangent goes wholly to the operand chosen, except that torch's forward formula of fmax gives a tie
    to b (max's kink="torch" rule)."""
    def f(a, b):
        if D.kind(a.dtype) not in "fc":
            return ew.select(keep_a(a, b), a, b)
        if keep_a is ew.ge:
            return ew.select(ew.ne(b, b), a, ew.select(ew.ne(a, a), b, ew.max_p.bind(a, b, kink="torch")))
        return ew.select(ew.bitwise_or(ew.ne(b, b), keep_a(a, b)), a, b)
    return _bc(lambda a, b: f(*jnp.broadcast_arrays(a, b)) if a.shape != b.shape else f(a, b))


def fmax(input, other, *, out=None):
    _tensor_arg("fmax", other)
    return _out(_binop("Fmax", _fextremum(ew.ge), input, other), out)


def fmin(input, other, *, out=None):
    _tensor_arg("fmin", other)
    return _out(_binop("Fmin", _fextremum(ew.le), input, other), out)


def atan2(input, other, *, out=None):
    _tensor_arg("atan2", other)
    return _out(_binop("Atan2", _bc(lambda a, b: ew.atan2(a, b, "torch")), input, other, _TRUEDIV), out)


arctan2 = atan2


def hypot(input, other):
    _tensor_arg("hypot", other)
    _not_impl("hypot_cpu", "biu")(_promote(input, other))
    return _binop("Hypot", _bc(lambda a, b: ew.hypot(a, b, "torch")), input, other, _TRUEDIV)


def _complex_logaddexp(a, b):
    """torch's complex logaddexp: m + log1p(exp(n - m)), m the operand of the larger real part."""
    first = ew.ge(jnp.real(a), jnp.real(b))
    m, n = ew.select(first, a, b), ew.select(first, b, a)
    return m + jnp.log1p(jnp.exp(n - m))


def logaddexp(input, other):
    _tensor_arg("logaddexp", other)
    dt = _promote(input, other)
    _not_impl("logaddexp_cpu", "biu")(dt)
    if dt.kind == "c":
        return _binop("Logaddexp", _bc(_complex_logaddexp), input, other, _TRUEDIV)
    return _binop("Logaddexp", _bc(ew.logaddexp), input, other, _TRUEDIV)


def _copysign(a, b):
    """|a| with b's sign bit, with torch's |a| (derivative 0 at a == 0)."""
    mag = _tabs(a)
    return ew.select(jnp.signbit(b), ew.neg(mag), mag)


def copysign(input, other):
    return _binop("Copysign", _bc(_copysign), input, other, _TRUEDIV)


def xlogy(input, other, *, out=None):
    from ._special_ops import xlogy as _xlogy
    return _xlogy(input, other, out=out)


def lerp(input, end, weight, *, out=None):
    """input + weight (end - input), computed as torch does from the nearer end: for weight >= 0.5 it is
    end - (1 - weight)(end - input) (same derivatives; exact at weight = 1, and no inf - inf there)."""
    if isinstance(end, Tensor):
        _check_same_dtype("expected dtype {0:c} for `end` but got dtype {1:c}", input, end)
    if isinstance(weight, Tensor) and weight.ndim:  # (a 0-d weight is a number to torch)
        _check_same_dtype("expected dtype {0:c} for `weight` but got dtype {1:c}", input, weight)
    diff = sub(end, input)
    lo = add(input, mul(weight, diff))
    if isinstance(weight, Tensor):
        hi = sub(end, mul(sub(1, weight), diff))
        return _out(where(lt(weight, 0.5), lo, hi), out)
    if weight >= 0.5:
        return _out(sub(end, mul(1 - weight, diff)), out)
    return _out(lo, out)


def _comparison(name: str, op: str, compare):
    """The torch comparison of that name: compare on input and other broadcast in their promoted dtype, a bool
    Tensor (op is the name _binop records and puts in its errors)."""
    def comparison(input, other, *, out=None):
        return _out(_binop(op, compare, input, other, _CMP), out)
    comparison.__name__ = comparison.__qualname__ = name
    return comparison


eq = _comparison("eq", "Eq", _eq)
ne = _comparison("ne", "Ne", _ne)
lt = _comparison("lt", "Lt", _lt)
le = _comparison("le", "Le", _le)
gt = _comparison("gt", "Gt", _gt)
ge = _comparison("ge", "Ge", _ge)

not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _int_or_bool(name, dt):
    if D.kind(dt) in "fc":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy_name(dt)}'")
    return dt


def _legacy_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(np.dtype(dt).name, str(dt))


def bitwise_and(input, other):
    return _binop("BitwiseAnd", _bc(ew.bitwise_and), input, other, _ARITH,
                  lambda dt: _int_or_bool("bitwise_and", dt))


def bitwise_or(input, other):
    return _binop("BitwiseOr", _bc(ew.bitwise_or), input, other, _ARITH,
                  lambda dt: _int_or_bool("bitwise_or", dt))


def bitwise_xor(input, other):
    return _binop("BitwiseXor", _bc(ew.bitwise_xor), input, other, _ARITH,
                  lambda dt: _int_or_bool("bitwise_xor", dt))


def bitwise_left_shift(input, other):
    return _binop("LShift", _bc(lambda a, b: jnp.left_shift(a, b)), input, other, _ARITH,
                  _not_impl("lshift_cpu", "bfc"))


def bitwise_right_shift(input, other):
    return _binop("RShift", _bc(lambda a, b: jnp.right_shift(a, b)), input, other, _ARITH,
                  _not_impl("rshift_cpu", "bfc"))


def _truth(a):
    return a if a.dtype == _NPB else ew.ne(a, _scalar_arr(0, a.dtype))


def _logical(name, combine):
    def op(input, other, *, out=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        _tensor_arg(name, other)
        _bshape(tuple(input.shape), tuple(other.shape))
        dt = _promote(input, other)  # torch compares in the common dtype (a float64 1e-300 is 0 as float32)
        return _out(_apply_nograd(lambda a, b: _bc(combine)(_truth(_cast(a, dt)), _truth(_cast(b, dt))),
                                  (input, other)), out)
    op.__name__ = op.__qualname__ = name
    return op


logical_and = _logical("logical_and", ew.bitwise_and)
logical_or = _logical("logical_or", ew.bitwise_or)
logical_xor = _logical("logical_xor", ew.bitwise_xor)


# --- clamp / where / masked ------------------------------------------------------------------------------

def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo, hi = min, max
    dt = _result_type_many([input] + [v for v in (lo, hi) if v is not None])
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
        _not_impl("clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu" if lo is None
                  else "clamp_scalar_cpu")(dt)
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor) and D.kind(dt) in "iuf":
        # number bounds: one clamp_bounds primitive (one recorded node, one or two passes)
        params = {"lo": None if lo is None else _scalar_arr(lo, dt)._buf[()],
                  "hi": None if hi is None else _scalar_arr(hi, dt)._buf[()]}
        if input._np_dtype() == dt:
            r = _apply_prim("Clamp", ew.clamp_bounds_p, lambda a: ew.clamp_bounds_p.bind(a, **params),
                            (input,), params)
        else:
            r = _apply("Clamp", lambda a: ew.clamp_bounds_p.bind(_cast(a, dt), **params), (input,))
        return _out(r, out)
    ts = [input] + [v for v in (lo, hi) if isinstance(v, Tensor)]
    has_lo_t, has_hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    lo_s = None if lo is None or has_lo_t else _scalar_arr(lo, dt)
    hi_s = None if hi is None or has_hi_t else _scalar_arr(hi, dt)

    def fn(a, *bs):
        it = iter(bs)
        ops = [_cast(a, dt)] + [(_cast(next(it), dt) if is_t else s) for b, is_t, s in
                                ((lo, has_lo_t, lo_s), (hi, has_hi_t, hi_s)) if b is not None]
        shape = ops[0].shape
        for o in ops[1:]:
            if o.shape != shape:
                shape = _bshape(shape, o.shape)
        ops = [o if o.shape == shape else jnp.broadcast_to(o, shape) for o in ops]
        return _clamp_tensor_bounds(ops[0], ops[1] if lo is not None else None, ops[-1] if hi is not None else None)
    return _out(_apply("Clamp", fn, tuple(ts)), out)


def _clamp_tensor_bounds(a, lo, hi):
    """torch.clamp with a Tensor bound, on operands of one shape and dtype: a NaN operand gives NaN. Its
    derivatives are torch's (the cards' kink="torch" rules: forward and backward formulas differ at ties)."""
    if _is_float(a.dtype):
        if lo is not None and hi is not None:
            return ew.clamp_p.bind(lo, a, hi, kink="torch")
        return ew.max_p.bind(a, lo, kink="torch") if hi is None else ew.min_p.bind(a, hi, kink="torch")
    if lo is not None:  # integers and bool: values only
        a = ew.select(ew.lt(a, lo), lo, a)
    if hi is not None:
        a = ew.select(ew.gt(a, hi), hi, a)
    return a


clip = clamp


def _clamp_one(name, card):
    """clamp_min / clamp_max: with a Tensor bound, torch's clamp_min.Tensor / clamp_max.Tensor, whose forward
    formula gives a tie to the input (torch.clamp's gives it to the bound); elsewhere clamp's derivatives."""
    def fn(input, bound):
        if not isinstance(bound, Tensor):
            _not_impl(f"{name}_scalar_cpu")(_promote(input, bound))
            return clamp(input, **{name[-3:]: bound})
        dt = _result_type_many([input, bound])
        if not _is_float(dt):
            return clamp(input, **{name[-3:]: bound})

        def f(a, b):
            a, b = _cast(a, dt), _cast(b, dt)
            if a.shape != b.shape:
                a, b = jnp.broadcast_arrays(a, b)
            return ew.select(ew.eq(a, b), a, card.bind(a, b, kink="torch"))
        return _apply(name.capitalize(), f, (input, bound))
    fn.__name__ = fn.__qualname__ = name
    return fn


clamp_min = _clamp_one("clamp_min", ew.max_p)
clamp_max = _clamp_one("clamp_max", ew.min_p)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _as_tensor(condition)
    if cond._np_dtype() != _NPB:
        if cond._np_dtype() != np.uint8:  # (uint8 is accepted, deprecated, as torch)
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_legacy(cond._np_dtype())}")
        cond = cond.bool()
    dt = _result_type_many([v for v in (input, other)])
    xs = []
    consts = []
    for v in (input, other):
        if isinstance(v, Tensor):
            xs.append(v)
            consts.append(None)
        else:
            consts.append(_scalar_arr(v, dt))

    def fn(c, *ts):
        it = iter(ts)
        a = _cast(next(it), dt) if consts[0] is None else consts[0]
        b = _cast(next(it), dt) if consts[1] is None else consts[1]
        shape = _bshape(_bshape(c.shape, a.shape), b.shape)
        if c.shape != shape:
            c = jnp.broadcast_to(c, shape)
        if a.shape != shape:
            a = jnp.broadcast_to(a, shape)
        if b.shape != shape:
            b = jnp.broadcast_to(b, shape)
        return ew.select(c, a, b)
    return _out(_apply("Where", fn, (cond,) + tuple(xs)), out)


def masked_fill(input, mask, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    _check_mask(mask)
    dt = input._np_dtype()
    if isinstance(value, Tensor):
        def fn(a, m, v):
            shape = _bshape(a.shape, m.shape)
            return ew.select(jnp.broadcast_to(m, shape), jnp.broadcast_to(_cast(v, dt), shape),
                             jnp.broadcast_to(a, shape))
        return _apply("MaskedFill", fn, (input, mask, value))
    s = _scalar_arr(value, dt)

    def fn1(a, m):
        shape = _bshape(a.shape, m.shape)
        return ew.select(jnp.broadcast_to(m, shape), jnp.broadcast_to(s, shape), jnp.broadcast_to(a, shape))
    return _apply("MaskedFill", fn1, (input, mask))


def _check_mask(mask):
    if not isinstance(mask, Tensor) or mask._np_dtype() != _NPB:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype if isinstance(mask, Tensor) else type(mask).__name__}")


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._np_dtype() != _NPB:
        raise RuntimeError("masked_select: expected BoolTensor for mask")

    def fn(a, m):
        shape = _bshape(a.shape, m.shape)
        return jnp.broadcast_to(a, shape)[np.asarray(jnp.broadcast_to(m, shape))]
    return _apply("MaskedSelect", fn, (input, mask))


# --- reductions -------------------------------------------------------------------------------------------

def _red_int64(dt):
    return _NPI64 if dt.kind in "biu" else dt


_REDUCE_SUM_P = _reduce_sum_p
_AXES_PARAMS: dict = {}


def _all_axes(nd):
    p = _AXES_PARAMS.get(nd)
    if p is None:
        p = _AXES_PARAMS[nd] = {"axes": tuple(_range(nd))}
    return p


def _sum_all(a):
    return _reduce_sum(a, tuple(_range(a.ndim)))


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    if dim is None and dtype is None and not keepdim and out is None:
        v = input._v
        if v is not None and v.ndim and D.kind(v.dtype) in "fc":
            return _apply_prim("Sum", _REDUCE_SUM_P, _sum_all, (input,), _all_axes(v.ndim))
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    nd = input.ndim
    axes = _dims(dim, nd)
    # (torch accumulates in out='s dtype when no dtype is given: sum(float, out=long) sums truncated values)
    odt = _np(dtype) if dtype is not None else out._np_dtype() if out is not None else _red_int64(input._np_dtype())

    if axes is None and not keepdim:
        if nd and input._v is not None and input._v.dtype == odt and D.kind(odt) in "fc":
            return _out_cast(_apply_prim("Sum", _REDUCE_SUM_P, _sum_all, (input,), _all_axes(nd)), out)

        def fn(a):
            a = _cast(a, odt)
            return _reduce_sum(a, tuple(_range(a.ndim))) if a.ndim else a
    else:
        def fn(a):
            return _cast(jnp.sum(_cast(a, odt), axis=axes, keepdims=keepdim), odt)  # (NumPy's int32 sum: int64)
    return _out_cast(_apply1("Sum", fn, input), out)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    axes = _dims(dim, input.ndim)
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    if odt.kind == "c" and D.kind(input._np_dtype()) in "fc":  # (integer input sums into complex in torch)
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_legacy_name(odt)}'")
    return _apply1("Nansum", lambda a: _cast(jnp.nansum(_cast(a, odt), axis=axes, keepdims=keepdim), odt), input)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    d = None if dim is None else _dim(dim, input.ndim)
    axes = None if d is None else () if input.ndim == 0 else (d,)  # (a 0-d tensor's dim 0: jnp has no axis 0)
    return _apply1("Prod", lambda a: _cast(jnp.prod(_cast(a, odt), axis=axes, keepdims=keepdim), odt), input)


def _float_check(name, dt, dtype=None):
    if dtype is not None:
        odt = _np(dtype)
        if D.kind(odt) not in "fc":
            raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {_legacy_int(odt)}")
        return odt
    if D.kind(dt) not in "fc":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating "
                           f"point or complex dtype. Got: {_legacy_int(dt)}")
    return dt


def _legacy_int(dt):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(np.dtype(dt).name, str(dt))


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    odt = _float_check("mean", input._np_dtype(), dtype)
    axes = _dims(dim, input.ndim)
    return _out(_apply1("Mean", lambda a: jnp.mean(_cast(a, odt), axis=axes, keepdims=keepdim), input), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    odt = _float_check("nanmean", input._np_dtype(), dtype)
    axes = _dims(dim, input.ndim)
    return _apply1("Nanmean", lambda a: jnp.nanmean(_cast(a, odt), axis=axes, keepdims=keepdim), input)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, _bool):
        dim, unbiased = None, dim
    return dim, _correction(unbiased, correction), keepdim


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dim, ddof, keepdim = _var_args(dim, unbiased, keepdim, correction)
    dt = _float_check("var", input._np_dtype())
    del dt
    axes = _dims(dim, input.ndim)
    return _out(_apply1("Var", lambda a: jnp.var(a, axis=axes, ddof=ddof, keepdims=keepdim), input), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dim, ddof, keepdim = _var_args(dim, unbiased, keepdim, correction)
    _float_check("std", input._np_dtype())
    axes = _dims(dim, input.ndim)

    def fn(a):
        v = jnp.var(a, axis=axes, ddof=ddof, keepdims=keepdim)
        return _safe_sqrt(v)
    return _out(_apply1("Std", fn, input), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (var(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim if not isinstance(dim, _bool) else None, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (std(input, dim, unbiased, keepdim, correction=correction),
            mean(input, dim if not isinstance(dim, _bool) else None, keepdim))


def _empty_check(input, name, dim=None):
    if input.numel() == 0 and (dim is None or input.shape[dim] == 0):
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                         f"the reduction dim with the 'dim' argument." if dim is None else
                         f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _empty_axes_check(input, name, axes):
    """torch's rule for max-like reductions: every reduced dim must be non-empty."""
    if axes is None or input.ndim == 0:
        if input.numel() == 0:
            raise (IndexError if name.startswith("arg") else RuntimeError)(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.")
        return
    for a in axes:
        if input.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def amax(input, dim=(), keepdim=False):
    _empty_axes_check(input, "amax", _dims(dim, input.ndim, dup_ok=True))  # torch checks this first
    axes = _dims(dim, input.ndim)
    return _apply1("Amax", lambda a: jnp.max(a, axis=axes, keepdims=keepdim), input)


def amin(input, dim=(), keepdim=False):
    _empty_axes_check(input, "amin", _dims(dim, input.ndim, dup_ok=True))
    axes = _dims(dim, input.ndim)
    return _apply1("Amin", lambda a: jnp.min(a, axis=axes, keepdims=keepdim), input)


def _take_at(d, keepdim):
    def fn(a, i):
        v = jnp.take_along_axis(a, i, axis=d)
        return v if keepdim else jnp.squeeze(v, d)
    return fn


def _minmax(name, red, argred, input, dim, keepdim, other_fn):
    if isinstance(dim, Tensor):
        return other_fn(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return _apply1(name.capitalize() + "1", lambda a: red(a), input)
    d = _dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if input.ndim == 0:
        return getattr(return_types, name)(input.clone() if not input._rg else input * 1,
                                           _wrap(Array(np.zeros((), np.int64))))
    idx = _apply_nograd(lambda a: jnp.expand_dims(argred(a, axis=d), d), (input,))
    values = _apply(name.capitalize(), _take_at(d, keepdim), (input, idx))
    if not keepdim:
        idx = idx.squeeze(d)
    return getattr(return_types, name)(values, idx)


def _extremum_all(red, fill):
    """torch.max(x) / min(x) of everything: with a NaN the result is NaN and its gradient is spread evenly
    over the NaN entries, as torch (amax's rule, which the card follows, gives NaN everywhere); without
    one, the card (ties share the gradient evenly). Concrete NaN-free operands take the card alone."""
    def f(a):
        if D.kind(a.dtype) != "f" or (a.__class__ is Array and not np.isnan(a._buf).any()):
            return red(a)
        nan = ew.ne(a, a)
        z = jnp.zeros_like(a)
        m = red(ew.select(nan, jnp.full_like(a, fill), a))
        cnt = jnp.sum(_cast(nan, a.dtype))
        spread = ew.div(jnp.sum(ew.select(nan, a, z)), ew.max(cnt, jnp.ones_like(cnt)))
        return ew.select(jnp.any(nan), spread, m)
    return f


_max_all = _extremum_all(lambda a: jnp.max(a), -np.inf)
_min_all = _extremum_all(lambda a: jnp.min(a), np.inf)


def max(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    return _minmax("max", _max_all, jnp.argmax, input, dim, keepdim, maximum)


def min(input, dim=None, keepdim=False, *, out=None):  # noqa: A001
    return _minmax("min", _min_all, jnp.argmin, input, dim, keepdim, minimum)


def aminmax(input, *, dim=None, keepdim=False):
    return return_types.aminmax(amin(input, () if dim is None else dim, keepdim),
                                amax(input, () if dim is None else dim, keepdim))


def _arg_extreme(name, jfn, input, dim, keepdim):
    """argmax/argmin: bool refused, empty reduced dims refused, all dims flattened when dim is None."""
    if input._np_dtype() == _NPB:
        raise RuntimeError(f"{name}(): does not support bool input")
    _empty_axes_check(input, name, None if dim is None else (_dim(dim, input.ndim),))
    if dim is None:
        return _apply_nograd(lambda a: _keep_all(jfn(a), a.ndim, keepdim), (input,))
    d = _dim(dim, input.ndim)
    return _apply_nograd(lambda a: jfn(a, axis=d, keepdims=keepdim) if a.ndim else jnp.zeros((), np.int64),
                         (input,))


def argmax(input, dim=None, keepdim=False):
    return _arg_extreme("argmax", jnp.argmax, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg_extreme("argmin", jnp.argmin, input, dim, keepdim)


def _keep_all(r, ndim, keepdim):
    r = _cast(r, _NPI64)
    return jnp.reshape(r, (1,) * ndim) if keepdim else r


def _no_axes(dim):
    return isinstance(dim, (list, tuple)) and len(dim) == 0


def _truth_t(input):
    """all / any over no dims (dim=()): each element's truth, as torch (uint8 stays uint8)."""
    r = _apply_nograd(_truth, (input,))
    return r if input._np_dtype() != np.uint8 else r.to(D.uint8)


def _truth_reduce(reduce, input, dim, keepdim):
    """all / any (`reduce`, jnp's) over `dim`: bool, or uint8 for a uint8 input as torch; dim=() reduces
    nothing (each element's truth)."""
    if _no_axes(dim):
        return _truth_t(input)
    axes = _dims(dim, input.ndim)
    r = _apply_nograd(lambda a: reduce(a, axis=axes, keepdims=keepdim), (input,))
    return r if input._np_dtype() != np.uint8 else r.to(D.uint8)


def all(input, dim=None, keepdim=False):  # noqa: A001
    return _truth_reduce(jnp.all, input, dim, keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001
    return _truth_reduce(jnp.any, input, dim, keepdim)


def count_nonzero(input, dim=None):
    axes = _dims(dim, input.ndim)
    return _apply_nograd(lambda a: _cast(jnp.sum(_cast(_truth(a), _NPI64), axis=axes), _NPI64), (input,))


def logsumexp(input, dim, keepdim=False):
    axes = _dims(dim, input.ndim)
    dt = input._np_dtype()
    if D.kind(dt) not in "fc":
        input = input.to(D.get_default_dtype())

    def fn(a):
        if 0 in a.shape:  # an empty sum: log(0) = -inf
            m = jnp.zeros_like(jnp.sum(a, axis=axes, keepdims=True))
        else:
            m = _stop_gradient(jnp.max(a, axis=axes, keepdims=True))
            m = ew.select(jnp.isfinite(m), m, jnp.zeros_like(m))
        s = jnp.sum(ew.exp(ew.sub(a, jnp.broadcast_to(m, a.shape))), axis=axes, keepdims=True)
        r = ew.add(ew.log(s), m)
        if not keepdim:
            r = jnp.squeeze(r, axes if axes is not None else tuple(_range(a.ndim)))
        return r
    return _apply1("Logsumexp", fn, input)


def _safe_norm2(a, axes, keepdim):
    return _safe_sqrt(jnp.sum(_abs2(a), axis=axes, keepdims=keepdim))


def _safe_root(s, root):
    """s ** (1 / root) (root 2: sqrt) with torch's zero gradient where s == 0 (a norm or std of zeros)."""
    z = ew.eq(s, jnp.zeros_like(s))
    safe = ew.select(z, jnp.ones_like(s), s)
    r = ew.sqrt(safe) if root == 2 else ew.pow(safe, _scalar_arr(1.0 / root, s.dtype))
    return ew.select(z, jnp.zeros_like(s), r)


def _safe_sqrt(s):
    z = ew.eq(s, jnp.zeros_like(s))
    safe = ew.select(z, jnp.ones_like(s), s)
    return ew.select(z, jnp.zeros_like(s), ew.sqrt(safe))


def _abs2(a):
    if a.dtype.kind == "c":
        return ew.add(ew.integer_pow(ew.real(a), 2), ew.integer_pow(ew.imag(a), 2))
    return ew.integer_pow(a, 2)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p == "nuc" and input._np_dtype() == np.float16:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got Half")
    if dtype is not None:
        xc, dc = input._np_dtype().kind == "c", D.to_np(dtype).kind == "c"
        if xc != dc:
            name = "matrix_norm" if p == "nuc" or (p not in (None, "fro") and isinstance(dim, (tuple, list))
                                                   and len(dim) == 2 and p not in (0,)) else "vector_norm"
            raise RuntimeError(f"linalg.{name}: dtype should be {'complex' if xc else 'real'} for "
                               f"{'complex' if xc else 'real'} inputs, but got {_legacy(D.to_np(dtype))}")
        input = input.to(dtype)
    half = input._np_dtype() == np.float16 or input.dtype == D.bfloat16
    if D.kind(input._np_dtype()) not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_legacy_int(input._np_dtype())}")
    if half:  # (float16 / bfloat16 accumulate in float32, as torch: squares overflow float16)
        return norm(input.float(), p, dim, keepdim).to(input.dtype)
    axes = _dims(dim, input.ndim)
    if p is None or p == "fro" or p == 2:
        return _apply1("Norm", lambda a: _safe_norm2(a, axes, keepdim), input)
    if p == "nuc":
        from .linalg import matrix_norm
        if dim is None and input.ndim != 2:
            if input.ndim < 2:
                raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(i) for i in _range(input.ndim))}")
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    if p == math.inf or p == "inf":
        return _apply1("Norm", lambda a: jnp.max(_tabs(a), axis=axes, keepdims=keepdim), input)
    if p == -math.inf:
        return _apply1("Norm", lambda a: jnp.min(_tabs(a), axis=axes, keepdims=keepdim), input)
    if p == 0:  # (a real count: float32 for complex64 input)
        def count(a):
            rdt = np.dtype(np.float32) if a.dtype == np.complex64 else \
                np.dtype(np.float64) if a.dtype == np.complex128 else a.dtype
            return _cast(jnp.sum(_cast(ew.ne(a, jnp.zeros_like(a)), rdt), axis=axes, keepdims=keepdim), rdt)
        return _apply1("Norm", count, input)
    if p == 1:
        return _apply1("Norm", lambda a: jnp.sum(_tabs(a), axis=axes, keepdims=keepdim), input)
    pv = _float(p)

    def fn(a):
        ab = _tabs(a)
        if pv < 1:  # |x|^p has an infinite slope at 0: torch gives zero entries a zero gradient
            z = ew.eq(ab, jnp.zeros_like(ab))
            powd = ew.pow(ew.select(z, jnp.ones_like(ab), ab), _scalar_arr(pv, ab.dtype))
            powd = ew.select(z, jnp.full_like(ab, 0.0 if pv > 0 else math.inf), powd)
        else:
            powd = ew.pow(ab, _scalar_arr(pv, ab.dtype))
        s = jnp.sum(powd, axis=axes, keepdims=keepdim)
        return _safe_root(s, pv) if pv > 0 else ew.pow(s, _scalar_arr(1.0 / pv, s.dtype))
    return _apply1("Norm", fn, input)


def _cumulative(name, jfn, input, dim, dtype):
    """cumsum/cumprod: integers and bool accumulate in int64, float16 in float32 (as torch)."""
    d = _dim(dim, input.ndim)
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    acc = np.dtype(np.float32) if odt == np.float16 else odt
    return _apply1(name, lambda a: _cast(jfn(_cast(a, acc), axis=d), odt) if a.ndim else _cast(a, odt), input)


def cumsum(input, dim, *, dtype=None):
    return _cumulative("Cumsum", jnp.cumsum, input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    return _cumulative("Cumprod", jnp.cumprod, input, dim, dtype)


def median(input, dim=None, keepdim=False):
    if dim is None and input.numel() == 0 and D.kind(input._np_dtype()) == "f":
        return _wrap(Array(np.array(np.nan, input._np_dtype())))
    if dim is not None:
        _dim(dim, input.ndim)
    if input._np_dtype() == _NPB and input.numel():
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    if dim is not None and input.ndim == 0:
        return return_types.median(input.clone() if not input._rg else input * 1,
                                   _wrap(Array(np.zeros((), np.int64))))
    if dim is not None and input.shape[_dim(dim, input.ndim)] == 0:
        raise IndexError(f"median(): Expected reduction dim {_dim(dim, input.ndim)} to have non-zero size.")
    if dim is None:
        def fn(a):  # NaN (sorted last) if there is one, as in torch
            flat = jnp.ravel(a)
            f = jnp.sort(flat)
            m = ew.select(ew.ne(f[-1], f[-1]), f[-1], f[(f.shape[0] - 1) // 2])
            if D.kind(a.dtype) != "f":
                return m
            # torch spreads the gradient evenly over the entries equal to the median: the max of those
            # entries has that value, and reduce_max's rule shares ties evenly
            even = jnp.max(jnp.where(ew.eq(flat, m), flat, -np.inf))
            return ew.select(ew.ne(m, m), m, even)
        return _apply1("Median", fn, input)
    d = _dim(dim, input.ndim)
    n = input.shape[d]

    def median_index(a):  # the lower median's index, or the first NaN's where a slice has one
        i = jnp.take(jnp.argsort(a, axis=d, stable=True), np.array([(n - 1) // 2]), axis=d)
        if D.kind(a.dtype) != "f":
            return i
        nan = ew.ne(a, a)
        first_nan = jnp.expand_dims(jnp.argmax(nan, axis=d), d)
        return ew.select(jnp.any(nan, axis=d, keepdims=True), _cast(first_nan, i.dtype), i)
    idx = _apply_nograd(median_index, (input,))
    values = _apply("Median", _take_at(d, keepdim), (input, idx))
    return return_types.median(values, idx if keepdim else idx.squeeze(d))


def mode(input, dim=-1, keepdim=False):
    """The smallest most frequent value along dim and the index of its last occurrence (as torch)."""
    if input.ndim == 0:
        _dim(dim, 0)
        return return_types.mode(clone(input), _wrap(Array(np.zeros((), np.int64))))
    d = _dim(dim, input.ndim)
    if input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    v = np.moveaxis(input._host(), d, -1)
    flat = v.reshape(-1, v.shape[-1])
    idx = np.empty(flat.shape[0], np.int64)
    for r, row in enumerate(flat):
        vals, counts = np.unique(row, return_counts=True)
        m = vals[np.argmax(counts)]  # np.unique sorts, argmax takes the first (smallest) among ties
        idx[r] = np.flatnonzero(row == m)[-1]
    idx = _wrap(Array(np.expand_dims(idx.reshape(v.shape[:-1]), d)))
    values = _apply("Mode", _take_at(d, keepdim), (input, idx))
    return return_types.mode(values, idx if keepdim else idx.squeeze(d))


# --- linear algebra ----------------------------------------------------------------------------------

_MM_DT = "expected m1 and m2 to have the same dtype, but got: {0:c} != {1:c}"
_DOT_DT = "dot : expected both vectors to have same dtype, but found {0} and {1}"
_SCALAR_DT = "expected scalar type {0} but found {1}"
_MV_DT = "addmv input tensors must have the same dtype, but got {0}, {1}, and {2}"


def _matmul_dtypes(a, b):
    """torch's error for matmul operands of different dtypes, worded as the kernel matmul lowers to words it
    (dot, mv, mm or bmm)."""
    if a._np_dtype() != b._np_dtype():
        if a.ndim == 1 and b.ndim == 1:
            raise _dtype_error(_DOT_DT, a, b)
        if b.ndim == 1:
            raise _dtype_error(_MV_DT, b, a, b)  # (mv's result, allocated like vec, is addmv's self)
        if b.ndim == 2:
            raise _dtype_error(_MM_DT, a, b)
        raise _dtype_error(_SCALAR_DT, a, b)


def matmul(input, other, *, out=None):
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    _matmul_dtypes(input, other)
    _check_out_dtype(out, input._np_dtype())
    ka = input.shape[-1]
    kb = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if ka != kb:
        if input.ndim == 2 and other.ndim == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{ka} and "
                               f"{other.shape[0]}x{other.shape[1]})")
        if input.ndim == 1 and other.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] to have the "
                               "same number of elements, but got {ka} and {kb} elements respectively")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{kb}] but got: "
                           f"[{ka}].")
    if input.ndim == 2 and other.ndim == 2:
        return _out(_apply("Mm", _mm2, (input, other)), out)
    if input.ndim > 2 or other.ndim > 2:  # the batch dims broadcast (torch's RuntimeError when they cannot)
        _bshape(tuple(input.shape[:-2]), tuple(other.shape[:-2]) if other.ndim > 1 else ())
    return _out(_apply("Matmul", lambda a, b: jnp.matmul(a, b), (input, other)), out)


_MM_DN = (((1,), (0,)), ((), ()))


def _mm2(a, b):
    return _dot_general(a, b, _MM_DN)


def mm(input, mat2, *, out=None):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2, out=out)


def bmm(input, mat2, *, out=None):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_same_dtype(_SCALAR_DT, input, mat2)
    _check_out_dtype(out, input._np_dtype())
    return _out(_apply("Bmm", lambda a, b: jnp.matmul(a, b), (input, mat2)), out)


def mv(input, vec, *, out=None):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {input.ndim}, {vec.ndim}")
    _check_same_dtype(_MV_DT, vec if out is None else out, input, vec)  # (torch's addmv with out as self)
    return matmul(input, vec, out=out)


def dot(input, other, *, out=None):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_same_dtype(_DOT_DT, input, other)
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {other.shape[0]} elements respectively")
    _check_out_dtype(out, input._np_dtype(), "result dtype {0} does not match input dtype {1}")
    return _out(_apply("Dot", lambda a, b: jnp.dot(a, b), (input, other)), out)


def inner(input, other, *, out=None):
    """Sum over the last dims of both (a product with a scalar when either is 0-d, promoting as mul does)."""
    if not input.ndim or not other.ndim:
        return mul(input, other, out=out)
    _check_same_dtype("both inputs should have same dtype", input, other)
    _check_out_dtype(out, input._np_dtype(), "tensordot: Expected the output tensor to have dtype {1}, but got an "
                     "output tensor with dtype {0}")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return _out(_apply("Inner", lambda a, b: jnp.inner(a, b), (input, other)), out)


def vdot(input, other):
    _check_same_dtype(_DOT_DT, input, other)
    return _apply("Vdot", lambda a, b: jnp.vdot(a, b), (input, other))


def outer(input, vec2, *, out=None):
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _out(_apply("Outer", lambda a, b: jnp.outer(a, b), (input, vec2)), out)


ger = outer


def _expandable(input, shape, name):
    """torch's addmm-family rule: input must expand to the product's shape (not broadcast beyond it)."""
    s = tuple(input.shape)
    if len(s) > len(shape) or builtins.any(a not in (1, b) for a, b in builtins.zip(s[::-1], shape[::-1])):
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1] if shape else 0}) must match the "
                           f"existing size ({s[-1] if s else 0}) at non-singleton dimension, in {name}: "
                           f"input {list(s)}, product {list(shape)}")


def _int_coefs(r, beta, alpha):
    """torch takes beta and alpha in an integer result's dtype (truncated) in addmm / addmv / baddbmm."""
    if r._np_dtype().kind in "biu":
        return (_int(beta) if isinstance(beta, _float) else beta), (_int(alpha) if isinstance(alpha, _float) else alpha)
    return beta, alpha


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2)."""
    _check_out_dtype(out, mat2._np_dtype())
    return _out(_addmm(input, mat1, mat2, beta, alpha), out)


def _addmm(input, mat1, mat2, beta, alpha):
    if isinstance(input, Tensor):
        _check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", input, mat2)
    _check_same_dtype("mat1 and mat2 must have the same dtype, but got {0} and {1}", mat1, mat2)
    if mat2._np_dtype() == np.float16 or mat2.dtype == D.bfloat16:  # torch's CPU kernel: float32, one rounding
        inp = input.float() if isinstance(input, Tensor) else input
        return _addmm(inp, mat1.float(), mat2.float(), beta, alpha).to(mat2.dtype)
    r = mm(mat1, mat2)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "addmm")
    if alpha != 1:
        r = r * alpha
    if beta == 0:  # input is ignored (NaN in it does not propagate), as in torch
        return r
    return (input * beta if beta != 1 else input) + r


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec)."""
    _check_out_dtype(out, vec._np_dtype())
    return _out(_addmv(input, mat, vec, beta, alpha), out)


def _addmv(input, mat, vec, beta, alpha):
    _check_same_dtype(_MV_DT, input if isinstance(input, Tensor) else None, mat, vec)
    r = mv(mat, vec)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "addmv")
    return (input * beta if beta != 1 else input) + (r * alpha if alpha != 1 else r)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (batch1 @ batch2), batched."""
    _check_out_dtype(out, batch2._np_dtype())
    return _out(_baddbmm(input, batch1, batch2, beta, alpha), out)


def _baddbmm(input, batch1, batch2, beta, alpha):
    if isinstance(input, Tensor) and input._np_dtype() != batch1._np_dtype():
        raise _dtype_error("Input dtypes must be the same, got: input {0:c}, batch1: {1:c}, batch2: {2:c}", input,
                           batch1, batch2)
    r = bmm(batch1, batch2)
    beta, alpha = _int_coefs(r, beta, alpha)
    if isinstance(input, Tensor):
        _expandable(input, tuple(r.shape), "baddbmm")
    return (input * beta if beta != 1 else input) + (r * alpha if alpha != 1 else r)


def _einsum_dtypes(equation, operands):
    """torch contracts with bmm, which wants one dtype: operands of several dtypes raise once any subscript is
    summed over two of them (elementwise products and outer products promote)."""
    dts = [t._np_dtype() for t in operands if isinstance(t, Tensor)]
    if len(dts) < 2 or builtins.all(d == dts[0] for d in dts) or not isinstance(equation, str):
        return
    lhs, _, rhs = equation.replace(" ", "").replace("...", "").partition("->")
    terms = lhs.split(",")
    counts = collections.Counter(c for term in terms for c in set(term))
    out = set(rhs) if "->" in equation else {c for c, n in counts.items() if n == 1}
    if builtins.any(n > 1 and c not in out for c, n in counts.items()):
        other = next(t for t in operands if t._np_dtype() != dts[0])
        raise _dtype_error(_SCALAR_DT, operands[0], other)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    _einsum_dtypes(equation, operands)
    try:
        return _apply("Einsum", lambda *xs: jnp.einsum(equation, *xs), tuple(operands))
    except ValueError as e:  # (a subscript's sizes disagree, a wrong operand count: torch's RuntimeError)
        raise RuntimeError(f"einsum(): {e}") from None


def tensordot(a, b, dims=2):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, _int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(_range(a.ndim - dims, a.ndim)), list(_range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], _int) else list(dims[0]),
                  [dims[1]] if isinstance(dims[1], _int) else list(dims[1]))
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    _check_same_dtype("both inputs should have same dtype", a, b)
    for i, j in zip(da, db):
        sa, sb = a.shape[_dim(i, a.ndim)], b.shape[_dim(j, b.ndim)]
        if sa != sb and 1 in (sa, sb):  # torch broadcasts a contracted dim of size 1
            if sa == 1:
                a = a.expand(*[sb if k == _dim(i, a.ndim) else -1 for k in _range(a.ndim)])
            else:
                b = b.expand(*[sa if k == _dim(j, b.ndim) else -1 for k in _range(b.ndim)])
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {i} and "
                               f"second has size {sb} in dim {j}")
    return _apply("Tensordot", lambda x, y: jnp.tensordot(x, y, axes=dims), (a, b))


def kron(input, other):
    return _apply("Kron", lambda a, b: jnp.kron(a, b), (input, other))


def trace(input):
    if input._np_dtype() == _NPB:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    if input._np_dtype() == _NPB:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    odt = _red_int64(input._np_dtype())
    return _apply1("Trace", lambda a: jnp.trace(_cast(a, odt)), input)


def diag(input, diagonal=0):
    if input.ndim == 1:
        return _apply1("Diag", lambda a: jnp.diag(a, diagonal), input)
    if input.ndim == 2:
        return _apply1("Diag", lambda a: jnp.diagonal(a, diagonal), input)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the (offset) diagonal of dims dim1, dim2, moved to the last dimension (as torch.diagonal)."""
    nd = input.ndim
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view("Diagonal", input, lambda x: _np_diagonal(x, offset, d1, d2),
                 lambda a: jnp.diagonal(a, offset, d1, d2))


def _np_diagonal(v, offset, d1, d2):
    """np.diagonal as a view that is writeable when v is (NumPy's own is read-only)."""
    n1, n2 = v.shape[d1], v.shape[d2]
    length = _max(0, _min(n1, n2 - offset) if offset >= 0 else _min(n1 + offset, n2))
    if length:
        if offset > 0:
            v = v[(slice(None),) * d2 + (slice(offset, None),)]
        elif offset < 0:
            v = v[(slice(None),) * d1 + (slice(-offset, None),)]
    rest = [i for i in _range(v.ndim) if i != d1 and i != d2]
    shape = tuple(v.shape[i] for i in rest) + (length,)
    strides = tuple(v.strides[i] for i in rest) + (v.strides[d1] + v.strides[d2],)
    return np.lib.stride_tricks.as_strided(v, shape, strides, writeable=v.flags.writeable)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices with input's last dimension on their (offset) diagonal, spanning output dims dim1 and dim2."""
    nd = input.ndim + 1
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + _abs(offset) if input.ndim else 1 + _abs(offset)

    def fn(a):
        if a.ndim == 0:
            a = jnp.reshape(a, (1,))
        k = a.shape[-1]
        lead = a.shape[:-1]
        z = jnp.zeros(lead + (n, n), a.dtype)
        rows = np.arange(k) + _max(-offset, 0)
        cols = np.arange(k) + _max(offset, 0)
        r = z.at[(Ellipsis, rows, cols)].set(a)
        if (d1, d2) != (nd - 2, nd - 1):
            r = jnp.moveaxis(r, (-2, -1), (d1, d2))
        return r
    return _apply1("DiagEmbed", fn, input)


def _need_2d(name, input):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    _need_2d("tril", input)
    return _apply1("Tril", lambda a: jnp.tril(a, diagonal), input)


def triu(input, diagonal=0):
    _need_2d("triu", input)
    return _apply1("Triu", lambda a: jnp.triu(a, diagonal), input)


def cross(input, other, dim=None):
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    _check_same_dtype(_SCALAR_DT, input, other)
    shape = _bshape(tuple(input.shape), tuple(other.shape))
    if dim is None:  # torch.cross's default: the first dim of size 3
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    d = _dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return _apply("Cross", lambda a, b: jnp.cross(a, b, axis=d), (input, other))


# --- activations --------------------------------------------------------------------------------------

def _softmax_dim(dim, ndim, name):
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=4)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _dim(dim, ndim)


def _normalise(input, dim, dtype, name, node, formula, of_scalar):
    """softmax/log_softmax: `formula` (jax.nn's, one per function across the faces) over `dim` in `dtype`
    (integer inputs refused as torch's kernel does); a 0-d input gives `of_scalar` (ones/zeros), an empty one
    itself times zero (the max over an empty axis has no identity)."""
    d = _softmax_dim(dim, input.ndim, name)
    if dtype is not None:
        input = input.to(dtype)
    if D.kind(input._np_dtype()) != "f":
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                                  f"'{_legacy_name(input._np_dtype())}'")

    def fn(a):
        if a.ndim == 0:
            return of_scalar(a)
        if 0 in a.shape:
            return ew.mul(a, jnp.zeros_like(a))
        return formula(a, d)
    return _apply1(node, fn, input)


def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _normalise(input, dim, dtype, "softmax", "Softmax", _jnn.softmax, jnp.ones_like)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _normalise(input, dim, dtype, "log_softmax", "LogSoftmax", _jnn.log_softmax, jnp.zeros_like)


def logit(input, eps=None):
    """log(p / (1 - p)) in the input's float dtype (integers in the default float), p clamped to
    [eps, 1 - eps] when eps is given; written as log(p) - log1p(-p) so the gradient at 0 and 1 is infinite."""
    dt = input._np_dtype()
    fdt = dt if D.kind(dt) in "fc" else D.default_float()

    def fn(a):
        a = _cast(a, fdt)
        if eps is not None:
            a = ew.select(ew.lt(a, _scalar_arr(eps, a.dtype)), jnp.full_like(a, eps),
                          ew.select(ew.gt(a, _scalar_arr(1 - eps, a.dtype)), jnp.full_like(a, 1 - eps), a))
        if eps is None:  # torch's gradient is NaN outside [0, 1]: a factor NaN there, 1 inside
            z = jnp.zeros_like(a)
            a = ew.mul(a, ew.select(ew.bitwise_or(ew.lt(a, z), ew.gt(a, ew.add(z, jnp.ones_like(a)))),
                                    jnp.full_like(a, np.nan), jnp.ones_like(a)))
        a = ew.add(a, jnp.zeros_like(a))  # -0.0 -> 0.0: torch's gradient at -0.0 is +inf as at 0.0
        return ew.sub(ew.log(a), ew.log1p(ew.neg(a)))
    return _apply1("Logit", fn, input)


# --- shape and views ----------------------------------------------------------------------------------

def _shape_args(args):
    if len(args) == 1 and isinstance(args[0], (list, tuple, D.Size)):
        return tuple(_int(s) for s in args[0])
    return tuple(_int(s) for s in args)


def _infer(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    if neg:
        known = 1
        for i, s in enumerate(shape):
            if i != neg[0]:
                known *= s
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _np_view_reshape(v, shape):
    """v reshaped without copying; ValueError when that needs a copy."""
    try:
        return np.reshape(v, shape, copy=False)
    except TypeError:  # NumPy < 2.1 has no copy= argument
        r = v.view()
        try:
            r.shape = shape
        except AttributeError:
            raise ValueError("Unable to avoid creating a copy while reshaping.") from None
        return r


def _reshape_arr(shape):
    return lambda a: jnp.reshape(a, shape)


def view(input, *shape):
    """The same data in a new shape, sharing memory (one size may be -1); view(dtype) reinterprets the bytes.

    As torch, it raises when the strides cannot express the new shape (use reshape); writes through a view
    reach the base tensor.

    Examples:
        >>> import funcgrad as torch
        >>> x = torch.arange(6.0)
        >>> v = x.view(2, -1)
        >>> v
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
        >>> v[0, 0] = 10.0
        >>> x
        tensor([10.,  1.,  2.,  3.,  4.,  5.])
    """
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, np.dtype, type)):
        return _view_dtype(input, shape[0])
    shape = _infer(_shape_args(shape), input.numel())
    v = input._v if input._v is not None else _functional.shadow(input)
    try:
        nv = _np_view_reshape(v, shape)
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") \
            from None
    return _view("View", input, lambda x: nv if x is v else _np_view_reshape(x, shape), _reshape_arr(shape))


def _view_dtype(input, dtype):
    dt = D.to_np(dtype)
    if input._v is None:
        raise NotImplementedError("view(dtype) of a traced tensor")
    src, dst = input._np_dtype().itemsize, dt.itemsize
    if src != dst:
        if input.ndim == 0:
            raise RuntimeError("self.dim() cannot be 0 to view " + str(input.dtype) + " as " + str(dtype) +
                               " (different element sizes)")
        if dst > src and input.shape[-1] % (dst // src):
            raise RuntimeError(f"self.size(-1) must be divisible by {dst // src} to view {input.dtype} as {dtype} "
                               "(different element sizes), but got " + str(input.shape[-1]))
        if input.ndim and input.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {input.dtype} as {dtype} (different element "
                               "sizes), but got " + str(input.stride(-1)))
    return _view("ViewDtype", input, lambda x: x.view(dt), lambda a: jnp.asarray(np.asarray(a).view(dt)))


def reshape(input, *shape):
    """The elements in a new shape (one size may be -1): a view when the strides allow, else a copy.

    Examples:
        >>> import funcgrad as torch
        >>> torch.arange(6).reshape(3, 2)
        tensor([[0, 1],
                [2, 3],
                [4, 5]])
        >>> torch.zeros(2, 3, 4).reshape(-1, 4).shape
        torch.Size([6, 4])
    """
    shape = _infer(_shape_args(shape), input.numel())
    v = input._v if input._v is not None else _functional.shadow(input)
    try:
        nv = _np_view_reshape(v, shape)
    except ValueError:
        return _apply1("UnsafeView", _reshape_arr(shape), input)
    return _view("View", input, lambda x: nv if x is v else _np_view_reshape(x, shape), _reshape_arr(shape))


def view_as(input, other):
    return view(input, other.shape)


def reshape_as(input, other):
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    nd = input.ndim
    if nd == 0:
        return reshape(input, (1,))
    s = _dim(start_dim, nd)
    e = _dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    d = _dim(dim, input.ndim)
    shp = input.shape
    sizes = list(sizes)
    if -1 in sizes:
        k = sizes.index(-1)
        known = math.prod(s for i, s in enumerate(sizes) if i != k)
        sizes[k] = shp[d] // known
    return view(input, shp[:d] + tuple(sizes) + shp[d + 1:])


def ravel(input):
    return reshape(input, (-1,))


def squeeze(input, dim=None):
    shp = input.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        dims = dim if isinstance(dim, (list, tuple)) else (dim,)
        axes = tuple(sorted({_dim(d, len(shp)) for d in dims if shp and shp[_dim(d, len(shp))] == 1}))
    nm = "Squeeze" if dim is None else ("Squeeze1" if not isinstance(dim, (list, tuple)) else "Squeeze2")
    if not axes:
        return _view(nm, input, lambda x: x.view(), lambda a: a)
    return _view(nm, input, lambda x: np.squeeze(x, axes), lambda a: jnp.squeeze(a, axes))


def unsqueeze(input, dim):
    nd = input.ndim
    if not -nd - 1 <= dim <= nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd - 1}, {nd}], but got {dim})")
    d = dim % (nd + 1)
    return _view("Unsqueeze", input, lambda x: np.expand_dims(x, d), lambda a: jnp.expand_dims(a, d))


def permute(input, *dims):
    dims = _shape_args(dims)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
                           f"to len(dims) = {len(dims)}")
    p = tuple(_dim(d, nd) for d in dims)
    if len(set(p)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got dims {tuple(dims)} for a tensor of "
                           f"shape {list(input.shape)}")
    return _view("Permute", input, lambda x: np.transpose(x, p), lambda a: jnp.transpose(a, p))


def transpose(input, dim0, dim1):
    nd = input.ndim
    if nd == 0:
        return _view("Transpose", input, lambda x: x.view(), lambda a: a)
    d0, d1 = _dim(dim0, nd), _dim(dim1, nd)
    p = list(_range(nd))
    p[d0], p[d1] = p[d1], p[d0]
    p = tuple(p)
    return _view("Transpose", input, lambda x: np.transpose(x, p), lambda a: jnp.transpose(a, p))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    if input.ndim < 2:
        return _view("T", input, lambda x: x.view(), lambda a: a)
    return _view("T", input, lambda x: np.transpose(x, (1, 0)), lambda a: jnp.transpose(a, (1, 0)))


def movedim(input, source, destination):
    nd = input.ndim
    src = [source] if isinstance(source, _int) else list(source)
    dst = [destination] if isinstance(destination, _int) else list(destination)
    src = [_dim(s, nd) for s in src]
    dst = [_dim(s, nd) for s in dst]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src}) or `destination` ({dst})")
    if nd == 0:
        return input.view(input.shape)
    order = [n for n in _range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    nd = input.ndim
    if len(sizes) < nd:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({nd})")
    shp = input.shape
    out = []
    off = len(sizes) - nd
    for i, s in enumerate(sizes):
        if i < off:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            out.append(s)
        else:
            cur = shp[i - off]
            if s == -1:
                out.append(cur)
            elif cur == 1 or cur == s:
                out.append(s)
            else:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) "
                                   f"at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                                   f"{list(shp)}")
    out = tuple(out)
    return _view("Expand", input, lambda x: np.broadcast_to(x, out), lambda a: jnp.broadcast_to(a, out))


def expand_as(input, other):
    return expand(input, other.shape)


def broadcast_to(input, size):
    return expand(input, size)


def broadcast_tensors(*tensors):
    shape = ()
    for x in tensors:
        shape = _bshape(shape, x.shape)
    return [expand(x, shape) for x in tensors]


def broadcast_shapes(*shapes):
    out = ()
    for s in shapes:
        out = _bshape(out, (s,) if isinstance(s, _int) else tuple(s))
    return D.Size(out)


def contiguous(input, memory_format=None):
    if input.is_contiguous():
        return input
    return clone(input)


def clone(input, *, memory_format=None):
    return _apply1("Clone", _identity, input)


def _identity(a):
    return a


def repeat(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return _apply1("Repeat", lambda a: jnp.tile(a, sizes), input)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return _apply1("Tile", lambda a: jnp.tile(a, dims), input)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        r = input.tolist()
        return _wrap(Array(np.repeat(np.arange(len(r)), r).astype(np.int64)))
    if isinstance(repeats, Tensor):
        repeats = repeats.tolist() if repeats.ndim else repeats.item()
    if isinstance(repeats, list):
        n = input.numel() if dim is None else (input.shape[_dim(dim, input.ndim)] if input.ndim else 1)
        if len(repeats) not in (1, n):
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{len(repeats)} and input.size({0 if dim is None else dim}) = {n}")
    if dim is None:
        return _apply1("RepeatInterleave", lambda a: jnp.repeat(jnp.ravel(a), repeats), input)
    d = _dim(dim, input.ndim)
    return _apply1("RepeatInterleave", lambda a: jnp.repeat(a, repeats, axis=d), input)


def _cat_check(tensors, d, name):
    ref = tensors[0]
    for k, x in enumerate(tensors[1:], 1):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for i in _range(ref.ndim):
            if i != d and x.shape[i] != ref.shape[i]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[i]} but got size {x.shape[i]} for tensor number {k} in the list.")


def _tensor_seq(tensors, name):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    return list(tensors)


def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_seq(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    nonempty = [x for x in tensors if not (x.ndim == 1 and x.shape[0] == 0)]
    if not nonempty:  # torch skips 1-d empty tensors, whatever dim says
        dt = _result_type_many(tensors)
        return _out(_apply("Cat", lambda *xs: _cast(xs[0], dt), (tensors[0],)), out)
    d = _dim(dim, nonempty[0].ndim)
    _cat_check(nonempty, d, "cat")
    dt = _result_type_many(tensors)
    if out is not None and not D.can_cast(dt, out._np_dtype()):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type {DtypeName(out.dtype)}")
    return _out(_apply("Cat", lambda *xs: jnp.concatenate([_cast(x, dt) for x in xs], axis=d),
                       tuple(nonempty)), out)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_seq(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0].shape
    for k, x in enumerate(tensors):
        if x.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                               f"{list(x.shape)} at entry {k}")
    d = _dim(dim, len(ref) + 1)
    dt = _result_type_many(tensors)
    return _out(_apply("Stack", lambda *xs: jnp.stack([_cast(x, dt) for x in xs], axis=d), tuple(tensors)), out)


def _nonempty(tensors, name):
    tensors = _tensor_seq(tensors, name)
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    tensors = _nonempty(tensors, "hstack")
    tensors = [atleast_1d(x) for x in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    tensors = _nonempty(tensors, "vstack")
    return cat([atleast_2d(x) for x in tensors], 0)


row_stack = vstack


def dstack(tensors):
    tensors = _nonempty(tensors, "dstack")
    return cat([atleast_3d(x) for x in tensors], 2)


def column_stack(tensors):
    tensors = _nonempty(tensors, "column_stack")
    return hstack([x.reshape(-1, 1) if x.ndim <= 1 else x for x in tensors])


def _atleast(one):
    """torch.atleast_nd: one tensor, or a tuple for several tensors (or one list / tuple of them)."""
    def f(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return one(tensors[0])
        ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        return tuple(one(t) for t in ts)
    return f


def _atleast_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


def _atleast_2d(x):
    return x.reshape(1, -1) if x.ndim < 2 else x


def _atleast_3d(x):
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, -1, 1)
    if x.ndim == 2:
        return x.unsqueeze(-1)
    return x


atleast_1d = _atleast(_atleast_1d)
atleast_2d = _atleast(_atleast_2d)
atleast_3d = _atleast(_atleast_3d)


def _split_dim(t, dim, message):
    """(dim, its size) for the ops that cut a tensor along a dim; a 0-d tensor is refused with `message`."""
    if t.ndim == 0:
        raise RuntimeError(message)
    d = _dim(dim, t.ndim)
    return d, t.shape[d]


def _slice_fns(d, bounds):
    fns = []
    arr_bounds = []
    for (s, e) in bounds:
        idx = (slice(None),) * d + (slice(s, e),)
        fns.append((lambda idx: lambda x: x[idx])(idx))
        arr_bounds.append(idx)
    return fns, arr_bounds


def split(tensor, split_size_or_sections, dim=0):
    d, n = _split_dim(tensor, dim, "split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, _int):
        s = split_size_or_sections
        if s <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        bounds = [(i, _min(i + s, n)) for i in _range(0, n, s)] if s and n else [(0, 0)]
    else:
        sizes = list(split_size_or_sections)
        if _sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
        bounds, acc = [], 0
        for s in sizes:
            bounds.append((acc, acc + s))
            acc += s
    fns, idxs = _slice_fns(d, bounds)
    return tuple(_views("Split", tensor, fns, lambda a: [a[i] for i in idxs]))


def tensor_split(input, indices_or_sections, dim=0):
    d, n = _split_dim(input, dim, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with "
                                  "0 dims")
    if isinstance(indices_or_sections, _int):
        k = indices_or_sections
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        idx = [0] + list(indices_or_sections) + [n]
        sizes = [_max(0, _min(b, n) - _min(a, n)) for a, b in zip(idx[:-1], idx[1:])]
    return split(input, sizes, d)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d, n = _split_dim(input, dim, "chunk expects at least a 1-dimensional tensor")
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, [0] * chunks if n == 0 else 1, d)
    return split(input, size, d)


def unbind(input, dim=0):
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    idxs = [(slice(None),) * d + (i,) for i in _range(n)]
    fns = [(lambda idx: lambda x: x[idx + (Ellipsis,)])(idx) for idx in idxs]
    return tuple(_views("Unbind", input, fns, lambda a: [a[i] for i in idxs]))


def narrow(input, dim, start, length):
    d, n = _split_dim(input, dim, "narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        start = start.item()
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0 or start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return _view("Narrow", input, lambda x: x[idx], lambda a: a[idx])


def select(input, dim, index):
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    idx = (slice(None),) * d + (index % n,)
    nidx = idx + (Ellipsis,)
    return _view("Select", input, lambda x: x[nidx], lambda a: a[idx])


def _idx_arr(index, op=None):
    """An index tensor's values: a host array, or the traced Array itself under funcgrad.func transforms
    (then the host-side bounds checks are skipped). op: the name of a function taking an index tensor
    argument (gather, index_select, ...), for which torch reports a non-integer index as a RuntimeError."""
    if op is not None and isinstance(index, Tensor) and index._np_dtype().kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if isinstance(index, Tensor) and index._v is None:
        v = index._a
        if np.dtype(v.dtype).kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return v
    v = index._host() if isinstance(index, Tensor) else np.asarray(index)
    if v.dtype.kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return v


def index_select(input, dim, index):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index, "index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    n = input.shape[d] if input.ndim else 1
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        if d == 0 or input.ndim <= 1:
            raise IndexError("index out of range in self")
        bad = int(idx[(idx < 0) | (idx >= n)][0])  # (torch's message and RuntimeError off dim 0)
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    idx = idx.reshape(-1)
    return _apply1("IndexSelect", lambda a: jnp.take(a, idx, axis=d) if a.ndim else a, input)


def _gather_index(shape_idx, d, idx):
    grids = list(np.indices(shape_idx, sparse=True))
    grids[d] = idx
    return tuple(grids)


def _as_vectors(input, index):
    """torch reads a 0-d tensor or a 0-d index in gather/scatter as one element: both as 1-d tensors."""
    t = index if isinstance(index, Tensor) else _make(np.array(index))
    return input.reshape(-1), t.reshape(-1)


def gather(input, dim, index, *, sparse_grad=False):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index, "gather")
    if (idx.ndim == 0 or input.ndim == 0) and idx.ndim <= 1 and input.ndim <= 1:
        vin, vidx = _as_vectors(input, index)
        return gather(vin, 0, vidx).reshape(tuple(idx.shape))
    if idx.ndim != input.ndim and not (idx.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for i in _range(idx.ndim):
        if i != d and idx.shape[i] > input.shape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index {list(idx.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    n = input.shape[d] if input.ndim else 1
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    full = _gather_index(idx.shape, d, idx)
    return _apply1("Gather", lambda a: a[full], input)


def take_along_dim(input, indices, dim=None):
    idx = _idx_arr(indices)
    if dim is None:
        return _apply1("TakeAlongDim", lambda a: jnp.take_along_axis(jnp.ravel(a), idx.reshape(-1), axis=0), input)
    d = _dim(dim, input.ndim)
    return _apply1("TakeAlongDim", lambda a: jnp.take_along_axis(a, idx, axis=d), input)


def take(input, index):
    idx = _idx_arr(index)
    return _apply1("Take", lambda a: jnp.ravel(a)[idx], input)


def _scatter_fn(d, idx, reduce, dt):
    full = _gather_index(idx.shape, d, idx)

    def fn(a, src):
        src = _cast(src, dt)
        if src.shape != idx.shape:
            src = src[tuple(slice(0, s) for s in idx.shape)]
        if reduce is None:
            return a.at[full].set(src)
        if reduce in ("add", "sum"):
            return a.at[full].add(src)
        if reduce in ("multiply", "prod"):
            return a.at[full].mul(src)
        if reduce == "amax":
            return a.at[full].max(src)
        if reduce == "amin":
            return a.at[full].min(src)
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return fn


def _src(src, value, shape, dt):
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return src
    return _wrap(Array(np.full(shape, src, dt)))


def _check_index_bounds(idx, d, n, exc=RuntimeError, prefix=""):
    """torch's scatter/index_add/index_copy refuse indices outside [0, n) (negative ones too)."""
    if idx.size and isinstance(idx, np.ndarray) and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise exc(f"{prefix}index {bad} is out of bounds for dimension {d} with size {n}")


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index, "scatter")
    if (idx.ndim == 0 or input.ndim == 0) and idx.ndim <= 1 and input.ndim <= 1:
        vin, vidx = _as_vectors(input, index)
        if isinstance(src, Tensor):
            src = src.reshape(-1)
        return scatter(vin, 0, vidx, src, value, reduce=reduce).reshape(tuple(input.shape))
    if idx.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    n = input.shape[d] if input.ndim else 1
    _check_index_bounds(idx, d, n)
    if isinstance(src, Tensor):
        _check_same_dtype("scatter(): Expected self.dtype to be equal to src.dtype", input, src)
    s = _src(src, value, idx.shape, input._np_dtype())
    return _apply("Scatter", _scatter_fn(d, idx, reduce, input._np_dtype()), (input, s))


def scatter_add(input, dim, index, src):
    return scatter(input, dim, index, src, reduce="add")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce src's values into input at index along dim (sum, prod, mean, amax, amin); include_self=False
    leaves input's own values out of the reduction wherever something is scattered."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _check_same_dtype("scatter(): Expected self.dtype to be equal to src.dtype", input, src)
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index)
    _check_index_bounds(idx, d, input.shape[d] if input.ndim else 1)
    dt = input._np_dtype()
    if include_self and reduce != "mean":
        return _apply("ScatterReduce", _scatter_fn(d, idx, reduce, dt), (input, src))
    full = _gather_index(idx.shape, d, idx)
    counts = np.zeros(tuple(input.shape), np.int64)
    np.add.at(counts, full, 1)
    hit = counts > 0
    if reduce == "mean":
        denom = np.maximum(counts + (1 if include_self else 0), 1)
        ident = 0
    elif reduce in ("amax", "amin"):
        big = np.inf if D.kind(dt) == "f" else (np.iinfo(dt).max if dt.kind in "iu" else True)
        ident = -big if reduce == "amax" and D.kind(dt) == "f" else (
            (np.iinfo(dt).min if dt.kind in "iu" else False) if reduce == "amax" else big)
    else:
        ident = 1 if reduce == "prod" else 0
    op = {"mean": "sum"}.get(reduce, reduce)
    scat = _scatter_fn(d, idx, op, dt)
    hit_a = Array(hit)

    def fn(a, s):
        base = a if include_self else ew.select(hit_a, jnp.full(a.shape, ident, a.dtype), a)
        r = scat(base, s)
        if reduce != "mean":
            return r
        if D.kind(dt) == "f" or dt.kind == "c":
            return r / Array(denom.astype(dt))
        return jnp.floor_divide(r, Array(denom.astype(dt)))
    return _apply("ScatterReduce", fn, (input, src))


def index_add(input, dim, index, source, *, alpha=1):
    _check_same_dtype("index_add_(): self ({0}) and source ({1}) must have the same scalar type", input, source)
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index).reshape(-1)
    _check_index_bounds(idx, d, input.shape[d] if input.ndim else 1)
    if alpha != 1:
        source = source * alpha
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    return _apply("IndexAdd", lambda a, s: a.at[key].add(_cast(s, dt)), (input, source))


def index_copy(input, dim, index, source):
    _check_same_dtype("index_copy_(): self and source expected to have the same dtype, but got (self) {0} and "
                      "(source) {1}", input, source)
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index).reshape(-1)
    _check_index_bounds(idx, d, input.shape[d] if input.ndim else 1, IndexError, "index_copy_(): ")
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    return _apply("IndexCopy", lambda a, s: a.at[key].set(_cast(s, dt)), (input, source))


def index_fill(input, dim, index, value):
    d = _dim(dim, input.ndim)
    idx = _idx_arr(index).reshape(-1)
    dt = input._np_dtype()
    key = (slice(None),) * d + (idx,)
    if isinstance(value, Tensor):
        return _apply("IndexFill", lambda a, v: a.at[key].set(_cast(v, dt)), (input, value))
    s = _scalar_arr(value, dt)
    return _apply1("IndexFill", lambda a: a.at[key].set(s), input)


def index_put(input, indices, values, accumulate=False):
    from ._index import _convert_index
    key = _convert_index(tuple(indices))
    dt = input._np_dtype()
    if isinstance(values, Tensor):
        _check_same_dtype("Index put requires the source and destination dtypes match, got {0} for the destination "
                          "and {1} for the source.", input, values)
    values = _as_tensor(values) if not _is_scalar(values) else _wrap(Array(np.array(values, dt)))
    if accumulate:
        return _apply("IndexPut", lambda a, v: a.at[key].add(_cast(v, dt)), (input, values))
    return _apply("IndexPut", lambda a, v: a.at[key].set(_cast(v, dt)), (input, values))


def nonzero(input, *, as_tuple=False):
    v = input._host()
    nz = np.nonzero(v) if v.ndim else np.nonzero(v.reshape(1))
    if as_tuple:
        return tuple(_wrap(Array(np.ascontiguousarray(i, dtype=np.int64))) for i in nz)
    if not v.ndim:  # a 0-d input: one row per nonzero (0 or 1), with no columns
        return _wrap(Array(np.zeros((len(nz[0]), 0), np.int64)))
    return _wrap(Array(np.ascontiguousarray(np.stack(nz, axis=1), dtype=np.int64)))


def argwhere(input):
    return nonzero(input)


def flip(input, dims):
    dims = (dims,) if isinstance(dims, _int) else tuple(dims)
    axes = tuple(_dim(d, input.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("dims has duplicates, original flip dims size=" + str(len(dims)))
    if input.ndim == 0:
        axes = ()
    return _apply1("Flip", lambda a: jnp.flip(a, axes) if axes else a, input)


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    if input.numel() == 0:  # torch returns an empty input as it is, whatever dims says
        return clone(input)
    if input.ndim == 0 and dims is not None:
        raise IndexError(f"Dimension specified as {dims} but tensor has no dimensions")
    if dims is None:
        return _apply1("Roll", lambda a: jnp.reshape(jnp.roll(jnp.ravel(a), shifts), a.shape), input)
    dims = _dim(dims, input.ndim) if isinstance(dims, _int) else tuple(_dim(d, input.ndim) for d in dims)
    return _apply1("Roll", lambda a: jnp.roll(a, shifts, axis=dims), input)


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    dims = (d0, d1)
    return _apply1("Rot90", lambda a: jnp.rot90(a, k, axes=tuple(dims)), input)


def sort(input, dim=-1, descending=False, stable=False):
    if isinstance(dim, _bool):
        dim, descending = -1, dim
    if input.ndim == 0:
        _dim(dim, 0)
        return return_types.sort(clone(input), _wrap(Array(np.zeros((), np.int64))))
    d = _dim(dim, input.ndim)
    idx = argsort(input, d, descending, stable=True)
    values = _apply("Sort", lambda a, i: jnp.take_along_axis(a, i, axis=d), (input, idx))
    return return_types.sort(values, idx)


def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        _dim(dim, 0)
        return _wrap(Array(np.zeros((), np.int64)))
    d = _dim(dim, input.ndim)
    v = input._host()
    if descending:
        # stable descending order, NaN first (as torch)
        key = -v if D.kind(v.dtype) in "fiu" and v.dtype != np.uint8 else None
        if key is None:
            r = np.flip(np.argsort(np.flip(v, d), axis=d, kind="stable"), d)
            r = v.shape[d] - 1 - r
        else:
            r = np.argsort(np.where(np.isnan(v), -np.inf, key) if D.kind(v.dtype) == "f" else key, axis=d,
                           kind="stable")
    else:
        r = np.argsort(v, axis=d, kind="stable")
    return _wrap(Array(np.ascontiguousarray(r.astype(np.int64))))


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if k > n or k < 0:
        raise RuntimeError("selected index k out of range")
    idx = argsort(input, d, descending=largest)
    if input.ndim:
        idx = narrow(idx, d, 0, k).contiguous()
        # torch's choice among ties (and its order, unsorted): see _torch_select
        fast = idx._host()
        fixed = _torch_select.topk_indices_along(input._host(), k, d, largest, sorted, fast)
        if fixed is not fast:
            idx = _wrap(Array(np.ascontiguousarray(fixed)))
    values = _apply("Topk", lambda a, i: jnp.take_along_axis(a, i, axis=d) if a.ndim else a, (input, idx))
    return return_types.topk(values, idx)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        if k != 1:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
        return return_types.kthvalue(clone(input), _wrap(Array(np.zeros((), np.int64))))
    if input.shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= input.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = argsort(input, d)
    idx = narrow(idx, d, k - 1, 1).contiguous()
    if input.ndim:  # torch's choice among ties: see _torch_select
        fast = idx._host()
        fixed = _torch_select.kthvalue_indices(input._host(), k, d, fast)
        if fixed is not fast:
            idx = _wrap(Array(np.ascontiguousarray(fixed)))
    values = _apply("Kthvalue", _take_at(d, keepdim), (input, idx))
    return return_types.kthvalue(values, idx if keepdim else idx.squeeze(d))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    v = input._host()
    if dim is not None and v.shape.count(0) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if dim is not None and v.size == 0 and v.shape[_dim(dim, v.ndim)]:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    res = np.unique(v if dim is None else v, return_inverse=return_inverse, return_counts=return_counts,
                    axis=dim, equal_nan=False)  # (each NaN is its own value, as torch)
    if not (return_inverse or return_counts):
        return _wrap(Array(np.ascontiguousarray(res)))
    out = [_wrap(Array(np.ascontiguousarray(res[0])))]
    k = 1
    if return_inverse:
        out.append(_wrap(Array(np.ascontiguousarray(res[k].reshape(v.shape if dim is None else -1)
                                                     .astype(np.int64)))))
        k += 1
    if return_counts:
        out.append(_wrap(Array(np.ascontiguousarray(res[k].astype(np.int64)))))
    return tuple(out)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    v = input._host().reshape(-1)
    if v.size == 0:
        empty = _wrap(Array(np.zeros(0, np.int64)))
        out = (_wrap(Array(v.copy())),) + (_wrap(Array(np.zeros(input.shape, np.int64))),) * return_inverse + \
            (empty,) * return_counts
        return out[0] if len(out) == 1 else out
    keep = np.concatenate([[True], v[1:] != v[:-1]])
    vals = v[keep]
    out = [_wrap(Array(vals.copy()))]
    if return_inverse:
        out.append(_wrap(Array((np.cumsum(keep) - 1).reshape(input.shape).astype(np.int64))))
    if return_counts:
        idx = np.flatnonzero(keep)
        out.append(_wrap(Array(np.diff(np.append(idx, v.size)).astype(np.int64))))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):
    v = input._host()
    w = None if weights is None else weights._host()
    r = np.bincount(v, w, minlength)
    if w is not None:  # float32 weights count in float32, any other weights in float64 (as torch)
        return _wrap(Array(r.astype(np.float32 if w.dtype == np.float32 else np.float64)))
    return _wrap(Array(r.astype(np.int64)))


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None):
    if sorted_sequence._np_dtype() == _NPB and sorted_sequence.numel():
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    s = sorted_sequence._host()
    v = values._host() if isinstance(values, Tensor) else np.asarray(values)
    side = side or ("right" if right else "left")
    if s.ndim == 1:
        r = np.searchsorted(s, v, side=side)
    else:
        r = np.stack([np.searchsorted(a, b, side=side) for a, b in zip(s.reshape(-1, s.shape[-1]),
                                                                        v.reshape(-1, v.shape[-1]))]).reshape(v.shape)
    return _wrap(Array(np.asarray(r, np.int32 if out_int32 else np.int64)))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    n = len(tensors)
    shape = tuple(x.numel() for x in tensors)
    outs = []
    for i, x in enumerate(tensors):
        s = [1] * n
        s[i] = shape[i]
        outs.append(x.reshape(s).expand(shape))
    if indexing == "xy" and n >= 2:
        outs = [o.transpose(0, 1) for o in outs]
    return tuple(outs)


def cartesian_prod(*tensors):
    grids = meshgrid(*tensors, indexing="ij")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in grids], 1)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> _bool:
    return _bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    other = _as_tensor(other)
    if input._np_dtype() != other._np_dtype():
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    _bshape(tuple(input.shape), tuple(other.shape))
    return _wrap(Array(np.isclose(input._host(), other._host(), rtol, atol, equal_nan)))


def equal(input, other) -> _bool:
    return input.shape == other.shape and _bool(np.array_equal(input._host(), other._host()))


def cdist(x1, x2, p=2.0):
    _check_same_dtype(_SCALAR_DT, x1, x2)
    def fn(a, b):
        diff = ew.sub(jnp.expand_dims(a, -2), jnp.expand_dims(b, -3))
        if p == 2:
            return _safe_norm2(diff, (-1,), False)
        if p == 1:
            return jnp.sum(_tabs(diff), axis=-1)
        if p == 0:  # the number of differing coordinates (no gradient, as torch)
            return _stop_gradient(jnp.sum(_cast(ew.ne(diff, jnp.zeros_like(diff)), a.dtype), axis=-1))
        if p == _float("inf"):
            return jnp.max(_tabs(diff), axis=-1)
        return ew.pow(jnp.sum(ew.pow(_tabs(diff), _scalar_arr(p, a.dtype)), axis=-1), _scalar_arr(1 / p, a.dtype))
    return _apply("Cdist", fn, (x1, x2))


def dist(input, other, p=2):
    return norm(sub(input, other), p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps))) along dim, each norm clamped on its own (torch)."""
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = clamp(norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = clamp(norm(x2, 2, dim, keepdim=True), min=eps)
    return sum(mul(div(x1, n1), div(x2, n2)), dim)


def histc(input, bins=100, min=0, max=0):  # noqa: A002
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins}")
    if min > max:
        raise RuntimeError(f"torch.histc: max must be larger than min, got min={min}, max={max}")
    v = input._host()
    lo, hi = (v.min(), v.max()) if min == max == 0 and v.size else (min, max)
    if lo == hi:  # torch widens an empty range by 1 on each side
        lo, hi = lo - 1, hi + 1
    f = v[(v >= lo) & (v <= hi)].astype(np.float64)
    # torch's bin of x: floor((x - lo) * bins / (hi - lo)), the top edge in the last bin (not NumPy's edges)
    idx = np.minimum(((f - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return _wrap(Array(np.bincount(idx, minlength=bins).astype(v.dtype)))


__all__ = sorted(n for n, v in list(globals().items())
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__
                 and n not in ("return_types", "zeros_like_t"))
