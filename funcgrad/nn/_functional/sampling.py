"""torch.nn.functional's padding and resampling: pad, interpolate/upsample, pixel (un)shuffle,
channel_shuffle, affine_grid and grid_sample."""
from __future__ import annotations

import math
import warnings
import numpy as np
from typing import Optional, Sequence

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes (see tensor/_jnp.py)
from ..._src.interpreters import custom_vjp, vjp
from ..._src.prims.shape import pad as _lax_pad
from ..._torch._argcheck import DtypeName
from ..._torch._dispatch import _apply
from .common import _np_dtype
from .pooling import _adaptive_avg

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "channel_shuffle",
           "native_channel_shuffle", "affine_grid", "grid_sample"]



# --- padding ----------------------------------------------------------------------------------------
_PAD_NAMES = {"reflect": "ReflectionPad", "replicate": "ReplicationPad", "circular": "CircularPad"}


def _pad_index(mode, size, lo, hi, dim, shape, pairs):
    """Source indices (into the original axis) of an axis cropped by negative pads, then padded by mode."""
    c0, c1 = max(-lo, 0), max(-hi, 0)
    n = size - c0 - c1
    lo, hi = max(lo, 0), max(hi, 0)
    if mode == "reflect" and (lo >= size or hi >= size):
        raise RuntimeError(f"Padding size should be less than the corresponding input dimension, but got: "
                           f"padding {pairs} at dimension {dim} of input {list(shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if n <= 0 and (lo or hi):
        raise RuntimeError(f"pad: input of shape {list(shape)} is empty at dimension {dim} after cropping, "
                           f"cannot {mode}-pad it")
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        j = np.where(j >= n, 2 * (n - 1) - j, j)
    elif mode == "replicate":
        j = np.clip(j, 0, n - 1)
    else:
        j = j % n
    return (j + c0).astype(np.int64)


def pad(input, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None):
    """Pads the last len(pad)//2 dims (pad lists (left, right) for the last dim first); negative pads crop.

    mode: 'constant' (fill value, default 0), 'reflect', 'replicate' or 'circular'."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    m = len(pad) // 2
    if m > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    shape = tuple(input.shape)
    nd = len(shape)
    pairs = [(0, 0)] * (nd - m) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(m))]
    if mode == "constant":
        for d, ((lo, hi), s) in enumerate(zip(pairs, shape)):
            if s + lo + hi < 0:
                raise RuntimeError(f"pad: padding {(lo, hi)} at dimension {d} of input {list(shape)} leaves a "
                                   "negative size")
        if all(p == (0, 0) for p in pairs):
            return input.clone()
        dt = _np_dtype(input)
        fill = np.asarray(0 if value is None else value).astype(dt)
        cfg = [(lo, hi, 0) for lo, hi in pairs]
        return _apply("ConstantPadNd", lambda a: _lax_pad(a, _jnp.asarray(fill), cfg), (input,))
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if m not in (1, 2, 3) or nd not in (m + 1, m + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    takes = []
    for d in range(nd - m, nd):
        lo, hi = pairs[d]
        if (lo, hi) != (0, 0):
            takes.append((d, _pad_index(mode, shape[d], lo, hi, d, shape, (lo, hi))))

    def fn(a):
        for d, idx in takes:
            a = _jnp.take(a, idx, axis=d)
        return a
    return _apply(f"{_PAD_NAMES[mode]}{m}D", fn, (input,))


# --- resampling -------------------------------------------------------------------------------------
_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _nearest_index(L, o, scale, exact):
    """torch's nearest source index (float32 arithmetic, as its CPU kernel)."""
    dst = np.arange(o, dtype=np.float32)
    sc = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(L) / np.float32(o)
    if exact:
        src = np.floor((dst + np.float32(0.5)) * sc).astype(np.int64)
    elif o == L:
        return np.arange(o)
    elif o == 2 * L:
        return np.arange(o) >> 1
    else:
        src = np.floor(dst * sc).astype(np.int64)
    return np.minimum(src, L - 1)


def _source_coords(L, o, scale, align_corners, cubic, ct):
    """Fractional source coordinate of each output element (torch's area_pixel_compute_source_index)."""
    dst = np.arange(o, dtype=ct)
    if align_corners:
        sc = ct(L - 1) / ct(o - 1) if o > 1 else ct(0)
        return dst * sc
    sc = ct(1.0 / scale) if scale is not None and scale > 0 else ct(L) / ct(o)
    src = sc * (dst + ct(0.5)) - ct(0.5)
    return src if cubic else np.maximum(src, ct(0))


def _cubic_weights(t, A=-0.75):
    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _interp_taps(mode, L, o, scale, align_corners, dt):
    """(list of (index array, weight array or None)) whose weighted sum resamples one axis."""
    if mode in ("nearest", "nearest-exact"):
        return [(_nearest_index(L, o, scale, mode == "nearest-exact"), None)]
    ct = np.float64 if dt == np.float64 else np.float32
    src = _source_coords(L, o, scale, align_corners, mode == "bicubic", ct)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0).astype(ct)
    if mode == "bicubic":
        ws = _cubic_weights(t)
        return [(np.clip(i0 - 1 + j, 0, L - 1), np.asarray(w, dt)) for j, w in enumerate(ws)]
    i1 = np.minimum(i0 + 1, L - 1)
    return [(i0, np.asarray(1 - t, dt)), (i1, np.asarray(t, dt))]


