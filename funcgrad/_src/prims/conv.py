"""Convolution: conv_general_dilated with JAX's lax signatures and semantics (1-D, 2-D, 3-D, ...).

The impl is im2col: the input is dilated and padded once into a channels-last buffer, every window
is read through one strided view, and each group is one matrix product (per example when the output
is (N, C, spatial...), so that it comes out contiguous in that layout). The derivatives are
convolutions again (JAX's transpose formulas), so every order of derivative and vmap composes.
"""
from __future__ import annotations

import ctypes
import math
import os
from collections import namedtuple

import numpy as np

from ..core import dtypes, threads
from ..core.array import get_aval
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import check_dtype, type_error, value_error
from .elementwise import convert_element_type
from .shape import full, reshape, rev, transpose

ConvDimensionNumbers = namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])
ConvDimensionNumbers.__doc__ = """Where each role lives in the operands, as in JAX.

lhs_spec = (batch dim, feature dim, spatial dims...), rhs_spec = (out-feature dim, in-feature dim,
spatial dims...), out_spec = (batch dim, feature dim, spatial dims...); the spatial dims of all three
are listed in one common order."""


# --- shared window arithmetic (also used by windowed.py) ------------------------------------------

def dilate_dim(d: int, dilation: int) -> int:
    """The size of a dimension of size d with dilation-1 holes between its elements."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def window_out_dim(size: int, window: int, stride: int) -> int:
    """How many windows of `window` fit in `size` at `stride` (0 if none)."""
    return 0 if size < window else (size - window) // stride + 1


def padtype_to_pads(in_shape, window_shape, window_strides, padding: str):
    """Explicit (lo, hi) pairs for padding 'SAME', 'SAME_LOWER' or 'VALID' (JAX's rule)."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) "
                         f"pairs, got {padding!r}")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max(0, (out - 1) * s + w - n)
        lo = total // 2 if kind == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return tuple(pads)


def explicit_padding(op: str, padding, in_sizes, window_sizes, window_strides, dims: str) -> tuple:
    """`padding` as (lo, hi) pairs, one per windowed dimension: a string by JAX's rule for the (dilated)
    window sizes, or a checked sequence of pairs (`dims` names the dimensions in the error)."""
    if isinstance(padding, str):
        return padtype_to_pads(in_sizes, window_sizes, window_strides, padding)
    try:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: padding must be 'SAME', 'VALID' or a sequence of (low, high) pairs, "
                        f"got {padding!r}") from None
    if len(padding) != len(in_sizes):
        raise TypeError(f"{op}: padding needs one (low, high) pair per {dims} dimension ({len(in_sizes)}), "
                        f"got {padding!r}")
    return padding


def vjp_lhs_padding(in_shape, window_shape, window_strides, out_shape, padding, lhs_dilation,
                    rhs_dilation):
    """Padding of the transposed convolution that maps an output cotangent back to the input."""
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window_shape, window_strides, out_shape, padding,
                                          lhs_dilation, rhs_dilation):
        kd = dilate_dim(k, rd)
        before = kd - lo - 1
        after = dilate_dim(n, ld) + kd - 1 - dilate_dim(o, s) - before
        pads.append((int(before), int(after)))
    return tuple(pads)


def vjp_rhs_padding(in_shape, window_shape, window_strides, out_shape, padding, lhs_dilation,
                    rhs_dilation):
    """Padding of the convolution of the input with the output cotangent that gives the kernel's."""
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window_shape, window_strides, out_shape, padding,
                                          lhs_dilation, rhs_dilation):
        hi = dilate_dim(o, s) - dilate_dim(n, ld) + dilate_dim(k, rd) - lo - 1
        pads.append((int(lo), int(hi)))
    return tuple(pads)


