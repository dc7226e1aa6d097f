"""The activations that live at torch's top level: relu (one card with torch's convention at 0 and NaN),
softmax/log_softmax (jax.nn's formula, one for both faces) and logit."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D, _dispatch as _DP
from ..._jax import nn as _jnn
from ..._src.prims import elementwise as ew
from ..._src.prims.reduction import log_softmax_p as _LOG_SOFTMAX_P, softmax_p as _SOFTMAX_P
from ...autograd.grad_mode import state as _gs
from .._tensor import _dim, _make
from .._dispatch import _apply1, _apply_prim, _apply_prim1, _req
from ._common import _cast, _legacy_name, _out, _scalar_arr


_RELU_P = ew.relu_p
_RELU_TORCH = _RELU_P.impl.torch_kink
_TORCH_KINK = {"kink": "torch"}
_RELU_BOUND = (tuple(_TORCH_KINK.items()), _RELU_TORCH)  # (_apply_prim1's `bound`: the card's impl, kink bound)


def _relu_torch(a):
    return _RELU_P.bind(a, kink="torch")


_MAX_P = ew.max_p


def relu(input, *, out=None):
    """torch.relu: the relu card with torch's convention (one recorded node; NaN stays NaN, -0.0 stays -0.0,
    derivative 1 at NaN; jax.nn.relu binds the same card with JAX's). Unrecorded on
    concrete floats its impl runs straight on the buffer."""
    v = input._v
    if v is not None and v.dtype.kind == "f":  # (bfloat16, kind 'V', takes the paths below)
        if not (_gs.enabled and (input._rg or input._base is not None and _req(input))) and not _DP._fw_on:
            r = _RELU_TORCH(v)
            r = _make(r if r.__class__ is np.ndarray and r.base is None else np.array(r))
        else:
            r = _apply_prim1("Relu", _RELU_P, _relu_torch, input, _TORCH_KINK, _RELU_BOUND)
        return r if out is None else _out(r, out)
    kind = input._np_dtype().kind
    if kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if kind == "c":  # (checked here, off the float fast path, rather than by _complex_reject's wrapper)
        raise NotImplementedError("clamp is not supported for complex types")
    r = _apply_prim1("Relu", _RELU_P, _relu_torch, input, _TORCH_KINK) if v is not None else \
        _apply1("Relu", _relu_torch, input)
    return r if out is None else _out(r, out)


relu._rejects_complex = True  # (see _complex_reject.py: no wrapper needed)


def _softmax_dim(dim, ndim, name):
    if dim is None:
        import warnings
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
                      "dim=X as an argument.", stacklevel=4)
        dim = 0 if ndim in (0, 1, 3) else 1
    return _dim(dim, ndim)


def _normalise(input, dim, dtype, name, node, formula, of_scalar, prim):
    """softmax/log_softmax: `formula` (jax.nn's, one per function across the faces) over `dim` in `dtype`
    (integer inputs refused as torch's kernel does); a 0-d input gives `of_scalar` (ones/zeros), an empty one
    itself times zero (the max over an empty axis has no identity). On a non-empty float32/float64 tensor
    the formula is one bind of its card `prim`, recorded as one node (torch's backward formula)."""
    d = _softmax_dim(dim, input.ndim, name)
    if dtype is not None:
        input = input.to(dtype)
    dt = input._np_dtype()
    if dt.kind == "f" and dt.itemsize > 2 and input.ndim and input.numel():
        params = {"axes": (d,)}
        if input._v is not None:
            return _apply_prim1(node, prim, lambda a: prim.bind(a, **params), input, params)
        return _apply_prim(node, prim, lambda a: prim.bind(a, **params), (input,), params)
    if D.kind(dt) != "f":
        raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                                  f"'{_legacy_name(dt)}'")

    def fn(a):
        if a.ndim == 0:
            return of_scalar(a)
        if 0 in a.shape:
            return ew.mul(a, jnp.zeros_like(a))
        if a.dtype.itemsize == 2:  # float16, bfloat16: in float32, rounded once (torch's CPU kernels)
            return _cast(formula(_cast(a, np.float32), d), a.dtype)
        return formula(a, d)
    return _apply1(node, fn, input)


def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _normalise(input, dim, dtype, "softmax", "Softmax", _jnn.softmax, jnp.ones_like, _SOFTMAX_P)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    return _normalise(input, dim, dtype, "log_softmax", "LogSoftmax", _jnn.log_softmax, jnp.zeros_like,
                      _LOG_SOFTMAX_P)


def logit(input, eps=None):
    """log(p / (1 - p)) in the input's float dtype (integers in the default float), p clamped to
    [eps, 1 - eps] when eps is given; written as log(p) - log1p(-p) so the gradient at 0 and 1 is infinite."""
    dt = input._np_dtype()
    fdt = dt if D.kind(dt) in "fc" else D.default_float()

    def fn(a):
        a = _cast(a, fdt)
        if eps is not None:
            a = ew.select(ew.lt(a, _scalar_arr(eps, a.dtype)), jnp.full_like(a, eps),
                          ew.select(ew.gt(a, _scalar_arr(1 - eps, a.dtype)), jnp.full_like(a, 1 - eps), a))
        if eps is None:  # torch's gradient is NaN outside [0, 1]: a factor NaN there, 1 inside
            z = jnp.zeros_like(a)
            a = ew.mul(a, ew.select(ew.bitwise_or(ew.lt(a, z), ew.gt(a, ew.add(z, jnp.ones_like(a)))),
                                    jnp.full_like(a, np.nan), jnp.ones_like(a)))
        a = ew.add(a, jnp.zeros_like(a))  # -0.0 -> 0.0: torch's gradient at -0.0 is +inf as at 0.0
        return ew.sub(ew.log(a), ew.log1p(ew.neg(a)))
    return _apply1("Logit", fn, input)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("relu", "softmax", "log_softmax", "logit")
INPLACE = ("relu", "logit")

__all__ = ["log_softmax", "logit", "relu", "softmax"]
