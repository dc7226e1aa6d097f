"""Cases for the elementwise primitives beyond the core set: more math, special functions, rounding,
bit operations, predicates and complex parts (see README.md).

Differentiable operands are float64 (complex128 for the complex-part primitives) inside the smooth
domain: acos in (-0.9, 0.9), lgamma/digamma/polygamma at positive arguments, rem with x/y at least 0.15
away from every integer, clamp with x at least 0.1 from both bounds. Zero-derivative primitives get
inputs that exercise their edge cases (exact ties for round, infinities for is_finite, out-of-range
shift amounts).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays, shapes

from ._special import Special

F64, F32, C128 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.complex128)
BOOL = np.dtype(np.bool_)
INTS = [np.dtype(t) for t in (np.int8, np.int32, np.int64, np.uint8, np.uint32)]


def shape(draw, max_dims=3):
    return tuple(draw(shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=4)))


def uniform(draw, shp, lo, hi, dtype=F64):
    return draw(arrays(dtype, shp, elements=st.floats(lo, hi)))


def signs(draw, shp):
    return np.where(draw(arrays(BOOL, shp)), -1.0, 1.0)


def away_from_zero(draw, shp, lo, hi):
    return signs(draw, shp) * uniform(draw, shp, lo, hi)


def unary(lo, hi):
    def case(draw):
        return [uniform(draw, shape(draw), lo, hi)], {}
    return case


def unary_away_from_zero(lo, hi):
    def case(draw):
        return [away_from_zero(draw, shape(draw), lo, hi)], {}
    return case


def complex_case(draw):
    s = shape(draw)
    return [uniform(draw, s, -2, 2) + 1j * uniform(draw, s, -2, 2)], {}


def complex_pair_case(draw):
    s = shape(draw)
    return [uniform(draw, s, -2, 2), uniform(draw, s, -2, 2)], {}


def polygamma_case(draw):
    return [uniform(draw, shape(draw), 0.3, 5)], {"m": draw(st.sampled_from([1, 2, 3]))}


def atan2_case(draw):
    """x away from 0, so no operand pair is near the branch cut (x = 0, y < 0) or the origin."""
    s = shape(draw)
    return [away_from_zero(draw, s, 0.3, 2), uniform(draw, s, -2, 2)], kink_params(draw)


def kink_params(draw):
    """The face's convention at kinks: JAX's (the default, no param) or torch's."""
    return draw(st.sampled_from([{}, {"kink": "torch"}]))


def smooth_pair_case(draw):
    """Any pair (logaddexp, logaddexp2: smooth everywhere)."""
    s = shape(draw)
    return [uniform(draw, s, -4, 4), uniform(draw, s, -4, 4)], {}


def hypot_case(draw):
    """x away from 0, so the pair is away from the origin (hypot's only kink)."""
    s = shape(draw)
    return [away_from_zero(draw, s, 0.3, 3), uniform(draw, s, -3, 3)], kink_params(draw)


def elu_case(draw):
    """x away from 0 (elu's kink), with elu's, selu's and celu's parameters."""
    alpha, scale, input_scale = draw(st.sampled_from([(1.0, 1.0, 1.0), (2.0, 1.0, 0.5), (1.67, 1.05, 1.0)]))
    params = {"alpha": alpha, **kink_params(draw)}
    if scale != 1.0:
        params["scale"] = scale
    if input_scale != 1.0:
        params["input_scale"] = input_scale
    return [away_from_zero(draw, shape(draw), 0.1, 3)], params


def rem_case(draw):
    """x = q * y with |q| = k + f, f in [0.15, 0.85]: no kinks (multiples of y) nearby."""
    s = shape(draw)
    y = away_from_zero(draw, s, 0.5, 2.0)
    k = draw(arrays(np.dtype(np.int64), s, elements=st.integers(0, 3)))
    q = signs(draw, s) * (k + uniform(draw, s, 0.15, 0.85))
    return [q * y, y], {}


def clamp_case(draw):
    """lo < hi and x below, inside or above [lo, hi], at least 0.1 from both bounds."""
    s = shape(draw)
    lo = uniform(draw, s, -2.0, -0.5)
    hi = uniform(draw, s, 0.5, 2.0)
    region = draw(arrays(np.dtype(np.int64), s, elements=st.integers(0, 2)))
    gap = uniform(draw, s, 0.1, 1.0)
    inside = lo + (hi - lo) * uniform(draw, s, 0.1, 0.9)
    x = np.select([region == 0, region == 1], [lo - gap, inside], hi + gap)
    return [lo, x, hi], {}


def rounding_case(draw):
    """Any values, with exact halves (ties) and integers among them."""
    s = shape(draw)
    x = uniform(draw, s, -4, 4)
    kind = draw(arrays(np.dtype(np.int64), s, elements=st.integers(0, 2)))
    return [np.select([kind == 0, kind == 1], [np.round(x) + 0.5, np.round(x)], x)], {}


def round_case(draw):
    args, _ = rounding_case(draw)
    return args, {"rounding_method": draw(st.sampled_from([0, 1]))}


def is_finite_case(draw):
    s = shape(draw)
    x = uniform(draw, s, -3, 3)
    kind = draw(arrays(np.dtype(np.int64), s, elements=st.integers(0, 3)))
    return [np.select([kind == 0, kind == 1, kind == 2], [np.inf, -np.inf, np.nan], x)], {}


