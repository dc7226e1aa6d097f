from funcgrad.scipy.stats.gamma import *  # noqa: F401,F403
