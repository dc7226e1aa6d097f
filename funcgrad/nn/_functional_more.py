"""More of torch.nn.functional: 3-d adaptive pooling and unpooling, power-average pooling (lp_pool1d/2d/3d),
channel_shuffle, affine_grid and grid_sample (bilinear/nearest, zeros/border/reflection padding, 4-d and 5-d)
and the CTC loss. All are compositions of differentiable Tensor ops, so autograd comes from the primitives."""
from __future__ import annotations

import math
import warnings

import numpy as np

import funcgrad as _fg
from ..tensor._argcheck import DtypeName
from ._functional_conv import (_adaptive_avg, _adaptive_max, _max_pool, _max_unpool, _ntuple, _shape,  # noqa: F401
                               avg_pool1d, avg_pool2d, avg_pool3d)

__all__ = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
           "max_pool3d_with_indices", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "channel_shuffle",
           "native_channel_shuffle", "affine_grid", "grid_sample", "ctc_loss", "GRID_SAMPLE_INTERPOLATION_MODES",
           "GRID_SAMPLE_PADDING_MODES"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


# --- pooling -------------------------------------------------------------------------------------------

def adaptive_avg_pool3d(input, output_size):
    """Average pooling to a fixed (D_out, H_out, W_out); None keeps that input size."""
    return _adaptive_avg("adaptive_avg_pool3d", "AdaptiveAvgPool3D", 3, input, output_size)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling to a fixed (D_out, H_out, W_out); indices are flat per (D, H, W) volume."""
    return _adaptive_max("adaptive_max_pool3d", "AdaptiveMaxPool3D", 3, input, output_size, return_indices)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _fg.nn.functional.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (indices flat per (D, H, W) volume)."""
    return _max_unpool("max_unpool3d", "MaxUnpool3D", 3, input, indices, kernel_size, stride, padding, output_size)


def _lp_pool(n, avg, input, norm_type, kernel_size, stride, ceil_mode):
    k = _ntuple(f"lp_pool{n}d", "kernel_size", kernel_size, n)
    if stride is not None:
        out = avg(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    return (_fg.sign(out) * _fg.relu(_fg.abs(out))).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x**p) ** (1/p)."""
    return _lp_pool(1, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(2, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(3, avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> (N, k*g, *): the channels of the g groups interleaved."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


# --- spatial transformers -------------------------------------------------------------------------------

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _base_coords(n, align_corners, dtype):
    if n <= 1:
        return _fg.zeros(max(n, 1), dtype=dtype)
    step = np.linspace(-1.0, 1.0, n)
    if not align_corners:
        step = step * (n - 1) / n
    return _fg.tensor(step, dtype=dtype)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps theta (N, 2, 3) (or (N, 3, 4)) applied
    to the normalised output coordinates in [-1, 1] (x first)."""
    ac = _align(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{list(theta.shape)}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = len(spatial)
    axes = [_base_coords(L, ac, theta.dtype) for L in spatial]  # D?, H, W
    mesh = _fg.meshgrid(*axes, indexing="ij")
    coords = [mesh[n - 1 - i] for i in range(n)]  # x (along W), y (along H), z (along D)
    base = _fg.stack(coords + [_fg.ones_like(coords[0])], -1)  # (*spatial, n + 1)
    flat = base.reshape(-1, n + 1)
    grid = _fg.matmul(flat, theta.transpose(1, 2))  # (N, prod spatial, n)
    return grid.reshape(size[0], *spatial, n)


def _unnormalize(coord, L, align_corners):
    if align_corners:
        return (coord + 1) * ((L - 1) / 2)
    return ((coord + 1) * L - 1) / 2


def _reflect(x, twice_low, twice_high):
    """x reflected (repeatedly) into [twice_low / 2, twice_high / 2], differentiably (slope +-1)."""
    if twice_high <= twice_low:
        return _fg.zeros_like(x)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = _fg.abs(x - lo)
    flips = _fg.floor(d / span).detach()
    extra = d - flips * span
    even = _fg.remainder(flips, 2) == 0
    return _fg.where(even, extra + lo, span - extra + lo)


def _source_coord(coord, L, padding_mode, align_corners):
    return _pad_coord(_unnormalize(coord, L, align_corners), L, padding_mode, align_corners)


def _pad_coord(x, L, padding_mode, align_corners):
    """A source coordinate moved into [0, L - 1] by the padding mode (unchanged for 'zeros')."""
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (L - 1)) if align_corners else _reflect(x, -1, 2 * L - 1)
    if padding_mode in ("border", "reflection"):
        # clipped, with torch's gradient: 1 strictly inside, 0 on and beyond the borders
        x = _fg.where((x > 0) & (x < L - 1), x, _fg.clamp(x, 0, L - 1).detach())
    return x


