"""HIPS's autograd.numpy.random is NumPy's random (it samples plain arrays)."""
from numpy.random import *  # noqa: F401,F403
from numpy.random import RandomState, rand, randn, seed  # noqa: F401
