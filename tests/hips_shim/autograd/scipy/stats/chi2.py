from funcgrad.scipy.stats.chi2 import *  # noqa: F401,F403
