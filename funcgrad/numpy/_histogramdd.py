"""Multidimensional histograms: histogramdd and histogram2d, as NumPy's (bin edges per dimension as in
numpy.histogram). dtypes as JAX's: sample, weights and edges in their promoted inexact dtype; counts in the
default int without weights (NumPy: float64), else (and with density) in that inexact dtype."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from .._src.prims import elementwise as ew
from . import _ufuncs as u
from ._creation import zeros
from ._manipulation import reshape, stack
from ._promote import asarray_any
from ._sorting import searchsorted
from ._statistics import _hist_dtype, histogram_bin_edges


def _as_sample(sample):
    if isinstance(sample, (list, tuple)) or (not isinstance(sample, (ArrayBase, np.ndarray))):
        cols = [asarray_any(c) for c in sample]
        return stack([reshape(c, (-1,)) for c in cols], axis=1)
    x = asarray_any(sample)
    if x.ndim == 1:
        return reshape(x, (-1, 1))
    if x.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {tuple(x.shape)}")
    return x


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy name
    """(counts, [edges per dimension]) of N points in D dimensions: sample (N, D), or a sequence of D
    coordinate arrays. bins: an int, or per dimension an int or an array of edges; range: per dimension
    (lo, hi) or None. Points outside the edges are ignored; the last bin includes its right edge."""
    x = _as_sample(sample)
    wa = None if weights is None else asarray_any(weights)
    cdt = _hist_dtype(x, wa)
    x = ew.convert_element_type(x, cdt)
    n, d = x.shape
    bins_d = [bins] * d if isinstance(bins, int) else list(bins)
    ranges = [None] * d if range is None else list(range)
    if len(bins_d) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: the dimension of bins and range must equal the sample's ({d})")
    edges, flat, valid = [], None, None
    for k in builtins.range(d):
        col = x[:, k]
        e = histogram_bin_edges(col, bins_d[k], ranges[k])
        if e.dtype != cdt:
            e = ew.convert_element_type(e, cdt)
        nb = e.shape[0] - 1
        edges.append(e)
        cc = col
        idx = u.subtract(searchsorted(e, cc, side="right"), 1)
        idx = u.where(u.equal(cc, e[nb]), nb - 1, idx)  # the last bin is closed
        ok = u.logical_and(u.greater_equal(idx, 0), u.less(idx, nb))
        valid = ok if valid is None else u.logical_and(valid, ok)
        flat = idx if flat is None else u.add(u.multiply(flat, nb), idx)
    nbs = tuple(e.shape[0] - 1 for e in edges)
    size = math.prod(nbs)
    slot = u.where(valid, flat, size) if n else flat  # invalid points go to a discarded extra slot
    dt = dtypes.defaults.int_ if wa is None else cdt
    w = u.add(zeros(n, dt), 1) if wa is None else ew.convert_element_type(wa, cdt)
    hist = zeros(size + 1, w.dtype).at[slot].add(w)[:size]
    hist = reshape(hist, nbs)
    if density:
        hist = ew.convert_element_type(hist, cdt)
        total = hist.sum()
        for k, e in enumerate(edges):
            width = ew.convert_element_type(u.subtract(e[1:], e[:-1]), hist.dtype)
            shape = [1] * d
            shape[k] = nbs[k]
            hist = u.divide(hist, reshape(width, tuple(shape)))
        hist = u.divide(hist, total)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy name
    """(counts, x edges, y edges) of the points (x, y), as numpy.histogram2d (bins: an int, [int, int],
    an edges array, or [x edges, y edges])."""
    if hasattr(bins, "__len__") and len(bins) not in (1, 2):
        bins = [bins, bins]  # one edges array for both axes
    hist, (ex, ey) = histogramdd([x, y], bins, range, density, weights)
    return hist, ex, ey
