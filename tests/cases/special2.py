"""Cases for funcgrad/_src/prims/incomplete.py: igamma, igammac, betainc (the Bessel cards' cases
are in bessel.py).

- igamma / igammac: a in (0.1, 20), x = a times a factor in (0.05, 4) (both sides of the series /
  continued-fraction switch at x = a + 1); second derivatives hold a fixed (see SECOND_ORDER_FIXED in
  tests/test_primitive_properties.py).
- betainc: a, b in (0.3, 10), x in (0.05, 0.95); only x is differentiated (FIXED_OPERANDS).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays, shapes

from ._special import Special

F64 = np.dtype(np.float64)


def _shape(draw):
    return tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)))


def igamma_case(draw):
    shp = _shape(draw)
    a = draw(arrays(F64, shp, elements=st.floats(0.1, 20.0)))
    x = a * draw(arrays(F64, shp, elements=st.floats(0.05, 4.0)))
    return [a, x], {}


def betainc_case(draw):
    shp = _shape(draw)
    a = draw(arrays(F64, shp, elements=st.floats(0.3, 10.0)))
    b = draw(arrays(F64, shp, elements=st.floats(0.3, 10.0)))
    x = draw(arrays(F64, shp, elements=st.floats(0.05, 0.95)))
    return [a, b, x], {}


CASES = {"igamma": igamma_case, "igammac": igamma_case, "betainc": betainc_case}


_UNIT = (0.0, 0.25, 0.5, 0.75, 1.0, 2.2250738585072014e-308)  # betainc's x: [0, 1]
SPECIAL = {
    "igamma": Special(("positive", "nonnegative")), "igammac": Special(("positive", "nonnegative")),
    # a and b at 0.5, 1, 2 (the smallest normal a or b gives NaN: not checked here, see the matrix's betainc rows)
    "betainc": Special(((0.5, 1.0, 2.0), (0.5, 1.0, 2.0), _UNIT), kinks=(0.0, 1.0)),  # x^(a-1) at the ends
}
