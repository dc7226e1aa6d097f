"""torch.distributions.von_mises: VonMises, at torch's module path (which pickles name classes by). Every formula is an
Array-level function run through `utils.call`."""
from __future__ import annotations

import math

from .._torch import _creation, _jnp as jnp
from .. import random as jr
from . import constraints
from .distribution import TORCH_STREAM, Distribution
from .utils import call, lazy_property
from .continuous import _CentredAtLoc, _Checked, _shape


def _log_i0_i1(x, order):
    """log of the modified Bessel function I_order(x) (order 0 or 1), x >= 0, by the Abramowitz & Stegun
    polynomial approximations (as used for the von Mises normaliser)."""
    small = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
             [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]][order]
    large = [[0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
              -0.01647633, 0.00392377],
             [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
              0.01787654, -0.00420059]][order]

    def horner(coeffs, t):
        r = coeffs[-1]
        for c in reversed(coeffs[:-1]):
            r = r * t + c
        return r
    xs = jnp.minimum(x, 3.75)
    y = (xs / 3.75) ** 2
    s = horner(small, y)
    if order == 1:
        s = xs * s
    xl = jnp.maximum(x, 3.75)
    lg = xl - 0.5 * jnp.log(xl) + jnp.log(horner(large, 3.75 / xl))
    return jnp.where(x < 3.75, jnp.log(s), lg)


class VonMises(_CentredAtLoc, _Checked, Distribution):
    """VonMises(loc, concentration): a circular distribution on [-pi, pi)."""
    _draws_as_torch = True
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self._init_broadcast(validate_args, loc=loc, concentration=concentration)

    def log_prob(self, value):
        self._check(value)

        def f(x, m, k):
            return k * jnp.cos(x - m) - math.log(2 * math.pi) - _log_i0_i1(k, 0)
        return call("VonMisesLogProb", f, value, self.loc, self.concentration)

    def _sample(self, key, sample_shape):
        shape = _shape(self, sample_shape)
        if key is TORCH_STREAM:
            return _von_mises_torch(self.loc, self.concentration, shape)

        def f(m, k):
            # Best & Fisher (1979) rejection sampler, run a fixed number of rounds, vectorised.
            dt = m.dtype
            kk = jnp.broadcast_to(k, shape).astype(jnp.float64)
            tau = 1 + jnp.sqrt(1 + 4 * kk ** 2)
            rho = (tau - jnp.sqrt(2 * tau)) / (2 * kk)
            r = (1 + rho ** 2) / (2 * rho)
            rs = jnp.where(kk < 1e-5, 1 / kk, r)  # small concentrations: close to uniform
            rounds = 24  # each round accepts with probability > 0.65: all rounds failing is ~1e-11
            k1, k2, k3 = jr.split(key, 3)
            u1 = jr.uniform(k1, (rounds,) + shape, jnp.float64)
            u2 = jr.uniform(k2, (rounds,) + shape, jnp.float64)
            u3 = jr.uniform(k3, (rounds,) + shape, jnp.float64)
            z = jnp.cos(math.pi * u1)
            fz = (1 + rs * z) / (rs + z)
            c = kk * (rs - fz)
            accept = (c * (2 - c) - u2 > 0) | (jnp.log(c / u2) + 1 - c >= 0)
            cand = jnp.sign(u3 - 0.5) * jnp.arccos(jnp.clip(fz, -1, 1))
            first = jnp.argmax(accept, axis=0)
            x = jnp.take_along_axis(cand, first[None], axis=0)[0]
            out = jnp.remainder(x + jnp.broadcast_to(m, shape) + math.pi, 2 * math.pi) - math.pi
            return out.astype(dt)
        return call("VonMisesSample", f, self.loc, self.concentration)

    @lazy_property
    def variance(self):
        def f(k):
            return 1 - jnp.exp(_log_i0_i1(k, 1) - _log_i0_i1(k, 0))
        return call("VonMisesVar", f, self.concentration)


def _von_mises_torch(loc, concentration, shape):
    """torch's VonMises sampler (its `_rejection_sample`): Best & Fisher's rejection in float64, each round
    drawing `rand((3,) + shape)` from the default generator until every element has accepted once."""
    m, k = loc.double(), concentration.double()

    def proposal(k):
        tau = 1 + jnp.sqrt(1 + 4 * k ** 2)
        rho = (tau - jnp.sqrt(2 * tau)) / (2 * k)
        return jnp.where(k < 1e-5, 1 / k + k, (1 + rho ** 2) / (2 * rho))
    r = call("VonMisesProposal", proposal, k)

    def round_(u, r, k):
        z = jnp.cos(math.pi * u[0])
        f = (1 + r * z) / (r + z)
        c = k * (r - f)
        accept = ((c * (2 - c) - u[1]) > 0) | (jnp.log(c / u[1]) + 1 - c >= 0)
        return accept, jnp.sign(u[2] - 0.5) * jnp.arccos(f)
    x = _creation.zeros(shape, dtype=m.dtype)
    done = _creation.zeros(shape, dtype=bool)
    while not bool(done.all()):
        accept, cand = call("VonMisesRound", round_, _creation.rand((3,) + tuple(shape), dtype=m.dtype), r, k)
        x = call("Where", jnp.where, accept, cand, x)
        done = done | accept
    out = call("VonMisesWrap", lambda x, m: (x + math.pi + m) % (2 * math.pi) - math.pi, x, m)
    return out.to(loc.dtype)


__all__ = ["VonMises"]
