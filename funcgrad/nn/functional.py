"""torch.nn.functional: the functional forms of the layers and losses, built on funcgrad's Tensor ops.
Everything here is composed of differentiable Tensor operations, so autograd comes from the primitives' own
derivative rules; in-place variants (`relu_`, `inplace=True`) write the result into the input's buffer through
the Tensor engine's in-place mechanism, which records them like any other in-place op."""
from __future__ import annotations

import math
import warnings

import numpy as _np

import funcgrad as _fg
from funcgrad.tensor import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from .. import lax as _lax
from ..primitives import elementwise as _ew
from ..primitives.indexing import gather as _gather
from ..tensor._argcheck import DtypeName, check_same_dtype as _check_same_dtype, dtype_error as _dtype_error
from ..tensor._ops import _add as _add_bc
from ..tensor._tensor import _apply, _inplace as _tensor_inplace, _traced  # noqa: F401

_REDUCTIONS = ("none", "mean", "sum")


def _pair(v, n=2):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(x) for x in v)
    return tuple(int(v) for _ in range(n))


def _size(t) -> str:
    return f"torch.Size({list(t.shape)})"


def _concrete(*ts) -> bool:
    """Whether the tensors hold concrete values (so host-side value checks are possible)."""
    return all(t is None or getattr(t, "_v", None) is not None for t in ts)


# --- in-place plumbing ------------------------------------------------------------------------------
def _inplace_apply(input, fn, name):
    """input <- fn(input), written into input's buffer and recorded as one in-place op (torch's `op_`)."""
    def afn(a):
        r = fn(_traced(a))
        return r._a if r._v is None else r._arr()
    return _tensor_inplace(name, input, afn)


def _maybe_inplace(input, inplace, fn, name):
    return _inplace_apply(input, fn, name) if inplace else fn(input)


# --- reductions and the legacy size_average/reduce arguments ------------------------------------------
def _legacy_get_string(size_average, reduce, emit_warning=True):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction, allowed=_REDUCTIONS):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_target_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input size ({_size(input)}). "
                      "This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    if weight is None:
        return _reduce(loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


# --- linear -----------------------------------------------------------------------------------------
def linear(input, weight, bias=None):
    """y = x W^T + b."""
    if weight.dim() == 2 and input.dim() >= 1 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows if input.dim() > 1 else 1}x"
                           f"{input.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
    if bias is None:
        if input._np_dtype() != weight._np_dtype():
            raise _dtype_error("expected m1 and m2 to have the same dtype, but got: {0:c} != {1:c}", input, weight)
    elif input._np_dtype() != weight._np_dtype() or bias._np_dtype() != weight._np_dtype():  # (torch's addmm)
        _check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", bias, weight)
        raise _dtype_error("mat1 and mat2 must have the same dtype, but got {0} and {1}", input, weight)
    if weight.dim() != 2:
        out = _fg.matmul(input, weight)
        return out if bias is None else out + bias
    # one recorded node (torch's AddmmBackward0 / MmBackward0): x W^T contracted directly, no transpose op
    dims = (((input.dim() - 1,), (1,)), ((), ()))
    if bias is None:
        return _apply("Mm", lambda x, w: _lax.dot_general(x, w, dims), (input, weight))
    out_shape = tuple(input.shape[:-1]) + (weight.shape[0],)
    _fg.broadcast_shapes(tuple(bias.shape), out_shape)  # (torch's RuntimeError for a bias that does not fit)
    if _fg.broadcast_shapes(tuple(bias.shape), out_shape) != out_shape:
        raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
                           f"({bias.shape[-1]}) at non-singleton dimension {len(out_shape) - 1}")

    def addmm(x, w, b):
        y = _lax.dot_general(x, w, dims)
        return _add_bc(y, b) if y.dtype == b.dtype else y + b  # (the bias broadcast by NumPy when concrete)
    return _apply("Addmm", addmm, (input, weight, bias))


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T A_o x2 + b_o over the last dimension of both inputs."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    dt = input1._np_dtype()
    if input2._np_dtype() != dt or weight._np_dtype() != dt or (bias is not None and bias._np_dtype() != dt):
        raise _dtype_error("All tensors must have the same dtype, got input1: {0:c}, input2: {1:c}, weight: {2:c}"
                           + (", bias: {3:c}" if bias is not None else ""), input1, input2, weight, bias)
    out = _fg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def identity(input):
    return input


# --- activations ------------------------------------------------------------------------------------
def _float_kernel(input, kernel, kinds="biu"):
    """torch's NotImplementedError for an activation kernel without an integer (or bool) version."""
    dt = input._np_dtype()
    if dt.kind in kinds:
        from ..tensor._tensor import _legacy
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(dt)}'")


