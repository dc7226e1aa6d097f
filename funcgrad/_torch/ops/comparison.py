"""Comparisons and logic: eq/ne/lt/le/gt/ge (bool results, no gradient), the bitwise and shift
operators, logical_and/or/xor, and the whole-tensor tests allclose, isclose and equal."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from .._tensor import Tensor, _wrap
from .._dispatch import _apply_nograd
from ._common import (_ARITH, _as_tensor, _bc, _binop, _bool, _bshape, _cast, _CMP, _legacy_name, _not_impl, _NPB, _out,
                      _promote, _scalar_arr, _tensor_arg, _with_out)


_eq, _ne, _lt, _le, _gt, _ge = (_bc(p) for p in (ew.eq, ew.ne, ew.lt, ew.le, ew.gt, ew.ge))


def _comparison(name: str, op: str, compare):
    """The torch comparison of that name: compare on input and other broadcast in their promoted dtype, a bool
    Tensor (op is the name _binop records and puts in its errors)."""
    def comparison(input, other, *, out=None):
        return _out(_binop(op, compare, input, other, _CMP), out)
    comparison.__name__ = comparison.__qualname__ = name
    return comparison


eq, ne, lt, le, gt, ge = (_comparison(name, name.capitalize(), compare) for name, compare in
                         (("eq", _eq), ("ne", _ne), ("lt", _lt), ("le", _le), ("gt", _gt), ("ge", _ge)))

not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def _int_or_bool(name, dt):
    if D.kind(dt) in "fc":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy_name(dt)}'")
    return dt


@_with_out(False)
def bitwise_and(input, other):
    return _binop("BitwiseAnd", _bc(ew.bitwise_and), input, other, _ARITH,
                  lambda dt: _int_or_bool("bitwise_and", dt))


@_with_out(False)
def bitwise_or(input, other):
    return _binop("BitwiseOr", _bc(ew.bitwise_or), input, other, _ARITH,
                  lambda dt: _int_or_bool("bitwise_or", dt))


@_with_out(False)
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


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and",
           "logical_or", "logical_xor", "allclose", "isclose", "equal")
INPLACE = ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "ne", "lt",
           "le", "gt", "ge")

__all__ = ["allclose", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "eq",
           "equal", "ge", "greater", "greater_equal", "gt", "isclose", "le", "less", "less_equal", "logical_and",
           "logical_or", "logical_xor", "lt", "ne", "not_equal"]
