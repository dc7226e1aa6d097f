"""funcgrad.numpy.linalg, eig with eigenvector derivatives, and the two helpers HIPS's linalg module defines and its tests import."""
import functools

import funcgrad.lax.linalg as _lax_linalg
import funcgrad.numpy as _fnp
from funcgrad.numpy.linalg import *  # noqa: F401,F403


def eig(a):
    """(w, v) as numpy.linalg.eig, with eigenvector derivatives as HIPS defines them (jnp.linalg.eig's raise,
    as JAX's do; funcgrad's lax.linalg.eig opts in with enable_eigvec_derivs)."""
    return tuple(_lax_linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True))


def T(x):
    return _fnp.swapaxes(x, -1, -2)


_dot = functools.partial(_fnp.einsum, "...ij,...jk->...ik")