def threshold(input, threshold, value, inplace=False):
    """y = value where x <= threshold, else x (so NaN stays NaN, with its gradient), as torch."""
    _float_kernel(input, "threshold_cpu", "b")
    return _maybe_inplace(input, inplace, lambda x: _fg.where(x <= threshold, _fg.full_like(x, value), x),
                          "Threshold")


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


def relu(input, inplace=False):
    return _maybe_inplace(input, inplace, _fg.relu, "Relu")


def relu_(input):
    return relu(input, True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    dt = input._np_dtype()
    if dt.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if dt.kind in "iu":  # integers stay integers, clamped to the bounds truncated toward zero
        return _maybe_inplace(input, inplace, lambda x: _fg.clamp(x, int(min_val), int(max_val)), "Hardtanh")

    def f(x):
        # the gradient passes strictly inside (min_val, max_val) only (0 at the bounds and at NaN), as torch
        inside = (x > min_val) & (x < max_val)
        return _fg.where(inside, x, _fg.clamp(x, min_val, max_val).detach())
    return _maybe_inplace(input, inplace, f, "Hardtanh")


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _float_kernel(input, "leaky_relu_cpu")
    return _maybe_inplace(input, inplace, lambda x: _fg.where(x > 0, x, x * negative_slope), "LeakyRelu")


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def _elu(x, alpha, scale=1.0, input_scale=1.0, name="Elu"):
    """scale * (x if x > 0 else alpha * expm1(x * input_scale)): the elu card with torch's convention at 0
    (derivative alpha * scale * input_scale, second derivative 0) and at NaN (the identity's gradient)."""
    _float_kernel(x, "elu_cpu", "biuc")
    return _apply(name, lambda a: _ew.elu(a, alpha, scale, input_scale, "torch"), (x,))


def elu(input, alpha=1.0, inplace=False):
    return _maybe_inplace(input, inplace, lambda x: _elu(x, alpha), "Elu")


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _maybe_inplace(input, inplace, lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE), "Selu")


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(input, inplace, lambda x: _elu(x, alpha, 1.0, 1.0 / alpha, "Celu"), "Celu")


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomised leaky ReLU: negative slopes drawn from U(lower, upper) in training, their mean in eval
    (x <= 0 takes the slope, so the gradient at 0 is the slope, as torch)."""
    _float_kernel(input, "leaky_relu_cpu")
    if training:
        slope = _fg.empty(tuple(input.shape), dtype=input.dtype).uniform_(lower, upper)
        fn = lambda x: _fg.where(x > 0, x, x * slope)  # noqa: E731
    else:
        s = (lower + upper) / 2
        fn = lambda x: _fg.where(x > 0, x, x * s)  # noqa: E731
    return _maybe_inplace(input, inplace, fn, "RreluWithNoise")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
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
    return _fg.where(input > 0, input, input * w)


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
    a, b = input.chunk(2, d)
    return a * _fg.sigmoid(b)


def sigmoid(input):
    return _fg.sigmoid(input)


def tanh(input):
    return _fg.tanh(input)


def logsigmoid(input):
    """log(sigmoid(x)) = -logaddexp(-x, 0), through the logaddexp card (smooth to every order)."""
    _float_kernel(input, "log_sigmoid_cpu", "biuc")
    return _apply("LogSigmoid", lambda a: _ew.neg(_ew.logaddexp(_ew.neg(a), _ew.zeros_like(a))), (input,))


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6; the gradient 1/6 strictly inside (-3, 3) only (0 at the kinks and at NaN), as torch."""
    _float_kernel(input, "hardsigmoid_cpu")

    def f(x):
        inside = (x > -3.0) & (x < 3.0)
        return _fg.where(inside, (x + 3.0) / 6.0, (_fg.clamp(x + 3.0, 0.0, 6.0) / 6.0).detach())
    return _maybe_inplace(input, inplace, f, "Hardsigmoid")


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6, with torch's gradient: 0 for x <= -3, x / 3 + 1/2 below 3, else 1 (NaN too)."""
    _float_kernel(input, "hardswish_cpu")

    def f(x):
        low = (x * 0.0).detach()  # (the sign of x * 0, as torch's value)
        mid = (x > -3.0) & (x < 3.0)
        xm = _fg.where(mid, x, _fg.zeros_like(x))  # (no 0 * inf from the unused branch at +-inf)
        return _fg.where(x <= -3.0, low, _fg.where(mid, xm * (xm + 3.0) / 6.0, x))
    return _maybe_inplace(input, inplace, f, "Hardswish")


