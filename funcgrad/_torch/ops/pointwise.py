"""Pointwise torch functions beyond the core (unary.py, arithmetic.py): addcmul / addcdiv, angle, deg2rad /
rad2deg, sinc, ldexp, logaddexp2, frexp, gcd / lcm, heaviside, nextafter, mvlgamma, fill. Each composes Tensor
ops or Array-level funcgrad operations run through `_apply*`, so autograd uses the primitives' derivative rules."""
from __future__ import annotations

import math
import operator as _operator

import numpy as np

from .. import _jnp as jnp
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew, special as _sp
from .. import _creation as _C
from .. import _dtype as D
from . import arithmetic, unary
from ._common import (_TRUEDIV, _bc, _binop, _bshape, _cast, _one_float_dtype, _out, _promote, _result_type_many,
                      _tensor_arg)
from .. import return_types as _rt
from .._creation import full_like
from .._tensor import Tensor, _wrap
from .._dispatch import _apply, _apply1, _apply_prim_scalar
from .._errors import _legacy
from ._common import _check_int_value, _t


_VALUE_FIRST = ("Tensor input, Number value, Tensor tensor1, Tensor tensor2, *, Tensor out = None|"
                "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None")


def _value_first(name, value, tensor1, tensor2, given):
    """torch's deprecated overload name(input, value, tensor1, tensor2) (old optimisers' exp_avg_sq.addcmul_(1 -
    beta2, grad, grad)): (value, tensor1, tensor2), with torch's once-per-process UserWarning."""
    if given != 1:
        raise TypeError(f"{name}() got the value twice: the deprecated overload's second positional argument "
                        "and value=; use value= alone")
    t1, t2 = arithmetic.alpha_first(name, value, tensor1, _VALUE_FIRST)[0], tensor2
    return value, t1, t2


def addcmul(input, tensor1, tensor2, _tensor2=arithmetic._NO, *, value=1, out=None):
    """input + value * tensor1 * tensor2 (broadcast, with torch's type promotion)."""
    if _tensor2 is not arithmetic._NO:  # (torch's deprecated addcmul(input, value, tensor1, tensor2))
        value, tensor1, tensor2 = _value_first("addcmul", tensor1, tensor2, _tensor2, value)
    _check_int_value("addcmul", value, input, tensor1, tensor2)
    if type(value) in _REAL and _one_float_dtype(input, tensor1, tensor2):  # one node, torch's AddcmulBackward0
        return _out(_addc("Addcmul", ew.mul, _operator.mul, input, tensor1, tensor2, value), out)
    dt = _result_type_many([input, tensor1, tensor2])  # (value is a Scalar: it takes no part in the promotion)
    if dt == np.bool_:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    p = arithmetic.mul(tensor1, tensor2)
    return _out(_as_dtype(arithmetic.add(input, p if value == 1 else arithmetic.mul(p, value)), dt), out)


_REAL = (int, float)
_CONSTS: dict = {}


def _addc(name, bind_op, op, input, tensor1, tensor2, value):
    """input + value * tensor1 <op> tensor2 (addcmul, addcdiv) of one float dtype as ONE recorded node `name`:
    on one shape the binds straight (bind_op; the number a 0-d constant), else the Array operators (op)."""
    if input.shape == tensor1.shape == tensor2.shape:
        k = _const(value, input._v.dtype)
        return _apply(name, lambda c, a, b: ew.add(c, bind_op(ew.mul(a, k) if value != 1 else a, b)),
                      (input, tensor1, tensor2))
    _bshape(_bshape(tuple(input.shape), tuple(tensor1.shape)), tuple(tensor2.shape))
    return _apply(name, lambda c, a, b: c + op(a * value if value != 1 else a, b), (input, tensor1, tensor2))


def _const(v, dt):
    """The number v as a 0-d Array of dtype dt (cached): an operand of a bind on arrays of dt."""
    c = _CONSTS.get((v, dt))
    if c is None:
        if len(_CONSTS) > 1024:
            _CONSTS.clear()
        c = _CONSTS[(v, dt)] = Array(np.array(v, dt))
    return c


def _as_dtype(r, dt):
    return r if r._np_dtype() == dt else r.to(D.from_np(dt))


def addcdiv(input, tensor1, tensor2, _tensor2=arithmetic._NO, *, value=1, out=None):
    """input + value * tensor1 / tensor2; integer tensor1 and tensor2 are refused, as in torch."""
    if _tensor2 is not arithmetic._NO:  # (torch's deprecated addcdiv(input, value, tensor1, tensor2))
        value, tensor1, tensor2 = _value_first("addcdiv", tensor1, tensor2, _tensor2, value)
    if tensor1._np_dtype().kind in "biu" and tensor2._np_dtype().kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    _check_int_value("addcdiv", value, input, tensor1, tensor2)
    if type(value) in _REAL and _one_float_dtype(input, tensor1, tensor2):  # one node, torch's AddcdivBackward0
        return _out(_addc("Addcdiv", ew.div, _operator.truediv, input, tensor1, tensor2, value), out)
    dt = _result_type_many([input, tensor1, tensor2])
    q = arithmetic.div(tensor1, tensor2)
    return _out(_as_dtype(arithmetic.add(input, q if value == 1 else arithmetic.mul(q, value)), dt), out)


