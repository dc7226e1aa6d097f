from funcgrad.scipy.stats.norm import *  # noqa: F401,F403
