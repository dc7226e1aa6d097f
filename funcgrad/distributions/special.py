"""Special functions the distributions need beyond funcgrad.scipy.special, written on Arrays."""
from __future__ import annotations

from .._torch import _jnp as jnp
from ..scipy import special as sps

_ITERS = 80


def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x), as scipy.special.gammainc: a power
    series for x < a + 1 and a continued fraction (modified Lentz) otherwise, each run a fixed number of
    steps so it vectorises and differentiates (in x and a) like any composition of funcgrad operations."""
    a, x = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(x))
    dt = a.dtype if jnp.issubdtype(a.dtype, jnp.floating) else jnp.float32
    a, x = a.astype(dt), x.astype(dt)
    pos = x > 0
    xs = jnp.where(pos, x, 1.0)
    log_pre = a * jnp.log(xs) - xs - sps.gammaln(a)
    use_series = xs < a + 1
    # series: P = e^(-x) x^a / Gamma(a) * sum_n x^n / (a (a+1) ... (a+n))
    xser = jnp.where(use_series, xs, 0.5 * a)
    term = 1.0 / a
    total = term
    for n in range(1, _ITERS):
        term = term * xser / (a + n)
        total = total + term
    p_series = jnp.exp(log_pre + jnp.log(total))
    # continued fraction for Q = 1 - P
    xcf = jnp.where(use_series, a + 2.0, xs)
    tiny = jnp.finfo(dt).tiny * 1e10
    b = xcf + 1 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, _ITERS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = jnp.where(jnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = jnp.where(jnp.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
    log_pre_cf = a * jnp.log(xcf) - xcf - sps.gammaln(a)
    q_cf = jnp.exp(log_pre_cf) * h
    p = jnp.where(use_series, p_series, 1.0 - q_cf)
    return jnp.where(pos, p, jnp.where(x == 0, 0.0, jnp.nan))
