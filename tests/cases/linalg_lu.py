"""Case for the lu primitive (funcgrad/_src/prims/lu.py): square float64 matrices, 1x1 to 4x4, up to one
leading batch axis, built as a random row permutation of a strictly diagonally dominant matrix, so
partial pivoting swaps rows and every pivot choice is stable under small perturbations (the
decomposition is smooth there)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays

from ._special import Special

F64 = np.dtype(np.float64)


def lu_case(draw):
    n = draw(st.integers(1, 4))
    lead = tuple(draw(st.lists(st.integers(1, 2), min_size=0, max_size=1)))
    m = draw(arrays(F64, lead + (n, n), elements=st.floats(-1.0, 1.0)))
    sign = np.where(np.diagonal(m, axis1=-2, axis2=-1) >= 0, 1.0, -1.0)[..., None]
    m = m + np.eye(n) * (n + 1) * sign
    perm = draw(st.permutations(list(range(n))))
    return [np.ascontiguousarray(m[..., perm, :])], {}


CASES = {"lu": lu_case}


def _special_lu(draw):
    """Signed permutation matrices (LU's pivoting meets ties of |pivots|) and the identity."""
    n = draw(st.integers(1, 4))
    p = np.eye(n)[list(draw(st.permutations(range(n))))]
    return [p * np.where(draw(arrays(np.dtype(np.bool_), (n,))), -1.0, 1.0)[:, None]], {}


SPECIAL = {"lu": Special(case=_special_lu, why="signed permutation matrices: pivots tie in magnitude")}
