"""Elementwise arithmetic of two operands with torch's type promotion (tensors over zero-dim tensors over
Python scalars): add/sub/mul/div with torch's rounding modes and integer division rules, remainder, fmod,
pow/float_power, maximum/minimum, fmax/fmin, atan2, hypot, logaddexp, copysign, xlogy and lerp."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from .._argcheck import check_same_dtype as _check_same_dtype
from .._tensor import Tensor
from .._dispatch import _apply, _apply1
from ._common import (_ARITH, _any, _legacy_name, _bc, _binop, _bool, _bshape, _float, _int, _is_scalar, _not_impl,
                      _NPB, _one_float_dtype, _out, _promote, _same_pair, _t, _tensor_arg, _TRUEDIV, _with_out)
from .unary import _tabs
from .comparison import lt
from .selection import where


_add, _sub, _mul, _div, _maximum, _minimum = (_bc(p) for p in (ew.add, ew.sub, ew.mul, ew.div, ew.max, ew.min))


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
    tensor is scaled in float32, not rounded to bfloat16 first). A complex result is computed as torch's kernel
    does, other (in the result's dtype) times alpha as a complex number even where alpha is 1, so that an
    infinite part gives a nan one: (1+0j) + (inf+0j) is inf+nanj in torch."""
    res = _promote(input, other)
    if D.kind(res) == "c":
        other = other.to(D.from_np(res)) if isinstance(other, Tensor) else _t(other, D.from_np(res))
        return mul(other, alpha)
    if D.kind(res) == "b":  # (a bool result: a + alpha * b computed in bool, as torch)
        return other if alpha else mul(other, False)
    if not isinstance(other, Tensor):
        return other * alpha
    if isinstance(input, Tensor) and input._np_dtype() != other._np_dtype():
        dt = D.promote_types(input._np_dtype(), other._np_dtype())
        if input.ndim or not other.ndim:  # (a 0-d input does not decide the dtype of a dimensioned other)
            other = other.to(D.from_np(dt))
    return mul(other, alpha)


def _check_alpha(input, other, alpha) -> None:
    """torch's checks of add/sub's alpha against the result dtype: a bool alpha only for a bool result, a float
    one only for a floating or complex result, a complex one only for a complex result."""
    k = D.kind(_promote(input, other))
    if isinstance(alpha, (_bool, np.bool_)):
        if k != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, (complex, np.complexfloating)) or isinstance(alpha, Tensor) and alpha.is_complex():
        if k != "c":
            raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")
    elif (isinstance(alpha, (_float, np.floating)) or isinstance(alpha, Tensor) and alpha.is_floating_point()) \
            and k not in "fc":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _complex(x) -> bool:
    return x.__class__ is complex or isinstance(x, Tensor) and x._np_dtype().kind == "c"


_NO = object()  # (the third positional of torch's deprecated add/sub(input, alpha, other) overload, when absent)
_deprecation_warned = [False]  # torch warns of a deprecated overload once per process


def alpha_first(name: str, alpha, other, form: str):
    """torch's deprecated overload name(alpha, other) of add/sub (add_/sub_), as old code calls them
    (p.data.add_(-lr, grad)): (other, alpha), with torch's UserWarning the first time in the process.
    `form`: the deprecated and the current signature, as torch's warning spells them."""
    if not isinstance(other, Tensor) or isinstance(alpha, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(alpha).__name__}, "
                        f"{type(other).__name__}): the deprecated overload takes (Number alpha, Tensor other); use "
                        f"{name}(other, alpha=alpha)")
    if not _deprecation_warned[0]:
        _deprecation_warned[0] = True
        old, new = form.split("|")
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider using one of the "
                      f"following signatures instead:\n\t{name}({new})", UserWarning, stacklevel=3)
    return other, alpha


_FUNCTION_FORM = ("Tensor input, Number alpha, Tensor other, *, Tensor out = None|"
                  "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None")
METHOD_FORM = "Number alpha, Tensor other|Tensor other, *, Number alpha = 1"


def add(input, other, _other=_NO, *, alpha=1, out=None):
    if _other is not _NO:  # (torch's deprecated add(input, alpha, other))
        other, alpha = alpha_first("add", other, _other, _FUNCTION_FORM)
    if out is None and alpha.__class__ is _int and alpha == 1:
        r = _same_pair("Add", _ADD_P, _bool_add, input, other, "fiu")
        if r is not None:
            return r
    if alpha.__class__ is not _int or alpha != 1 or _complex(input) or _complex(other):
        _check_alpha(input, other, alpha)
        if alpha != 1 or _complex(input) or _complex(other):
            other = _scaled(input, other, alpha)
    r = _binop("Add", _bool_add, input, other, _ARITH, None, _ADD_P)  # (positional: the hot path)
    return r if out is None else _out(r, out)


