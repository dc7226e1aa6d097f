"""Central finite differences: the reference derivative for the hand-written tests."""
import numpy as np


def fd_grad(f, x, eps=1e-6):
    """Central finite-difference gradient of scalar f (NumPy in, float out) at float64 x."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g
