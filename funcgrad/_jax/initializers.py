"""jax.nn.initializers: functions init(key, shape, dtype=the default float) -> Array, drawn from funcgrad.random.

    import funcgrad as jax
    w = jax.nn.initializers.glorot_normal()(jax.random.key(0), (784, 512))

(torch's in-place initialisers are funcgrad.nn.init.)"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .. import numpy as jnp
from .. import random

__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "orthogonal",
           "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

Initializer = Callable


def zeros(key, shape, dtype=None):
    """An initializer: an array of zeros of `shape` and `dtype` (the key is unused)."""
    return jnp.zeros(shape, dtype)


def ones(key, shape, dtype=None):
    """An initializer: an array of ones of `shape` and `dtype` (the key is unused)."""
    return jnp.ones(shape, dtype)


def constant(value, dtype=None) -> Initializer:
    """An initializer that fills `shape` with `value` (in `dtype`, default the default float)."""
    def init(key, shape, dtype=dtype):
        return jnp.full(shape, value, jnp.zeros((), dtype).dtype)
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """U[0, scale)."""
    def init(key, shape, dtype=dtype):
        return random.uniform(key, shape, dtype) * scale
    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer drawing from N(0, stddev**2)."""
    def init(key, shape, dtype=dtype):
        return random.normal(key, shape, dtype) * stddev
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing from a normal truncated to [lower, upper] standard deviations, then scaled by stddev
    (so the result's std is below stddev, as in JAX)."""
    def init(key, shape, dtype=dtype):
        return random.truncated_normal(key, lower, upper, shape, dtype) * stddev
    return init


def _fans(shape: Sequence[int], in_axis=-2, out_axis=-1, batch_axis=()):
    shape = tuple(shape)
    if len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor. "
                         "Must be at least 2D.")
    nd = len(shape)
    in_axes = (in_axis,) if isinstance(in_axis, int) else tuple(in_axis)
    out_axes = (out_axis,) if isinstance(out_axis, int) else tuple(out_axis)
    batch = (batch_axis,) if isinstance(batch_axis, int) else tuple(batch_axis)
    in_axes = {a % nd for a in in_axes}
    out_axes = {a % nd for a in out_axes}
    batch = {a % nd for a in batch}
    receptive = math.prod(s for i, s in enumerate(shape) if i not in in_axes | out_axes | batch)
    fan_in = math.prod(shape[i] for i in in_axes) * receptive
    fan_out = math.prod(shape[i] for i in out_axes) * receptive
    return fan_in, fan_out


def variance_scaling(scale, mode: str, distribution: str, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None) -> Initializer:
    """Variance scale / fan (fan_in, fan_out or fan_avg) with a truncated normal, normal or uniform draw."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype):
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                 "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
        variance = scale / denom
        if distribution == "truncated_normal":
            std = math.sqrt(variance) / .87962566103423978  # the std of a unit normal truncated to [-2, 2]
            return random.truncated_normal(key, -2.0, 2.0, tuple(shape), dtype) * std
        if distribution == "normal":
            return random.normal(key, tuple(shape), dtype) * math.sqrt(variance)
        return random.uniform(key, tuple(shape), dtype, -1.0, 1.0) * math.sqrt(3 * variance)
    return init


def _preset(name: str, scale: float, mode: str, distribution: str, doc: str) -> Callable[..., Initializer]:
    """One of JAX's named variance_scaling initializers (Glorot/Xavier, LeCun, He/Kaiming)."""
    def initializer(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)
    initializer.__name__ = initializer.__qualname__ = name
    initializer.__doc__ = f"{doc}: variance_scaling({scale}, {mode!r}, {distribution!r}) over the given axes."
    return initializer


glorot_uniform = _preset("glorot_uniform", 1.0, "fan_avg", "uniform",
                         "Glorot/Xavier uniform, U(+-sqrt(6 / (fan_in + fan_out))); also named xavier_uniform")
glorot_normal = _preset("glorot_normal", 1.0, "fan_avg", "truncated_normal",
                        "Glorot/Xavier normal, variance 2 / (fan_in + fan_out); also named xavier_normal")
lecun_uniform = _preset("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform, variance 1 / fan_in")
lecun_normal = _preset("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal, variance 1 / fan_in")
he_uniform = _preset("he_uniform", 2.0, "fan_in", "uniform",
                     "He/Kaiming uniform, variance 2 / fan_in (ReLU layers); also named kaiming_uniform")
he_normal = _preset("he_normal", 2.0, "fan_in", "truncated_normal",
                    "He/Kaiming normal, variance 2 / fan_in (ReLU layers); also named kaiming_normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """A (scaled) matrix with orthonormal columns (or rows), reshaped to `shape`."""
    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        mat = random.normal(key, (max(n_rows, n_cols), min(n_rows, n_cols)), dtype)
        q, r = jnp.linalg.qr(mat)
        q = q * jnp.sign(jnp.diagonal(r))
        if n_rows < n_cols:
            q = q.T
        q = jnp.reshape(q, (n_rows, n_cols))
        q = jnp.moveaxis(jnp.reshape(q, tuple(np.delete(shape, column_axis % len(shape))) + (n_cols,)), -1,
                         column_axis)
        return scale * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An orthogonal matrix at the centre of a 3-5-D convolution kernel, zeros elsewhere."""
    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale, column_axis, dtype)(key, shape[-2:], dtype)
        w = jnp.zeros(shape, dtype)
        centre = tuple(s // 2 for s in shape[:-2])
        return w.at[centre].set(ortho)
    return init
