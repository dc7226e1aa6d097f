"""jax.nn's functions on Arrays (re-exported by funcgrad.nn, which serves both faces: torch.nn's classes are
capitalised, jax.nn's functions lowercase). Written with funcgrad.numpy, so grad, vmap and jit apply; derivatives
at kinks follow JAX (relu'(0) = 0).

These are also the torch face's formulas: F.gelu, nn.GELU and jax.nn.gelu are one computation. Where the faces'
derivatives differ at a kink, the shared private function takes the convention as a parameter chosen by the
binding face (`kink="jax"` or `"torch"`, as the elementwise cards do; see primitives/elementwise.py), never a
second formula. This module imports nothing of the torch face."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..numpy import _softmax as _sm
from ..numpy._statistics import logsumexp
from .._src.core import dtypes
from .._src.core.array import ArrayBase, canonical_array
from .._src.prims import elementwise as ew
from ..scipy._special.logexp import log1mexp  # noqa: F401 - jax.nn.log1mexp

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
           "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
           "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
           "standardize", "swish", "tanh", "dot_product_attention"]


def _arr(x):
    """x as an Array; a Python scalar stays weakly typed, as jax.nn's functions keep it."""
    return x if isinstance(x, ArrayBase) else canonical_array(x)


def identity(x):
    """Returns x (JAX's jax.nn.identity)."""
    return _arr(x)


def relu(x):
    """max(x, 0): the relu card with JAX's convention (derivative 0 at 0 and at NaN, 0.0 at -0.0), the card
    torch.relu binds with torch's. Booleans count as integers, as jax.nn.relu's maximum(x, 0) takes them."""
    x = _arr(x)
    if x.dtype.kind == "b":
        x = ew.convert_element_type(x, jnp.asarray(0).dtype, True)
    return ew.relu(x)


def relu6(x):
    """min(max(x, 0), 6) with derivative 0 at 0 and 6, as jax.nn.relu6: NaN stays NaN (derivative 0)."""
    x = _inexact(x)  # (integers and bools: jax.nn's min(max(x, 0), 6.0) makes them the weak default float)
    low = jnp.where(x != x, lax.stop_gradient(x), jnp.zeros_like(x))
    return jnp.where(x > 0, jnp.where(x < 6, x, jnp.full_like(x, 6)), low)


def _clip_linear(x, lo, hi, kink: str = "jax"):
    """x clipped to [lo, hi] (NaN stays NaN): jax.nn.hard_tanh's formula. The derivative is 1 strictly inside;
    at the bounds and at NaN it is 1 with kink="jax" (JAX's where passes x there) and 0 with kink="torch"
    (torch's hardtanh / relu6)."""
    clipped = jnp.where(x > hi, jnp.full_like(x, hi), jnp.where(x < lo, jnp.full_like(x, lo), x))
    if kink == "jax":
        return clipped
    return jnp.where((x > lo) & (x < hi), x, lax.stop_gradient(clipped))


def sigmoid(x):
    """1 / (1 + exp(-x)) (JAX's jax.nn.sigmoid)."""
    return lax.logistic(_arr(x))


def log_sigmoid(x):
    """log(sigmoid(x)), computed stably (JAX's jax.nn.log_sigmoid)."""
    return -softplus(-_arr(x))


def softplus(x):
    """log(1 + exp(x)) as logaddexp(x, 0): its card's rules are smooth to every order (softplus''(0) = 1/4)."""
    return jnp.logaddexp(_arr(x), 0)