def angle(input, *, out=None):
    """The argument of complex input; for real input pi where negative, 0 elsewhere (NaN kept)."""
    dt = input._np_dtype()
    if dt.kind == "c":
        return _out(_apply1("Angle", lambda a: jnp.angle(a), input), out)
    fdt = dt if D.kind(dt) == "f" else D.default_float()

    def fn(a):
        a = _cast(a, fdt)
        z = jnp.zeros_like(a)
        r = ew.select(ew.lt(a, z), jnp.full(a.shape, math.pi, fdt), z)
        return ew.select(ew.ne(a, a), ew.mul(a, z), r)  # NaN kept, with a zero gradient as in torch
    return _out(_apply1("Angle", fn, input), out)


def deg2rad(input, *, out=None):
    return _out(_angle_scale("Deg2Rad", input, math.pi / 180.0), out)


def rad2deg(input, *, out=None):
    return _out(_angle_scale("Rad2Deg", input, 180.0 / math.pi), out)


def _angle_scale(name, input, k):
    """input * k (in the default float dtype for integer input) as one node named as torch's
    (Deg2RadBackward0 / Rad2DegBackward0): one bind of mul with k in the tensor's dtype."""
    x = input if D.kind(input._np_dtype()) in "fc" else input.to(D.from_np(D.default_float()))
    dt = x._np_dtype()
    if x._v is not None and D.kind(dt) == "f":
        if dt.itemsize == 2:  # float16 / bfloat16: in float32, rounded once (torch's opmath)
            c = Array(np.array(k, np.float32))
            return _apply1(name, lambda a: _cast(ew.mul(_cast(a, _F32), c), dt), x)
        return _apply_prim_scalar(name, ew.mul_p, ew.mul, x, k, False)
    return arithmetic.mul(x, k)


_F32 = np.dtype(np.float32)


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (with derivative 0 there)."""
    # (torch's second derivative at 0 is NaN, from differentiating its 0/0-guarded backward formula; sinc is
    # smooth there, so the Taylor branch's exact -pi^2/3 is kept: a reference's NaN at a smooth point is not
    # a target)
    dt = input._np_dtype()
    fdt = dt if D.kind(dt) in "fc" else D.default_float()
    odt = fdt
    if fdt.itemsize == 2:  # float16/bfloat16 in float32, rounded once (torch's opmath: pi * x overflows float16)
        fdt = np.dtype(np.float32)

    def fn(a):
        return _cast(_sinc(_cast(a, fdt)), odt)

    def _sinc(a):
        pi = np.asarray(math.pi, fdt if D.kind(fdt) == "f" else np.float64).astype(fdt)
        if fdt.kind == "c":
            zero = ew.eq(a, jnp.zeros_like(a))
            px = ew.select(zero, jnp.ones_like(a), a) * pi
            return ew.select(zero, jnp.ones_like(a), ew.sin(px) / px)
        # near 0 the Taylor series 1 - y/6 + y^2/120 - y^3/5040 (y = (pi x)^2), so that value and gradient
        # keep full precision where sin(px) / px cancels (and is 0/0 at 0)
        small = ew.lt(ew.abs(a), jnp.full_like(a, 1e-3))
        px = ew.select(small, jnp.ones_like(a), a) * pi
        y = ew.select(small, a, jnp.zeros_like(a)) * pi
        y = y * y
        taylor = 1.0 - y * (1.0 / 6.0 - y * (1.0 / 120.0 - y * (1.0 / 5040.0)))
        return ew.select(small, taylor, ew.sin(px) / px)
    return _out(_apply1("Sinc", fn, input), out)


def ldexp(input, other, *, out=None):
    """input * 2 ** other, as torch: 2.0 ** other in other's float dtype, the product in the result dtype of
    (input, other) (the default float for integers)."""
    o = other if isinstance(other, Tensor) else _t(other)
    if o._np_dtype() == np.bool_ and isinstance(input, Tensor) and D.kind(input._np_dtype()) == "f":
        # (torch's kernel for a floating input; an integer one multiplies)
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    dt = _promote(input, o)
    if dt.kind in "biu":
        dt = D.default_float()
    r = arithmetic.mul(input, arithmetic.pow(2.0, o))
    return _out(r if r._np_dtype() == dt else r.to(D.from_np(dt)), out)


def logaddexp2(input, other, *, out=None):
    _tensor_arg("logaddexp2", other)
    dt = _promote(input, other)
    if dt.kind in "biuc":
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{_legacy(dt)}'")
    return _out(_binop("Logaddexp20", _bc(ew.logaddexp2), input, other, _TRUEDIV), out)


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent (exponent int32, no gradient). The mantissa
    is input * 2^-e, two exact power-of-two scalings (2^-e alone overflows for subnormal input), so its
    derivative is 2^-e, as torch's (which divides by 2^e computed in float32: inf below 2^-149 and 0 from
    2^128 on in float64, where funcgrad's is exact)."""
    dt = input._np_dtype()
    if D.kind(dt) != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    ex = np.frexp(input._host())[1]
    e = -ex.astype(np.int64)
    h = e // 2
    s1, s2 = Array(np.exp2(h).astype(dt)), Array(np.exp2(e - h).astype(dt))
    m = _apply1("Frexp", lambda a: ew.mul(ew.mul(a, s1), s2), input)
    return _out(_rt.frexp(m, _wrap(Array(ex.astype(np.int32)))), out, True)


