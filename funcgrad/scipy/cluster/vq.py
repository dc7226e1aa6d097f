"""funcgrad.scipy.cluster.vq.vq: the nearest code-book entry for each observation."""
from __future__ import annotations

from ... import numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """(codes, distances): for each row of obs (N, D) (or value of obs (N,)), the index of the nearest
    row of code_book (K, D) and the Euclidean distance to it."""
    obs, code_book = jnp.asarray(obs), jnp.asarray(code_book)
    if obs.ndim != code_book.ndim or obs.ndim not in (1, 2):
        raise ValueError(f"vq: obs and code_book must both be 1-d or both 2-d, got shapes {obs.shape} and "
                         f"{code_book.shape}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: observation and code_book should have the same rank, got {obs.shape[1]} and "
                         f"{code_book.shape[1]} features")
    d2 = jnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1)
    codes = jnp.argmin(d2, axis=1)
    dist = jnp.sqrt(jnp.take_along_axis(d2, codes[:, None], axis=1)[:, 0])
    return codes, dist
