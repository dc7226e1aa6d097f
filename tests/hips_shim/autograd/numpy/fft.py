from funcgrad.numpy.fft import *  # noqa: F401,F403
