"""torch.nn.init: in-place initialisers drawing from funcgrad's global generator (or a given one).
Each runs under no_grad, so parameters stay leaves, and returns the tensor it filled."""
from __future__ import annotations

import math
import warnings

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..autograd import no_grad as _no_grad
from funcgrad._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)


def _no_op_if_empty(tensor) -> bool:
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def calculate_gain(nonlinearity, param=None):
    """The recommended gain (std scale) for a nonlinearity, as torch.nn.init.calculate_gain."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.shape[1]
    num_output_fmaps = tensor.shape[0]
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill tensor in place with draws from U(a, b), outside autograd.

    Examples:
        >>> import funcgrad as torch
        >>> w = torch.nn.init.uniform_(torch.empty(2, 3), -0.1, 0.1)
        >>> bool(((w >= -0.1) & (w < 0.1)).all())
        True
    """
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill tensor in place with draws from N(mean, std^2), outside autograd."""
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    """Fill tensor in place with the value val, outside autograd."""
    with _no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill tensor in place with ones, outside autograd."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill tensor in place with zeros, outside autograd."""
    with _no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot & Bengio's uniform init: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot & Bengio's normal init: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float:
    """He et al.'s standard deviation: gain(nonlinearity, a) / sqrt(fan), the fan that `mode` names."""
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He et al.'s uniform init: U(-b, b) with b = gain(nonlinearity, a) * sqrt(3 / fan), fan by mode.

    Examples:
        >>> import math
        >>> import funcgrad as torch
        >>> w = torch.nn.init.kaiming_uniform_(torch.empty(64, 32), a=math.sqrt(5))  # nn.Linear's weight init
        >>> bool((w.abs() <= 1 / math.sqrt(32)).all())
        True
    """
    if _no_op_if_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He et al.'s normal init: N(0, std^2) with std = gain(nonlinearity, a) / sqrt(fan), fan by mode."""
    if _no_op_if_empty(tensor):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) truncated to [a, b] by rejection, drawing what torch 2.13 draws: normals redrawn where out
    of [a, b] when the interval holds more than 30% of the mass, else uniforms on [a, b] accepted with
    probability pdf / pdf(mode) (a whole-tensor redraw per round, as torch)."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with _no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo = _fg.tensor(a, dtype=tensor.dtype).item()   # (the bounds as the tensor's dtype holds them)
            hi = _fg.tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                result = _fg.where(mask, _fg.empty_like(result).normal_(mean, std, generator=generator), result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def log_pdf(c):
            return c.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        candidates = _fg.empty_like(tensor)
        accept = _fg.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        log_pdf(candidates)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = _fg.where(pending, candidates, result)
                log_pdf(candidates)
                pending = _fg.where(pending, accept.uniform_(generator=generator).log_().gt(candidates), pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def eye_(tensor):
    """The identity matrix (ones on the main diagonal of a 2D tensor)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _no_grad():
        tensor.copy_(_fg.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """The Dirac delta for {3,4,5}D conv weights: each group's outputs copy its inputs at the kernel centre."""
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    n = min(out_per_group, sizes[1])
    with _no_grad():
        tensor.zero_()
        g = _fg.arange(groups).repeat_interleave(n)
        d = _fg.arange(n).repeat(groups)
        centre = tuple(_fg.full((groups * n,), s // 2, dtype=_fg.int64) for s in sizes[2:])
        tensor[(g * out_per_group + d, d) + centre] = 1.0
    return tensor


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (over the tensor flattened to rows x rest), from the QR of a normal draw."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _fg.empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator)
    if rows < cols:
        flat = flat.t()
    q, r = _jnp.linalg.qr(_jnp.asarray(flat.numpy()))
    q = _fg.from_numpy(np.array(q)) * _fg.sign(_fg.from_numpy(np.array(_jnp.diagonal(r))))  # unique: diag(r) > 0
    if rows < cols:
        q = q.t()
    with _no_grad():
        tensor.copy_(q.reshape(tuple(tensor.shape)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std^2) entries with a fraction `sparsity` of each column set to zero (the zeroed rows of each column
    from randperm of the default generator, as torch)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with _no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[_fg.randperm(rows)[:num_zeros], col] = 0
    return tensor


# --- torch's deprecated spellings without the trailing underscore (warn, then do the in-place version) ------

def _deprecated(meth):
    import functools
    import warnings

    new = globals()[meth.__name__]
    old_name = meth.__name__[:-1]

    @functools.wraps(new)
    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{meth.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
