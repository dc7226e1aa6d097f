from funcgrad.scipy.stats.beta import *  # noqa: F401,F403