def gelu(input, approximate="none"):
    _float_kernel(input, "GeluKernelImpl")
    if approximate == "none":
        return input * 0.5 * (1.0 + _fg.erf(input * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        return 0.5 * input * (1.0 + _fg.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * input ** 3)))
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input, inplace=False):
    _float_kernel(input, "silu_cpu")
    return _maybe_inplace(input, inplace, lambda x: x * _fg.sigmoid(x), "Silu")


def mish(input, inplace=False):
    _float_kernel(input, "mish_cpu")
    return _maybe_inplace(input, inplace, lambda x: x * _fg.tanh(softplus(x)), "Mish")


def softplus(input, beta=1.0, threshold=20.0):
    """logaddexp(beta x, 0) / beta (the logaddexp card: smooth to every order), x itself where
    beta x > threshold. (At beta x == threshold exactly torch's double backward, which tests
    beta x < threshold, gives 0 where this gives the softplus branch's sigmoid'(threshold) beta.)"""
    _float_kernel(input, "softplus_cpu", "biuc")

    def f(a):
        z = a * beta if beta != 1 else a
        sp = _ew.logaddexp(z, _ew.zeros_like(z))
        sp = sp / beta if beta != 1 else sp
        return _ew.select(_ew.gt(z, _jnp.full_like(z, threshold)), a, sp)
    return _apply("Softplus", f, (input,))


def _softplus(z):
    """log(1 + exp(z)) on tensors, through the logaddexp card."""
    return _fg.logaddexp(z, _fg.zeros_like(z))


def softsign(input):
    return input / (1 + _fg.abs(input))


def _check_lambd(input, lambd):
    if lambd < 0:
        name = {"float32": "Float", "float64": "Double", "float16": "Half"}.get(str(input.dtype).split(".")[-1],
                                                                             "Float")
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype {name}, but found {lambd}")


def softshrink(input, lambd=0.5):
    _float_kernel(input, "softshrink_check")
    _check_lambd(input, lambd)
    # NaN falls through to x + lambd (NaN, gradient 1), as torch
    inside = (input >= -lambd) & (input <= lambd)
    return _fg.where(inside, input * 0, _fg.where(input > lambd, input - lambd, input + lambd))


def hardshrink(input, lambd=0.5):
    _float_kernel(input, "hardshrink_cpu")
    _check_lambd(input, lambd)
    # 0 (+0.0) on [-lambd, lambd], else x: NaN stays NaN with its gradient, as torch
    inside = (input >= -lambd) & (input <= lambd)
    return _fg.where(inside, _fg.zeros_like(input), input)


def tanhshrink(input):
    return input - _fg.tanh(input)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _fg.softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _fg.softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
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


# --- dropout ----------------------------------------------------------------------------------------
def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(shape, p, dtype):
    return _fg.empty(tuple(shape), dtype=dtype).bernoulli_(1.0 - p)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (training only)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "Dropout")
    scaled = _keep_mask(input.shape, p, input.dtype) / (1.0 - p)
    return _maybe_inplace(input, inplace, lambda x: x * scaled, "Dropout")


