"""Tensors built from others or from raw memory: diagflat, block_diag, vander, combinations, the window
functions (hann, hamming, blackman, bartlett, kaiser), empty_strided, frombuffer, from_dlpack, and the grids
meshgrid and cartesian_prod."""
from __future__ import annotations

import builtins
import ctypes
import itertools
import math
import warnings

import numpy as np

from ..._src.core.array import Array
from .. import _creation as _C
from .. import _dtype as D
from . import diagonals, indexing as _indexing, join_split, reductions, views
from ._common import _cast, _result_type_many
from .. import _jnp as jnp
from .._dispatch import _apply
from .._creation import empty, ones, zeros
from .._tensor import _wrap

_int = builtins.int
_range = builtins.range


def diagflat(input, offset=0):
    return diagonals.diag(input.reshape(-1), offset)


def block_diag(*tensors):
    """The block-diagonal matrix with the given blocks (0-d -> 1x1, 1-d -> a row)."""
    mats = [t.reshape(1, 1) if t.ndim == 0 else (t.reshape(1, -1) if t.ndim == 1 else t) for t in tensors]
    for i, m in enumerate(mats):
        if m.ndim != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{tensors[i].ndim} dimensions")
    if not mats:
        return _wrap(Array(np.zeros((1, 0), D.default_float())))
    dt = _result_type_many(mats)
    W = sum(m.shape[1] for m in mats)
    if all(t._v is not None for t in tensors):  # one node, torch's BlockDiagBackward0: blocks padded and joined
        return _apply("BlockDiag", lambda *bs: _block_diag(bs, dt, W), tuple(tensors))
    rows, col = [], 0
    for m in mats:
        r, c = m.shape
        parts = [zeros(r, col, dtype=D.from_np(dt)), m.to(D.from_np(dt)), zeros(r, W - col - c, dtype=D.from_np(dt))]
        rows.append(join_split.cat(parts, 1))
        col += c
    return join_split.cat(rows, 0)


def _block_diag(blocks, dt, width):
    """The Array-level block-diagonal matrix of blocks (0-d: 1x1, 1-d: a row), cast to dt, each padded with zeros
    to `width`."""
    rows, col = [], 0
    for b in blocks:
        if b.ndim < 2:
            b = jnp.reshape(b, (1, -1))
        c = b.shape[1]
        rows.append(jnp.pad(_cast(b, dt), ((0, 0), (col, width - col - c))))
        col += c
    return jnp.concatenate(rows, 0)


def vander(x, N=None, increasing=False):
    """Columns x**0 .. x**(N-1) (reversed unless increasing), built by a running product."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = x._np_dtype()
    odt = np.dtype(np.int64) if dt.kind in "biu" else dt
    xx = x.to(D.from_np(odt))
    if n == 0:
        return empty(x.shape[0], 0, dtype=D.from_np(odt))
    cols = join_split.cat([ones(x.shape[0], 1, dtype=D.from_np(odt)), xx.unsqueeze(1).expand(x.shape[0], n - 1)], 1)
    r = reductions.cumprod(cols, 1)
    return r if increasing else views.flip(r, (1,))


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-D tensor's elements, as rows."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(Array(np.zeros((0,), input._np_dtype())))
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(_range(input.shape[0]), r)), np.int64).reshape(-1, r)
    if idx.size == 0:
        return _wrap(Array(np.zeros((0, r), input._np_dtype())))
    return _indexing.index_select(input, 0, _wrap(Array(idx.reshape(-1)))).reshape(-1, r)


def _window(name, window_length, periodic, dtype, requires_grad, fn):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dt = D.default_float() if dtype is None else D.to_np(dtype)
    if dt.kind != "f" and not (D.bfloat16 is not None and dt == D.to_np(D.bfloat16)):
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={D.from_np(dt)})")
    if window_length == 0:
        w = np.zeros((0,), np.float64)
    elif window_length == 1:
        w = np.ones((1,), np.float64)
    else:
        N = window_length + 1 if periodic else window_length
        w = fn(np.arange(N, dtype=np.float64), N)[:window_length]
    t = _wrap(Array(w.astype(dt)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * math.pi * n / (N - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * math.pi * n / (N - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * math.pi * n / (N - 1)) + 0.08 * np.cos(4 * math.pi * n / (N - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (N - 1) - 1) ** 2, 0, None))) / np.i0(beta))


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised (zero) tensor of `size` viewed with `stride` over a storage just large enough."""
    size, stride = tuple(_int(s) for s in size), tuple(_int(s) for s in stride)
    n = 1 + sum((a - 1) * s for a, s in zip(size, stride)) if all(size) else 0
    base = _C.zeros(max(n, 0), dtype=dtype)
    t = base.as_strided(size, stride, 0)
    if requires_grad:
        t = t.detach().requires_grad_(True)
    return t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of a buffer-protocol object (sharing its memory when it is writable)."""
    dt = D.to_np(dtype)
    arr = np.frombuffer(buffer, dtype=dt, count=count, offset=offset)
    if arr.size == 0:
        raise ValueError("both buffer length (0) and count (-1) must not be 0")
    if not arr.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor.",
                      UserWarning, stacklevel=2)
        arr = arr.copy()
    t = _C.from_numpy(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


class _Capsule:
    """A legacy DLPack capsule (what to_dlpack returns) presented through the __dlpack__ protocol NumPy reads."""

    def __init__(self, capsule) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self) -> tuple:
        return (1, 0)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of an object with __dlpack__ (a NumPy array, a funcgrad Array, a torch tensor,
    ...) or of a DLPack capsule (to_dlpack's result; a capsule can be consumed once)."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    a = np.from_dlpack(ext_tensor)
    if not a.flags.writeable and a.size:
        # NumPy marks an import through a pre-1.0 (unversioned) capsule read-only, as that format cannot say;
        # torch's from_dlpack gives a tensor that writes into the producer's memory, so alias the same bytes
        lo, hi = np.lib.array_utils.byte_bounds(a)
        buf = (ctypes.c_char * (hi - lo)).from_address(lo)
        buf.keep = a  # (the import, and through it the capsule's owner, lives as long as the alias)
        a = np.ndarray(a.shape, a.dtype, buffer=buf, offset=a.__array_interface__["data"][0] - lo,
                       strides=a.strides)
    return _C.from_numpy(a)


def to_dlpack(tensor):
    """The DLPack capsule of a tensor's memory (shared), for a consumer's from_dlpack (legacy: prefer passing the
    tensor itself, which has __dlpack__)."""
    return tensor.__dlpack__()


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
    return join_split.stack([g.reshape(-1) for g in grids], 1)



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("diagflat",)
INPLACE = ()

__all__ = ["diagflat", "block_diag", "vander", "combinations", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window", "empty_strided", "frombuffer", "from_dlpack", "to_dlpack", "meshgrid",
           "cartesian_prod"]