def pad_dilate(xp, x, config, fill=0):
    """x padded as lax.pad pads it: config[i] = (lo, hi, interior) per axis; negative lo/hi crop."""
    if all(c == (0, 0, 0) for c in config):
        return x
    grown = [max(lo, 0) + max(hi, 0) + dilate_dim(n, i + 1) for (lo, hi, i), n in zip(config, x.shape)]
    out = xp.full(grown, fill, dtype=x.dtype)
    dst = tuple(slice(max(lo, 0), max(lo, 0) + dilate_dim(n, i + 1), i + 1)
                for (lo, hi, i), n in zip(config, x.shape))
    out[dst] = x
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):
        out = out[tuple(slice(max(-lo, 0), g - max(-hi, 0)) for (lo, hi, _), g in zip(config, grown))]
    return out


def as_strided(xp, x, shape, strides):
    """A read-only strided view of x (a window view: no data is copied)."""
    if xp is np:
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def _ints(op, name, v, n, positive=True):
    try:
        t = tuple(int(i) for i in v)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a sequence of {n} ints, got {v!r}") from None
    if len(t) != n:
        raise TypeError(f"{op}: {name} must have one entry per spatial dimension ({n}), got {v!r}")
    if positive and any(i < 1 for i in t):
        raise ValueError(f"{op}: {name} entries must be positive, got {v!r}")
    return t


# --- dimension numbers ----------------------------------------------------------------------------

def conv_general_permutations(dimension_numbers):
    """Permutations (lhs_perm, rhs_perm, out_perm) for string specs like ('NHWC', 'HWIO', 'NHWC')."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b) in zip(dimension_numbers, pairs):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"conv_general_dilated: dimension_numbers spec {spec!r} must contain '{a}' "
                            f"and '{b}' exactly once, got {dimension_numbers}")
        if len(set(spec)) != len(spec):
            raise TypeError(f"conv_general_dilated: dimension_numbers spec {spec!r} repeats a letter")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"conv_general_dilated: dimension_numbers {dimension_numbers} must name the same "
                        "spatial dimensions in the lhs, rhs and output specs")

    def perm(spec, pair):
        sp = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            sp.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(sp)

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Normalise dimension_numbers (None, a ConvDimensionNumbers, or three spec strings) as JAX does."""
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    nd = len(lhs_shape)
    if nd != len(rhs_shape):
        raise TypeError(f"conv_general_dilated: lhs and rhs must have the same number of dimensions, got "
                        f"shapes {lhs_shape} and {rhs_shape}")
    if nd < 2:
        raise TypeError(f"conv_general_dilated: operands need a batch/feature pair of dimensions, got "
                        f"shapes {lhs_shape} and {rhs_shape}")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError("conv_general_dilated: dimension_numbers must be None, a ConvDimensionNumbers or a "
                        f"tuple of three spec strings, got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        for s in dimension_numbers:
            if len(s) != nd:
                raise TypeError(f"conv_general_dilated: dimension_numbers spec {s!r} has {len(s)} letters but "
                                f"the operands have {nd} dimensions (shapes {lhs_shape} and {rhs_shape})")
        return ConvDimensionNumbers(*conv_general_permutations(tuple(dimension_numbers)))
    try:
        specs = tuple(tuple(int(i) for i in s) for s in dimension_numbers)
    except TypeError:
        raise TypeError("conv_general_dilated: dimension_numbers must be None, a ConvDimensionNumbers or a "
                        f"tuple of three spec strings, got {dimension_numbers!r}") from None
    for s in specs:
        if sorted(s) != list(range(nd)):
            raise TypeError(f"conv_general_dilated: dimension_numbers {dimension_numbers} must each be a "
                            f"permutation of the {nd} dimensions")
    return ConvDimensionNumbers(*specs)


def conv_params(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                preferred_element_type=None) -> dict:
    """The card's normalised static params for a conv_general_dilated call (explicit pads, tuples)."""
    op = "conv_general_dilated"
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    window_strides = _ints(op, "window_strides", window_strides, n)
    lhs_dilation = (1,) * n if lhs_dilation is None else _ints(op, "lhs_dilation", lhs_dilation, n)
    rhs_dilation = (1,) * n if rhs_dilation is None else _ints(op, "rhs_dilation", rhs_dilation, n)
    padding = explicit_padding(op, padding, [lhs_shape[d] for d in dn.lhs_spec[2:]],
                               [dilate_dim(rhs_shape[d], r) for d, r in zip(dn.rhs_spec[2:], rhs_dilation)],
                               window_strides, "spatial")
    if isinstance(precision, list):
        precision = tuple(precision)
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    return dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dn,
                feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
                precision=precision, preferred_element_type=pet)


