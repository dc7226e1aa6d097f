"""Modified Bessel functions of jax.scipy.special: i0, i1 and the exponentially scaled i0e, i1e (cards in
funcgrad._src.prims.bessel)."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims import bessel as _bessel
from ..._src.prims import elementwise as _ew
from .common import promote_float


def i0e(x):
    """Exponentially scaled modified Bessel function of order 0, e^-|x| I_0(x)."""
    return _bessel.bessel_i0e(promote_float("i0e", x))


def i1e(x):
    """Exponentially scaled modified Bessel function of order 1, e^-|x| I_1(x)."""
    return _bessel.bessel_i1e(promote_float("i1e", x))


def _abs_sign(x):
    """|x| whose derivative is sign(x) (0 at 0): it pairs with the i0e/i1e cards' sign(x) terms, so that
    exp(|x|) * i0e(x) is smooth at 0 to every order (i0'(0) = 0, i0''(0) = 1/2). With JAX's select(x >= 0)
    convention the product has a spurious kink there (JAX's own i0'(0) is 1: a reference's error at a
    smooth point is not a target)."""
    return _ew.abs(x, "torch")


def i0(x):
    """The modified Bessel function of order 0."""
    x = promote_float("i0", x)
    return jnp.exp(_abs_sign(x)) * _bessel.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1."""
    x = promote_float("i1", x)
    return jnp.exp(_abs_sign(x)) * _bessel.bessel_i1e(x)


__all__ = ["i0", "i0e", "i1", "i1e"]
