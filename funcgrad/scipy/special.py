"""scipy.special-named functions: erf, erfc, erfinv, gammaln, gamma, digamma/psi, polygamma, expit, logit.

As in funcgrad.numpy, integer and bool input is computed in the default float dtype (SciPy: float64);
complex input is not supported. Accuracy in float64 is a few units in the last place (see
funcgrad._src.prims.special); gamma is exp(gammaln) with the sign restored, so its relative error
grows like |gammaln(x)| * 1e-16.
"""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from ..numpy import _ufuncs as u
from ..numpy._promote import asarray_any
from .._src.prims import elementwise as ew, special as sp
from .._src.prims.shape import full
from ..numpy._ufuncs import _ComplexUndefinedError

erf = u.erf
erfc = u.erfc
erfinv = u.erfinv
gammaln = u.gammaln
digamma = psi = u.digamma


def _float(name, x):
    x = asarray_any(x)
    if dtypes.is_complex(x.dtype):
        raise _ComplexUndefinedError(f"{name}: complex input is not supported")
    return u._to_inexact(x)


def polygamma(n, x):
    """The n-th derivative of digamma, as scipy.special.polygamma: n a non-negative int, or (as JAX) an
    integer array of orders broadcasting with x, which must be concrete (NaN where an order is negative)."""
    try:
        k = operator.index(n)
    except TypeError:
        na = asarray_any(n)
        if not dtypes.is_integer(na.dtype):
            raise ValueError(f"polygamma: the order n must be of integer type, got dtype {na.dtype}") from None
        return sp.polygamma(na, _float("polygamma", x))
    return sp.polygamma(k, _float("polygamma", x))


def gamma(x):
    """The gamma function, exp(gammaln(x)) with its sign; inf at 0 (signed) and NaN at negative
    integers, as scipy.special.gamma."""
    x = _float("gamma", x)
    zero = ew.zeros_like(x)
    # For x < 0, gamma(x) has the sign (-1)^(floor(-x) + 1) = -1 when floor(-x) is even.
    neg_sign = u.remainder(ew.floor(ew.neg(x)), 2) == 0
    negative = ew.bitwise_and(ew.lt(x, zero), neg_sign)
    mag = ew.exp(sp.lgamma(x))
    out = ew.select(negative, ew.neg(mag), mag)
    pole = ew.bitwise_and(ew.le(x, zero), ew.eq(x, ew.floor(x)))  # 0, negative integers, -inf
    nan = full(x.shape, np.nan, x.dtype)
    signed_inf = u.copysign(full(x.shape, np.inf, x.dtype), x)
    return ew.select(ew.eq(x, zero), signed_inf, ew.select(pole, nan, out))


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)), as scipy.special.expit."""
    return ew.logistic(_float("expit", x))


def logit(p):
    """log(p / (1 - p)), the inverse of expit, as scipy.special.logit."""
    return ew.logit(_float("logit", p))  # (a card: JAX's derivative 1 / (p (1 - p)), infinite at 0 and 1)


from ..numpy._statistics import logsumexp  # noqa: E402  (stable, with a stable gradient: the softmax)

from ._special_simple import boxcox, boxcox1p, comb, loggamma  # noqa: E402,F401
from .._src.prims.special import erfcx  # noqa: E402,F401
from ._special.bessel import i0, i0e, i1, i1e  # noqa: E402,F401
from ._special.error import dawsn, log_ndtr, ndtr, ndtri, owens_t, wofz  # noqa: E402,F401
from ._special.gamma import (beta, betainc, betaln, factorial, gammainc, gammaincc, gammasgn,  # noqa: E402,F401
                             multigammaln, poch)
from ._special.hypergeometric import hyp1f1, hyp2f1  # noqa: E402,F401
from ._special.information import entr, kl_div, rel_entr, xlog1py, xlogy  # noqa: E402,F401
from ._special.integrals import exp1, expi, expn, fresnel, sici, spence  # noqa: E402,F401
from ._special.legendre import lpmn, lpmn_values, sph_harm, sph_harm_y  # noqa: E402,F401
from ._special.logexp import log_softmax, softmax  # noqa: E402,F401
from ._special.zeta import bernoulli, zeta  # noqa: E402,F401

__all__ = ["digamma", "erf", "erfc", "erfinv", "expit", "gamma", "gammaln", "logit", "logsumexp", "polygamma",
           "psi", "beta", "betainc", "betaln", "entr", "factorial", "gammainc", "gammaincc", "gammasgn", "i0",
           "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "multigammaln", "ndtr", "ndtri", "poch", "rel_entr",
           "softmax", "xlog1py", "xlogy", "zeta", "bernoulli", "exp1", "expi",
           "expn", "fresnel", "sici", "spence", "hyp1f1", "hyp2f1", "lpmn", "lpmn_values", "sph_harm", "sph_harm_y",
           "dawsn", "owens_t", "wofz", "boxcox", "boxcox1p", "comb", "loggamma", "erfcx"]
