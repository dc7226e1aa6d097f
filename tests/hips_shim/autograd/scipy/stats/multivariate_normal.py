from funcgrad.scipy.stats.multivariate_normal import *  # noqa: F401,F403
