"""torch.nn.functional's normalisations: batch, instance, layer, RMS, group and local-response norm,
and normalize."""
from __future__ import annotations

import math

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from ..._src.prims import elementwise as _ew
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes
from ..._torch._dispatch import _apply

from ..._torch._argcheck import DtypeName, dtype_error as _dtype_error
from .common import _F32, _size

__all__ = ["batch_norm", "instance_norm", "layer_norm", "rms_norm", "group_norm", "local_response_norm",
           "normalize"]



# --- normalisation ---------------------------------------------------------------------------------
def _check_stat(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


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


def _check_channel_stats(op, input, running_mean, running_var, weight, bias):
    """batch_norm / instance_norm: the input has a channel dimension (dim 1) and each given per-channel
    tensor one entry per channel (torch's messages)."""
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or higher input to {op} (got {input.dim()}D input)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_stat(name, t, c)


def _affine(out, weight, bias, shape=None):
    """out * weight + bias, either of them optional, each reshaped to `shape` (per-channel: [1, -1, 1, ...])
    when given."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalisation with running statistics (updated in training, used in eval)."""
    _check_channel_stats("batch_norm", input, running_mean, running_var, weight, bias)
    if _norm_dtypes("batch_norm", input, weight, bias, running_mean, running_var):  # float16 / bfloat16
        return _batch_norm(input.float(), running_mean, running_var, weight, bias, training, momentum,
                           eps).to(input.dtype)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _moments(a, axes, n):
    """(mean, a - mean, the biased variance) over `axes` (kept), of n elements each: the sums divided by n."""
    mean = _jnp.sum(a, axis=axes, keepdims=True) / n
    d = a - mean
    return mean, d, _jnp.sum(d * d, axis=axes, keepdims=True) / n


def _normalised(name, fn, input, weight, bias, shape, stats=(), saved=False):
    """fn(input, *stats) normalised, then times weight and plus bias (reshaped to `shape` where given), recorded
    as one node named as torch's (NativeLayerNormBackward0, ...): the normalisation's derivative is that of
    its binds, as torch's native kernels' one formula. `saved`: fn returns (normalised, mean, variance), and so
    does this (outputs of the node too, as torch's native_batch_norm's)."""
    ts = (input,) + tuple(stats) + tuple(t for t in (weight, bias) if t is not None)
    k = 1 + len(stats)
    has_w, has_b = weight is not None, bias is not None

    def f(a, *rest):
        out = fn(a, *rest[:k - 1])
        if saved:
            out, mean, var = out
        if has_w:
            w = rest[k - 1]
            out = out * (w if shape is None else _jnp.reshape(w, shape))
        if has_b:
            b = rest[-1]
            out = out + (b if shape is None else _jnp.reshape(b, shape))
        return [out, mean, var] if saved else out
    r = _apply(name, f, ts)
    _absent_slots(r[0] if saved else r, weight, bias, stats)
    return r


def _absent_slots(out, weight, bias, stats=()):
    """out, its node told which of torch's (input, weight, bias) slots were not given (next_functions lists
    (None, 0) there) and that the running statistics it also read are no arguments of torch's node."""
    node = out.grad_fn
    if node is not None and (weight is None or bias is None or stats):
        node.absent_slots = tuple(i for i, t in ((1, weight), (2, bias)) if t is None)
        if stats:
            node.hidden_inputs = tuple(range(1, 1 + len(stats)))
    return out


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    c = input.shape[1]
    axes = (0,) + tuple(range(2, input.dim()))
    shape = (1, -1) + (1,) * (input.dim() - 2)
    if training:
        n = input.numel() // c if c else 0
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size(input)}")

        running = running_mean is not None or running_var is not None

        def norm(a):
            mean, d, var = _moments(a, axes, n)
            out = d * _ew.rsqrt(var + eps)
            return (out, mean, var) if running else out
        if not running:
            return _normalised("NativeBatchNorm", norm, input, weight, bias, shape)
        out, mean, var = _normalised("NativeBatchNorm", norm, input, weight, bias, shape, saved=True)
        with _no_grad():  # (the node's batch statistics)
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(mean.detach().reshape(-1) * momentum)
            if running_var is not None:
                running_var.mul_(1 - momentum).add_(var.detach().reshape(-1) * (momentum * n / (n - 1)))
        return out
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")

    def norm_eval(a, m, v):
        return (a - _jnp.reshape(m, shape)) * _ew.rsqrt(_jnp.reshape(v, shape) + eps)
    return _normalised("NativeBatchNorm", norm_eval, input, weight, bias, shape, (running_mean, running_var))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalises each (sample, channel) over its spatial dimensions; running stats average the instances."""
    _check_channel_stats("instance_norm", input, running_mean, running_var, weight, bias)
    if _norm_dtypes("batch_norm", input, weight, bias):  # (torch's rule over weight and bias, not the stats)
        return _instance_norm(input.float(), running_mean, running_var, weight, bias, use_input_stats, momentum,
                              eps).to(input.dtype)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    """torch's composition: a batch norm of the (1, N*C, ...) view with weight, bias and running statistics
    repeated N times (its graph: ViewBackward0 <- NativeBatchNormBackward0 <- ViewBackward0 / RepeatBackward0),
    the running statistics then the mean of their N updated copies."""
    b, c = input.shape[0], input.shape[1]
    if use_input_stats:
        n = 1
        for s in input.shape[2:]:
            n *= s
        if n <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size(input)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    rep = [None if t is None else t.repeat(b) for t in (weight, bias, running_mean, running_var)]
    x = input.contiguous().view((1, b * c) + tuple(input.shape[2:]))
    out = _batch_norm(x, rep[2], rep[3], rep[0], rep[1], use_input_stats, momentum, eps)
    with _no_grad():
        for stat, r in ((running_mean, rep[2]), (running_var, rep[3])):
            if stat is not None and use_input_stats:
                stat.copy_(r.view(b, c).mean(0))
    return out.view(input.shape)


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
    """Layer normalisation over the last len(normalized_shape) dims."""
    dims = _check_normalized_shape(input, normalized_shape)
    if _norm_dtypes("LayerNormKernelImpl", input, weight, bias):  # float16 / bfloat16: computed in float32
        return _layer_norm(input.float(), dims, weight, bias, eps).to(input.dtype)
    return _layer_norm(input, dims, weight, bias, eps)


def _layer_norm(input, dims, weight, bias, eps):
    axes = tuple(dims)
    n = math.prod(input.shape[i] for i in axes)

    def norm(a):
        _, d, var = _moments(a, axes, n)
        return d * _ew.rsqrt(var + eps)
    return _normalised("NativeLayerNorm", norm, input, weight, bias, None)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims (eps defaults to the dtype's eps), in
    the input's dtype whatever the weight's (torch: float16 / bfloat16 computed in float32, a weight of another
    dtype multiplied in the promoted dtype, the result cast back)."""
    dims = _check_normalized_shape(input, normalized_shape)
    if eps is None:
        eps = _fg.finfo(input.dtype).eps
    x = input.float() if input._np_dtype().itemsize == 2 and input.is_floating_point() else input
    out = _affine(x * _fg.rsqrt((x * x).mean(dims, keepdim=True) + eps), weight, None)
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
    m = input.numel() // (n * num_groups) if n * num_groups else 0
    if m == 0:
        raise ValueError(f"Expected more than 1 value per group, got input size {_size(input)}")
    full = tuple(input.shape)

    def norm(a):
        _, d, var = _moments(_jnp.reshape(a, (n, num_groups, m)), (2,), m)
        return _jnp.reshape(d * _ew.rsqrt(var + eps), full)
    return _normalised("NativeGroupNorm", norm, input, weight, bias, (1, -1) + (1,) * (input.dim() - 2))


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
