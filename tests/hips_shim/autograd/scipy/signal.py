from funcgrad.scipy.signal import *  # noqa: F401,F403