def _aa_filter(mode, x):
    """torch's antialiasing filters: the triangle (bilinear) and Keys' cubic with a = -0.5 (bicubic, as PIL)."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0).astype(x.dtype)
    a = x.dtype.type(-0.5)
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, c1, np.where(x < 2, c2, 0)).astype(x.dtype)


def _aa_taps(mode, L, o, scale, align_corners, dt):
    """torch's antialiased taps of one axis (HelperInterpBase._compute_weights_aa): the filter widened by the
    scale when downsampling, centred on scale * (i + 0.5), its weights normalised to sum to 1; in dt's precision
    where torch's scalar_t is, in double where its C++ mixes in a double. Returns ([(index, weight)] per tap,
    the mask of each tap's valid outputs or None)."""
    ct = dt.type
    if align_corners:
        sc = ct(L - 1) / ct(o - 1) if o > 1 else ct(0)
    else:
        sc = ct(1.0 / scale) if scale is not None and scale > 0 else ct(L) / ct(o)
    half = {"bilinear": 1.0, "bicubic": 2.0}[mode]
    support = ct(half * float(sc)) if sc >= 1.0 else ct(half)
    width = int(math.ceil(support)) * 2 + 1
    invscale = ct(1.0 / float(sc)) if sc >= 1.0 else ct(1.0)
    i = np.arange(o)
    center = (np.float64(sc) * (i + 0.5)).astype(ct)
    xmin = np.maximum(((center - support).astype(np.float64) + 0.5).astype(np.int64), 0)
    xsize = np.minimum(((center + support).astype(np.float64) + 0.5).astype(np.int64), L) - xmin
    xsize = np.clip(xsize, 0, width)
    j = np.arange(width)[:, None]
    pos = (j + xmin).astype(ct) - center  # (int64 - scalar_t is scalar_t)
    w = _aa_filter(mode, ((pos.astype(np.float64) + 0.5) * np.float64(invscale)).astype(ct))
    valid = j < xsize
    w = np.where(valid, w, ct(0))
    total = np.zeros(o, ct)
    for k in range(width):  # (summed in order, as torch's loop)
        total = (total + w[k]).astype(ct)
    w = np.where(total != 0, w / np.where(total != 0, total, ct(1)), w).astype(ct)
    idx = np.minimum(j + xmin, L - 1)
    return [(idx[k], w[k], None if valid[k].all() else valid[k]) for k in range(width)]


def _aa_resample(a, passes):
    """The separable weighted sums: per (axis, taps) pass, the sum over the taps in order of gathered slices
    times their weights (a tap past an output's window reads nothing: no 0 * inf)."""
    for ax, taps in passes:
        acc = None
        for idx, w, m in taps:
            v = _jnp.take(a, idx, axis=ax) * _jnp.asarray(w)
            if m is not None:
                v = _jnp.where(_jnp.asarray(m), v, _jnp.zeros((), v.dtype))
            acc = v if acc is None else acc + v
        a = acc
    return a


def _interpolate_aa(input, mode, outs, scales, align_corners):
    """interpolate(..., antialias=True) of an (N, C, H, W) input: torch's separable antialiased resampling,
    the width first, then the height, each a weighted sum over the taps in order.

    torch's forward kernel skips an axis whose size is unchanged and, when the output's width is 1, gives every
    output row the first row's taps; its backward kernel is the adjoint of the plain resampling of both axes
    (so at a scale_factor that keeps a size, or a width of 1, the gradient is not the forward's): a custom vjp
    gives the same pair."""
    dt = _np_dtype(input)
    if dt not in (np.float32, np.float64):
        raise NotImplementedError(f"\"compute_index_ranges_weights\" not implemented for '{DtypeName(dt)}'")
    if any(o <= 0 for o in outs):
        spatial = list(input.shape[2:])
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output ({', '.join(map(str, outs))})")
    full, fwd = [], []
    for ax in (3, 2):
        L, o = input.shape[ax], outs[ax - 2]
        sc = scales[ax - 2] if scales is not None else None
        shp = [1, 1, 1, 1]
        shp[ax] = o
        taps = _aa_taps(mode, L, o, sc, align_corners, np.dtype(dt))
        full.append((ax, [(idx, w.reshape(shp), None if m is None else m.reshape(shp)) for idx, w, m in taps]))
        if L == o:
            continue
        if ax == 2 and outs[1] == 1:  # (every row the first's)
            taps = [(np.full_like(idx, idx[0]), np.full_like(w, w[0]), None if m is None or m[0] else
                     np.zeros_like(m)) for idx, w, m in taps]
        fwd.append((ax, [(idx, w.reshape(shp), None if m is None else m.reshape(shp)) for idx, w, m in taps]))

    @custom_vjp
    def resample(a):
        return _aa_resample(a, fwd) if fwd else a + _jnp.zeros((), a.dtype)

    def resample_fwd(a):
        return resample(a), None

    def resample_bwd(_, g):
        return (vjp(lambda a: _aa_resample(a, full), _jnp.zeros(input.shape, dt))[1](g)[0],)
    resample.defvjp(resample_fwd, resample_bwd)
    resample.records_on_a_tape = True  # (traced, so that the custom rule is recorded: eagerly it is the forward)
    kind = "Bilinear" if mode == "bilinear" else "Bicubic"
    return _apply(f"Upsample{kind}2DAa", resample, (input,))