def _cubic_weights(t, A=-0.75):
    """The four cubic-convolution weights (A = -0.75, as torch's bicubic) of taps at -1, 0, 1, 2 from t in [0, 1)."""
    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input (N, C, [D,] H, W) at grid (N, [D_out,] H_out, W_out, 2|3) of normalised (x, y[, z]) points
    in [-1, 1], with bilinear/trilinear, nearest or (4-D only) bicubic interpolation and zeros/border/reflection
    padding."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    ac = _align(align_corners)
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    n = input.dim() - 2
    if grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input._np_dtype() != grid._np_dtype():
        raise RuntimeError(f"expected scalar type {DtypeName(input.dtype)} but found {DtypeName(grid.dtype)}")
    N, C = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])  # (D,) H, W
    out_sp = tuple(grid.shape[1:-1])
    P = math.prod(out_sp)
    flat_in = input.reshape(N, C, -1)
    g = grid.reshape(N, P, n)
    # source coordinates per spatial dim, in the input's dim order (grid's last axis is x, y, z = W, H, D)
    if mode == "bicubic":  # padding applies to each tap of the 4 x 4 neighbourhood, not to the point itself
        src = [_unnormalize(g[..., n - 1 - i], sizes[i], ac) for i in range(n)]
    else:
        src = [_source_coord(g[..., n - 1 - i], sizes[i], padding_mode, ac) for i in range(n)]

    def gather(idxs):
        valid = None
        flat = None
        for i, ix in enumerate(idxs):
            ok = (ix >= 0) & (ix <= sizes[i] - 1)
            valid = ok if valid is None else valid & ok
            ic = _fg.clamp(ix, 0, sizes[i] - 1).long()
            flat = ic if flat is None else flat * sizes[i] + ic
        vals = _fg.gather(flat_in, 2, flat.unsqueeze(1).expand(N, C, P))
        return vals * valid.unsqueeze(1).to(input.dtype)

    if mode == "nearest":
        out = gather([_fg.round(s).detach() for s in src])
        if grid.requires_grad:  # torch's output stays connected to the grid, with a zero gradient
            for s in src:
                r = _fg.round(s)
                out = out * (1 + (r - r.detach())).unsqueeze(1)
    elif mode == "bicubic":
        lo = [_fg.floor(s).detach() for s in src]
        wts = [_cubic_weights(s - f) for s, f in zip(src, lo)]
        out = None
        for a in range(4):      # H taps
            for b in range(4):  # W taps
                taps = [_pad_coord(lo[0] + (a - 1), sizes[0], padding_mode, ac),
                        _pad_coord(lo[1] + (b - 1), sizes[1], padding_mode, ac)]
                term = gather([_fg.floor(t.detach()) for t in taps]) * (wts[0][a] * wts[1][b]).unsqueeze(1)
                out = term if out is None else out + term
    else:
        lo = [_fg.floor(s).detach() for s in src]
        frac = [s - f for s, f in zip(src, lo)]
        out = None
        for corner in range(2 ** n):
            bits = [(corner >> (n - 1 - i)) & 1 for i in range(n)]
            w = None
            for i, b in enumerate(bits):
                wi = frac[i] if b else 1 - frac[i]
                w = wi if w is None else w * wi
            term = gather([lo[i] + bits[i] for i in range(n)]) * w.unsqueeze(1)
            out = term if out is None else out + term
    return out.reshape(N, C, *out_sp)


# --- CTC -------------------------------------------------------------------------------------------------------

def _lse(xs):
    """logsumexp over a list of same-shaped tensors, -inf (with no NaN gradient) where all are -inf."""
    st = _fg.stack(xs, 0)
    m = st.max(0).values.detach()
    dead = _fg.isinf(m) & (m < 0)
    safe_m = _fg.where(dead, _fg.zeros_like(m), m)
    st = _fg.where(dead.unsqueeze(0), _fg.zeros_like(st), st)
    r = _fg.log(_fg.exp(st - safe_m).sum(0)) + safe_m
    return _fg.where(dead, _fg.full_like(r, -math.inf), r)


