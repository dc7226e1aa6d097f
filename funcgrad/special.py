"""funcgrad.special (torch.special): special functions of tensors, with torch's names and dtype rules
(integer input computes in the default float dtype) and autograd through the primitives' rules.

    import funcgrad as torch
    torch.special.log_ndtr(x), torch.special.i0e(x), torch.special.xlog1py(x, y)
"""
from __future__ import annotations

import sys as _sys

from ._torch import _docs
from ._torch.ops import activations as _activations, reductions as _reductions, unary as _unary
from ._torch.ops._common import _out
from ._torch import sinc as _torch_sinc
from ._torch._special_ops import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0,  # noqa: F401,E501
                                  modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1, zeta)
from ._torch._special_ops import (chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,  # noqa: F401
                                  chebyshev_polynomial_w, entr, erfcx, exp2, expit, gammainc, gammaincc,
                                  hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e,
                                  laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, multigammaln, ndtr, ndtri,
                                  polygamma, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
                                  shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w,
                                  spherical_bessel_j0, xlog1py, xlogy)

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "xlogy", "xlog1py", "gammaln", "digamma", "psi", "polygamma",
           "multigammaln", "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "ndtr", "ndtri",
           "log_ndtr", "sinc", "entr", "log1p", "expm1", "exp2", "logsumexp", "softmax", "log_softmax", "round",
           "gammainc", "gammaincc", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p", "spherical_bessel_j0",
           "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "erfcx", "bessel_j0", "bessel_j1", "zeta", "bessel_y0", "bessel_y1", "modified_bessel_k0",
           "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai"]

erf = _unary.erf
erfc = _unary.erfc
erfinv = _unary.erfinv
gammaln = _unary.lgamma
digamma = psi = _unary.digamma
log1p = _unary.log1p
expm1 = _unary.expm1
sinc = _torch_sinc
modified_bessel_i0 = i0
modified_bessel_i1 = i1


def logit(input, eps=None, *, out=None):
    return _out(_activations.logit(input, eps), out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _out(_reductions.logsumexp(input, dim, keepdim), out)


def softmax(input, dim, *, dtype=None):
    return _activations.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _activations.log_softmax(input, dim, dtype)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    return _unary.round(input, decimals=decimals, out=out)


from ._torch import _complex_reject as _CR  # noqa: E402
_CR.install_special(globals())
from ._torch import overrides as _overrides  # noqa: E402
_overrides.install(globals(), __all__, "special", "funcgrad.special", distinct=True)  # (`__torch_function__`)
_docs.attach_table(_sys.modules[__name__], _docs.SPECIAL)  # (the one-line docstrings of the undocumented ones)
