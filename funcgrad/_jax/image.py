"""funcgrad.image: JAX's image resampling (`jax.image.resize`, `scale_and_translate`).

Each resized axis is one contraction of the image with a weight matrix (input size x output size) built
from the sampling kernel, so the result is differentiable with respect to the image (and, where they are
arrays, to scale and translation) through funcgrad's ordinary operations. When downsampling with
`antialias=True` the kernel is widened by the inverse scale (a low-pass filter), as in JAX.
"""
from __future__ import annotations

import enum

import numpy as np

from .. import numpy as jnp

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (CUBIC_PYTORCH and AREA are
    named for JAX compatibility but not implemented)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR", "trilinear": "LINEAR",
                 "triangle": "LINEAR", "lanczos3": "LANCZOS3", "lanczos5": "LANCZOS5", "cubic": "CUBIC",
                 "bicubic": "CUBIC", "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        try:
            return ResizeMethod[names[s.lower()]]
        except KeyError:
            raise ValueError(f"Unknown resize method: {s!r}") from None


def _method(method) -> ResizeMethod:
    m = method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)
    if m in (ResizeMethod.CUBIC_PYTORCH, ResizeMethod.AREA):
        raise NotImplementedError(f"funcgrad.image: resize method {m.name} is not implemented")
    return m


# kernels of |x| (x >= 0), written with funcgrad.numpy so they also run on traced values
def _linear(jnp, x):
    return jnp.maximum(0.0, 1.0 - x)


def _cubic(jnp, x):  # Keys' cubic kernel, a = -0.5
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return jnp.where(x < 1.0, near, jnp.where(x < 2.0, far, 0.0))


def _lanczos(radius):
    def kernel(jnp, x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        safe = jnp.where(x > 1e-3, x, 1.0)
        out = jnp.where(x > 1e-3, y / (np.pi ** 2 * safe ** 2), 1.0)
        return jnp.where(x > radius, 0.0, out)
    return kernel


_KERNELS = {ResizeMethod.LINEAR: _linear, ResizeMethod.CUBIC: _cubic, ResizeMethod.LANCZOS3: _lanczos(3),
            ResizeMethod.LANCZOS5: _lanczos(5)}


def _weights(jnp, in_size, out_size, scale, translation, kernel, antialias, dtype):
    """(in_size, out_size) weights: output sample j reads input i with weight w[i, j]."""
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = (jnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    x = jnp.abs(sample_f[None, :] - jnp.arange(in_size, dtype=dtype)[:, None]) / kernel_scale
    w = kernel(jnp, x)
    total = jnp.sum(w, axis=0, keepdims=True)
    eps = np.finfo(np.dtype(dtype)).eps
    w = jnp.where(jnp.abs(total) > 1000.0 * eps, w / jnp.where(total != 0, total, 1), 0)
    inside = (sample_f >= -0.5) & (sample_f <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0)


def _float_dtype(image):
    # JAX's promotion: integers and bools with float32 give float32
    return image.dtype if jnp.issubdtype(image.dtype, jnp.inexact) else np.dtype(np.float32)


def _contract(jnp, image, w, axis):
    out = jnp.tensordot(image, w, axes=([axis], [0]))  # the new axis comes last
    return jnp.moveaxis(out, -1, axis)


def _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel, antialias):
    dtype = _float_dtype(image)
    wdtype = jnp.result_type(dtype, jnp.float32) if not jnp.issubdtype(dtype, jnp.complexfloating) else \
        jnp.finfo(dtype).dtype
    out = image.astype(dtype)
    for k, d in enumerate(spatial_dims):
        w = _weights(jnp, image.shape[d], shape[d], jnp.asarray(scale[k], wdtype),
                     jnp.asarray(translation[k], wdtype), kernel, antialias, wdtype)
        out = _contract(jnp, out, w.astype(dtype), d)
    return out


def _check_shape(image, shape, what):
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"{what}: shape {shape} must have one entry per dimension of the image "
                         f"(image of shape {tuple(image.shape)})")
    if any(s < 0 for s in shape):
        raise ValueError(f"{what}: shape {shape} has a negative size")
    return shape


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True,
                        precision=None):
    """Resample `image` to `shape` along `spatial_dims`: output position y reads input position
    (y + 0.5 - translation) / scale - 0.5 (pixel centres at half-integers), with the kernel of `method`
    (not NEAREST). scale and translation have one entry per spatial dimension and may be arrays."""
    image = jnp.asarray(image)
    shape = _check_shape(image, shape, "scale_and_translate")
    spatial_dims = tuple(int(d) % image.ndim for d in spatial_dims)
    for d in range(image.ndim):
        if d not in spatial_dims and shape[d] != image.shape[d]:
            raise ValueError(f"scale_and_translate: dimension {d} is not spatial, so its size must stay "
                             f"{image.shape[d]}, got {shape[d]}")
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: the NEAREST method is not supported (use resize)")
    scale = jnp.asarray(scale)
    translation = jnp.asarray(translation)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale_and_translate: scale and translation need shape ({len(spatial_dims)},), got "
                         f"{tuple(scale.shape)} and {tuple(translation.shape)}")
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, _KERNELS[m], antialias)


def _resize_nearest(image, shape):
    out = image
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        # float32 (i + 0.5) * m / n, rounded as JAX's compiled version of it rounds (m times 1/n)
        step = np.float32(m) * (np.float32(1) / np.float32(n))
        pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * step
        idx = np.minimum(np.floor(pos).astype(np.int64), m - 1)
        out = jnp.take(out, idx, axis=d)
    return out


def resize(image, shape, method, antialias=True, precision=None):
    """Resize `image` to `shape` (one size per dimension; unchanged sizes leave that axis alone), as
    jax.image.resize: method is "nearest", "linear" ("bilinear", "trilinear"), "cubic" ("bicubic"),
    "lanczos3" or "lanczos5", or a ResizeMethod. Non-nearest methods return a floating-point image."""
    image = jnp.asarray(image)
    shape = _check_shape(image, shape, "resize")
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if not dims:
        return image.astype(_float_dtype(image))
    scale = [shape[d] / image.shape[d] if image.shape[d] else 1.0 for d in dims]
    return _scale_and_translate(image, shape, dims, scale, [0.0] * len(dims), _KERNELS[m], antialias)
