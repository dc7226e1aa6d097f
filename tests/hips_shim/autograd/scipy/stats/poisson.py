from funcgrad.scipy.stats.poisson import *  # noqa: F401,F403
