"""Cases for the convolution and windowed-reduction cards (see README.md in this folder).

Shapes are small (batch 1-2, channels 1-3, spatial 3-6, kernels 1-3) and every draw yields a
non-empty output. Max/min windows always hold at least one real (unpadded) element, and their
operands hold well-separated distinct values, so no finite-difference step crosses a tie.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad._src.core.aval import ShapedArray
from funcgrad._src.prims import conv, windowed
from funcgrad._src.prims.elementwise import ge_p, le_p

from ._special import Special

_LAYOUTS = {
    1: [None, ("NWC", "WIO", "NWC"), ("NCW", "WIO", "NWC")],
    2: [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "HWIO", "NHWC"), ("NHWC", "OIHW", "NCHW")],
    3: [None, ("NDHWC", "DHWIO", "NDHWC")],
}


def _values(draw, *shapes):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return [rng.standard_normal(s) for s in shapes]


def _distinct(draw, shape):
    """Values at least 4/size apart, so a finite-difference step never reorders a window."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = int(np.prod(shape))
    return ((rng.permutation(n) - n / 2) * (4 / n)).reshape(shape)


def _place(spec, sizes):
    """An operand shape from its spec string (or the default NC.../OI... order when spec is None)."""
    return tuple(sizes[c] for c in spec)


def conv_general_dilated_case(draw):
    n = draw(st.sampled_from([1, 1, 2, 2, 2, 3]))
    groups = draw(st.sampled_from(["none", "none", "feature", "batch"]))
    G = draw(st.integers(2, 3)) if groups == "feature" else 1
    B = 2 if groups == "batch" else 1
    N = draw(st.integers(1, 2)) * B
    I = draw(st.integers(1, 2))
    O = G * B * draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3 if n < 3 else 2)) for _ in range(n)]
    rd = [draw(st.integers(1, 2)) for _ in range(n)]
    ld = [draw(st.integers(1, 2)) for _ in range(n)]
    strides = [draw(st.integers(1, 2)) for _ in range(n)]
    eff = [(k - 1) * r + 1 for k, r in zip(ks, rd)]
    spatial = [draw(st.integers(max(3, e), max(3, e) + (3 if n < 3 else 1))) for e in eff]
    kind = draw(st.sampled_from(["SAME", "VALID", "explicit"]))
    if kind == "explicit":
        padding = []
        for s, d, e in zip(spatial, ld, eff):
            lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
            if (s - 1) * d + 1 + lo + hi < e:  # keep at least one window
                lo, hi = max(lo, 0), max(hi, 0)
            padding.append((lo, hi))
    else:
        padding = kind
    layout = draw(st.sampled_from(_LAYOUTS[n]))
    if layout is None:
        letters = {1: "W", 2: "HW", 3: "DHW"}[n]
        lhs_spec, rhs_spec = "NC" + letters, "OI" + letters
    else:
        lhs_spec, rhs_spec = layout[:2]
        letters = [c for c in rhs_spec if c not in "OI"]  # the spatial order is the kernel spec's
    lhs_sizes = dict(N=N, C=I * G, **dict(zip(letters, spatial)))
    rhs_sizes = dict(O=O, I=I, **dict(zip(letters, ks)))
    lhs_shape, rhs_shape = _place(lhs_spec, lhs_sizes), _place(rhs_spec, rhs_sizes)
    params = conv.conv_params(lhs_shape, rhs_shape, strides, padding, ld, rd, layout, G, B)
    return _values(draw, lhs_shape, rhs_shape), params


def _window_params(draw, kind, kink="jax", outside=False):
    """(operand shape, normalised window params) for reduce_window_`kind`; with outside (under torch's kink)
    also windows that lie wholly in the padding (derivatives at torch's starting index, maybe another row's;
    not for reduce_window_max/min, whose -inf there finite differences cannot take)."""
    nd = draw(st.integers(1, 3))
    shape = [draw(st.integers(3, 6 if nd < 3 else 4)) for _ in range(nd)]
    window = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 2)) for _ in range(nd)]
    if kind == "sum":  # padding, base and window dilation all at once
        wdil = [draw(st.integers(1, 2)) for _ in range(nd)]
        bdil = [draw(st.integers(1, 2)) for _ in range(nd)]
        padding = draw(st.sampled_from(["SAME", "VALID", "explicit"]))
        if padding == "explicit":
            padding = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd)]
    elif outside and kink == "torch" and draw(st.booleans()):  # dilated windows, padding up to a whole window's span
        wdil, bdil = [draw(st.integers(1, 3)) for _ in range(nd)], [1] * nd
        padding = [(draw(st.integers(0, (w - 1) * d + 1)), draw(st.integers(0, (w - 1) * d + 1)))
                   for w, d in zip(window, wdil)]
    elif draw(st.booleans()):  # padding inside a contiguous window: every window meets the operand
        wdil, bdil = [1] * nd, [1] * nd
        padding = [(draw(st.integers(0, w - 1)), draw(st.integers(0, w - 1))) for w in window]
    else:
        wdil, bdil, padding = [draw(st.integers(1, 2)) for _ in range(nd)], [1] * nd, "VALID"
    eff = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    shape = [max(s, e) for s, e in zip(shape, eff)]
    return tuple(shape), windowed.reduce_window_params(tuple(shape), window, strides, padding, bdil, wdil)


def _kink(draw) -> dict:
    """The face's convention for max/min's selection: JAX's (the default, no param) or torch's."""
    return draw(st.sampled_from([{}, {"kink": "torch"}]))


def _reduce_window_case(kind):
    def case(draw):
        kink = {} if kind == "sum" else _kink(draw)
        shape, params = _window_params(draw, kind, **kink)
        return [_values(draw, shape)[0] if kind == "sum" else _distinct(draw, shape)], dict(params, **kink)
    return case


def _selection_case(scatter: bool):
    """select_and_gather_add(t, x) / select_and_scatter_add(g, x): t like x, g like the windows."""
    def case(draw):
        kind = draw(st.sampled_from(["max", "min"]))
        kink = _kink(draw)
        shape, params = _window_params(draw, kind, outside=True, **kink)
        out = windowed.reduce_window_max_p.abstract_eval(ShapedArray(shape, np.float64), **params).shape
        a, x = _values(draw, out if scatter else shape)[0], _distinct(draw, shape)
        return [a, x], dict(params, select_prim=ge_p if kind == "max" else le_p, **kink)
    return case


CASES = {
    "conv_general_dilated": conv_general_dilated_case,
    "select_and_gather_add": _selection_case(scatter=False),
    "select_and_scatter_add": _selection_case(scatter=True),
    "reduce_window_sum": _reduce_window_case("sum"),
    "reduce_window_max": _reduce_window_case("max"),
    "reduce_window_min": _reduce_window_case("min"),
}


_TIES_FD = "ties of repeated special values inside a window are kinks (which entry is the window's extremum)"
SPECIAL = {
    "reduce_window_max": Special(fd=False, why=_TIES_FD), "reduce_window_min": Special(fd=False, why=_TIES_FD),
    "select_and_gather_add": Special(fd=False, why=_TIES_FD),
    "select_and_scatter_add": Special(fd=False, why=_TIES_FD),
}
