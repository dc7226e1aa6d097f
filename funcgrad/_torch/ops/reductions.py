"""Reductions over dims: sum/nansum/prod/mean/nanmean, var/std (and their _mean pairs), all/any/
count_nonzero, logsumexp, norm, the distances built on it (dist, cdist, cosine_similarity), and the cumulative
sum and product."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.prims import cumulative as _cum, elementwise as ew, stop_gradient as _stop_gradient
from ..._src.prims.reduction import reduce_sum as _reduce_sum, reduce_sum_p as _reduce_sum_p
from ..._src.prims.shape import (REDUCE_TO_ARRAY as _REDUCE_TO_ARRAY, broadcast_in_dim_p as _bid_p,
                                 reshape_p as _reshape_p)
from .._argcheck import check_same_dtype as _check_same_dtype
from .._tensor import _dim
from ..._src.core.array import Array
from .._dispatch import _apply, _apply1, _apply_nograd, _apply_prim1
from .._errors import _legacy
from ._common import (_bool, _bshape, _cast, _dims, _float, _legacy_name, _np, _NPI64, _out, _out_cast, _range, _scalar_arr,
                      _with_out)
from .unary import _tabs
from .arithmetic import div, mul, sub
from .comparison import _truth
from .selection import clamp
from .views import broadcast_tensors
from .products import _SCALAR_DT


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


_SUM_ALL: dict = {}  # ndim -> (params, _apply_prim1's `bound`) of a sum over all axes of a float/complex buffer

def sum_all_params(nd):
    """The sum over all nd axes of a float16/32/64 or complex buffer (not bfloat16): (params, bound), where
    bound is reduce_sum's impl for those dtypes with the axes bound (what _apply_prim1 takes)."""
    pb = _SUM_ALL.get(nd)
    if pb is None:
        p = _all_axes(nd)
        axes = p["axes"]
        floating = _REDUCE_SUM_P.impl.floating
        if _REDUCE_TO_ARRAY:  # (a 0-d array, not a scalar, from the reduction itself)
            pb = (p, (tuple(p.items()), lambda v: floating(v, axes, out=...)))
        else:
            pb = (p, (tuple(p.items()), lambda v: floating(v, axes)))
        _SUM_ALL[nd] = pb
    return pb


def _direct(v) -> bool:
    """Whether sum/mean over dims take their direct paths (_sum_dims): a concrete float32/64 or complex tensor
    of rank >= 1 (float16 and bfloat16 accumulate in float32 on the general path)."""
    return v is not None and v.ndim > 0 and v.dtype.kind in "fc" and v.dtype.itemsize >= 4


_DIMS_FNS: dict = {}  # (axes, kept shape or None, count or None, dtype) -> (params, the Array-level fn)


def _sum_dims(name, input, axes, keepdim, mean):
    """sum (mean: divided by the count) of a tensor that is _direct over sorted `axes` (None: all), as one
    recorded node named as torch's (`name`): one bind of reduce_sum without keepdim (the direct one-bind
    path), else reduce_sum, a division by the count and a reshape to the kept shape, recorded together.
    None for an empty mean (the caller's general path)."""
    v = input._v
    shape = v.shape
    axes = tuple(_range(len(shape))) if axes is None else axes
    kshape = tuple([1 if i in axes else n for i, n in enumerate(shape)]) if keepdim else None
    count = math.prod([shape[i] for i in axes]) if mean else None
    key = (axes, kshape, count, v.dtype)
    hit = _DIMS_FNS.get(key)
    if hit is None:
        if len(_DIMS_FNS) > 1024:
            _DIMS_FNS.clear()
        hit = _DIMS_FNS[key] = (_all_axes(len(shape)) if len(axes) == len(shape) else {"axes": axes},
                                _dims_fn(axes, kshape, count, v.dtype))
    params, fn = hit
    if count == 0:  # (an empty mean: the general path's NaN, without NumPy's warning)
        return None
    if count is None and kshape is None:
        return _apply_prim1(name, _REDUCE_SUM_P, fn, input, params)
    return _apply1(name, fn, input)