def _is_bool(x):
    return x.__class__ is _bool or isinstance(x, Tensor) and x._np_dtype() == _NPB


def sub(input, other, _other=_NO, *, alpha=1, out=None):
    if _other is not _NO:  # (torch's deprecated sub(input, alpha, other))
        other, alpha = alpha_first("sub", other, _other, _FUNCTION_FORM)
    if out is None and alpha.__class__ is _int and alpha == 1:
        r = _same_pair("Sub", _SUB_P, _sub_fn, input, other, "fiu")
        if r is not None:
            return r
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    if _complex(input) or _complex(other):  # (torch's kernel: input + (-alpha) * other, see _scaled)
        _check_alpha(input, other, alpha)
        r = _binop("Sub", _bool_add, input, _scaled(input, other, -alpha), _ARITH, None, _ADD_P)
        return r if out is None else _out(r, out)
    if alpha.__class__ is not _int or alpha != 1:
        _check_alpha(input, other, alpha)
        if alpha != 1:
            other = _scaled(input, other, alpha)
    r = _binop("Sub", _sub_fn, input, other, _ARITH, None, _SUB_P)  # (positional: the hot path)
    return r if out is None else _out(r, out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """other - alpha * input: torch's overloads take a Tensor input (and a Tensor or a number other)."""
    if not isinstance(input, Tensor) or not (isinstance(other, Tensor) or _is_scalar(other)):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (input, other))
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Number alpha = 1)\n"
                        " * (Tensor input, Number other, Number alpha = 1)\n")
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    if out is None:
        r = _same_pair("Mul", _MUL_P, _bool_mul, input, other)
        if r is not None:
            return r
    r = _binop("Mul", _bool_mul, input, other, _ARITH, None, _MUL_P)  # (positional: the hot path)
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
    if dt.kind == "c" and name is not None:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_legacy_name(dt)}'")
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
    elif _is_scalar(other) and other == 0 and not (isinstance(input, Tensor) and input.numel() == 0):
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
    """a ** b by the pow card with torch's conventions (its value: C's pow at a = -inf; its derivative: 0
    wherever the exponent is 0); integers as torch's integer pow."""
    if a.dtype.kind == "i":
        return _int_pow(a, b)
    return ew.pow(a, b, "torch")


def _pow_fn(p, q):
    return _bc(_float_pow)(p, q)


def _pow_scalar_fn(p, q):
    """x ** number: torch's pow(Tensor, Scalar) kernel (sqrt at 0.5, rsqrt at -0.5), derivative included."""
    if p.dtype.kind == "i":
        return _int_pow(p, q)
    return _bc(lambda a, b: ew.pow(a, b, "torch_scalar"))(p, q)


# the number exponents torch's pow kernel computes by products (1 / (x * x), 1 / x, 1, x, x * x, x * x * x) for
# float and double tensors; others get std::pow's one rounding (the pow card); half and bfloat16 tensors only the
# exponents where the two agree (complex ones take the pow card, NumPy's complex power, nearer torch's products)
_POW_BY_PRODUCTS = frozenset({-2, -1, 0, 1, 2, 3})
_POW_BY_PRODUCTS_HALF = frozenset({-1, 0, 1, 2})


def _pow_by_products(dt, exponent) -> bool:
    if dt in (np.float32, np.float64):
        return exponent in _POW_BY_PRODUCTS
    return D.kind(dt) == "f" and exponent in _POW_BY_PRODUCTS_HALF


def pow(input, exponent, *, out=None):  # noqa: A001
    if isinstance(input, Tensor) and isinstance(exponent, (_int, _float)) and not isinstance(exponent, _bool):
        dt = input._np_dtype()
        if isinstance(exponent, _int) and dt.kind in "biu":
            if exponent < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            if dt != _NPB:
                e = exponent
                return _out(_apply1("Pow", lambda a: ew.integer_pow(a, e), input), out)
        elif _pow_by_products(dt, exponent):  # (integer_pow multiplies as torch's kernel: (x * x) * x)
            e = int(exponent)
            return _out(_apply1("Pow", lambda a: ew.integer_pow(a, e), input), out)
    if isinstance(input, Tensor) and exponent.__class__ is _bool and input._np_dtype() == _NPB:
        return _out(input.clone() if exponent else input.new_ones(input.shape), out)
    if _promote(input, exponent) == _NPB:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    # (torch's nodes: PowBackward0 for a number exponent, 1 for a tensor one, 2 for a number base)
    name = "Pow1" if isinstance(exponent, Tensor) and isinstance(input, Tensor) else "Pow2" if isinstance(
        exponent, Tensor) else "Pow"
    fn = _pow_scalar_fn if isinstance(input, Tensor) and not isinstance(exponent, Tensor) else _pow_fn
    return _out(_binop(name, fn, input, exponent), out)


