"""Cases for funcgrad/_src/prims/scipy_special.py (the jax.scipy.special cards), inside each smooth domain:

- entr: x in (0.05, 4), kink "jax" or "torch" (the faces' conventions differ only below 0).
- xlogy: x in (-3, 3) (0 included: its rules have the limits there), y in (0.2, 5); xlog1py: y in (-0.8, 4).
- ndtri: p in (0.02, 0.98); exp1: x in (0.1, 5) (both sides of the series / continued-fraction switch
  at 1); expi: |x| in (0.2, 5); expn: an integer order n in 2..5 (a float operand, no derivative:
  ZERO_DERIVATIVE_OPERANDS in tests/test_primitive_properties.py) and x in (0.2, 4).
- si: x in (-6, 6) (0 and the switch at |x| = 4 included); ci: |x| in (0.2, 6).
- fresnel: x in (-3, 3) (the switch at 1.8); spence: x in (0.05, 4) (through 1, where the derivative is
  a series); dawsn: x in (-5, 5); wofz: complex z with Re in (-3, 3), Im in (-2, 2) (both half planes).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays, shapes

from ._special import Special

F64 = np.dtype(np.float64)


def _shape(draw):
    return tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)))


def _u(draw, shp, lo, hi):
    return draw(arrays(F64, shp, elements=st.floats(lo, hi)))


def unary(lo, hi, away_from_zero=False):
    def case(draw):
        shp = _shape(draw)
        x = _u(draw, shp, lo, hi)
        if away_from_zero:
            x = np.where(draw(arrays(np.dtype(np.bool_), shp)), -x, x)
        return [x], {}
    return case


def xlogy_case(draw):
    shp = _shape(draw)
    x = _u(draw, shp, -3, 3)
    x = np.where(draw(arrays(np.dtype(np.bool_), shp)), 0.0, x)
    return [x, _u(draw, shp, 0.2, 5)], {}


def xlog1py_case(draw):
    shp = _shape(draw)
    x = _u(draw, shp, -3, 3)
    x = np.where(draw(arrays(np.dtype(np.bool_), shp)), 0.0, x)
    return [x, _u(draw, shp, -0.8, 4)], {}


def expn_case(draw):
    shp = _shape(draw)
    # n >= 2: E_n'' = E_{n-2}, and E_{-1} is defined (in JAX's domain, so funcgrad's) at x > 1 only
    n = draw(arrays(F64, shp, elements=st.integers(2, 5).map(float)))
    return [n, _u(draw, shp, 0.2, 4)], {}


def entr_case(draw):
    # x > 0 (entr's smooth domain), with either face's convention (they differ only below 0)
    shp = _shape(draw)
    return [_u(draw, shp, 0.05, 4)], {"kink": draw(st.sampled_from(["jax", "torch"]))}


def wofz_case(draw):
    shp = _shape(draw)
    return [_u(draw, shp, -3, 3) + 1j * _u(draw, shp, -2, 2)], {}


CASES = {
    "entr": entr_case, "xlogy": xlogy_case, "xlog1py": xlog1py_case, "ndtri": unary(0.02, 0.98), "exp1": unary(0.1, 5),
    "expi": unary(0.2, 5, away_from_zero=True), "expn": expn_case, "si": unary(-6, 6),
    "ci": unary(0.2, 6, away_from_zero=True), "fresnel": unary(-3, 3), "spence": unary(0.05, 4),
    "dawsn": unary(-5, 5), "wofz": wofz_case,
}


_PROB = (0.0, 0.25, 0.5, 0.75, 1.0, 2.2250738585072014e-308, 1.0 - 2.0 ** -53)  # ndtri's domain [0, 1]
SPECIAL = {
    "entr": Special("nonnegative"),  # (below 0 entr is -inf: no derivative to check)
    "xlogy": Special(("real", "nonnegative")), "xlog1py": Special(("real", "unit")),
    "ndtri": Special((_PROB,), kinks=(0.0, 1.0)), "exp1": Special("nonnegative"),
    "expi": Special(kinks=(0.0,)),  # a logarithmic singularity at 0
    "expn": Special((None, "nonnegative")), "ci": Special("nonnegative"), "spence": Special("nonnegative"),
}