# --- the card -------------------------------------------------------------------------------------

def _conv_rule(lhs: ShapedArray, rhs: ShapedArray, *, window_strides, padding, lhs_dilation,
               rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
               precision=None, preferred_element_type=None) -> ShapedArray:
    op = "conv_general_dilated"
    check_dtype(op, lhs, "ifc")
    if lhs.dtype != rhs.dtype:
        type_error(op, f"lhs and rhs must share one dtype, got {lhs.str_short()} and {rhs.str_short()}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec)
    if lhs.ndim != nd or rhs.ndim != nd:
        type_error(op, f"lhs {lhs.str_short()} and rhs {rhs.str_short()} must both have {nd} dimensions "
                       f"for dimension_numbers {tuple(dimension_numbers)}")
    n = nd - 2
    if not (len(window_strides) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == n):
        type_error(op, f"window_strides, padding, lhs_dilation and rhs_dilation need {n} entries each, got "
                       f"{window_strides}, {padding}, {lhs_dilation}, {rhs_dilation}")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        value_error(op, f"feature_group_count ({G}) and batch_group_count ({B}) must be positive")
    if G > 1 and B > 1:
        value_error(op, f"at most one of feature_group_count ({G}) and batch_group_count ({B}) may be > 1")
    shapes = f"lhs {lhs.str_short()}, rhs {rhs.str_short()}"
    N, C = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    O, I = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if C != I * G:
        value_error(op, f"lhs feature dimension (size {C}) must equal the rhs input feature dimension "
                        f"(size {I}) times feature_group_count ({G}); got {shapes}")
    if O % G:
        value_error(op, f"rhs output feature dimension (size {O}) must be a multiple of "
                        f"feature_group_count ({G}); got {shapes}")
    if N % B or O % B:
        value_error(op, f"lhs batch dimension (size {N}) and rhs output feature dimension (size {O}) must "
                        f"be multiples of batch_group_count ({B}); got {shapes}")
    out = [0] * nd
    out[out_spec[0]], out[out_spec[1]] = N // B, O
    for i in range(n):
        padded = dilate_dim(lhs.shape[lhs_spec[2 + i]], lhs_dilation[i]) + sum(padding[i])
        if padded < 0:
            value_error(op, f"padding {padding} leaves a negative size in spatial dimension {i}; got {shapes}")
        k = dilate_dim(rhs.shape[rhs_spec[2 + i]], rhs_dilation[i])
        out[out_spec[2 + i]] = window_out_dim(padded, k, window_strides[i])
    dt = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(tuple(out), dt, lhs.weak_type and rhs.weak_type)


_FEW_CHANNELS = 4  # up to this many input channels, im2col reads (N, C, spatial...) in place


def _windows(xp, lhs, ks, window_strides, padding, lhs_dilation, rhs_dilation, kernel_first: bool):
    """((N, C), outs, windows) of lhs (N, C, spatial...) padded and dilated into a contiguous copy: outs is the
    output's spatial size for kernel size ks, windows a strided view (N, C) + ks + outs (kernel_first) or
    (N, C) + outs + ks of that copy (None when the output is empty)."""
    n = lhs.ndim - 2
    x = pad_dilate(xp, lhs, [(0, 0, 0), (0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)])
    x = xp.ascontiguousarray(x)
    outs = tuple(window_out_dim(x.shape[2 + i], dilate_dim(ks[i], rhs_dilation[i]), window_strides[i])
                 for i in range(n))
    if not math.prod(outs):
        return x.shape[:2], outs, None
    st = x.strides
    in_kernel = tuple(st[2 + i] * rhs_dilation[i] for i in range(n))
    in_output = tuple(st[2 + i] * window_strides[i] for i in range(n))
    shape, strides = (ks + outs, in_kernel + in_output) if kernel_first else (outs + ks, in_output + in_kernel)
    return x.shape[:2], outs, as_strided(xp, x, x.shape[:2] + shape, st[:2] + strides)


def _padded_channels_last(xp, lhs, lhs_spec, padding, lhs_dilation):
    """lhs (its dims named by lhs_spec) as a contiguous (N, *spatial, C) copy, dilated and padded."""
    x = xp.transpose(lhs, (lhs_spec[0],) + tuple(lhs_spec[2:]) + (lhs_spec[1],))
    x = pad_dilate(xp, x, [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)]
                   + [(0, 0, 0)])
    return xp.ascontiguousarray(x)


