"""Diagonals and triangles: trace, diag, diagonal (a view), diag_embed, tril and triu."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp
from .._tensor import _dim
from .._dispatch import _apply1
from .._views import _view
from ._common import _abs, _cast, _max, _min, _NPB, _range, _with_out
from .reductions import _red_int64


def trace(input):
    if input._np_dtype() == _NPB:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    if input._np_dtype() == _NPB:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    odt = _red_int64(input._np_dtype())
    return _apply1("Trace", lambda a: jnp.trace(_cast(a, odt)), input)


@_with_out()
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


@_with_out()
def tril(input, diagonal=0):
    _need_2d("tril", input)
    return _apply1("Tril", lambda a: jnp.tril(a, diagonal), input)


@_with_out()
def triu(input, diagonal=0):
    _need_2d("triu", input)
    return _apply1("Triu", lambda a: jnp.triu(a, diagonal), input)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("trace", "diag", "diagonal", "diag_embed", "tril", "triu")
INPLACE = ("tril", "triu")

__all__ = ["diag", "diag_embed", "diagonal", "trace", "tril", "triu"]
