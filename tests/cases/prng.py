"""Cases for the random-number primitives (funcgrad/_src/prims/prng.py).

- threefry2x32: four uint32 operands of one small shape (0-d to 2-d), drawn across the full 32-bit
  range (zeros and all-ones included); no derivative, so the property tests check vmap, jit and zeros.
- random_gamma_grad: shapes a in (0.05, 20) and sample values x spread over the gamma distribution's
  bulk (x = a times a factor in (0.05, 4)), in linear and in log space (x then holding log x).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays, shapes

from ._special import Special

U32 = np.dtype(np.uint32)
F64 = np.dtype(np.float64)


def _u32(draw, shp):
    return draw(arrays(U32, shp, elements=st.integers(0, 2 ** 32 - 1)))


def threefry2x32_case(draw):
    shp = tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=4)))
    return [_u32(draw, shp) for _ in range(4)], {}


def random_gamma_grad_case(draw):
    shp = tuple(draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=4)))
    a = draw(arrays(F64, shp, elements=st.floats(0.05, 20.0)))
    x = a * draw(arrays(F64, shp, elements=st.floats(0.05, 4.0)))
    log_space = draw(st.booleans())
    return [a, np.log(x) if log_space else x], {"log_space": log_space}


CASES = {"threefry2x32": threefry2x32_case, "random_gamma_grad": random_gamma_grad_case}


SPECIAL = {"random_gamma_grad": Special(("positive", None))}  # x stays the case's (log-space or a sample)