def _windows_last(xp, lhs, ks, window_strides, padding, lhs_dilation, rhs_dilation):
    """As _windows (kernel_first=False) from a channels-last copy of lhs: ((N, C), outs, windows) with the
    windows a strided view (N,) + ks + outs + (C,), whose rows copy in runs of a window row's channels."""
    n = lhs.ndim - 2
    x = _padded_channels_last(xp, lhs, tuple(range(n + 2)), padding, lhs_dilation)
    outs = tuple(window_out_dim(x.shape[1 + i], dilate_dim(ks[i], rhs_dilation[i]), window_strides[i])
                 for i in range(n))
    NC = (x.shape[0], x.shape[-1])
    if not math.prod(outs):
        return NC, outs, None
    st = x.strides
    return NC, outs, as_strided(xp, x, (NC[0],) + tuple(ks) + outs + (NC[1],),
                                (st[0],) + tuple(st[1 + i] * rhs_dilation[i] for i in range(n))
                                + tuple(st[1 + i] * window_strides[i] for i in range(n)) + (st[-1],))


_COLS_BYTES = 1 << 20  # the im2col columns are copied in blocks of the batch of about this many bytes


_heap_kept = False


def _keep_freed_heap() -> None:
    """Let glibc keep freed heap memory for reuse, as it does by itself once a program has freed a buffer
    of 32 MiB: mmap threshold 32 MiB, trim threshold 64 MiB (mallopt; glibc's dynamic-threshold maximum).
    Without a big buffer freed, glibc returns the top of the heap to the system whenever more than 2x
    its largest freed block is free there, so a training step whose arrays are small (im2col in blocks)
    but many page-faults its whole working set back each call (T2's jit step: 1554 faults, 1.1 ms of
    7). Once per process; nothing where the user tuned malloc (MALLOC_*_ variables) or off glibc."""
    global _heap_kept
    if _heap_kept:
        return
    _heap_kept = True
    if any(os.environ.get(v) for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                                       "MALLOC_MMAP_MAX_")):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc
        pass


