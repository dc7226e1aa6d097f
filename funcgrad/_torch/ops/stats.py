"""torch statistics over tensors: cov, corrcoef, quantile / nanquantile, nanmedian, histogram and histogramdd. Values
that select (order statistics) are gathered from the input, so gradients reach the chosen elements."""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from ..._src.core.array import Array
from .. import _creation as _C  # noqa: F401
from .. import _dtype as D
from . import arithmetic, diagonals, indexing, join_split, products, selection, sorting, unary, views
from ._common import _out
from .. import return_types as _rt
from .._tensor import Tensor, _dim, _wrap
from .._errors import _legacy


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("cov", "corrcoef", "histogram", "nanmedian", "nanquantile", "quantile")
INPLACE = ()

__all__ = ["cov", "corrcoef", "quantile", "nanquantile", "nanmedian", "histogram", "histogramdd"]


# --- statistics ------------------------------------------------------------------------------------------

_WEIGHT_KINDS = {"fweights": ("iu", "integral"), "aweights": ("f", "floating point")}


def _check_weights(name: str, w, nobs: int):
    """torch.cov's checks of fweights (integral) or aweights (floating point): one dim at most, one per
    observation, none negative."""
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.ndim} dimensions")
    kinds, kind_name = _WEIGHT_KINDS[name]
    if w._np_dtype().kind not in kinds:
        raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got {name} with "
                           f"{_legacy(w._np_dtype())} dtype")
    if w.numel() != nobs:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {nobs}")
    if (w._host() < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the rows (variables) of input over its columns (observations)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if x._np_dtype().kind in "biu":
        x = x.to(D.from_np(D.default_float()))
    nobs = x.shape[1]
    w = None
    if fweights is not None:
        w = _check_weights("fweights", fweights, nobs)
    if aweights is not None:
        aweights = _check_weights("aweights", aweights, nobs)
        w = aweights if w is None else arithmetic.mul(w, aweights)
    if w is None:
        wsum = float(nobs)
        avg = x.mean(1)
        norm_factor = nobs - correction
    else:
        w = w.to(x.dtype)
        wsum_t = w.sum()
        avg = arithmetic.div(arithmetic.mul(x, w).sum(1), wsum_t)
        wsum = wsum_t
        if correction == 0:
            norm_factor = wsum_t
        elif aweights is None:
            norm_factor = arithmetic.sub(wsum_t, correction)
        else:
            norm_factor = arithmetic.sub(wsum_t, arithmetic.div(arithmetic.mul(arithmetic.mul(w, aweights.to(x.dtype)).sum(), correction), wsum_t))
    if not isinstance(norm_factor, Tensor) and norm_factor <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = 0
    xm = arithmetic.sub(x, avg.unsqueeze(1))
    xw = xm if w is None else arithmetic.mul(xm, w)
    c = products.matmul(xw, xm.mT.conj() if xm.is_complex() else xm.mT)
    c = arithmetic.div(c, norm_factor)
    return c.squeeze() if input.ndim < 2 or c.numel() == 1 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of input (clipped to [-1, 1])."""
    c = cov(input)
    if c.ndim == 0:
        return arithmetic.div(c, c)
    d = diagonals.diagonal(c)
    sd = unary.sqrt(d)
    c = arithmetic.div(arithmetic.div(c, sd.unsqueeze(1)), sd.unsqueeze(0))
    return selection.clamp(c, -1, 1) if not c.is_complex() else c


def _check_q(q, name):
    qv = q._host() if isinstance(q, Tensor) else np.asarray(q, np.float64)
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if np.any((qv < 0) | (qv > 1)):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    return qv


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    dt = input._np_dtype()
    if dt not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor) and q._np_dtype() != dt:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. Found "
                           f"{interpolation}")
    qv = _check_q(q, name)
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    qs = np.atleast_1d(qv).astype(np.float64)
    if input.numel() == 0:  # (with or without dim, as torch)
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = _dim(dim, input.ndim)
        x = input if input.ndim else input.reshape(1)
    xs = views.movedim(x, d, -1)
    srt = sorting.sort(xs, -1).values
    h = srt._host()
    nan_mask = np.isnan(h)
    n_valid = (~nan_mask).sum(-1) if ignore_nan else np.full(h.shape[:-1], h.shape[-1])
    outs = []
    for qq in qs:
        pos = qq * (np.maximum(n_valid, 1) - 1).astype(np.float64)
        if interpolation == "lower":
            lo = hi = np.floor(pos)
        elif interpolation == "higher":
            lo = hi = np.ceil(pos)
        elif interpolation == "nearest":
            lo = hi = np.round(pos)
        else:
            lo, hi = np.floor(pos), np.ceil(pos)
        li = _wrap(Array(lo.astype(np.int64)[..., None]))
        hi_ = _wrap(Array(hi.astype(np.int64)[..., None]))
        vlo = indexing.gather(srt, -1, li).squeeze(-1)
        vhi = indexing.gather(srt, -1, hi_).squeeze(-1)
        if interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:  # differentiable in q
            qi = q.reshape(-1)[len(outs)]
            wgt = arithmetic.sub(arithmetic.mul(qi, _wrap(Array((np.maximum(n_valid, 1) - 1).astype(dt)))), _wrap(Array(lo.astype(dt))))
            r = arithmetic.add(vlo, arithmetic.mul(arithmetic.sub(vhi, vlo), wgt))
        elif interpolation == "linear":  # torch's lerp: from the nearer end (so inf - inf is not met)
            w = (pos - lo).astype(dt)
            wgt = _wrap(Array(w))
            r = arithmetic.add(vlo, arithmetic.mul(arithmetic.sub(vhi, vlo), wgt))
            if (w >= 0.5).any():
                r2 = arithmetic.sub(vhi, arithmetic.mul(arithmetic.sub(vhi, vlo), _wrap(Array((1 - w).astype(dt)))))
                r = selection.where(_wrap(Array(w < 0.5)), r, r2)
        elif interpolation == "midpoint":
            r = arithmetic.mul(arithmetic.add(vlo, vhi), 0.5)
        else:
            r = vlo
        bad = (n_valid == 0) if ignore_nan else nan_mask.any(-1)
        if bad.any():
            r = selection.where(_wrap(Array(bad)), _wrap(Array(np.full(bad.shape, np.nan, dt))), r)
        if keepdim:
            if dim is None:
                r = r.reshape((1,) * input.ndim)
            elif input.ndim:
                r = r.unsqueeze(d)
        outs.append(r)
    return outs[0] if scalar_q else join_split.stack(outs, 0)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of input (over all entries, or along dim); a 1-D q adds a leading dimension."""
    return _out(_quantile("quantile", input, q, dim, keepdim, interpolation, False), out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaN entries (NaN where a row has none)."""
    return _out(_quantile("nanquantile", input, q, dim, keepdim, interpolation, True), out)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """The lower median of the non-NaN entries (values and indices along dim)."""
    return _out(_nanmedian(input, dim, keepdim), out, True)


def _nanmedian(input, dim, keepdim):
    if dim is not None:
        _dim(dim, input.ndim)
    if dim is None and input.numel() == 0:
        return sorting._empty_median(input._np_dtype())
    if input._np_dtype() == np.bool_ and (dim is None or not input.ndim or input.shape[_dim(dim, input.ndim)]):
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")  # (torch names median's kernel)
    if dim is None:
        x = input.reshape(-1)
        h = x._host()
        order = np.argsort(h, kind="stable")
        k = int((~np.isnan(h)).sum()) if D.kind(h.dtype) == "f" else h.size
        i = order[max(k - 1, 0) // 2] if k else order[0]
        ties = np.flatnonzero(h == h[i])
        if ties.size > 1:  # torch spreads the gradient evenly over the entries equal to the median (amax's rule)
            return x[_wrap(Array(ties.astype(np.int64)))].amax()
        return x[int(i)]
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        return _rt.nanmedian(input.clone(), _wrap(Array(np.zeros((), np.int64))))
    if input.shape[d] == 0:  # (torch's message names median)
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    h = input._host()
    order = np.argsort(h, axis=d, kind="stable")
    k = (~np.isnan(h)).sum(d, keepdims=True) if D.kind(h.dtype) == "f" else np.full_like(
        np.take(h, [0], axis=d), h.shape[d], dtype=np.int64)
    pick = np.maximum(k - 1, 0) // 2
    idx = np.take_along_axis(order, pick, axis=d).astype(np.int64)
    it = _wrap(Array(idx))
    vals = indexing.gather(input, d, it)
    if not keepdim:
        vals, it = vals.squeeze(d), it.squeeze(d)
    return _rt.nanmedian(vals, it)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """(hist, bin_edges) of input's values (a count of bins over [min, max] or the given edges)."""
    if D.kind(input._np_dtype()) != "f":
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {_legacy(input._np_dtype())} and bins {_legacy(input._np_dtype())}")
    v = input._host().reshape(-1)
    w = None if weight is None else weight._host().reshape(-1)
    b = bins._host() if isinstance(bins, Tensor) else int(bins)
    h, edges = np.histogram(v, bins=b, range=range if range is not None and not isinstance(bins, Tensor) else None,
                            weights=w, density=density)
    dt = input._np_dtype()
    return _rt.histogram(_wrap(Array(h.astype(dt))), _wrap(Array(edges.astype(dt))))


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of the points input (..., D) in D dimensions."""
    v = input._host()
    pts = v.reshape(-1, v.shape[-1])
    if isinstance(bins, Tensor):
        bins = bins.tolist()
    elif isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        bins = [b._host() for b in bins]
    rng = None if range is None else [(range[2 * i], range[2 * i + 1]) for i in builtins.range(len(range) // 2)]
    w = None if weight is None else weight._host().reshape(-1)
    h, edges = np.histogramdd(pts, bins=bins, range=rng, weights=w, density=density)
    dt = input._np_dtype()
    return _rt.histogramdd(_wrap(Array(h.astype(dt))), [_wrap(Array(e.astype(dt))) for e in edges])
