"""jax.example_libraries.stax for funcgrad: neural-network layers as pairs of pure functions.

A layer is `(init_fun, apply_fun)`: `init_fun(rng, input_shape) -> (output_shape, params)` and
`apply_fun(params, inputs, **kwargs) -> outputs` (kwargs: `rng=` for Dropout, `mode='train'/'test'`).
Combinators (serial, parallel, FanOut, ...) build networks out of layers.

    from funcgrad.example_libraries import stax
    init, apply = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    out_shape, params = init(funcgrad.random.PRNGKey(0), (-1, 784))

Shapes may carry -1 for the batch size; it passes through unchanged.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Sequence

from .. import lax
from .. import numpy as jnp
from .. import random
from ..nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus, standardize
from ..nn.initializers import glorot_normal, normal, ones, zeros
from .._src.prims.conv import padtype_to_pads

__all__ = ["AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
           "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose",
           "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus",
           "SumPool", "Tanh", "elementwise", "parallel", "serial", "shape_dependent",
           "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
           "randn", "relu", "selu", "sigmoid", "softmax", "softplus", "standardize", "zeros"]

# Historical aliases kept by jax.example_libraries.stax.
logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

Layer = tuple  # (init_fun, apply_fun)


# -------------------------------------------------------------------------------------------- shapes

def _pads(in_sizes, windows, strides, padding):
    if isinstance(padding, str):
        return padtype_to_pads(in_sizes, windows, strides, padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    if len(pads) != len(in_sizes):
        raise ValueError(f"padding needs one (low, high) pair per spatial dimension ({len(in_sizes)}), "
                         f"got {padding!r}")
    return pads


def _windowed_sizes(in_sizes, windows, strides, padding, dilation=None):
    """Output sizes of a strided window sweep (dilation: of the input, for transposed convolutions)."""
    dilation = dilation or (1,) * len(in_sizes)
    dilated = [(n - 1) * d + 1 if n > 0 else 0 for n, d in zip(in_sizes, dilation)]
    pads = padding if not isinstance(padding, str) else padtype_to_pads(dilated, windows, strides, padding)
    return tuple(max(0, (n + lo + hi - w) // s + 1) for n, w, s, (lo, hi) in zip(dilated, windows, strides, pads))


def _conv_specs(op, dimension_numbers, input_shape, filter_shape):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if len(input_shape) != len(lhs_spec):
        raise ValueError(f"{op}: input shape {tuple(input_shape)} does not match input spec {lhs_spec!r}")
    spatial = [c for c in rhs_spec if c not in "OI"]
    if len(filter_shape) != len(spatial):
        raise ValueError(f"{op}: filter_shape {tuple(filter_shape)} needs {len(spatial)} entries for kernel spec "
                         f"{rhs_spec!r}")
    return lhs_spec, rhs_spec, out_spec, spatial


def _kernel_shape(rhs_spec, out_chan, in_chan, filter_shape):
    it = iter(filter_shape)
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(it) for c in rhs_spec)


# -------------------------------------------------------------------------------------------- layers

def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()) -> Layer:
    """Fully connected layer: inputs @ W + b, W of shape (in, out_dim)."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _conv_init(name, dimension_numbers, out_chan, filter_shape, W_init, b_init, spatial_sizes):
    """init_fun of a (transposed) convolution layer: the output shape, with spatial_sizes(input sizes, window
    sizes) giving its spatial sizes, and the (kernel, bias) params drawn by W_init and b_init."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers

    def init_fun(rng, input_shape):
        _, _, _, spatial = _conv_specs(name, dimension_numbers, input_shape, filter_shape)
        kernel_shape = _kernel_shape(rhs_spec, out_chan, input_shape[lhs_spec.index("C")], filter_shape)
        in_sizes = [input_shape[lhs_spec.index(c)] for c in spatial]
        windows = [kernel_shape[rhs_spec.index(c)] for c in spatial]
        sizes = dict(zip(spatial, spatial_sizes(in_sizes, windows)))
        sizes.update(N=input_shape[lhs_spec.index("N")], C=out_chan)
        output_shape = tuple(sizes[c] for c in out_spec)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))
    return init_fun


def GeneralConv(dimension_numbers, out_chan: int, filter_shape: Sequence[int], strides=None, padding="VALID",
                W_init: Callable | None = None, b_init: Callable = normal(1e-6)) -> Layer:
    """Convolution with layouts given by dimension_numbers = (input spec, kernel spec, output spec)."""
    rhs_spec = dimension_numbers[1]
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    init_fun = _conv_init("GeneralConv", dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda in_sizes, windows: _windowed_sizes(in_sizes, windows, strides, padding))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "2-d convolution on NHWC inputs with an HWIO kernel (see GeneralConv)."


def _transpose_pads(k: int, s: int, padding: str):
    """(lo, hi) padding of the dilated input that makes a conv act as a transposed conv (JAX's rule)."""
    kind = padding.upper()
    if kind == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif kind == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (low, high) pairs, got {padding!r}")
    return lo, total - lo


def GeneralConvTranspose(dimension_numbers, out_chan: int, filter_shape: Sequence[int], strides=None,
                         padding="VALID", W_init: Callable | None = None, b_init: Callable = normal(1e-6)) -> Layer:
    """Transposed convolution (the gradient of a strided conv), kernel not flipped, as lax.conv_transpose."""
    rhs_spec = dimension_numbers[1]
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def pads_for(windows):
        if isinstance(padding, str):
            return tuple(_transpose_pads(k, s, padding) for k, s in zip(windows, strides))
        return tuple((int(lo), int(hi)) for lo, hi in padding)

    init_fun = _conv_init("GeneralConvTranspose", dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda in_sizes, windows: _windowed_sizes(in_sizes, windows, one, pads_for(windows),
                                                                    strides))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        windows = [W.shape[rhs_spec.index(c)] for c in rhs_spec if c not in "OI"]
        return lax.conv_general_dilated(inputs, W, one, pads_for(windows), lhs_dilation=strides,
                                        rhs_dilation=one, dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "1-d transposed convolution on NHC inputs with an HIO kernel."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "2-d transposed convolution on NHWC inputs with an HWIO kernel."


def BatchNorm(axis=(0, 1, 2), epsilon: float = 1e-5, center: bool = True, scale: bool = True,
              beta_init: Callable = zeros, gamma_init: Callable = ones) -> Layer:
    """Batch normalisation over `axis` with the current batch's statistics (no running averages).

    params = (beta, gamma), each () when its `center` / `scale` is off."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ax = tuple(a % x.ndim for a in axis)
        z = standardize(x, ax, epsilon=epsilon)
        keep = tuple(None if i in ax else slice(None) for i in range(x.ndim))  # broadcast params back
        if scale:
            z = z * gamma[keep]
        if center:
            z = z + beta[keep]
        return z
    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs) -> Layer:
    """A parameterless layer applying fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _full_window(window_shape, strides, spec):
    """Window and strides over all dims: size 1 on the batch and channel axes (NHWC... unless spec)."""
    if spec is None:
        non_spatial = (0, len(window_shape) + 1)
    else:
        non_spatial = (spec.index("N"), spec.index("C"))
    window, stride = list(window_shape), list(strides)
    for i in sorted(non_spatial):
        window.insert(i, 1)
        stride.insert(i, 1)
    return tuple(window), tuple(stride), non_spatial


def _pooling_layer(name: str, computation, init_val: float, average: bool = False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None) -> Layer:
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        window, stride, non_spatial = _full_window(window_shape, strides, spec)

        def init_fun(rng, input_shape):
            if len(input_shape) != len(window):
                raise ValueError(f"{name}: input shape {tuple(input_shape)} needs {len(window)} dimensions for "
                                 f"window {window_shape} and spec {spec!r}")
            pads = padtype_to_pads(input_shape, window, stride, padding) if isinstance(padding, str) else \
                _pads(input_shape, window, stride, padding)
            out = tuple(n if (w, s, p) == (1, 1, (0, 0)) else max(0, (n + p[0] + p[1] - w) // s + 1)
                        for n, w, s, p in zip(input_shape, window, stride, pads))
            return out, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, computation, window, stride, padding)
            if not average:
                return out
            # Divide by the number of real (unpadded) elements in each window.
            spatial = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
            counts = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0.0, lax.add, window_shape, strides,
                                       padding)
            for i in sorted(non_spatial):
                counts = jnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    PoolingLayer.__name__ = name
    PoolingLayer.__doc__ = f"{name}(window_shape, strides=None, padding='VALID', spec=None): pooling over the " \
                           "spatial axes (NHWC unless spec says otherwise)."
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", lax.max, -jnp.inf)
SumPool = _pooling_layer("SumPool", lax.add, 0.0)
AvgPool = _pooling_layer("AvgPool", lax.add, 0.0, average=True)


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return jnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
Identity = (lambda rng, input_shape: (input_shape, ()), lambda params, inputs, **kwargs: inputs)


def FanOut(num: int) -> Layer:
    """Copy the input into a list of `num` outputs (for parallel branches)."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum_apply(params, inputs, **kwargs):
    return functools.reduce(lambda a, b: a + b, inputs)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()), _fan_in_sum_apply)


def FanInConcat(axis: int = -1) -> Layer:
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        first = tuple(input_shape[0])
        ax = axis % len(first)
        size = sum(s[ax] for s in input_shape)
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout where `rate` is the probability of KEEPING a unit (as in stax); kept units are scaled by 1/rate.

    apply_fun needs rng=; mode='test' (here or in the apply call) passes inputs through."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout: apply_fun needs a PRNG key, as apply_fun(params, inputs, rng=key) with a "
                             "key from funcgrad.random.PRNGKey (or from serial's rng)")
        if kwargs.get("mode", mode) == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


# -------------------------------------------------------------------------------------------- combinators

def _layer_rngs(kwargs: dict, n: int):
    """A combinator's per-layer keys for apply_fun: its rng (taken out of kwargs) split n ways, or n Nones."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers: Layer) -> Layer:
    """Layers applied one after the other; params is a list with one entry per layer."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, nlayers)
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Layers applied to the matching entries of a sequence of inputs (use with FanOut / FanIn*)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(s for s, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, nlayers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable) -> Layer:
    """A layer chosen by the input shape: make_layer(input_shape) -> (init_fun, apply_fun)."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