def _int_binary(name, np_fn):
    def op(input, other, *, out=None):
        _tensor_arg(name, other)
        a, b = _t(input), _t(other)
        dt = _promote(a, b)
        if dt.kind not in "iu":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy(dt)}'")
        _bshape(tuple(a.shape), tuple(b.shape))
        return _out(_wrap(Array(np.asarray(np_fn(a._host().astype(dt), b._host().astype(dt))).astype(dt))), out)
    op.__name__ = op.__qualname__ = name
    return op


gcd = _int_binary("gcd", np.gcd)
lcm = _int_binary("lcm", np.lcm)


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0 (no gradient, as in torch)."""
    _tensor_arg("heaviside", values)
    if input._np_dtype() != values._np_dtype():
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    if input._np_dtype().kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    x, v = input._host(), values._host()
    _bshape(x.shape, v.shape)
    return _out(_wrap(Array(np.asarray(np.where(x == 0, v, x > 0)).astype(x.dtype))), out)


def nextafter(input, other, *, out=None):
    _tensor_arg("nextafter", other)
    a, b = _t(input), _t(other)
    dt = _promote(a, b)
    if D.kind(dt) != "f":
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_legacy(dt)}'")
    a, b = a.to(D.from_np(dt)), b.to(D.from_np(dt))
    _bshape(tuple(a.shape), tuple(b.shape))
    # torch's derivative: 1 in input, 0 in other (the card's kink="torch")
    return _out(_apply("Nextafter", _bc(lambda p, q: ew.nextafter_p.bind(p, q, kink="torch")), (a, b)), out)


def fill(input, value):
    """A new tensor of input's shape and dtype filled with value (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        return arithmetic.add(_C.zeros_like(input), value.to(input.dtype))
    return _full_like(input, value)


def _full_like(input, value):
    return full_like(input, value)


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p, elementwise."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    kind = D.kind(input._np_dtype())
    if kind == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if kind in "iu":  # (torch computes integers in the default float dtype)
        input = input.to(D.from_np(D.default_float()))
    elif kind != "f":
        raise RuntimeError("mvlgamma: Expected a floating point tensor as input")
    # (torch computes outside the domain x > (p - 1) / 2 too, as lgamma's sum)
    offs = Array(np.arange(p, dtype=input._np_dtype()) / 2)
    c = p * (p - 1) / 4 * math.log(math.pi)
    if _one_float_dtype(input):  # one node, torch's MvlgammaBackward0
        return _apply1("Mvlgamma", lambda a: jnp.sum(_sp.lgamma(jnp.expand_dims(a, -1) - offs), axis=-1) + c, input)
    args = arithmetic.sub(input.unsqueeze(-1), _wrap(offs))
    return arithmetic.add(unary.lgamma(args).sum(-1), c)



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("addcdiv", "addcmul", "angle", "deg2rad", "rad2deg", "frexp", "ldexp", "gcd", "lcm", "heaviside",
           "logaddexp2", "mvlgamma", "nextafter", "sinc")
INPLACE = ("addcdiv", "addcmul", "deg2rad", "rad2deg", "gcd", "lcm", "heaviside", "ldexp", "mvlgamma", "nextafter",
           "sinc")

__all__ = ["addcmul", "addcdiv", "angle", "deg2rad", "rad2deg", "sinc", "ldexp", "logaddexp2", "frexp", "gcd", "lcm",
           "heaviside", "nextafter", "fill", "mvlgamma"]


addcmul._number_first = addcdiv._number_first = 1  # (_argcheck: where the deprecated overload puts its Number)