def _dims_fn(axes, kshape, count, dt):
    """The Array-level function of _sum_dims: the binds it records."""
    c = None if count is None else Array(np.array(count, dt))

    def fn(a):
        r = _REDUCE_SUM_P.bind(a, axes=axes)
        if c is not None:
            r = ew.div(r, c)  # (the count's 0-d constant: NumPy broadcasts it; it carries no cotangent)
        return r if kshape is None else _reshape_p.bind(r, new_sizes=kshape)
    return fn


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    if dtype is None and out is None:
        v = input._v
        if dim is None:
            if not keepdim and v is not None and v.ndim:
                if v.dtype.kind in "fc":
                    p, bound = _SUM_ALL.get(v.ndim) or sum_all_params(v.ndim)
                    return _apply_prim1("Sum", _REDUCE_SUM_P, _sum_all, input, p, bound)
                if D.kind(v.dtype) == "f":  # (bfloat16)
                    return _apply_prim1("Sum", _REDUCE_SUM_P, _sum_all, input, _all_axes(v.ndim))
        elif _direct(v) and not isinstance(dim, D.dtype):  # torch's sum.dim_IntList: SumBackward1
            return _sum_dims("Sum1", input, _dims(dim, v.ndim), keepdim, False)
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    nd = input.ndim
    axes = _dims(dim, nd)
    # (torch accumulates in out='s dtype when no dtype is given: sum(float, out=long) sums truncated values)
    odt = _np(dtype) if dtype is not None else out._np_dtype() if out is not None else _red_int64(input._np_dtype())

    if axes is None and not keepdim:
        if nd and input._v is not None and input._v.dtype == odt and D.kind(odt) in "fc":
            return _out_cast(_apply_prim1("Sum", _REDUCE_SUM_P, _sum_all, input, _all_axes(nd)), out)

        def fn(a):
            a = _cast(a, odt)
            return _reduce_sum(a, tuple(_range(a.ndim))) if a.ndim else a
    else:
        def fn(a):
            return _cast(jnp.sum(_cast(a, odt), axis=axes, keepdims=keepdim), odt)  # (NumPy's int32 sum: int64)
    return _out_cast(_apply1("Sum" if dim is None else "Sum1", fn, input), out)


@_with_out(None)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    axes = _dims(dim, input.ndim)
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    if odt.kind == "c" and D.kind(input._np_dtype()) in "fc":  # (integer input sums into complex in torch)
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_legacy_name(odt)}'")
    if D.kind(input._np_dtype()) == "f" and D.kind(odt) not in "fc":  # NaN counts as 0 before the cast, as torch
        return _apply1("Nansum", lambda a: _cast(jnp.sum(_cast(jnp.where(ew.ne(a, a), 0, a), odt), axis=axes,
                                                         keepdims=keepdim), odt), input)
    return _apply1("Nansum", lambda a: _cast(jnp.nansum(_cast(a, odt), axis=axes, keepdims=keepdim), odt), input)


