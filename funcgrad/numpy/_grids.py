"""NumPy's index-expression helpers: mgrid, ogrid, r_, c_ (plus s_, index_exp and ndindex, which only
build Python index objects and are NumPy's own)."""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from ._creation import arange, array, linspace, meshgrid
from ._manipulation import concatenate, reshape, stack, transpose

s_, index_exp, ndindex = np.s_, np.index_exp, np.ndindex


def _slice_values(sl: slice):
    """The values a slice stands for in mgrid/r_: arange(start, stop, step), or with an imaginary step
    (5j) that many points from start to stop inclusive."""
    start = 0 if sl.start is None else sl.start
    step = 1 if sl.step is None else sl.step
    if isinstance(step, complex):
        return linspace(start, sl.stop, int(abs(step)))
    return arange(start, sl.stop, step)


class _Grid:
    """mgrid (dense) and ogrid (open): grid[0:3, 0:4] or grid[-1:1:5j]."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        if any(a.dtype.kind == "f" for a in axes):  # a float bound or step anywhere: the default float
            axes = [a.astype(dtypes.defaults.float_) for a in axes]
        if self.sparse:
            n = len(axes)
            return tuple(reshape(a, (1,) * i + (a.shape[0],) + (1,) * (n - i - 1)) for i, a in enumerate(axes))
        return stack(meshgrid(*axes, indexing="ij"))


mgrid, ogrid = _Grid(False), _Grid(True)


class _Concat:
    """r_ / c_: concatenation of arrays, scalars and slices (as aranges) along an axis; an optional first
    string 'axis' or 'axis,ndmin' or 'axis,ndmin,trans1d' directs it, as in NumPy."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            spec = items[0].split(",")
            if spec[0] in ("r", "c"):
                raise NotImplementedError(f"r_/c_: the matrix directive {spec[0]!r} is not supported")
            axis = int(spec[0])
            ndmin = int(spec[1]) if len(spec) > 1 else ndmin
            trans1d = int(spec[2]) if len(spec) > 2 else trans1d
            items = items[1:]
        parts = []
        for it in items:
            x = _slice_values(it) if isinstance(it, slice) else array(it) if not isinstance(it, ArrayBase) else it
            if x.ndim < ndmin:
                x = _atleast(x, ndmin, trans1d)
            parts.append(x)
        if not parts:
            return array([])
        return concatenate([p if p.ndim else reshape(p, (1,)) for p in parts], axis=axis)


def _atleast(x, ndmin: int, trans1d: int):
    """x with ndmin dimensions, its own axes placed as NumPy's r_ places them (trans1d)."""
    k, added = x.ndim, ndmin - x.ndim
    y = reshape(x, (1,) * added + tuple(x.shape))  # new axes first, x's axes last
    if trans1d != -1 and k > 0:
        t = operator.index(trans1d)
        t = t if t >= 0 else t + added + 1  # where x's first axis goes among the new ones
        new_axes, own_axes = list(range(added)), list(range(added, ndmin))
        y = transpose(y, new_axes[:t] + own_axes + new_axes[t:])
    return y


r_ = _Concat(0, 1, -1)
c_ = _Concat(-1, 2, 0)
