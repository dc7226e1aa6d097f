"""Helpers shared by the distributions: the two-face dispatch, broadcasting, probs/logits conversions.

Every formula is written once on funcgrad Arrays (funcgrad.numpy, funcgrad.scipy.special, funcgrad.random).
`call(name, fn, *args)` runs such a formula: with Array (or tracer) arguments it is a plain function call,
so it composes with grad/vmap/jit; when some arguments are Tensors it is recorded as one autograd node
over them (funcgrad._torch._dispatch._apply) and returns Tensors. Non-Tensor arguments are closed over.
"""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number
from typing import Any, Callable

import numpy as np

from .. import lax
from .._torch import _creation as C, _jnp as jnp
from .._torch.ops import views
from .._src.core.array import ArrayBase
from .._src.core.trace import Tracer
from ..scipy import special as sps
from .._torch._dtype import Size
from .._torch._tensor import Tensor
from .._torch._dispatch import _apply, _apply_nograd
from ..autograd.grad_mode import enable_grad

__all__ = ["broadcast_all", "call", "call_nograd", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060


def forwarded(holder: str, name: str) -> property:
    """A read-only property: the attribute `name` of self.<holder> (the distribution or transform that this
    one is made from)."""
    return property(lambda self: getattr(getattr(self, holder), name), doc=f"{holder}.{name}")


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def is_array(x) -> bool:
    return isinstance(x, ArrayBase)


def is_concrete(x) -> bool:
    """Whether x holds a concrete value (not a tracer of a transform), so it can be validated."""
    if isinstance(x, Tensor):
        return x._v is not None
    return not isinstance(x, Tracer)


def arr(x):
    """An Array view of x (a Tensor's value, detached), for checks and static shape logic."""
    if isinstance(x, Tensor):
        return x._arr()
    return x


def call(name: str, fn: Callable, *args):
    """fn(*args) on Arrays; Tensor arguments are passed as Arrays and the call recorded for autograd. When funcgrad
    Arrays (or tracers) are mixed with Tensors (`Normal(0., 1.)` made of numbers inside functional code), the
    result is an Array and the Tensors are constants."""
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not idx:
        return fn(*args)
    if any(isinstance(a, ArrayBase) for a in args):  # mixed faces: the functional one wins (Tensors as constants)
        return fn(*[a._arr() if isinstance(a, Tensor) else a for a in args])
    if len(idx) == len(args):
        return _apply(name, fn, args)

    def g(*ts):
        full = list(args)
        for i, t in zip(idx, ts):
            full[i] = t
        return fn(*full)
    return _apply(name, g, [args[i] for i in idx])


def call_nograd(fn: Callable, *args):
    """fn(*args) on Arrays with Tensors unwrapped and nothing recorded (checks, integer results)."""
    if any(isinstance(a, Tensor) for a in args):
        if any(isinstance(a, ArrayBase) for a in args):
            return fn(*[a._arr() if isinstance(a, Tensor) else a for a in args])
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]

        def g(*ts):
            full = list(args)
            for i, t in zip(idx, ts):
                full[i] = t
            return fn(*full)
        return _apply_nograd(g, [args[i] for i in idx])
    return fn(*args)


def shape_of(x) -> tuple:
    if isinstance(x, Number):
        return ()
    return tuple(x.shape)


def as_param(x, like=None):
    """x as a Tensor (Tensor face) or Array (functional face), as `like` is; numbers take like's dtype."""
    if like is None or isinstance(like, Tensor):
        if isinstance(x, Tensor):
            return x
        if isinstance(x, Number):
            return C.tensor(float(x), dtype=None if like is None else like.dtype)
        if isinstance(x, ArrayBase) and not isinstance(x, Tracer):
            return C.tensor(np.asarray(x))
        raise ValueError(f"Unsupported parameter type {type(x).__name__}")
    if isinstance(x, Number):
        return jnp.asarray(x, dtype=like.dtype)
    return jnp.asarray(x)


def broadcast_all(*values):
    """Broadcast parameters to one shape: Tensors (numbers become Tensors of the tensors' dtype, or the
    default dtype), or Arrays when any argument is a funcgrad Array or NumPy array and none is a Tensor."""
    for v in values:
        if not isinstance(v, (Tensor, Number, ArrayBase, np.ndarray)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    if tensors or not any(isinstance(v, (ArrayBase, np.ndarray)) for v in values):
        like = tensors[0] if tensors else None
        ts = [as_param(v, like) for v in values]
        return tuple(views.broadcast_tensors(*ts)) if len(ts) > 1 else (ts[0],)
    arrays = [jnp.asarray(v) for v in values if not isinstance(v, Number)]
    dt = jnp.result_type(*arrays)
    if not jnp.issubdtype(dt, jnp.floating):
        dt = jnp.float32 if not any(a.dtype == jnp.float64 for a in arrays) else jnp.float64
    out = [jnp.asarray(v, dtype=dt) for v in values]
    return tuple(jnp.broadcast_arrays(*out)) if len(out) > 1 else (out[0],)


def expand_to(x, shape):
    """x broadcast to `shape` (a view for Tensors)."""
    if isinstance(x, Tensor):
        return x.expand(tuple(shape))
    return jnp.broadcast_to(x, tuple(shape))


def reshape(x, shape):
    if isinstance(x, Tensor):
        return x.reshape(tuple(shape))
    return jnp.reshape(x, tuple(shape))


def to_float(x):
    """x in a floating dtype (bools/ints to the default float), for sums of counts."""
    return jnp.asarray(x, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float32)


def sum_rightmost(value, dim: int):
    """Sum out the `dim` rightmost dimensions (Array or Tensor)."""
    if dim == 0:
        return value
    if isinstance(value, Tensor):
        return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)
    return jnp.sum(value, axis=tuple(range(-dim, 0)))