@_with_out(None)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    d = None if dim is None else _dim(dim, input.ndim)
    axes = None if d is None else () if input.ndim == 0 else (d,)  # (a 0-d tensor's dim 0: jnp has no axis 0)
    return _apply1("Prod" if d is None else "Prod1",  # (torch's prod.dim_int: ProdBackward1)
                   lambda a: _cast(jnp.prod(_cast(a, odt), axis=axes, keepdims=keepdim), odt), input)


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
    if dtype is None and out is None and _direct(input._v) and not isinstance(dim, D.dtype):
        r = None
        if dim is not None:  # torch's mean.dim: MeanBackward1
            r = _sum_dims("Mean1", input, _dims(dim, input._v.ndim), keepdim, True)
        elif not keepdim:  # mean(): MeanBackward0
            r = _sum_dims("Mean", input, None, False, True)
        if r is not None:
            return r
    if isinstance(dim, D.dtype):
        dim, dtype = None, dim
    odt = _float_check("mean", input._np_dtype(), dtype)
    axes = _dims(dim, input.ndim)
    acc = np.dtype(np.float32) if odt.name == "bfloat16" else odt  # (torch: in float32, rounded once)
    return _out(_apply1("Mean" if dim is None else "Mean1",
                        lambda a: _cast(jnp.mean(_cast(a, acc), axis=axes, keepdims=keepdim), odt), input), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if D.kind(input._np_dtype()) not in "fc":  # (torch checks the input before any dtype argument)
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_legacy_int(input._np_dtype())}")
    odt = _float_check("nanmean", input._np_dtype(), dtype)
    if D.kind(odt) == "c":  # (torch's nanmean is nansum's, which has no complex kernel)
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_legacy_name(odt)}'")
    axes = _dims(dim, input.ndim)
    return _out(_apply1("Nanmean", lambda a: jnp.nanmean(_cast(a, odt), axis=axes, keepdims=keepdim), input), out)


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


_VAR_FNS: dict = {}  # (shape, axes, ddof, keepdim, std, dtype) -> the Array-level function of _var_direct


def _var_direct(name, input, dim, ddof, keepdim, std):
    """var (std: its square root, zero with a zero gradient where the variance is 0, as torch's) of a real
    tensor that is _direct, over `dim`, as one recorded node (torch's VarBackward0 / StdBackward0) of the
    binds of funcgrad.numpy.var's formula -- sum / n, the deviations, sum of their squares / (n - ddof) --
    bound directly, with the counts as 0-d constants. None where n - ddof <= 0 (the general path's
    inf / NaN)."""
    v = input._v
    shape = v.shape
    axes = _dims(dim, v.ndim)
    axes = tuple(_range(len(shape))) if axes is None else axes
    n = math.prod([shape[i] for i in axes])
    if n - ddof <= 0:
        return None
    key = (shape, axes, ddof, keepdim, std, v.dtype)
    fn = _VAR_FNS.get(key)
    if fn is None:
        if len(_VAR_FNS) > 1024:
            _VAR_FNS.clear()
        fn = _VAR_FNS[key] = _var_fn(shape, axes, n, ddof, keepdim, std, v.dtype)
    return _apply1(name, fn, input)