def _batch_blocks(xp, n: int, per_example: int):
    """Slices of a batch of n examples whose im2col columns (per_example bytes each) take about _COLS_BYTES
    at a time (one slice: all of them, when they fit or off NumPy). Each block runs the whole batch's
    products (one per example, or their rows), so results are unchanged: only the peak memory is bounded,
    without another pass of padding or dispatch per block (nor a heap given back and refaulted per call:
    _keep_freed_heap)."""
    if xp is not np or n * per_example <= _COLS_BYTES:
        return [slice(0, n)]
    if not _heap_kept:
        _keep_freed_heap()
    step = max(1, _COLS_BYTES // max(per_example, 1))
    return [slice(s, min(s + step, n)) for s in range(0, n, step)]


def _conv_channels_first(xp, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, rhs_spec):
    """An (N, C, spatial...) -> (N, O, spatial...) convolution with few input channels (a network's
    first layer): the columns are gathered as (N, C * K, P) straight from the padded input, whose rows
    are contiguous runs (channels-last columns of 1-3 channels copy a few elements at a time), and one
    product per example gives the output in its layout."""
    O = rhs.shape[rhs_spec[0]]
    ks = tuple(rhs.shape[d] for d in rhs_spec[2:])
    (N, C), outs, win = _windows(xp, lhs, ks, window_strides, padding, lhs_dilation, rhs_dilation, True)
    if win is None:
        return xp.zeros((N, O) + outs, dtype=lhs.dtype)
    CK, P = C * math.prod(ks), math.prod(outs)
    w = xp.transpose(rhs, (rhs_spec[0], rhs_spec[1]) + tuple(rhs_spec[2:])).reshape(O, -1)
    if xp is np:  # BLAS threads by the size of one product (core/threads.py)
        threads.fit(O * CK * P)
    blocks = _batch_blocks(xp, N, CK * P * lhs.dtype.itemsize)
    if len(blocks) == 1:
        return xp.matmul(w, win.reshape(N, CK, P)).reshape((N, O) + outs)
    out = np.empty((N, O, P), np.result_type(w, lhs))
    for b in blocks:
        np.matmul(w, win[b].reshape(-1, CK, P), out=out[b])
    return out.reshape((N, O) + outs)


_KERNEL_GRAD = True


def _conv_kernel_grad(xp, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation):
    """The convolution a kernel's gradient is (conv_general_dilated's vjp for rhs): lhs, rhs and the
    output all laid out (feature, batch, spatial...), i.e. x (N, C, ...) and g (N, O, ...) of the
    forward convolution as they are. out[o, c, k] = sum_n sum_p g[n, o, p] x[n, c, k + p]: per n one
    product (O, P) @ (P, C * K) of g as it is with x's windows, then a sum over n. With few channels
    the windows are gathered channels-first straight from x (contiguous runs along its rows);
    otherwise from a channels-last copy of x, as rows p of columns (k, c) (runs of K_w * C elements,
    and a product BLAS runs faster), the (O, K, C) result transposed at the end. The windows are
    gathered for blocks of n at a time, and the sum over n runs in order across blocks (the unblocked
    sum's rounding)."""
    O = rhs.shape[1]
    ks = tuple(rhs.shape[2:])
    first = lhs.shape[1] <= _FEW_CHANNELS
    if first:
        (N, C), outs, win = _windows(xp, lhs, ks, window_strides, padding, lhs_dilation, rhs_dilation, False)
    else:
        (N, C), outs, win = _windows_last(xp, lhs, ks, window_strides, padding, lhs_dilation, rhs_dilation)
    if win is None:
        return xp.zeros((O, C) + outs, dtype=lhs.dtype)
    CP, K = C * math.prod(outs), math.prod(ks)
    g = xp.ascontiguousarray(rhs).reshape(N, O, K)
    if xp is np:
        threads.fit(O * CP * K)

    def cols(b):
        nb = b.stop - b.start
        return win[b].reshape(nb, CP, K).transpose(0, 2, 1) if first else win[b].reshape(nb, K, CP)

    def done(acc):
        if first:
            return acc.reshape((O, C) + outs)
        return xp.ascontiguousarray(xp.moveaxis(acc.reshape((O,) + outs + (C,)), -1, 1))

    blocks = _batch_blocks(xp, N, CP * K * lhs.dtype.itemsize)
    if len(blocks) == 1:
        return done(xp.matmul(g, cols(blocks[0])).sum(axis=0))
    step = blocks[0].stop
    prods = np.empty((step + 1, O, CP), np.result_type(g, lhs))  # row 0: the sum so far
    for i, b in enumerate(blocks):
        nb = b.stop - b.start
        np.matmul(g[b], cols(b), out=prods[1:nb + 1])
        acc = prods[1:nb + 1].sum(axis=0) if i == 0 else prods[:nb + 1].sum(axis=0)
        prods[0] = acc
    return done(acc)


def _conv_impl(xp):
    fit = threads.fit if xp is np else (lambda mac: None)  # BLAS threads by the size of one product

    def f(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
          feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        n = len(lhs_spec) - 2
        G, B = feature_group_count, batch_group_count
        if lhs.dtype != rhs.dtype:  # the eager path skips the shape rule; let it report this
            raise TypeError("operands must share one dtype")
        if preferred_element_type is not None:
            lhs, rhs = lhs.astype(preferred_element_type), rhs.astype(preferred_element_type)
        canon = tuple(range(n + 2))
        if G == 1 and B == 1 and tuple(lhs_spec) == tuple(out_spec) == canon and \
                lhs.shape[1] <= _FEW_CHANNELS and math.prod(lhs.shape) and math.prod(rhs.shape):
            return _conv_channels_first(xp, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                        rhs_spec)
        swapped = (1, 0) + canon[2:]
        if G == 1 and B == 1 and tuple(lhs_spec) == tuple(rhs_spec) == tuple(out_spec) == swapped and \
                _KERNEL_GRAD and math.prod(lhs.shape) and math.prod(rhs.shape):
            return _conv_kernel_grad(xp, lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation)
        # The input channels-last, (N, *spatial, C), dilated and padded once into a contiguous buffer.
        x = _padded_channels_last(xp, lhs, lhs_spec, padding, lhs_dilation)
        N, C = x.shape[0], x.shape[-1]
        ks = tuple(rhs.shape[d] for d in rhs_spec[2:])
        O, I = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
        outs = tuple(window_out_dim(x.shape[1 + i], dilate_dim(ks[i], rhs_dilation[i]), window_strides[i])
                     for i in range(n))
        P, K = math.prod(outs), math.prod(ks)
        # Kernel as (*k, I, O): contracted axes first, matching the (*k, C) order of the windows.
        w = xp.transpose(rhs, tuple(rhs_spec[2:]) + (rhs_spec[1], rhs_spec[0]))
        if N * P == 0 or O == 0:
            canon = xp.zeros((N // B,) + outs + (O,), dtype=x.dtype)
        else:
            st = x.strides
            win = as_strided(xp, x, (N,) + outs + ks + (C,),
                             (st[0],) + tuple(st[1 + i] * window_strides[i] for i in range(n))
                             + tuple(st[1 + i] * rhs_dilation[i] for i in range(n)) + (st[-1],))
            # the columns are copied for blocks of the batch at a time (_batch_blocks; not batch groups)
            blocks = _batch_blocks(xp, N, P * K * C * x.dtype.itemsize) if B == 1 else [slice(0, N)]
            whole = len(blocks) == 1
            dt = np.result_type(x, w) if not whole else None
            if G > 1:  # im2col per feature group: (G, N*P, K*C/G) @ (G, K*C/G, O/G)
                wm = w.reshape(K, I, G, O // G).transpose(2, 0, 1, 3).reshape(G, K * I, O // G)
                fit(N * P * K * I * (O // G))
                res = None if whole else np.empty((N, P, G, O // G), dt)
                for b in blocks:
                    nb = b.stop - b.start
                    cols = xp.moveaxis(win[b].reshape((nb,) + outs + ks + (G, C // G)), -2, 0)
                    r = xp.matmul(cols.reshape(G, nb * P, K * (C // G)), wm).reshape(G, nb, P, O // G)
                    if whole:
                        res = r.transpose(1, 2, 0, 3)
                    else:
                        res[b] = r.transpose(1, 2, 0, 3)
            elif B > 1:  # batch groups: group b of the batch meets group b of the output features
                cols = win.reshape(B, (N // B) * P, K * C)
                wm = w.reshape(K * I, B, O // B).transpose(1, 0, 2)
                fit((N // B) * P * K * C * (O // B))
                res = xp.matmul(cols, wm).reshape(B, N // B, P, O // B).transpose(1, 2, 0, 3)
            elif tuple(out_spec) == tuple(range(n + 2)):
                # (N, O, spatial...) out: one product per example, (O, K*C) @ (K*C, P), writes the
                # result contiguous in that layout (no transposed view for the ops that follow); the
                # kernel as the transpose of a (K*C, O) matrix: BLAS runs these short products faster
                # than with an (O, K*C) one, and faster than one tall (N*P, K*C) @ (K*C, O) product
                wt = w.reshape(K * I, O).T
                fit(O * K * C * P)
                if whole:
                    return xp.matmul(wt, win.reshape(N, P, K * C).transpose(0, 2, 1)).reshape((N, O) + outs)
                res = np.empty((N, O, P), dt)
                for b in blocks:
                    np.matmul(wt, win[b].reshape(-1, P, K * C).transpose(0, 2, 1), out=res[b])
                return res.reshape((N, O) + outs)
            else:
                wm = w.reshape(K * I, O)
                fit(N * P * K * C * O)
                if whole:
                    res = xp.matmul(win.reshape(N * P, K * C), wm)
                else:
                    res = np.empty((N * P, O), dt)
                    for b in blocks:
                        np.matmul(win[b].reshape(-1, K * C), wm, out=res[b.start * P:b.stop * P])
            canon = res.reshape((N // B,) + outs + (O,))
        perm = [0] * (n + 2)
        perm[out_spec[0]], perm[out_spec[1]] = 0, n + 1
        for i in range(n):
            perm[out_spec[2 + i]] = 1 + i
        return xp.transpose(canon, perm)
    return f


def _spec_t(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def reshape_axis_into(src: int, dst: int, x):
    """Merge axis src into axis dst as its major part (dst numbered with src removed)."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    shape = [s for i, s in enumerate(x.shape) if i != src]
    shape[dst] *= x.shape[src]
    return reshape(transpose(x, perm), shape)


def reshape_axis_out_of(src: int, size1: int, x):
    """Split axis src into (size1, rest)."""
    shape = list(x.shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, shape)


def _sdims(x, spec):
    return [x.shape[d] for d in spec[2:]]


def _conv_vjp_lhs(g, ans, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count, precision=None,
                  preferred_element_type=None):
    """The input's cotangent: g convolved with the flipped kernel, g dilated by the strides."""
    if math.prod(lhs.shape) == 0 or math.prod(g.shape) == 0:
        return full(lhs.shape, 0, lhs.dtype)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    g = convert_element_type(g, rhs.dtype)
    if G > 1 or B > 1:  # move the groups from the kernel's output features into its input features
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], reshape_axis_out_of(rhs_spec[0], max(G, B), rhs))
    pads = vjp_lhs_padding(_sdims(lhs, lhs_spec), _sdims(rhs, rhs_spec), window_strides,
                           _sdims(g, out_spec), padding, lhs_dilation, rhs_dilation)
    out = conv_general_dilated_p.bind(
        g, rev(rhs, rhs_spec[2:]), window_strides=lhs_dilation, padding=pads,
        lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _spec_t(rhs_spec), lhs_spec),
        feature_group_count=max(G, B), batch_group_count=1, precision=precision,
        preferred_element_type=None)
    if B > 1:
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], reshape_axis_out_of(lhs_spec[1], B, out))
    return convert_element_type(out, lhs.dtype)


def _conv_vjp_rhs(g, ans, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count, precision=None,
                  preferred_element_type=None):
    """The kernel's cotangent: the input convolved with g (batch and feature roles swapped)."""
    if math.prod(rhs.shape) == 0 or math.prod(g.shape) == 0:
        return full(rhs.shape, 0, rhs.dtype)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    g = convert_element_type(g, lhs.dtype)
    pads = vjp_rhs_padding(_sdims(lhs, lhs_spec), _sdims(rhs, rhs_spec), window_strides,
                           _sdims(g, out_spec), padding, lhs_dilation, rhs_dilation)
    out = conv_general_dilated_p.bind(
        lhs, g, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_spec_t(lhs_spec), _spec_t(out_spec), _spec_t(rhs_spec)),
        feature_group_count=B, batch_group_count=G, precision=precision, preferred_element_type=None)
    return convert_element_type(out, rhs.dtype)


def _conv_batch(args, dims, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                feature_group_count, batch_group_count, precision=None, preferred_element_type=None):
    """Fold the mapped axis into the batch (lhs), the output features (rhs) or the feature groups (both)."""
    lhs, rhs = args
    ld, rd = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    p = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
             rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, precision=precision,
             preferred_element_type=preferred_element_type)
    if ld is not None and rd is not None:
        V = lhs.shape[ld]
        if B > 1:
            new_lhs, B = reshape_axis_into(ld, lhs_spec[0], lhs), B * V
        else:
            new_lhs, G = reshape_axis_into(ld, lhs_spec[1], lhs), G * V
        new_rhs = reshape_axis_into(rd, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind(new_lhs, new_rhs, feature_group_count=G, batch_group_count=B, **p)
        return reshape_axis_out_of(out_spec[1], V, out), out_spec[1]
    if ld is not None:
        V = lhs.shape[ld]
        if B == 1:
            new_lhs = reshape_axis_into(ld, lhs_spec[0], lhs)
        else:  # keep the batch groups outermost: (B, V * N/B)
            new_lhs = reshape_axis_out_of(lhs_spec[0] + int(ld <= lhs_spec[0]), B, lhs)
            new_lhs = reshape_axis_into(ld + int(lhs_spec[0] < ld), lhs_spec[0] + 1, new_lhs)
            new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv_general_dilated_p.bind(new_lhs, rhs, feature_group_count=G, batch_group_count=B, **p)
        return reshape_axis_out_of(out_spec[0], V, out), out_spec[0]
    V = rhs.shape[rd]
    if G == 1 and B == 1:
        new_rhs = reshape_axis_into(rd, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind(lhs, new_rhs, feature_group_count=G, batch_group_count=B, **p)
        return reshape_axis_out_of(out_spec[1], V, out), out_spec[1]
    # Groups stay outermost in the output features: (groups, V * O/groups), and back to (V, O) after.
    groups = max(G, B)
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rd <= rhs_spec[0]), groups, rhs)
    new_rhs = reshape_axis_into(rd + int(rhs_spec[0] < rd), rhs_spec[0] + 1, new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv_general_dilated_p.bind(lhs, new_rhs, feature_group_count=G, batch_group_count=B, **p)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, V, out)
    return reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


conv_general_dilated_p = Primitive(
    "conv_general_dilated", impl=_conv_impl, abstract_eval=_conv_rule,
    jvp=[lambda t, ans, lhs, rhs, **p: conv_general_dilated_p.bind(t, rhs, **p),
         lambda t, ans, lhs, rhs, **p: conv_general_dilated_p.bind(lhs, t, **p)],
    vjp=[_conv_vjp_lhs, _conv_vjp_rhs], batch=_conv_batch)


# --- public functions (jax.lax signatures) --------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1,
                         precision=None, preferred_element_type=None):
    """General n-d convolution (cross-correlation, as in JAX and PyTorch).

    lhs: the input, rhs: the kernel. padding: 'SAME', 'VALID' or [(lo, hi), ...] per spatial dim.
    lhs_dilation dilates the input (a transposed convolution), rhs_dilation the kernel (atrous).
    dimension_numbers: None (NCHW / OIHW / NCHW), a ConvDimensionNumbers, or specs like
    ('NHWC', 'HWIO', 'NHWC').

    >>> import funcgrad.numpy as jnp
    >>> x, k = jnp.ones((1, 1, 4, 4)), jnp.ones((2, 1, 3, 3))
    >>> conv_general_dilated(x, k, (1, 1), 'SAME').shape
    (1, 2, 4, 4)
    >>> conv_general_dilated(jnp.ones((1, 5, 5, 3)), jnp.ones((3, 3, 3, 8)), (2, 2), 'VALID',
    ...                      dimension_numbers=('NHWC', 'HWIO', 'NHWC')).shape
    (1, 2, 2, 8)
    """
    params = conv_params(get_aval(lhs).shape, get_aval(rhs).shape, window_strides, padding, lhs_dilation,
                         rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                         precision, preferred_element_type)
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """An NCHW / OIHW convolution with no dilation: conv_general_dilated's common case."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """An NCHW / OIHW convolution with explicit padding and input/kernel dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_p", "conv_general_permutations", "conv_with_general_padding",
           "padtype_to_pads"]