def nextafter_case(draw):
    s = shape(draw)
    x = uniform(draw, s, -3, 3)
    return [x, np.where(draw(arrays(BOOL, s)), x, uniform(draw, s, -3, 3))], {}


def _ints(draw, s, dtype=None):
    dtype = dtype or draw(st.sampled_from(INTS))
    info = np.iinfo(dtype)
    return draw(arrays(dtype, s, elements=st.integers(int(info.min), int(info.max))))


def bits_unary_case(draw):
    s = shape(draw)
    if draw(st.booleans()):
        return [draw(arrays(BOOL, s))], {}
    return [_ints(draw, s)], {}


def bits_binary_case(draw):
    s = shape(draw)
    if draw(st.booleans()):
        return [draw(arrays(BOOL, s)), draw(arrays(BOOL, s))], {}
    dtype = draw(st.sampled_from(INTS))
    return [_ints(draw, s, dtype), _ints(draw, s, dtype)], {}


def shift_case(draw):
    """Shift amounts in [-2, bits + 2]: XLA shifts every bit out outside [0, bits)."""
    s = shape(draw)
    dtype = draw(st.sampled_from(INTS))
    bits = 8 * dtype.itemsize
    lo = -2 if dtype.kind == "i" else 0
    amount = draw(arrays(dtype, s, elements=st.integers(lo, bits + 2)))
    return [_ints(draw, s, dtype), amount], {}


def popcount_case(draw):
    return [_ints(draw, shape(draw))], {}


_BITCASTS = [(F64, np.dtype(np.int64)), (F32, np.dtype(np.uint32)), (np.dtype(np.int32), F32),
             (F64, np.dtype(np.uint64))]


def bitcast_case(draw):
    src, dst = draw(st.sampled_from(_BITCASTS))
    s = shape(draw)
    if src.kind == "f":
        x = uniform(draw, s, -3, 3, dtype=src)
    else:  # small integers: denormal floats, never NaN payloads
        x = draw(arrays(src, s, elements=st.integers(-1000, 1000)))
    return [x], {"new_dtype": dst}


CASES = {
    # unary math
    "tan": unary(-1.2, 1.2), "asin": unary(-0.9, 0.9), "acos": unary(-0.9, 0.9), "atan": unary(-3, 3),
    "sinh": unary(-3, 3), "cosh": unary(-3, 3), "asinh": unary(-3, 3), "acosh": unary(1.5, 4),
    "atanh": unary(-0.9, 0.9), "exp2": unary(-3, 3), "log2": unary(0.1, 5), "log10": unary(0.1, 5),
    "cbrt": unary_away_from_zero(0.2, 3), "square": unary(-3, 3),
    # special functions
    "erf": unary(-3, 3), "erfc": unary(-3, 3), "erfcx": unary(-3, 3), "erf_inv": unary(-0.9, 0.9), "lgamma": unary(0.2, 5),
    "digamma": unary(0.3, 5), "polygamma": polygamma_case,
    # binary
    "atan2": atan2_case, "rem": rem_case, "clamp": clamp_case,
    "logaddexp": smooth_pair_case, "logaddexp2": smooth_pair_case, "hypot": hypot_case, "elu": elu_case,
    "logit": unary(0.05, 0.95),
    # zero derivative
    "floor": rounding_case, "ceil": rounding_case, "round": round_case, "is_finite": is_finite_case,
    "nextafter": nextafter_case,
    "not": bits_unary_case, "and": bits_binary_case, "or": bits_binary_case, "xor": bits_binary_case,
    "shift_left": shift_case, "shift_right_arithmetic": shift_case, "shift_right_logical": shift_case,
    "population_count": popcount_case, "bitcast_convert_type": bitcast_case,
    # complex parts
    "real": complex_case, "imag": complex_case, "conj": complex_case, "complex": complex_pair_case,
}


# --- special points (see _special.py) -------------------------------------------------------------

_POLES = (0.0, -1.0, -2.0)
# log2/log10: 1 / (x log 2) at the smallest normal x is within a factor 2 of overflow, so <u, J v> overflows
# in one order of summation and not the other: tiny=False
SPECIAL = {
    "asin": Special("unit"), "acos": Special("unit"), "atanh": Special("unit"), "erf_inv": Special("unit"),
    "acosh": Special("nonnegative", shift=1.0), "log2": Special("nonnegative", tiny=False), "log10": Special("nonnegative", tiny=False),
    "cbrt": Special(kinks=(0.0,)),  # an infinite derivative at 0
    "lgamma": Special(kinks=_POLES), "digamma": Special(kinks=_POLES), "polygamma": Special(kinks=_POLES),
    "atan2": Special(fd=False, why="the branch cut (y = 0, x < 0) and the origin are kinks of pairs"),
    "rem": Special(("real", "nonzero"), fd=False, why="kinks where x is a multiple of y: special pairs often are"),
    "clamp": Special((None, "real", None), ties=((0, 1), (2, 1)), fd=False,
                     why="kinks at the drawn bounds lo and hi (ties with x)"),
    "elu": Special(kinks=(0.0,)),  # the branch point (its derivative jumps from alpha * scale to scale)
    "hypot": Special(fd=False, why="the origin (both operands 0) is a kink of the pair"),
    "logit": Special(((0.125, 0.25, 0.5, 0.75, 0.875),)),  # inside (0, 1), where central differences hold; 0, 1 are poles
}