def stop_gradient(x):
    if isinstance(x, Tensor):
        return x.detach()
    return lax.stop_gradient(x)


class lazy_property:
    """A property computed once and cached on the instance (cached values are not pytree children).
    It is computed with grad enabled, as torch does: the first access may happen inside `sample()`'s
    no_grad block, and the cached value must still carry the graph for a later `log_prob`."""

    def __init__(self, wrapped: Callable):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        name = self.wrapped.__name__
        instance.__dict__[name] = value
        instance.__dict__["_lazy_cached"] = instance.__dict__.get("_lazy_cached", frozenset()) | {name}
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class (so constraints code sees a property)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


# --- probs / logits ---------------------------------------------------------------------------------------

def _clamp_probs(p):
    eps = jnp.finfo(p.dtype).eps
    return jnp.clip(p, eps, 1 - eps)


def clamp_probs(probs):
    """probs clamped into [eps, 1 - eps] of their dtype."""
    return call("ClampProbs", _clamp_probs, probs)


def _logits_to_probs(logits, is_binary=False):
    return sps.expit(logits) if is_binary else jnp.exp(logits - sps.logsumexp(logits, axis=-1, keepdims=True))


def logits_to_probs(logits, is_binary: bool = False):
    return call("LogitsToProbs", lambda x: _logits_to_probs(x, is_binary), logits)


def _probs_to_logits(probs, is_binary=False):
    p = _clamp_probs(probs)
    return jnp.log(p) - jnp.log1p(-p) if is_binary else jnp.log(p)


def probs_to_logits(probs, is_binary: bool = False):
    """log of probs clamped into [eps, 1 - eps] (is_binary: the log-odds). A float32/float64 Tensor takes torch's
    spelling, a clamp and a log (ClampBackward, LogBackward): two one-primitive nodes, cheaper to record than
    one node over the formula, with the same values."""
    if not is_binary and isinstance(probs, Tensor) and probs._np_dtype() in _F32_F64:
        eps = float(np.finfo(probs._np_dtype()).eps)
        return probs.clamp(min=eps, max=1 - eps).log()
    return call("ProbsToLogits", lambda p: _probs_to_logits(p, is_binary), probs)


_F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))


def one_of(probs, logits) -> None:
    """Check that exactly one of probs and logits is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class BinaryProbsOrLogits:
    """Mixin of the two-outcome families given by `probs` or `logits` (exactly one, as in PyTorch): the one
    given is stored broadcast, the other is derived lazily."""

    def _set_probs_or_logits(self, probs, logits, total_count=None):
        """Broadcast the given parameter (with total_count, converted to its dtype, where the family has a
        count), store it as `probs` or `logits` and return it."""
        one_of(probs, logits)
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if total_count is None:
            (param,) = broadcast_all(value)
        else:
            total_count, param = broadcast_all(total_count, value)
            self.total_count = call("TypeAs", lambda n, p: n.astype(p.dtype), total_count, param)
        setattr(self, name, param)
        return param

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return Size(self._param.shape)


def _tril_indices(n: int, diag: int):
    rows, cols = np.tril_indices(n, k=diag)
    return rows, cols


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower triangle (row-major) of the last two dims as a vector."""
    n = mat.shape[-1]
    rows, cols = _tril_indices(n, diag)
    return call("TrilMatrixToVec", lambda m: m[..., rows, cols], mat)


def _vec_to_tril(vec, n: int, diag: int):
    rows, cols = _tril_indices(n, diag)
    flat = rows * n + cols
    out = jnp.zeros(vec.shape[:-1] + (n * n,), dtype=vec.dtype).at[..., flat].set(vec)
    return jnp.reshape(out, vec.shape[:-1] + (n, n))


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of tril_matrix_to_vec."""
    m = vec.shape[-1]
    n = next((k for k in range(0, m + abs(diag) + 2) if len(_tril_indices(k, diag)[0]) == m), None)
    if n is None:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular "
                         f"part of a square D x D matrix.")
    return call("VecToTrilMatrix", lambda v: _vec_to_tril(v, n, diag), vec)


def any_tensor(*xs: Any) -> bool:
    return any(isinstance(x, Tensor) for x in xs)
