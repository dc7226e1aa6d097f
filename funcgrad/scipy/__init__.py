"""funcgrad.scipy: SciPy-named functions over funcgrad's primitives (differentiable, batchable, jittable).

    import funcgrad.scipy.special as sps
"""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, special,  # noqa: F401
               stats)