def float_power(input, exponent, *, out=None):
    """pow in double precision: float64, or complex128 when either operand is complex (a Python complex
    exponent included), as torch."""
    cplx = _any(isinstance(v, complex) or isinstance(v, Tensor) and v._np_dtype().kind == "c"
                for v in (input, exponent))
    dt = D.complex128 if cplx else D.float64
    return _out(pow(input.to(dt) if isinstance(input, Tensor) else input,
                    exponent.to(dt) if isinstance(exponent, Tensor) else exponent), out)


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


@_with_out(False)
def hypot(input, other):
    _tensor_arg("hypot", other)
    _not_impl("hypot_cpu", "biu")(_promote(input, other))
    return _binop("Hypot", _bc(lambda a, b: ew.hypot(a, b, "torch")), input, other, _TRUEDIV)


def _complex_logaddexp(a, b):
    """torch's complex logaddexp: m + log1p(exp(n - m)), m the operand of the larger real part."""
    first = ew.ge(jnp.real(a), jnp.real(b))
    m, n = ew.select(first, a, b), ew.select(first, b, a)
    return m + jnp.log1p(jnp.exp(n - m))


@_with_out(False)
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
    from .._special_ops import xlogy as _xlogy
    return _xlogy(input, other, out=out)


def lerp(input, end, weight, *, out=None):
    """input + weight (end - input), computed as torch does from the nearer end: for |weight| >= 0.5 it is
    end - (end - input)(1 - weight) (same derivatives; exact at weight = 1, and no inf - inf there)."""
    if isinstance(end, Tensor):
        _check_same_dtype("expected dtype {0:c} for `end` but got dtype {1:c}", input, end)
    if isinstance(weight, Tensor) and weight.ndim:  # (a 0-d weight is a number to torch)
        _check_same_dtype("expected dtype {0:c} for `weight` but got dtype {1:c}", input, weight)
    if isinstance(weight, Tensor) and weight._np_dtype() == _NPB:  # (a 0-d bool weight: the number 0 or 1)
        weight = weight.to(input.dtype)
    if isinstance(weight, Tensor):
        if _one_float_dtype(input, end, weight):  # one node, torch's LerpBackward1
            _bshape(_bshape(tuple(input.shape), tuple(end.shape)), tuple(weight.shape))
            return _out(_apply("Lerp1", _lerp_tensor, (input, end, weight)), out)
    elif type(weight) in (_int, _float) and _one_float_dtype(input, end):  # one node, torch's LerpBackward0
        if input.shape == end.shape:  # (the binds straight, the weight a 0-d constant)
            dt = input._v.dtype
            small = abs(weight) < 0.5
            k = Array(np.array(weight if small else 1 - weight, dt))
            return _out(_apply("Lerp", (lambda a, b: ew.add(a, ew.mul(k, ew.sub(b, a)))) if small else
                               (lambda a, b: ew.sub(b, ew.mul(ew.sub(b, a), k))), (input, end)), out)
        _bshape(tuple(input.shape), tuple(end.shape))
        return _out(_apply("Lerp", lambda a, b: _lerp_number(a, b, weight), (input, end)), out)
    diff = sub(end, input)
    lo = add(input, mul(weight, diff))
    if isinstance(weight, Tensor):
        hi = sub(end, mul(sub(1, weight), diff))
        return _out(where(lt(weight, 0.5), lo, hi), out)
    if weight >= 0.5:
        return _out(sub(end, mul(1 - weight, diff)), out)
    return _out(lo, out)


def _lerp_number(a, b, w):
    """torch's lerp kernel for a number weight w: a + w (b - a) where |w| < 0.5, else b - (b - a)(1 - w)."""
    d = b - a
    return a + w * d if abs(w) < 0.5 else b - d * (1 - w)


def _lerp_tensor(a, b, w):
    """torch's lerp kernel for a tensor weight, elementwise (both branches' binds, one selected)."""
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
           "fmod", "pow", "float_power", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot",
           "logaddexp", "copysign", "xlogy", "lerp")
INPLACE = ("pow", "remainder", "fmod", "floor_divide", "maximum", "minimum", "atan2", "lerp", "hypot", "xlogy",
           "copysign", "float_power")

__all__ = ["add", "arctan2", "atan2", "copysign", "div", "divide", "float_power", "floor_divide", "fmax", "fmin",
           "fmod", "hypot", "lerp", "logaddexp", "maximum", "minimum", "mul", "multiply", "pow", "remainder", "rsub",
           "sub", "subtract", "true_divide", "xlogy"]
