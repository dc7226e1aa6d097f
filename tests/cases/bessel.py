"""Cases for the Bessel primitives. bessel_j0/j1: float64 operands in [-30, 30] (smooth everywhere).
bessel_i0e, bessel_i1e: float64 operands on both sides of the
kernels' switch between the power series and the asymptotic expansion (|x| = 20), kept 0.05 away from 0
(exp(-|x|) has a kink there: i0e's derivative jumps from 1 to -1, i1e's second derivative jumps)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays, shapes

from ._special import Special

F64 = np.dtype(np.float64)


def _case(draw):
    shp = tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=4)))
    mag = draw(arrays(F64, shp, elements=st.floats(0.05, 30)))
    sign = np.where(draw(arrays(np.dtype(np.bool_), shp)), -1.0, 1.0)
    return [sign * mag], {}


def _j_case(draw):
    shp = tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=4)))
    return [draw(arrays(F64, shp, elements=st.floats(-30, 30)))], {}


CASES = {"bessel_i0e": _case, "bessel_i1e": _case, "bessel_j0": _j_case, "bessel_j1": _j_case}


SPECIAL = {"bessel_i0e": Special(kinks=(0.0,)), "bessel_i1e": Special(kinks=(0.0,))}  # exp(-|x|): a kink at 0
