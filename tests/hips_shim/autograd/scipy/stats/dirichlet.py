"""funcgrad.scipy.stats.dirichlet, plus SciPy's sampler (HIPS re-exports it undifferentiated)."""
import scipy.stats as _ss

from funcgrad.scipy.stats.dirichlet import *  # noqa: F401,F403

rvs = _ss.dirichlet.rvs
