from funcgrad.scipy.stats.t import *  # noqa: F401,F403
