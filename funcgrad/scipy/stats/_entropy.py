"""scipy.stats.entropy: Shannon entropy of a distribution, or the KL divergence to another."""
from __future__ import annotations

from ... import numpy as jnp
from .._special.information import entr, rel_entr


def entropy(pk, qk=None, base=None, axis: int = 0):
    """-sum(pk log pk) with pk normalised along `axis`; with qk, sum(pk log(pk / qk)); in log `base`."""
    pk = jnp.asarray(pk)
    pk = pk / jnp.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        s = jnp.sum(entr(pk), axis=axis)
    else:
        qk = jnp.asarray(qk)
        qk = qk / jnp.sum(qk, axis=axis, keepdims=True)
        s = jnp.sum(rel_entr(pk, qk), axis=axis)
    return s if base is None else s / jnp.log(base)
