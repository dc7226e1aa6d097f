"""torch.nn.functional's activations and the softmax family. Each is the JAX face's computation
(funcgrad._jax.nn) applied to the tensor's array, adapting only names, defaults, dtype checks, `inplace=` and
torch's convention at kinks (a `kink="torch"` parameter), so F.gelu, nn.GELU and jax.nn.gelu are one formula."""
from __future__ import annotations

import warnings

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._torch import _mt19937 as _mt
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from ..._src.prims import elementwise as _ew
from ..._torch._argcheck import dtype_error as _dtype_error
from ..._torch._dispatch import _apply
from ..._torch._errors import _legacy
from ..._torch import _quantized as _Q
from ..._torch._quantized import QTensor as _QTensor
from ..._jax import nn as _jnn
from .common import _inplace_apply, _maybe_inplace

__all__ = ["threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "leaky_relu",
           "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu", "glu",
           "sigmoid", "tanh", "logsigmoid", "hardsigmoid", "hardswish", "gelu", "silu", "mish", "softplus",
           "softsign", "softshrink", "hardshrink", "tanhshrink", "softmax", "softmin", "log_softmax",
           "gumbel_softmax"]



# --- activations ------------------------------------------------------------------------------------
# torch's in-place variants with a backward formula of their own (on the result): their nodes' names
_INPLACE_NODE = {"Threshold": "Threshold1", "LeakyRelu": "LeakyRelu1", "RreluWithNoise": "RreluWithNoise1"}


def _act(input, inplace, name, afn):
    """afn (an Array function: the JAX face's formula) applied to input as one recorded op named like torch's
    backward node; with inplace=True written into input's buffer (torch's `op_`, its node's name)."""
    def fn(t):
        return _apply(name, afn, (t,))
    return _inplace_apply(input, fn, _INPLACE_NODE.get(name, name)) if inplace else fn(input)


def _float_kernel(input, kernel, kinds="biu"):
    """torch's NotImplementedError for an activation kernel without an integer (or bool) version."""
    dt = input._np_dtype()
    if dt.kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(dt)}'")


def threshold(input, threshold, value, inplace=False):
    """y = value where x <= threshold, else x (so NaN stays NaN, with its gradient), as torch."""
    _float_kernel(input, "threshold_cpu", "b")
    if input._np_dtype().kind in "fc":  # one recorded op, as torch's (its backward takes self)
        return _act(input, inplace, "Threshold",
                    lambda a: _jnp.where(a <= threshold, _jnp.full_like(a, value), a))
    return _maybe_inplace(input, inplace, lambda x: _fg.where(x <= threshold, _fg.full_like(x, value), x),
                          "Threshold")


def threshold_(input, threshold, value):
    """In-place threshold."""
    return globals()["threshold"](input, threshold, value, True)


def relu(input, inplace=False):
    """Elementwise max(0, x) (on a quantized tensor, as torch's quantized kernel: its integers clamped at the
    zero point, so nn.ReLU runs between quantized modules)."""
    if input.__class__ is _QTensor:
        return input.relu_() if inplace else input.relu()
    return _maybe_inplace(input, inplace, _fg.relu, "Relu")


