"""Complex numbers as torch sees them: real / imag (views), view_as_real / view_as_complex, polar, the
conjugation family (conj, conj_physical, resolve_conj, resolve_neg, is_conj, is_neg) and adjoint."""
from __future__ import annotations

import builtins

import numpy as np

from .. import _jnp as jnp
from ..._src.prims import elementwise as ew
from . import arithmetic, unary
from ._common import _bshape, _out
from .._dispatch import _apply
from .._creation import complex as _complex
from .._views import _view
from .._errors import _legacy

_bool = builtins.bool


def polar(abs, angle, *, out=None):  # noqa: A002 - torch's parameter name
    """abs * (cos(angle) + i sin(angle))."""
    if abs._np_dtype() != angle._np_dtype() or abs._np_dtype() not in (np.float32, np.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_legacy(abs._np_dtype())} and {_legacy(angle._np_dtype())}")
    if abs._v is not None and angle._v is not None:  # one node, torch's PolarBackward0
        shape = _bshape(tuple(abs.shape), tuple(angle.shape))

        def fn(r, th):
            return ew.complex(jnp.broadcast_to(r * ew.cos(th), shape), jnp.broadcast_to(r * ew.sin(th), shape))
        return _out(_apply("Polar", fn, (abs, angle)), out)
    return _out(_complex(arithmetic.mul(abs, unary.cos(angle)), arithmetic.mul(abs, unary.sin(angle))), out)


def real(input):
    return input.real


def imag(input):
    return input.imag


def view_as_real(input):
    """A real view (..., 2) of complex input, sharing its storage."""
    dt = input._np_dtype()
    if dt.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    rdt = np.dtype(np.float32 if dt == np.complex64 else np.float64)

    def np_fn(v):  # the real and imaginary parts as a trailing axis of stride one element
        return np.lib.stride_tricks.as_strided(v.real, v.shape + (2,), v.strides + (rdt.itemsize,),
                                               writeable=v.flags.writeable)
    return _view("ViewAsReal", input, np_fn, lambda a: jnp.stack([ew.real(a), ew.imag(a)], axis=-1))


def view_as_complex(input):
    """A complex view of a float tensor whose last dimension has size 2 (stride 1), sharing its storage."""
    dt = input._np_dtype()
    if dt not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_legacy(dt)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if input.ndim > 1 and any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    cdt = np.dtype(np.complex64 if dt == np.float32 else np.complex128)

    def np_fn(v):  # each pair reinterpreted as one complex number, at the pair's address
        if v.dtype != dt:  # a traced tensor's layout shadow (one byte per element): the pair's first stands in
            return v[..., 0]
        out = np.ndarray(v.shape[:-1], dtype=cdt, buffer=_root(v), offset=_offset(v, v), strides=v.strides[:-1])
        if not v.flags.writeable:
            out.flags.writeable = False
        return out
    return _view("ViewAsComplex", input, np_fn, lambda a: ew.complex(a[..., 0], a[..., 1]))


def _root(v):
    r = v
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


def _offset(x, v) -> int:
    return x.__array_interface__["data"][0] - _root(v).__array_interface__["data"][0]


def conj_physical(input, *, out=None):
    return _out(input.conj().clone() if input.is_complex() else input.clone(), out)


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input) -> _bool:
    return False


def is_neg(input) -> _bool:
    return False


def conj(input):
    return input.conj()


def adjoint(input):
    return input.mH



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("is_conj", "is_neg", "conj_physical")
INPLACE = ("conj_physical",)

__all__ = ["polar", "real", "imag", "view_as_real", "view_as_complex", "conj_physical", "resolve_conj",
           "resolve_neg", "is_conj", "is_neg", "conj", "adjoint"]