def _var_fn(shape, axes, n, ddof, keepdim, std, dt):
    cn, cd = Array(np.array(n, dt)), Array(np.array(n - ddof, dt))
    bparams = {"shape": shape, "broadcast_dimensions": tuple(i for i in _range(len(shape)) if i not in axes)}
    kshape = tuple([1 if i in axes else k for i, k in enumerate(shape)]) if keepdim else None
    rshape = tuple([k for i, k in enumerate(shape) if i not in axes])
    zeros, ones = (Array(np.full(rshape, v, dt)) for v in (0, 1)) if std else (None, None)

    def fn(a):
        m = ew.div(_REDUCE_SUM_P.bind(a, axes=axes), cn)  # (the counts' 0-d constants: NumPy broadcasts them)
        d = ew.sub(a, _bid_p.bind(m, **bparams))
        r = ew.div(_REDUCE_SUM_P.bind(ew.mul(d, d), axes=axes), cd)
        if std:
            r = _safe_sqrt(r, zeros, ones)
        return r if kshape is None else _reshape_p.bind(r, new_sizes=kshape)
    return fn


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dim, ddof, keepdim = _var_args(dim, unbiased, keepdim, correction)
    dt = _float_check("var", input._np_dtype())
    if out is None and _direct(input._v) and dt.kind == "f":
        r = _var_direct("Var", input, dim, ddof, keepdim, False)
        if r is not None:
            return r
    axes = _dims(dim, input.ndim)
    return _out(_apply1("Var", lambda a: jnp.var(a, axis=axes, ddof=ddof, keepdims=keepdim), input), out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    dim, ddof, keepdim = _var_args(dim, unbiased, keepdim, correction)
    dt = _float_check("std", input._np_dtype())
    if out is None and _direct(input._v) and dt.kind == "f":
        r = _var_direct("Std", input, dim, ddof, keepdim, True)
        if r is not None:
            return r
    axes = _dims(dim, input.ndim)

    def fn(a):
        v = jnp.var(a, axis=axes, ddof=ddof, keepdims=keepdim)
        return _safe_sqrt(v)
    return _out(_apply1("Std", fn, input), out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("VarMean", input, dim, unbiased, keepdim, correction, False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("StdMean", input, dim, unbiased, keepdim, correction, True)


def _moments(name, input, dim, unbiased, keepdim, correction, root):
    """(var or std, mean) over dim as ONE node with both as outputs, named as torch's (VarMeanBackward0 /
    StdMeanBackward0): var's and mean's formulas; float16 and bfloat16 computed in float32 and rounded once,
    as torch's kernel."""
    dim, ddof, keepdim = _var_args(dim, unbiased, keepdim, correction)
    dt = input._np_dtype()
    if D.kind(dt) not in "fc":
        raise RuntimeError(f"{'std' if root else 'var'}_mean only support floating point and complex dtypes")
    acc = np.dtype(np.float32) if dt.itemsize == 2 else dt
    axes = _dims(dim, input.ndim)
    n = math.prod(input.shape) if axes is None else math.prod([input.shape[i] for i in axes])
    if n - ddof <= 0:
        warnings.warn(f"{'std' if root else 'var'}_mean(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).", UserWarning,
                      stacklevel=3)

    def fn(a):
        if acc is not dt:
            a = _cast(a, acc)
        v = jnp.var(a, axis=axes, ddof=ddof, keepdims=keepdim)
        r = [_safe_sqrt(v) if root else v, jnp.mean(a, axis=axes, keepdims=keepdim)]
        return r if acc is dt else [_cast(x, dt) for x in r]
    return tuple(_apply(name, fn, (input,)))


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


@_with_out()
def all(input, dim=None, keepdim=False):  # noqa: A001
    return _truth_reduce(jnp.all, input, dim, keepdim)


@_with_out()
def any(input, dim=None, keepdim=False):  # noqa: A001
    return _truth_reduce(jnp.any, input, dim, keepdim)


def count_nonzero(input, dim=None):
    axes = _dims(dim, input.ndim)
    return _apply_nograd(lambda a: _cast(jnp.sum(_cast(_truth(a), _NPI64), axis=axes), _NPI64), (input,))


@_with_out(False)
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


def _safe_sqrt(s, zeros=None, ones=None):
    """sqrt(s), zero with a zero gradient where s == 0 (torch's std and norms); zeros/ones: s-shaped constants
    when the caller has them (else made here)."""
    zeros = jnp.zeros_like(s) if zeros is None else zeros
    z = ew.eq(s, zeros)
    safe = ew.select(z, jnp.ones_like(s) if ones is None else ones, s)
    return ew.select(z, zeros, ew.sqrt(safe))


def _abs2(a):
    if a.dtype.kind == "c":
        return ew.add(ew.integer_pow(ew.real(a), 2), ew.integer_pow(ew.imag(a), 2))
    return ew.integer_pow(a, 2)


@_with_out()
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
    if p == "nuc":
        from ..linalg import matrix_norm
        if dim is None and input.ndim != 2:
            if input.ndim < 2:
                raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(i) for i in _range(input.ndim))}")
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    out = _apply1("LinalgVectorNorm", _vector_norm(p, axes, keepdim), input)
    if p == 0 and out._gfn is not None:  # torch's backward of the count returns an undefined gradient
        out._gfn._undefined = True
    return out


def _vector_norm(p, axes, keepdim):
    """The Array-level p-norm over axes (None: all) of a float or complex array of at least 32 bits, as torch's
    linalg.vector_norm ("fro" and None are 2): its value, and derivatives smooth where torch's are (a zero
    norm's subgradient 0)."""
    if p is None or p == "fro" or p == 2:
        return lambda a: _safe_norm2(a, axes, keepdim)
    if p == math.inf or p == "inf":
        return lambda a: jnp.max(_tabs(a), axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return lambda a: jnp.min(_tabs(a), axis=axes, keepdims=keepdim)
    if p == 0:  # (a real count: float32 for complex64 input)
        def count(a):
            rdt = np.dtype(np.float32) if a.dtype == np.complex64 else \
                np.dtype(np.float64) if a.dtype == np.complex128 else a.dtype
            return _cast(jnp.sum(_cast(ew.ne(a, jnp.zeros_like(a)), rdt), axis=axes, keepdims=keepdim), rdt)
        return count
    if p == 1:
        return lambda a: jnp.sum(_tabs(a), axis=axes, keepdims=keepdim)
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
    return fn


def _cumulative(name, jfn, input, dim, dtype):
    """cumsum/cumprod: integers and bool accumulate in int64, float16 and bfloat16 in float32, float32 in float64
    (torch's CPU accumulation types), as a running sum or product (torch's CPU kernels; the JAX face rounds in
    XLA's order)."""
    d = _dim(dim, input.ndim)
    odt = _np(dtype) if dtype is not None else _red_int64(input._np_dtype())
    if odt == np.bool_:
        raise NotImplementedError(f"\"{name.lower()}_out_cpu\" not implemented for 'Bool'")
    acc = np.dtype(np.float64) if odt == np.float32 else \
        np.dtype(np.float32) if odt == np.float16 or odt.name == "bfloat16" else odt
    return _apply1(name, lambda a: _cast(jfn(_cast(a, acc), axis=d), odt) if a.ndim else _cast(a, odt), input)


@_with_out(None)
def cumsum(input, dim, *, dtype=None):
    return _cumulative("Cumsum", lambda a, axis: _cum.cumsum(a, axis, order="sequential"), input, dim, dtype)


@_with_out(None)
def cumprod(input, dim, *, dtype=None):
    return _cumulative("Cumprod", lambda a, axis: _cum.cumprod(a, axis, order="sequential"), input, dim, dtype)


def cdist(x1, x2, p=2.0):
    _check_same_dtype(_SCALAR_DT, x1, x2)
    def fn(a, b):
        diff = jnp.subtract(jnp.expand_dims(a, -2), jnp.expand_dims(b, -3))  # (broadcasting: x1 rows vs x2 rows)
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
    """The p-norm of input - other (broadcast). Of two concrete tensors of one float or complex dtype: ONE node,
    torch's DistBackward0 (float16 / bfloat16: the difference in their dtype, its norm accumulated in float32,
    as torch's)."""
    xv, yv = input._v, getattr(other, "_v", None)
    if xv is None or yv is None or xv.dtype != yv.dtype or D.kind(xv.dtype) not in "fc" or \
            isinstance(p, (str, _bool)):
        return norm(sub(input, other), p)
    _bshape(xv.shape, yv.shape)
    dt = xv.dtype
    half = dt.itemsize == 2 and D.kind(dt) == "f"
    f = _vector_norm(p, None, False)

    def fn(a, b):
        d = jnp.subtract(a, b)
        return _cast(f(_cast(d, _F32)), dt) if half else f(d)
    return _apply("Dist", fn, (input, other))


_F32 = np.dtype(np.float32)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps))) along dim, each norm clamped on its own (torch)."""
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = clamp(norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = clamp(norm(x2, 2, dim, keepdim=True), min=eps)
    return sum(mul(div(x1, n1), div(x2, n2)), dim)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("nansum", "prod", "mean", "nanmean", "var", "std", "all", "any", "count_nonzero", "logsumexp", "norm",
           "cumsum", "cumprod", "dist", "var_mean", "std_mean")
INPLACE = ()

__all__ = ["all", "any", "cdist", "cosine_similarity", "count_nonzero", "cumprod", "cumsum", "dist", "logsumexp",
           "mean", "nanmean", "nansum", "norm", "prod", "std", "std_mean", "sum", "var", "var_mean"]