def relu_(input):
    """In-place relu."""
    return relu(input, True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Elementwise clamp to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    dt = input._np_dtype()
    if dt.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.kind in "iu":  # integers stay integers, clamped to the bounds truncated toward zero
        return _maybe_inplace(input, inplace, lambda x: _fg.clamp(x, int(min_val), int(max_val)), "Hardtanh")

    # jax.nn.hard_tanh's formula; the gradient passes strictly inside (min_val, max_val) only (0 at the bounds
    # and at NaN), as torch
    return _act(input, inplace, "Hardtanh", lambda a: _jnn._clip_linear(a, min_val, max_val, "torch"))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """Elementwise min(max(0, x), 6) (on a quantized tensor: its integers clamped to [zero point, q(6)])."""
    if input.__class__ is _QTensor:
        return _Q.q_relu6(input, inplace)
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """Elementwise x if x >= 0 else negative_slope * x (a quantized tensor keeps its scale and zero point)."""
    if input.__class__ is _QTensor:
        return _Q.q_leaky_relu(input, negative_slope)
    _float_kernel(input, "leaky_relu_cpu")
    return _act(input, inplace, "LeakyRelu", lambda a: _jnn._leaky_relu(a, negative_slope, "torch"))


def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu."""
    return leaky_relu(input, negative_slope, True)


def _elu(x, alpha, scale=1.0, input_scale=1.0, name="Elu"):
    """scale * (x if x > 0 else alpha * expm1(x * input_scale)): the elu card with torch's convention at 0
    (derivative alpha * scale * input_scale, second derivative 0) and at NaN (the identity's gradient)."""
    _float_kernel(x, "elu_cpu", "biuc")
    return _apply(name, lambda a: _ew.elu(a, alpha, scale, input_scale, "torch"), (x,))


def elu(input, alpha=1.0, inplace=False):
    """Elementwise x if x > 0 else alpha * (exp(x) - 1)."""
    return _maybe_inplace(input, inplace, lambda x: _elu(x, alpha), "Elu1")  # (Elu1: torch's in-place node)


def elu_(input, alpha=1.0):
    """In-place elu."""
    return elu(input, alpha, True)


def selu(input, inplace=False):
    """Scaled exponential linear unit."""
    return _maybe_inplace(input, inplace, lambda x: _elu(x, _jnn.SELU_ALPHA, _jnn.SELU_SCALE), "Elu1")


def selu_(input):
    """In-place selu."""
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    """Elementwise max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(input, inplace, lambda x: _elu(x, alpha, 1.0, 1.0 / alpha, "Celu"), "Celu1")


def celu_(input, alpha=1.0):
    """In-place celu."""
    return celu(input, alpha, True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomised leaky ReLU: negative slopes drawn from U(lower, upper) in training, their mean in eval
    (x <= 0 takes the slope, so the gradient at 0 is the slope, as torch)."""
    if training:
        return _act(input, inplace, "RreluWithNoise", _rrelu_train(input, lower, upper))
    _float_kernel(input, "leaky_relu_cpu")
    s = (lower + upper) / 2
    return _act(input, inplace, "RreluWithNoise", lambda a: _jnp.where(a > 0, a, a * s))


def _rrelu_train(input, lower, upper):
    """rrelu's training function, with torch's draws: one uniform_real_distribution<double>(lower, upper) per
    element x <= 0, in order, from the default generator (none for x > 0 or NaN), its bounds and the product
    x * slope in the op math type (float for float32 and bfloat16); torch has no Half kernel."""
    dt = input._np_dtype()
    _float_kernel(input, "rrelu_with_noise_out_cpu")
    if dt == np.float16:
        raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for 'Half'")
    op = np.dtype(np.float64 if dt == np.float64 else np.float32)
    neg = input.detach()._host() <= 0
    r = _mt.uniform_real(_fg.default_generator.engine(), int(neg.sum()), float(op.type(lower)),
                         float(op.type(upper)))
    noise = np.ones(neg.shape, op)
    noise[neg] = r
    slope, mask = _jnp.asarray(noise), _jnp.asarray(neg)
    if op == dt:
        return lambda a: _jnp.where(mask, a * slope, a)
    return lambda a: _jnp.where(mask, (a.astype(op) * slope).astype(dt), a)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, True)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight shared or one per channel (dim 1)."""
    if input._np_dtype() != weight._np_dtype():
        raise _dtype_error("prelu: Type promoting not supported. Got {0} and {1}", input, weight)
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    w = weight
    if weight.numel() != 1 and input.dim() >= 2:
        w = weight.reshape([-1] + [1] * (input.dim() - 2))
    elif weight.numel() == 1:
        w = weight.reshape(())
    return _apply("PreluKernel", lambda a, b: _jnp.where(a > 0, a, a * b), (input, w))


def glu(input, dim=-1):
    """a * sigmoid(b) where (a, b) are the two halves of input along dim."""
    _float_kernel(input, "glu_cpu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    d = dim % nd
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return _apply("Glu", lambda a: _jnn.glu(a, d), (input,))


def sigmoid(input):
    """Elementwise 1 / (1 + exp(-x)) (a quantized tensor gives scale 1/256, as torch's)."""
    if input.__class__ is _QTensor:
        return _Q.q_sigmoid(input)
    return _fg.sigmoid(input)


def tanh(input):
    """Elementwise hyperbolic tangent."""
    return _fg.tanh(input)


def logsigmoid(input):
    """log(sigmoid(x)) = -logaddexp(-x, 0), through the logaddexp card (smooth to every order)."""
    _float_kernel(input, "log_sigmoid_cpu", "biuc")
    return _apply("LogSigmoid", _jnn.log_sigmoid, (input,))


def hardsigmoid(input, inplace=False):
    """jax.nn.hard_sigmoid, relu6(x + 3) / 6: the gradient 1/6 strictly inside (-3, 3) only (0 at the kinks and
    at NaN), as torch's."""
    _float_kernel(input, "hardsigmoid_cpu")
    return _act(input, inplace, "Hardsigmoid", _jnn.hard_sigmoid)


def hardswish(input, inplace=False):
    """jax.nn.hard_swish, x relu6(x + 3) / 6, with torch's gradient: 0 for x <= -3, x / 3 + 1/2 below 3, else 1
    (NaN too)."""
    _float_kernel(input, "hardswish_cpu")
    return _act(input, inplace, "Hardswish", lambda a: _jnn._hard_silu(a, "torch"))


def gelu(input, approximate="none"):
    """jax.nn.gelu (approximate="tanh": its tanh form; "none": the exact one)."""
    _float_kernel(input, "GeluKernelImpl")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    tanh_form = approximate == "tanh"

    def f(a):
        if a.dtype.itemsize == 2:  # float16, bfloat16: in float32, rounded once (torch's CPU kernel)
            return _jnp.asarray(_jnn.gelu(_jnp.asarray(a, np.float32), tanh_form), a.dtype)
        return _jnn.gelu(a, tanh_form)
    return _apply("Gelu", f, (input,))


def silu(input, inplace=False):
    """Elementwise x * sigmoid(x)."""
    _float_kernel(input, "silu_cpu")
    return _act(input, inplace, "Silu", _jnn.silu)


def mish(input, inplace=False):
    """Elementwise x * tanh(softplus(x))."""
    _float_kernel(input, "mish_cpu")
    return _act(input, inplace, "Mish", _jnn.mish)


def softplus(input, beta=1.0, threshold=20.0):
    """jax.nn.softplus(beta x) / beta (logaddexp(beta x, 0): smooth to every order), x itself where
    beta x > threshold. (At beta x == threshold exactly torch's double backward, which tests
    beta x < threshold, gives 0 where this gives the softplus branch's sigmoid'(threshold) beta.)"""
    _float_kernel(input, "softplus_cpu", "biuc")

    def f(a):
        z = a * beta if beta != 1 else a
        sp = _jnn.softplus(z)
        sp = sp / beta if beta != 1 else sp
        return _ew.select(_ew.gt(z, _jnp.full_like(z, threshold)), a, sp)
    return _apply("Softplus", f, (input,))


def _softplus(z):
    """log(1 + exp(z)) on tensors: jax.nn.softplus, no threshold."""
    return _apply("Softplus", _jnn.softplus, (z,))


def softsign(input):
    """jax.nn.soft_sign, x / (|x| + 1), with torch's derivative of |x| at 0."""
    if not input.is_floating_point():
        return input / (1 + _fg.abs(input))
    return _apply("Div", lambda a: _jnn._soft_sign(a, "torch"), (input,))  # (torch's: x / (1 + |x|), DivBackward0)


def _check_lambd(input, lambd):
    if lambd < 0:
        name = {"float32": "Float", "float64": "Double", "float16": "Half"}.get(str(input.dtype).split(".")[-1],
                                                                             "Float")
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype {name}, but found {lambd}")


def softshrink(input, lambd=0.5):
    """Elementwise x - lambd above lambd, x + lambd below -lambd, else 0."""
    _float_kernel(input, "softshrink_check")
    _check_lambd(input, lambd)
    # NaN falls through to x + lambd (NaN, gradient 1), as torch
    return _apply("Softshrink", lambda a: _jnp.where((a >= -lambd) & (a <= lambd), a * 0,
                                                     _jnp.where(a > lambd, a - lambd, a + lambd)), (input,))


def hardshrink(input, lambd=0.5):
    """Elementwise x where |x| > lambd, else 0."""
    _float_kernel(input, "hardshrink_cpu")
    _check_lambd(input, lambd)
    # 0 (+0.0) on [-lambd, lambd], else x: NaN stays NaN with its gradient, as torch
    return _apply("Hardshrink", lambda a: _jnp.where((a >= -lambd) & (a <= lambd), _jnp.zeros_like(a), a),
                  (input,))


def tanhshrink(input):
    """Elementwise x - tanh(x)."""
    return input - _fg.tanh(input)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _fg.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _fg.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along dim, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _fg.log_softmax(input, dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution; hard=True gives one-hot samples with soft gradients."""
    gumbels = -_fg.empty(tuple(logits.shape), dtype=logits.dtype).exponential_().log()
    y_soft = _fg.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _fg.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
