"""Cases for the fft primitive (funcgrad/_src/prims/fft.py): all four fft_types, 1 to 3 transformed
axes, up to one leading batch axis.

Operands: float64 for RFFT; complex128 for FFT, IFFT and IRFFT (for IRFFT the last transformed axis has
n//2 + 1 entries, n = fft_lengths[-1]). Every fft_type is linear over the reals, so any finite input
lies in the smooth domain.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from funcgrad.testing import arrays

F64, C128 = np.dtype(np.float64), np.dtype(np.complex128)


def _values(draw, shp, dtype):
    re = draw(arrays(F64, shp, elements=st.floats(-2.0, 2.0)))
    if dtype == F64:
        return re
    im = draw(arrays(F64, shp, elements=st.floats(-2.0, 2.0)))
    return (re + 1j * im).astype(C128)


def fft_case(draw):
    fft_type = draw(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]))
    k = draw(st.integers(1, 3))
    lengths = tuple(draw(st.lists(st.integers(1, 5), min_size=k, max_size=k)))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=1)))
    if fft_type == "IRFFT":
        shp = lead + lengths[:-1] + (lengths[-1] // 2 + 1,)
    else:
        shp = lead + lengths
    x = _values(draw, shp, F64 if fft_type == "RFFT" else C128)
    return [x], {"fft_type": fft_type, "fft_lengths": lengths}


CASES = {"fft": fft_case}