def _as_lengths(v, n, what):
    if isinstance(v, _fg.Tensor):
        v = v.tolist()
    v = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
    if len(v) != n:
        raise RuntimeError(f"Expected {what} to have value at most {n}, but got {len(v)}")
    return v


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss: -log of the total probability of all alignments of each
    target with its input (log_probs (T, N, C) or (T, C), log-softmax outputs), by the forward recursion."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    for name, v in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(v, _fg.Tensor) and v._np_dtype().kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
    if log_probs.dtype != _fg.float32 and log_probs.dtype != _fg.float64:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{DtypeName(log_probs.dtype)}'")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    T, N, Cn = lp.shape
    if not 0 <= blank < Cn:
        raise RuntimeError("blank must be in label range")
    il = _as_lengths(input_lengths, N, "input_lengths")
    tl = _as_lengths(target_lengths, N, "target_lengths")
    tgt = targets.tolist()
    if not batched:  # one sequence
        seqs = [tgt[:tl[0]]]
    elif targets.dim() == 1:  # the targets concatenated
        offs = np.concatenate([[0], np.cumsum(tl)]).astype(int)
        seqs = [tgt[offs[b]:offs[b + 1]] for b in range(N)]
    else:  # (N, S_max), padded
        seqs = [tgt[b][:tl[b]] for b in range(N)]
    losses = []
    for b in range(N):
        Tb, seq = il[b], seqs[b]
        if Tb > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {Tb} (while "
                               f"checking arguments for ctc_loss_cpu)")
        ext = [blank]
        for c in seq:
            ext += [int(c), blank]
        S = len(ext)
        emit = lp[:Tb, b, :].index_select(1, _fg.tensor(ext, dtype=_fg.int64))  # (Tb, S)
        skip = _fg.tensor([s >= 2 and ext[s] != blank and ext[s] != ext[s - 2] for s in range(S)])
        ninf = _fg.full((1,), -math.inf, dtype=lp.dtype)
        init = np.full(S, -np.inf)
        init[:2] = 0.0
        alpha = emit[0] + _fg.tensor(init, dtype=lp.dtype) if Tb else None
        for t in range(1, Tb):
            a1 = alpha
            a2 = _fg.cat([ninf, alpha[:-1]])
            a3 = _fg.where(skip, _fg.cat([ninf, ninf, alpha[:-2]]) if S > 2 else _fg.full_like(alpha, -math.inf),
                           _fg.full_like(alpha, -math.inf))
            alpha = _lse([a1, a2, a3]) + emit[t]
        if alpha is None:
            loss = _fg.tensor(0.0 if S == 1 else math.inf, dtype=lp.dtype)
        else:
            loss = -_lse([alpha[-1], alpha[-2]] if S > 1 else [alpha[-1]])
        if Tb and lp.requires_grad and _fg.is_grad_enabled():
            # torch's gradient for log_probs is that of the logits under a log_softmax: exp(log_probs) times
            # the loss's cotangent is added for t < input_length (through log_softmax it cancels, so chains
            # through it are unchanged). A term of value 0 carries it.
            seg = lp[:Tb, b, :]
            d = seg.detach()
            loss = loss + (d.exp() * _fg.where(_fg.isfinite(d), seg - d, _fg.zeros_like(d))).sum()
        if zero_infinity:
            loss = _fg.where(_fg.isinf(loss), _fg.zeros_like(loss), loss)
        losses.append(loss)
    out = _fg.stack(losses)
    if reduction == "none":
        return out if batched else out[0]
    if reduction == "sum":
        return out.sum()
    lens = _fg.tensor([max(v, 1) for v in tl], dtype=lp.dtype)
    return (out / lens).mean()


_ = _max_pool, _shape


# --- fractional max pooling ------------------------------------------------------------------------------

def _fractional_starts(L, k, o, u):
    """Window starts along one dim for the pseudo-random sample u in [0, 1) (Graham's fractional pooling)."""
    if o == 1:
        return np.array([L - k])
    alpha = (L - k) / (o - 1)
    starts = [int((i + u) * alpha) - int(u * alpha) for i in range(o - 1)] + [L - k]
    return np.asarray(starts)


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    op = f"fractional_max_pool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{op}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    N, C = x.shape[0], x.shape[1]
    sizes = tuple(x.shape[2:])
    k = _ntuple(op, "kernel_size", kernel_size, n)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        ratio = _ntuple(op, "output_ratio", output_ratio, n) if not isinstance(output_ratio, (tuple, list)) and \
            float(output_ratio).is_integer() else (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                                                   else (output_ratio,) * n)
        outs = tuple(int(L * r_) for L, r_ in zip(sizes, ratio))
    else:
        outs = _ntuple(op, "output_size", output_size, n)
    for L, ki, oi in zip(sizes, k, outs):
        if oi + ki - 1 > L:
            raise RuntimeError(f"{op}(): pool size {ki} and output size {oi} are too large for input size {L}")
    if _random_samples is None:
        samples = _fg.rand(N, C, n, dtype=x.dtype)
    else:
        samples = _random_samples
    su = samples.detach().numpy().reshape(N, C, n).astype(np.float64)
    K = math.prod(k)
    P = math.prod(outs)
    idx = np.zeros((N, C, P, K), np.int64)
    for b in range(N):
        for c in range(C):
            # (torch's samples are ordered (W, H) in 2-d but (T, H, W) in 3-d)
            starts = [_fractional_starts(sizes[i], k[i], outs[i], su[b, c, n - 1 - i if n == 2 else i])
                      for i in range(n)]
            pos = [s_[:, None] + np.arange(ki)[None, :] for s_, ki in zip(starts, k)]  # (o_i, k_i)
            flat = np.zeros((), np.int64)
            for i in range(n):
                shp = [1] * (2 * n)
                shp[i], shp[n + i] = pos[i].shape
                flat = flat * sizes[i] + pos[i].reshape(shp)
            idx[b, c] = flat.reshape(P, K)
    vals = _fg.gather(x.reshape(N, C, -1), 2, _fg.tensor(idx.reshape(N, C, P * K))).reshape(N, C, P, K)
    best = vals.argmax(-1, keepdim=True)
    out = _fg.gather(vals, 3, best).reshape(N, C, *outs)
    ind = _fg.tensor(np.take_along_axis(idx, best.numpy(), 3).reshape(N, C, *outs))
    if not batched:
        out, ind = out.squeeze(0), ind.squeeze(0)
    return (out, ind) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max pooling over pseudo-randomly placed windows reaching a fixed output size (Graham 2014)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


__all__ += ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d_with_indices"]
