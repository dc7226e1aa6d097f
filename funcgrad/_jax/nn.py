"""jax.nn's functions on Arrays (funcgrad.nn serves both faces: torch.nn's classes are capitalised, jax.nn's
functions are lowercase, so `import funcgrad as jax; jax.nn.relu(x)` and `import funcgrad as torch;
torch.nn.ReLU()` share one namespace without clashing). Written with funcgrad.numpy, so grad, vmap and jit
apply; derivatives at kinks follow JAX (relu'(0) = 0)."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy._statistics import logsumexp
from ..core.array import ArrayBase, to_array, canonical_array
from ..primitives import elementwise as ew
from ..scipy.special import erf
from ..scipy._special_more import log1mexp  # noqa: F401 - jax.nn.log1mexp

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
           "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
           "standardize", "swish", "tanh", "dot_product_attention"]


def _arr(x):
    """x as an Array; a Python scalar stays weakly typed, as jax.nn's functions keep it."""
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def identity(x):
    return _arr(x)


def relu(x):
    """max(x, 0) with derivative 0 at 0, as jax.nn.relu: NaN stays NaN, with derivative 0 there too."""
    x = _arr(x)
    return jnp.where(x > 0, x, jnp.where(x != x, lax.stop_gradient(x), jnp.zeros_like(x)))


def relu6(x):
    """min(max(x, 0), 6) with derivative 0 at 0 and 6, as jax.nn.relu6: NaN stays NaN (derivative 0)."""
    x = _arr(x)
    low = jnp.where(x != x, lax.stop_gradient(x), jnp.zeros_like(x))
    return jnp.where(x > 0, jnp.where(x < 6, x, jnp.full_like(x, 6)), low)


def sigmoid(x):
    return lax.logistic(_arr(x))


def log_sigmoid(x):
    return -softplus(-_arr(x))


def softplus(x):
    """log(1 + exp(x)) as logaddexp(x, 0): its card's rules are smooth to every order (softplus''(0) = 1/4)."""
    return jnp.logaddexp(_arr(x), 0)


def sparse_plus(x):
    x = _arr(x)
    return jnp.where(x <= -1, jnp.zeros_like(x), jnp.where(x >= 1, x, (x + 1) ** 2 / 4))


def sparse_sigmoid(x):
    x = _arr(x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def soft_sign(x):
    x = _arr(x)
    return x / (jnp.abs(x) + 1)


def silu(x):
    x = _arr(x)
    return x * sigmoid(x)


swish = silu


def hard_sigmoid(x):
    return relu6(_arr(x) + 3.0) / 6.0


def hard_silu(x):
    x = _arr(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
    x = _arr(x)
    return jnp.where(x > 1, jnp.ones_like(x), jnp.where(x < -1, -jnp.ones_like(x), x))


def tanh(x):
    return jnp.tanh(x)


def _inexact(x):
    """Float x unchanged; integers and bools as the weakly typed default float (in jax.nn.elu they meet the
    Python float alpha, which gives that)."""
    x = _arr(x)
    return x if x.dtype.kind in "fc" else ew.convert_element_type(x, jnp.asarray(0.0).dtype, True)


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * expm1(x): the elu card with JAX's convention at 0 (the exponential
    branch, second derivative alpha)."""
    return ew.elu(_inexact(x), alpha)


def celu(x, alpha=1.0):
    """jax.nn.celu's own formula, max(x, 0) + alpha expm1(min(x, 0) / alpha): at 0 its ties give the
    derivative 1 and second derivative 1 / (4 alpha), which the elu card's conventions do not."""
    x = _arr(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return ew.elu(_inexact(x), alpha, scale)


def leaky_relu(x, negative_slope=1e-2):
    x = _arr(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def gelu(x, approximate: bool = True):
    """GELU; jax.nn's default is the tanh approximation."""
    x = _arr(x)
    if approximate:
        # the constant in x's own dtype, strongly typed as in jax.nn (so gelu(0.5) is not weakly typed)
        c = np.asarray(math.sqrt(2 / math.pi), dtype=x.dtype)[()]
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def mish(x):
    x = _arr(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x, b=4):
    x = _arr(x)
    return (x + jnp.sqrt(x * x + b)) / 2


def glu(x, axis: int = -1):
    x = _arr(x)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got shape {x.shape}")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def _where_mask(x, where, fill):
    return x if where is None else jnp.where(where, x, fill)


def _check_axes(x, axis, op):
    """Out-of-range axes raise (a 0-d array has no axis -1), as in jax.nn; NumPy's max/sum accept them."""
    from ..numpy._promote import normalize_index
    for a in (axis if isinstance(axis, (tuple, list)) else () if axis is None else (axis,)):
        normalize_index(a, x.ndim, op)


def softmax(x, axis=-1, where=None, initial=None):
    """exp(x - max) / sum, over `axis` (an int or tuple); `where` masks entries out (they get 0)."""
    x = _arr(x)
    _check_axes(x, axis, "softmax")
    xm = _where_mask(x, where, -jnp.inf)
    unnorm = jnp.exp(xm - lax.stop_gradient(jnp.max(xm, axis=axis, keepdims=True)))
    unnorm = _where_mask(unnorm, where, 0.0)
    # masked entries are 0 after the division too, as in JAX: a row with every entry masked out gives
    # zeros, not 0/0 = nan
    return _where_mask(unnorm / jnp.sum(unnorm, axis=axis, keepdims=True), where, 0.0)


def log_softmax(x, axis=-1, where=None, initial=None):
    x = _arr(x)
    _check_axes(x, axis, "log_softmax")
    xm = _where_mask(x, where, -jnp.inf)
    shifted = xm - lax.stop_gradient(jnp.max(xm, axis=axis, keepdims=True))
    out = shifted - jnp.log(jnp.sum(_where_mask(jnp.exp(shifted), where, 0.0), axis=axis, keepdims=True))
    return _where_mask(out, where, -jnp.inf)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    x = _arr(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis=axis, keepdims=True, where=where) - jnp.square(mean)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """x's integer entries as one-hot vectors along a new `axis` (out-of-range entries give all zeros)."""
    x = _arr(x)
    dtype = jnp.asarray(0.0).dtype if dtype is None else dtype
    classes = jnp.arange(num_classes)
    ax = axis if axis >= 0 else x.ndim + 1 + axis
    shape = [1] * (x.ndim + 1)
    shape[ax] = num_classes
    return (jnp.expand_dims(x, ax) == classes.reshape(shape)).astype(dtype)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None, is_causal=False, **_):
    """softmax(q k^T * scale + bias, masked) v over inputs shaped [batch..., seq, heads, dim] (jax.nn's)."""
    q, k, v = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
    d = q.shape[-1]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    logits = jnp.einsum("...qhd,...khd->...hqk", q, k) * scale
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
    if is_causal:
        tq, tk = logits.shape[-2], logits.shape[-1]
        causal = np.tril(np.ones((tq, tk), bool))
        logits = jnp.where(causal, logits, jnp.finfo(logits.dtype).min)
    probs = softmax(logits, axis=-1)
    return jnp.einsum("...hqk,...khd->...qhd", probs, v)


def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """log(mean(exp(x))) over `axis` (only the elements `where` selects), computed stably."""
    x = jnp.asarray(x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        n = math.prod(x.shape[a] for a in axes)
        return lse - math.log(n) if n > 0 else lse
    count = jnp.sum(jnp.broadcast_to(jnp.asarray(where), x.shape), axis=axis, keepdims=keepdims)
    return lse - jnp.log(count.astype(lse.dtype))


__all__ += ["log1mexp", "logmeanexp"]
