"""Information-theory functions of jax.scipy.special: xlogy, xlog1py (cards in
funcgrad._src.prims.scipy_special, whose derivatives stay finite where the naive formula gives NaN), entr,
rel_entr, kl_div."""
from __future__ import annotations

from ... import numpy as jnp
from ..._src.prims import scipy_special as _ss
from .common import promote_float


def xlogy(x, y):
    """x * log(y), and 0 where x == 0 (whatever y), as scipy.special.xlogy."""
    return _ss.xlogy(*promote_float("xlogy", x, y))


def xlog1py(x, y):
    """x * log1p(y), and 0 where x == 0, as scipy.special.xlog1py."""
    return _ss.xlog1py(*promote_float("xlog1py", x, y))


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    return _ss.entr(promote_float("entr", x))


def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 for x == 0 <= y; inf otherwise."""
    x, y = promote_float("rel_entr", x, y)
    ok = (x > 0) & (y > 0)
    safe_x, safe_y = jnp.where(ok, x, 1), jnp.where(ok, y, 1)
    val = safe_x * jnp.log(safe_x / safe_y)
    return jnp.where(ok, val, jnp.where((x == 0) & (y >= 0), 0, jnp.inf))


def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y for x == 0 <= y; inf otherwise."""
    x, y = promote_float("kl_div", x, y)
    ok = (x > 0) & (y > 0)
    safe_x, safe_y = jnp.where(ok, x, 1), jnp.where(ok, y, 1)
    val = safe_x * jnp.log(safe_x / safe_y) - safe_x + safe_y
    return jnp.where(ok, val, jnp.where((x == 0) & (y >= 0), y, jnp.inf))


__all__ = ["xlogy", "xlog1py", "entr", "rel_entr", "kl_div"]