def _as_list(v, n, what, spatial, label):
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            of = "shape " if what != "output size" else ""
            raise ValueError(f"Input and {what} must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and {what} of {of}{tuple(v)}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"{what} in ({label}1, {label}2, ...,{label}K) format.")
        return list(v)
    return [v] * n


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None, antialias: bool = False):
    """Resizes (N, C, *spatial) input to size or by scale_factor; modes nearest, nearest-exact, linear,
    bilinear, bicubic, trilinear (separable, one gather per tap and axis) and area (adaptive average)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    n = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        outs = [int(v) for v in _as_list(size, n, "output size", spatial, "o")]
        scales = None
    elif scale_factor is not None:
        scales = [float(v) for v in _as_list(scale_factor, n, "scale_factor", spatial, "s")]
        outs = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and outs is None:
        recompute_scale_factor = True
    if outs is None:
        outs = [int(math.floor(float(L) * sc)) for L, sc in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = None
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
                             "requires a 4-D tensor as input")
        return _interpolate_aa(input, mode, outs, scales, align_corners)
    known = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
    if mode in _LINEAR_DIMS and input.dim() != _LINEAR_DIMS[mode] + 2 and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {_LINEAR_DIMS[mode] + 2}D input")
    if input.dim() not in (3, 4, 5) or mode not in known:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: {_INTERP_MODES} (got {mode})")
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(map(str, spatial))}) and output ({', '.join(map(str, outs))})")
    if mode == "area":
        return _adaptive_avg("adaptive_avg_pool", f"AdaptiveAvgPool{n}D", n, input, tuple(outs))
    dt = _np_dtype(input)
    axes = []
    for i, (L, o) in enumerate(zip(spatial, outs)):
        sc = scales[i] if scales is not None else None
        taps = _interp_taps(mode, L, o, sc, align_corners, dt)
        shp = [1] * (n + 2)
        shp[2 + i] = o
        axes.append((2 + i, [(idx, None if w is None else w.reshape(shp)) for idx, w in taps]))

    def fn(a):
        for ax, taps in axes:
            acc = None
            for idx, w in taps:
                v = _jnp.take(a, idx, axis=ax)
                if w is not None:
                    v = v * _jnp.asarray(w)
                acc = v if acc is None else acc + v
            a = acc
        return a
    kind = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear", "bilinear": "Bilinear",
            "bicubic": "Bicubic", "trilinear": "Trilinear"}[mode]
    return _apply(f"Upsample{kind}{n}D", fn, (input,))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _shuffle_factor(name: str, input, arg: str, factor) -> int:
    """pixel_(un)shuffle's factor as an int, after torch's checks: input has (*, C, H, W), factor > 0."""
    r = int(factor)
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {arg}, but got {r}")
    return r


def pixel_shuffle(input, upscale_factor: int):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = _shuffle_factor("pixel_shuffle", input, "upscale_factor", upscale_factor)
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    m = len(lead)
    perm = tuple(range(m)) + (m, m + 3, m + 1, m + 4, m + 2)

    def fn(a):
        a = _jnp.reshape(a, lead + (c // (r * r), r, r, h, w))
        return _jnp.reshape(_jnp.transpose(a, perm), lead + (c // (r * r), h * r, w * r))
    return _apply("PixelShuffle", fn, (input,))


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W), the inverse of pixel_shuffle."""
    r = _shuffle_factor("pixel_unshuffle", input, "downscale_factor", downscale_factor)
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    m = len(lead)
    perm = tuple(range(m)) + (m, m + 2, m + 4, m + 1, m + 3)

    def fn(a):
        a = _jnp.reshape(a, lead + (c, h // r, r, w // r, r))
        return _jnp.reshape(_jnp.transpose(a, perm), lead + (c * r * r, h // r, w // r))
    return _apply("PixelUnshuffle", fn, (input,))


GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}


GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


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
    """The n normalised output coordinates in [-1, 1], computed as torch computes them (linspace in theta's
    dtype, then scaled in that dtype): a grid point that lands on a pixel centre must land on it exactly as in
    torch, because bilinear sampling's gradient there takes the side floor() picks."""
    if n <= 1:
        return _fg.zeros(max(n, 1), dtype=dtype)
    step = _fg.linspace(-1.0, 1.0, n, dtype=dtype)
    if not align_corners:
        step = step * (n - 1) / n
    return step


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