def sparse_plus(x):
    """0 below -1, (x + 1)**2 / 4 in [-1, 1], x above (JAX's jax.nn.sparse_plus)."""
    x = _arr(x)  # (jax.nn's formula: its Python float constants make integers the weak default float)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """Clamp (x + 1) / 2 to [0, 1] (JAX's jax.nn.sparse_sigmoid)."""
    x = _arr(x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def soft_sign(x):
    """x / (|x| + 1) (JAX's jax.nn.soft_sign)."""
    return _soft_sign(_arr(x))


def _soft_sign(x, kink: str = "jax"):
    """x / (|x| + 1), |x| with the face's derivative convention at 0 (the abs card's kink)."""
    return x / (ew.abs(x, kink) + 1)


def silu(x):
    """x * sigmoid(x) (JAX's jax.nn.silu; swish is an alias)."""
    x = _arr(x)
    return x * sigmoid(x)


swish = silu


def hard_sigmoid(x):
    """relu6(x + 3) / 6 (JAX's jax.nn.hard_sigmoid)."""
    return relu6(_arr(x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (JAX's jax.nn.hard_silu; hard_swish is an alias)."""
    return _hard_silu(_arr(x))


def _hard_silu(x, kink: str = "jax"):
    """x * hard_sigmoid(x); with kink="torch" the derivative at NaN is torch's 1 (JAX's is NaN)."""
    if kink == "jax":
        return x * hard_sigmoid(x)
    nan = x != x
    xs = jnp.where(nan, jnp.zeros_like(x), x)  # (no NaN cotangent from the unselected branch)
    return jnp.where(nan, x, xs * hard_sigmoid(xs))


hard_swish = hard_silu


def hard_tanh(x):
    """Clamp to [-1, 1] (JAX's jax.nn.hard_tanh; bools become the weak default int, as its where with the
    Python ints 1 and -1 makes them)."""
    x = _arr(x)
    if x.dtype.kind == "b":
        x = ew.convert_element_type(x, jnp.asarray(0).dtype, True)
    return _clip_linear(x, -1.0, 1.0)


def tanh(x):
    """Hyperbolic tangent (JAX's jax.nn.tanh)."""
    return jnp.tanh(x)


def _inexact(x):
    """Float x unchanged; integers and bools as the weakly typed default float (in jax.nn.elu they meet the
    Python float alpha, which gives that)."""
    x = _arr(x)
    return x if dtypes.is_inexact(x.dtype) else ew.convert_element_type(x, jnp.asarray(0.0).dtype, True)


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * expm1(x): the elu card with JAX's convention at 0 (the exponential
    branch, second derivative alpha)."""
    return ew.elu(_inexact(x), alpha)


def celu(x, alpha=1.0):
    """max(x, 0) + alpha expm1(min(x, 0) / alpha): the elu card (input scale 1 / alpha, as torch's celu) with
    jax.nn.celu's convention at 0, where max and min split the tie ("ties": second derivative 1 / (4 alpha))."""
    return ew.elu(_inexact(x), alpha, 1.0, 1.0 / alpha, "ties")


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(x):
    """Scaled exponential linear unit (JAX's jax.nn.selu)."""
    return ew.elu(_inexact(x), SELU_ALPHA, SELU_SCALE)


def leaky_relu(x, negative_slope=1e-2):
    """x if x >= 0 else negative_slope * x (JAX's jax.nn.leaky_relu)."""
    return _leaky_relu(_arr(x), negative_slope)


def _leaky_relu(x, negative_slope, kink: str = "jax"):
    """x where x >= 0, else negative_slope * x; at 0 the derivative is 1 (kink="jax") or the slope ("torch")."""
    return jnp.where(x >= 0 if kink == "jax" else x > 0, x, negative_slope * x)


def gelu(x, approximate: bool = True):
    """GELU (jax.nn's default is the tanh approximation), with jax.nn's formulas: x * (1 + tanh(...)) / 2, and
    x * erfc(-x / sqrt(2)) / 2 for the exact one (no cancellation in 1 + erf(x) for negative x). The constants
    are in x's own dtype, strongly typed as in jax.nn (so gelu(0.5) is not weakly typed). Integers and bools
    are promoted as jax.numpy's inexact functions promote them (float32 up to 32 bits)."""
    x = _arr(x)
    if not dtypes.is_inexact(x.dtype):
        x = ew.convert_element_type(x, dtypes.to_inexact(x.dtype, x.weak_type), x.weak_type)
    if approximate:
        c = np.asarray(math.sqrt(2 / math.pi), dtype=x.dtype)[()]
        return x * (0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * x ** 3))))
    return 0.5 * x * lax.erfc(-x * np.asarray(math.sqrt(0.5), dtype=x.dtype)[()])


def mish(x):
    """x * tanh(softplus(x)) (JAX's jax.nn.mish)."""
    x = _arr(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2 (JAX's jax.nn.squareplus)."""
    x = _arr(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def glu(x, axis: int = -1):
    """Gated linear unit: a * sigmoid(b), x halved along axis (JAX's jax.nn.glu)."""
    x = _arr(x)
    n = x.shape[axis]
    if n % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got shape {x.shape}")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def softmax(x, axis=-1, where=None, initial=None):
    """exp(x - max) / sum over `axis` (an int or tuple); `where` masks entries out (they get 0). The one softmax
    formula (numpy/_softmax.py) that torch.softmax, F.softmax and jax.scipy.special.softmax also call.

    Examples:
        >>> import funcgrad as jax
        >>> import funcgrad.numpy as jnp
        >>> jnp.round(jax.nn.softmax(jnp.array([1., 2., 3.])), 4)
        Array([0.09  , 0.2447, 0.6652], dtype=float32)
    """
    return _sm.softmax(_arr(x), axis, where)


def log_softmax(x, axis=-1, where=None, initial=None):
    """x - max - log(sum(exp(x - max))) over `axis`; `where` masks entries out (they get -inf). The one
    log_softmax formula (numpy/_softmax.py) of both faces and of jax.scipy.special."""
    return _sm.log_softmax(_arr(x), axis, where)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) along axis (JAX's jax.nn.standardize): the variance is
    E[x^2] - E[x]^2 clipped at 0 ("fast", the default) or E[(x - mean)^2] ("stable")."""
    x = _arr(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis=axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis=axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' or 'stable'")
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