def _feature_dropout(input, p, training, inplace, alpha=False):
    """Dropout of whole channels: one draw per (N, C), broadcast over the remaining dimensions."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    if alpha:
        return _alpha_dropout_with_mask(input, p, shape, inplace)
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "FeatureDropout")
    scaled = _keep_mask(shape, p, input.dtype) / (1.0 - p)
    return _maybe_inplace(input, inplace, lambda x: x * scaled, "FeatureDropout")


def _unbatched(input, batched, fn):
    if batched:
        return fn(input)
    out = fn(input.unsqueeze(0))
    return out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2 and inplace:  # torch unsqueeze_s in place: the input itself comes back
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _unbatched(input, input.dim() == 3, lambda x: _feature_dropout(x, p, training, inplace))


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a "
                      "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
                      "please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an "
                      "error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    if nd != 5 and inplace:
        _feature_dropout(input.unsqueeze(0), p, training, True)
        return input
    return _unbatched(input, nd == 5, lambda x: _feature_dropout(x, p, training, inplace))


_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU: the value SELU saturates to


def _alpha_dropout_with_mask(input, p, mask_shape, inplace):
    if p == 1.0:
        return _maybe_inplace(input, inplace, lambda x: x * 0.0, "AlphaDropout")
    keep = _keep_mask(mask_shape, p, input.dtype)
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = (1 - keep) * (a * _ALPHA_PRIME) - a * _ALPHA_PRIME * p  # dropped units sit at SELU's floor
    scale = keep * a
    return _maybe_inplace(input, inplace, lambda x: x * scale + b, "AlphaDropout")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalising (SELU) mean and variance: dropped units take SELU's floor."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _alpha_dropout_with_mask(input, p, tuple(input.shape), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _feature_dropout(input, p, training, inplace, alpha=True)


# --- normalisation ---------------------------------------------------------------------------------
def _check_stat(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


_F32 = _np.dtype(_np.float32)


def _norm_dtypes(name, input, *params) -> bool:
    """torch's CPU rule for a normalisation's parameters (weight, bias[, running_mean, running_var]): all of the
    input's dtype, or all float32 with a float16 / bfloat16 input (then the result keeps the input's dtype and is
    computed in float32). Returns whether the input is float16 / bfloat16 (computed in float32)."""
    x = input._np_dtype()
    if x.kind != "f" and x.name != "bfloat16":
        raise NotImplementedError(f"\"{name}\" not implemented for '{DtypeName(x)}'")
    first = next((p for p in params if p is not None), None)
    if first is not None and first._np_dtype() != x:  # mixed: every parameter float32, the input half precision
        if any(p is not None and p._np_dtype() != _F32 for p in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.itemsize != 2:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    elif first is not None:
        for p in params:
            if p is not None and p._np_dtype() != x:
                raise _dtype_error("expected scalar type {0} but found {1}", input, p)
    return x.itemsize == 2


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {input.dim()}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_stat(name, t, c)
    if _norm_dtypes("batch_norm", input, weight, bias, running_mean, running_var):  # float16 / bfloat16
        return _batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                           eps).to(input.dtype)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    c = input.shape[1]
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size(input)}")
        mean = input.mean(dims)
        var = ((input - mean.reshape(shape)) ** 2).mean(dims)
        if running_mean is not None:
            with _fg.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
        if running_var is not None:
            with _fg.no_grad():
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, var = running_mean, running_var
    out = (input - mean.reshape(shape)) * _fg.rsqrt(var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalises each (sample, channel) over its spatial dimensions; running stats average the instances."""
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input to instance_norm (got {input.dim()}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_stat(name, t, c)
    if _norm_dtypes("batch_norm", input, weight, bias):  # (torch's rule over weight and bias, not the stats)
        return _instance_norm(input.float(), running_mean, running_var, weight, bias, use_input_stats, momentum,
                              eps).to(input.dtype)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    c = input.shape[1]
    dims = list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    if use_input_stats:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size(input)}")
        mean = input.mean(dims, keepdim=True)
        var = ((input - mean) ** 2).mean(dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with _fg.no_grad():
                m = mean.detach().reshape(input.shape[0], c)
                v = var.detach().reshape(input.shape[0], c) * (n / (n - 1))
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(m.mean(0) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(v.mean(0) * momentum)
        out = (input - mean) * _fg.rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        out = (input - running_mean.reshape(shape)) * _fg.rsqrt(running_var.reshape(shape) + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _check_normalized_shape(input, normalized_shape):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k > input.dim() or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*{', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    return list(range(input.dim() - k, input.dim()))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = _check_normalized_shape(input, normalized_shape)
    if _norm_dtypes("LayerNormKernelImpl", input, weight, bias):  # float16 / bfloat16: computed in float32
        return _layer_norm(input.float(), dims, weight, bias, eps).to(input.dtype)
    return _layer_norm(input, dims, weight, bias, eps)


def _layer_norm(input, dims, weight, bias, eps):
    mean = input.mean(dims, keepdim=True)
    var = ((input - mean) ** 2).mean(dims, keepdim=True)
    out = (input - mean) * _fg.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims (eps defaults to the dtype's eps), in
    the input's dtype whatever the weight's (torch: float16 / bfloat16 computed in float32, a weight of another
    dtype multiplied in the promoted dtype, the result cast back)."""
    dims = _check_normalized_shape(input, normalized_shape)
    if eps is None:
        eps = _fg.finfo(input.dtype).eps
    x = input.float() if input._np_dtype().itemsize == 2 and input.is_floating_point() else input
    out = x * _fg.rsqrt((x * x).mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out if out._np_dtype() == input._np_dtype() else out.to(input.dtype)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalises each group of channels of each sample over (channels in group, spatial dims)."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    if _norm_dtypes("GroupNormKernelImpl", input, weight, bias):  # float16 / bfloat16: computed in float32
        return _group_norm(input.float(), num_groups, weight, bias, eps).to(input.dtype)
    return _group_norm(input, num_groups, weight, bias, eps)


def _group_norm(input, num_groups, weight, bias, eps):
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    x = input.reshape(n, num_groups, -1)
    if x.shape[-1] == 0:
        raise ValueError(f"Expected more than 1 value per group, got input size {_size(input)}")
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    out = ((x - mean) * _fg.rsqrt(var + eps)).reshape(tuple(input.shape))
    shape = [1, -1] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha/size * sum of x^2 over a window of `size` neighbouring channels)^beta."""
    nd = input.dim()
    if nd < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {nd} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    pad_shape = lambda m: (input.shape[0], m) + tuple(input.shape[2:])  # noqa: E731
    padded = _fg.cat([_fg.zeros(pad_shape(size // 2), dtype=input.dtype), sq,
                      _fg.zeros(pad_shape((size - 1) // 2), dtype=input.dtype)], 1)
    win = padded.narrow(1, 0, c)
    for i in range(1, size):  # a sum over the window's offsets (size is small), vectorised over elements
        win = win + padded.narrow(1, i, c)
    div = (win * (alpha / size) + k) ** beta
    return input / div


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    denom = _fg.clamp(_fg.norm(input, p, dim, keepdim=True), min=eps).expand_as(input)
    r = input / denom
    if out is not None:
        out.copy_(r)
        return out
    return r


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) * max(||x2||, eps)) along dim (inputs broadcast)."""
    x1, x2 = _fg.broadcast_tensors(x1, x2)
    n1 = _fg.clamp(_fg.norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = _fg.clamp(_fg.norm(x2, 2, dim, keepdim=True), min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    nd = max(x1.dim(), x2.dim())
    return _fg.norm(x1 - x2 + eps, p, nd - 1 if nd else None, keepdim=keepdim)


def pdist(input, p=2):
    """The p-norm distances between all pairs of rows i < j of an (N, M) input, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    iu = _fg.triu_indices(n, n, 1)
    diff = input.index_select(0, iu[0]) - input.index_select(0, iu[1])
    return _fg.norm(diff, p, 1)


# --- embeddings ---------------------------------------------------------------------------------------
def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescales (in place, without gradient) the rows of weight that input refers to, to norm <= max_norm."""
    with _fg.no_grad():
        idx = _fg.unique(input.reshape(-1))
        rows = weight.index_select(0, idx)
        norms = _fg.norm(rows, norm_type, 1, keepdim=True)
        scale = _fg.where(norms > max_norm, max_norm / (norms + 1e-7), _fg.ones_like(norms))
        weight.index_copy_(0, idx, rows * scale)


def _scale_grad(out, flat, num, valid=None):
    """out unchanged in value, its gradient divided by how often each row's index occurs in flat (counting
    only the valid positions, when a mask is given)."""
    w = None if valid is None else valid.to(out.dtype)
    counts = _fg.bincount(flat, w, minlength=num).to(out.dtype)
    s = (1.0 / _fg.clamp(counts.index_select(0, flat), min=1)).unsqueeze(-1)
    d = out.detach()
    return d + (out - d) * s


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx += num
    return padding_idx


def _check_indices(dt, fn: str) -> None:
    """torch's embedding / embedding_bag take int64 or int32 indices only."""
    if dt != _fg.int64 and dt != _fg.int32:
        got = "CPUBoolType" if dt == _fg.bool else format(DtypeName(dt), "T")
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for {fn})")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of weight looked up by the integer indices in input (padding_idx rows get no gradient)."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (funcgrad has no sparse "
                                  "gradients); use sparse=False")
    _check_indices(input.dtype, "embedding")
    padding_idx = _padding_idx(padding_idx, weight.shape[0])
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    flat = input.reshape(-1).long()
    out = _fg.index_select(weight, 0, flat)
    if padding_idx is not None:
        keep = (flat != padding_idx).unsqueeze(-1)
        out = _fg.where(keep, out, out.detach())
    if scale_grad_by_freq:
        out = _scale_grad(out, flat, weight.shape[0])
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes of bags of embeddings: rows of a 2D input, or segments of a 1D input at offsets."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported (funcgrad has no sparse "
                                  "gradients); use sparse=False")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({tuple(input.shape)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    # (torch promotes 1-D indices and offsets to one dtype, then wants it int64 or int32)
    _check_indices(input.dtype if offsets is None or input.dim() != 1 else _fg.promote_types(input.dtype,
                                                                                            offsets.dtype),
                   "embedding_bag")
    if per_sample_weights is not None and per_sample_weights._np_dtype() != weight._np_dtype():
        raise _dtype_error("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           "'per_sample_weights'; but type {0:T} does not equal {1:T} (while checking arguments for "
                           "embedding_bag)", weight, per_sample_weights)
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type "
                             f"{type(offsets).__module__.split('.')[0]}.{type(offsets).__name__}")
        b, length = input.shape
        ids = input
        mask = _fg.ones((b, length), dtype=_fg.bool)
        psw = per_sample_weights
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        n = input.shape[0]
        offs = offsets.long()
        if offs.numel() and _concrete(offs) and int(offs[0].item()) != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {int(offs[0].item())}")
        if include_last_offset:
            starts, ends = offs[:-1], offs[1:]
        else:
            starts = offs
            ends = _fg.cat([offs[1:], _fg.tensor([n], dtype=_fg.int64)])
        lengths = _fg.clamp(ends, max=n) - starts
        b = starts.shape[0]
        length = int(lengths.max().item()) if b else 0
        pos = _fg.arange(length)
        mask = pos.unsqueeze(0) < lengths.unsqueeze(1)
        where_ = _fg.where(mask, starts.unsqueeze(1) + pos.unsqueeze(0), _fg.zeros((), dtype=_fg.int64))
        ids = input.long()[where_] if n else _fg.zeros((b, length), dtype=_fg.int64)
        psw = per_sample_weights[where_] if per_sample_weights is not None and n else per_sample_weights
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    pidx = _padding_idx(padding_idx, weight.shape[0])
    if pidx is not None:
        mask = mask & (ids != pidx)
    d = weight.shape[1]
    if ids.numel() == 0:
        return _fg.zeros((b, d), dtype=weight.dtype) + weight.sum() * 0
    emb = _fg.index_select(weight, 0, ids.reshape(-1))
    if scale_grad_by_freq:
        emb = _scale_grad(emb, ids.reshape(-1), weight.shape[0], mask.reshape(-1))
    emb = emb.reshape(tuple(ids.shape) + (d,))
    m = mask.unsqueeze(-1)
    count = mask.sum(1, keepdim=True)
    if mode == "max":
        picked = _fg.where(m, emb, _fg.full((), float("-inf"), dtype=emb.dtype)).max(1).values
        return _fg.where(count > 0, picked, _fg.zeros((), dtype=emb.dtype))
    w = mask.to(emb.dtype)
    if psw is not None:
        w = w * psw
    total = (emb * w.unsqueeze(-1)).sum(1)
    if mode == "sum":
        return total
    return total / _fg.clamp(count, min=1).to(emb.dtype)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _fg.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() and _concrete(tensor):
        lo, hi = int(tensor.min().item()), int(tensor.max().item())
        if lo < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = hi + 1
        elif hi >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    ar = _fg.arange(num_classes)
    return (tensor.unsqueeze(-1) == ar).long()


# --- regression losses ----------------------------------------------------------------------------------
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is None and reduction != "none" and input.shape == target.shape and input.dtype == target.dtype:
        # one recorded node, torch's MseLossBackward0
        red = _fg.numpy.mean if reduction == "mean" else _fg.numpy.sum
        return _apply("MseLoss", lambda a, b: red((a - b) ** 2), (input, target))
    return _weighted((input - target) ** 2, weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted(_fg.abs(input - target), weight, input, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - beta/2 elsewhere (L1 when beta == 0)."""
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    z = _fg.abs(d)
    # the square of d itself, not of |d|, so the second derivative at d == 0 is 1 / beta (torch's)
    loss = z if beta == 0 else _fg.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| <= delta, delta (|d| - delta/2) elsewhere."""
    _check_target_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    z = _fg.abs(d)
    loss = _fg.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta))  # (d * d: second derivative 1 at 0)
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of target ~ Poisson(exp(input)) (or Poisson(input) with log_input=False)."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = _fg.exp(input) - target * input
    else:
        loss = input - target * _fg.log(input + eps)
    if full:
        big = target > 1
        t = _fg.where(big, target, _fg.ones_like(target))  # keeps log() finite where the term is unused
        stirling = t * _fg.log(t) - t + 0.5 * _fg.log(2 * math.pi * t)
        loss = loss + _fg.where(big, stirling, _fg.zeros_like(stirling))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) [+ 0.5 log 2 pi], var clamped below at eps (gradient passes)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _fg.ones_like(input) * var
    elif _concrete(var) and bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    clamped = _fg.clamp(var.detach(), min=eps)
    var = var + (clamped - var.detach())  # clamp the value only: the gradient reaches var unchanged
    loss = 0.5 * (_fg.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input) pointwise (input holds log-probabilities); 'batchmean' divides by N."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = _fg.exp(target) * (target - input)
    else:
        loss = _fg.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# --- classification losses ----------------------------------------------------------------------------
def _to_last(x):
    """(N, C, d1, ...) -> (N*d1*..., C)."""
    if x.dim() > 2:
        x = x.movedim(1, -1)
    return x.reshape(-1, x.shape[-1])


def _check_class_target(input, target, name="nll_loss"):
    tdt = target._np_dtype()
    if tdt not in (_np.dtype(_np.int64), _np.dtype(_np.uint8)):
        from ..tensor._tensor import _legacy
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_legacy(tdt)}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return
    if target.dim() >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if input.dim() == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        want = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != want:
            raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")


def _check_bounds(t, valid, c):
    if _concrete(t) and t.numel():
        bad = valid & ((t < 0) | (t >= c))
        if bool(bad.any().item()):
            raise IndexError(f"Target {int(t[bad][0].item())} is out of bounds.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] (weighted), over (N, C) or (N, C, d1, ...) inputs; ignore_index entries drop out."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target(input, target)
    c = input.shape[0] if input.dim() == 1 else input.shape[1]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    _check_same_dtype("expected scalar type {0} but found {1}", input, weight)
    if weight is None and input.dim() == 2 and target.dim() == 1 and _concrete(input, target):
        return _nll_rows(input, target._v, ignore_index, reduction)
    if input.dim() == 1:
        input, target = input.unsqueeze(0), target.reshape(1)
        out_shape = ()
    else:
        out_shape = tuple(target.shape)
    logp = _to_last(input)
    t = target.reshape(-1)
    valid = t != ignore_index
    _check_bounds(t, valid, c)
    tc = _fg.where(valid, t, _fg.zeros_like(t))
    picked = -logp.gather(1, tc.unsqueeze(1)).squeeze(1)
    w = weight[tc] if weight is not None else _fg.ones_like(picked)
    w = w * valid.to(picked.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    if _concrete(target) and not bool(valid.any()):  # every target ignored: NaN, with torch's zero gradient
        return loss.sum() * 0.0 + float("nan")
    return loss.sum() / w.sum()


def _nll_rows(input, t, ignore_index, reduction):
    """nll_loss of (N, C) log-probabilities against N class indices t (a NumPy array), unweighted: one
    recorded op (the picked entries, masked where t == ignore_index, then the reduction)."""
    valid = t != ignore_index
    c = input.shape[1]
    tv = t[valid]
    if tv.size and (tv.min() < 0 or tv.max() >= c):
        raise IndexError(f"Target {int(tv[(tv < 0) | (tv >= c)][0])} is out of bounds.")
    all_valid = bool(valid.all())
    at = _np.stack([_np.arange(len(t)), t if all_valid else _np.where(valid, t, 0)], 1)  # (row, class) pairs
    mask = None if all_valid else valid.astype(input._np_dtype())
    count = _np.asarray(valid.sum(), input._np_dtype())

    def fn(lp):
        loss = -_gather(lp, at, (0, 1))
        if mask is not None:
            loss = loss * mask
        if reduction == "none":
            return loss
        total = _jnp.sum(loss)
        if reduction == "sum":
            return total
        if count == 0:  # every target ignored: NaN, with torch's zero gradient
            return total * _np.asarray(0.0, count.dtype) + _np.asarray(_np.nan, count.dtype)
        return total / count
    return _apply("NllLoss", fn, (input,))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim, then NLL against class indices or class probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if input.dim() == 1 else 1
    C = input.shape[cdim]
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, cdim)
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        wshape = [1] * input.dim()
        wshape[cdim] = C
        term = logp * target
        if weight is not None:
            term = term * weight.reshape(wshape)
        loss = -term.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C) if input.numel() else loss.sum() / 0.0
        return _reduce(loss, reduction)
    if target.is_floating_point() and target.dim() >= 1 and input.dim() >= 2 and target.dim() == input.dim():
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    if input.dim() == 1:
        logp, target = logp.unsqueeze(0), target.reshape(1)
    lp = _to_last(logp)
    t = target.reshape(-1)
    valid = (t != ignore_index).to(lp.dtype)
    smooth = -(lp * weight).sum(1) if weight is not None else -lp.sum(1)
    smooth = smooth * valid
    if reduction == "none":
        smooth = smooth.reshape(tuple(target.shape)) if input.dim() > 1 else smooth.reshape(())
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        if weight is not None:
            tc = _fg.where(t != ignore_index, t, _fg.zeros_like(t))
            smooth = smooth.sum() / (weight[tc] * valid).sum()
        else:
            smooth = smooth.sum() / valid.sum()
    return (1 - label_smoothing) * nll + (label_smoothing / C) * smooth


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the input size "
                         f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    _check_same_dtype("Found dtype {1} but expected {0}", input, target)
    if _concrete(input) and input.numel() and bool(((input < 0) | (input > 1)).any().item()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    def bce(x):
        return -(target * _fg.clamp(_fg.log(x), min=-100) + (1 - target) * _fg.clamp(_fg.log(1 - x), min=-100))
    loss = bce(input)
    if input.requires_grad and _fg.is_grad_enabled():
        # torch's input gradient is (x - t) / max(x (1 - x), 1e-12): the formula's own where x (1 - x) is
        # at least that, and (x - t) * 1e12 at and next to 0 and 1 (where the clamped logs give NaN / 0)
        edge = (input * (1 - input) < 1e-12).detach()
        if bool(edge.any()):
            safe = _fg.where(edge, _fg.full_like(input, 0.5), input)
            d = ((input - target) / _fg.clamp(input * (1 - input), min=1e-12)).detach()
            at_edge = bce(input.detach()) + (input - input.detach()) * d
            loss = _fg.where(edge, at_edge, bce(safe))
    if weight is not None:
        loss = loss * weight.expand(_fg.broadcast_shapes(tuple(weight.shape), tuple(target.shape)))
        if loss._np_dtype() != input._np_dtype():  # (torch multiplies in place: the input's dtype)
            loss = loss.to(input.dtype)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed stably; pos_weight scales the positive term per class."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    td = target._np_dtype()
    if td.kind in "iu":  # (torch's loss starts as 1 - target and is updated in place, so takes its dtype)
        raise _dtype_error("result type {0} can't be cast to the desired output type {1}", input, target)
    sp = _softplus(-input)  # log(1 + exp(-x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    if loss._np_dtype() != td and (td.kind == "f" or td.name == "bfloat16"):
        loss = loss.to(target.dtype)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), in the input's dtype (torch computes it in place on -input)."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = softplus(-target * input)
    if loss._np_dtype() != input._np_dtype() and input.is_floating_point():
        loss = loss.to(input.dtype)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class BCE with logits, averaged over classes, then reduced over samples."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (weighted by weight[y])."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    if x.dim() != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    t = target.reshape(-1)
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}")
    c = x.shape[1]
    _check_same_dtype("expected scalar type {0} but found {1}", input, weight)
    if _concrete(t) and t.numel() and bool(((t < 0) | (t >= c)).any().item()):
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    z = _fg.clamp(margin - xy + x, min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t].unsqueeze(1)
    not_y = _fg.arange(c).unsqueeze(0) != t.unsqueeze(1)
    loss = (z * not_y.to(z.dtype)).sum(1) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C; target lists class
    indices, ended by the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.is_floating_point():
        raise RuntimeError("expected scalar type Long but found Float")
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    t = target.reshape(x.shape) if input.dim() <= 1 else target
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    c = x.shape[1]
    valid = _fg.cumprod((t >= 0).long(), 1).bool()  # the targets before the first -1
    if _concrete(t) and t.numel() and bool((valid & (t >= c)).any().item()):
        raise RuntimeError("target out of range")
    tc = _fg.where(valid, t, _fg.zeros_like(t))
    classes = _fg.arange(c)
    is_target = ((tc.unsqueeze(2) == classes) & valid.unsqueeze(2)).any(1)  # (N, C)
    xj = x.gather(1, tc)  # (N, J)
    z = _fg.clamp(1 - xj.unsqueeze(2) + x.unsqueeze(1), min=0)  # (N, J, C)
    m = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = (z * m.to(z.dtype)).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# --- embedding / ranking losses -----------------------------------------------------------------------
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: expected input1 and input2 of the same 1D or 2D size, got "
                           f"{list(input1.shape)} and {list(input2.shape)}")
    d = input1.dim() - 1
    if input1.dim() == 2 and (target.dim() != 1 or target.shape[0] != input1.shape[0]) or \
            input1.dim() == 1 and target.dim() != 0:
        raise RuntimeError(f"{input1.dim()}D target tensor expects {input1.dim() - 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)} and target of size "
                           f"{list(target.shape)}")
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    mag = _fg.sqrt(((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps))
    cos = prod / mag
    zeros = _fg.zeros_like(cos)
    pos = _fg.where(target == 1, 1 - cos, zeros)
    neg = _fg.where(target == -1, _fg.clamp(cos - margin, min=0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")
    return _reduce(_fg.clamp(-target * (input1 - input2) + margin, min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x for target 1, max(0, margin - x) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _fg.zeros_like(input)
    loss = _fg.where(target != -1, input, zeros) + _fg.where(target != 1, _fg.clamp(margin - input, min=0), zeros)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin) with d the p-norm pairwise distance."""
    reduction = _reduction(size_average, reduce, reduction)
    a, po, ne = anchor.dim(), positive.dim(), negative.dim()
    if not (a == po == ne):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {po}D, and negative {ne}D inputs")
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = _fg.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce(_fg.clamp(margin + d_ap - d_an, min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """The triplet loss with any distance function (pairwise_distance by default)."""
    reduction = _reduction(None, None, reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = _fg.minimum(d_an, dist(positive, negative))
    return _reduce(_fg.clamp(margin + d_ap - d_an, min=0), reduction)


# Convolution, pooling and resampling live in their own module; attention in another.
from ._functional_conv import *  # noqa: E402,F401,F403
from ._functional_attention import *  # noqa: E402,F401,F403
from ._functional_more import *  # noqa: E402,F401,F403
