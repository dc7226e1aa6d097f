"""autograd.scipy.special: funcgrad.scipy.special, plus the SciPy Bessel functions HIPS differentiates that
jax.scipy.special lacks but funcgrad has as cards on its torch face (funcgrad.special)."""
import funcgrad.special as _ts
from funcgrad.scipy.special import *  # noqa: F401,F403

j0, j1, y0, y1 = _ts.bessel_j0, _ts.bessel_j1, _ts.bessel_y0, _ts.bessel_y1
