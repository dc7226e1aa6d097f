"""autograd.numpy: funcgrad.numpy's names, NumPy's random, and the few HIPS-only helpers."""
import numpy as _onp

import funcgrad.numpy as _fnp

globals().update({k: v for k, v in vars(_fnp).items() if not k.startswith("__") and k not in ("fft", "linalg")})

from . import fft, linalg, random  # noqa: E402,F401  (after the copy: these are the shim's own modules)

# NumPy's extended-precision names HIPS re-exports (dtypes, not functions).
longdouble, clongdouble = _onp.longdouble, _onp.clongdouble
numpy_version = __version__ = _onp.__version__


def make_diagonal(D, offset=0, axis1=-1, axis2=-2):
    """HIPS-only: a stack of diagonal matrices with D's last axis on the diagonal."""
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("Currently make_diagonal only supports offset=0, axis1=-1, axis2=-2")
    n = _fnp.shape(D)[-1]
    return D[..., None] * _fnp.eye(n, dtype=_fnp.result_type(D))


def msort(a):
    """NumPy < 2's msort: sort along the first axis."""
    return _fnp.sort(a, axis=0)
