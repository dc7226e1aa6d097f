"""The special-points derivative matrix: value, first and second derivatives, forward and reverse, at the
points where derivatives go wrong (0, -0.0, +-1, ties, bounds, zeros in products, singular matrices,
domain edges), for every differentiable public function of both faces (table: special_points_table.py).

For each row (face, function, inputs), in float64 (x64 on for the JAX face), the matrix computes
- the value;
- forward: J v (jvp) and d^2/dt^2 f(x + t v) (jvp of jvp), for each direction v of the row;
- reverse: J^T u (vjp; autograd.grad on the torch face) and H_g v with g = <u, f> (grad of grad;
  autograd.grad with create_graph on the torch face);
and compares them with
- the reference library (JAX for the JAX face, torch for the torch face: importorskip; a quantity the
  reference itself cannot compute, e.g. torch without a forward-mode formula, is not compared), and
- the exact value where the function is smooth at the point (EXACT: mpmath closed forms and
  mpmath.diff, computed from the math, never from funcgrad).
Elementwise rows use v = u = ones (and for binary functions the directions (1,0), (0,1), (1,1)), so the
quantities are the elementwise derivatives f', f'' (and the partials) at every point at once.

Rows failing because of bugs other branches are fixing are listed in KNOWN_OPEN (row id -> reason) as
strict xfails; the lead deletes entries as those fixes merge. A reference quantity that is not a target (the
reference's own NaN or wrong value where the exact value is known, or a point where the quantity does not exist)
is skipped per row and quantity (REFERENCE_WAIVED), or per point where the function has no derivative and the
reference gives NaN/inf or contradicts itself (REFERENCE_POINT_WAIVED); each group says why.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import os
import warnings

import numpy as np
import pytest

import funcgrad
import special_points_table as T

mpmath = pytest.importorskip("mpmath")

RTOL, ATOL = 1e-9, 1e-12          # funcgrad vs the reference (float64, both accurate to a few ulps)
EXACT_RTOL, EXACT_ATOL = 1e-9, 1e-12

# row id -> why it fails today (a strict xfail; delete the entry when the fix merges)
KNOWN_OPEN: dict[str, str] = {}

# Failing rows of the torch reference column, grouped by reason (strict xfails: delete an entry when it passes).
# Each reason says (b) funcgrad bug, or (c) a point-level convention/NaN of the reference kept as an xfail
# because REFERENCE_WAIVED waives whole quantities of a row and those rows agree everywhere else.
# Only the reference column: these rows agree with the exact column where it exists.
_OPEN_GROUPS: dict[str, tuple[str, list[str]]] = {
}
REFERENCE_OPEN: dict[str, str] = {_i: _reason for _reason, _ids in _OPEN_GROUPS.values() for _i in _ids}

# (c) Quantities of the reference column that are not a target: the reference's own NaN/inf or wrong value at a
# point where the exact value is known (and funcgrad gives it), or a point where the quantity does not exist
# (a kink, a singular problem whose value is LAPACK's rounding noise, a non-unique output). Only the listed
# quantities (value / fwd1 / fwd2 / rev1 / rev2) are skipped; the row's other quantities are still compared.
_TORCH_FACES = ("torch", "Tensor", "torch.linalg")


def _rows(names, faces=_TORCH_FACES):
    """The ids of `names` on each face (those a face lacks are dropped once ROWS exists; see below)."""
    return [f"{f}:{n}" for f in faces for n in names]


_WAIVED_GROUPS: dict[str, tuple[str, tuple[str, ...], list[str]]] = {
    'det-singular': (
        "torch's det derivatives at singular matrices: its jvp gives 0 at the rank-2 matrix where "
        "d det = tr(adj(A) V) = -3.1139, forward-over-forward 0 and Hessian NaN at the rank-1 one (funcgrad's "
        "-0.018377 = finite differences of torch.linalg.det), Hessian NaN at 0 where det's is exactly 0",
        ("fwd1", "fwd2", "rev2"), _rows(("det[rank1]", "det[rank2]", "det[zero]"))),
    'logdet-singular': (
        "log|det A| = -inf at a singular matrix: no derivative exists; torch gives NaN/0, funcgrad LAPACK's "
        "rounding noise (rank 2: det = 6.7e-16) or NaN",
        ("fwd1", "fwd2"), _rows((*[f"logdet[{k}]" for k in ("rank1", "rank2", "zero")],
                                 *[f"slogdet[{k}]" for k in ("rank1", "rank2", "zero")]))),
    'singular-noise': (
        "the inverse / condition number / solve / Q of an exactly singular (rank-2) matrix do not exist: both "
        "libraries return LAPACK's rounding noise (~1e16; Q's last column from R[2,2] ~ 1e-16), which differs; "
        "inv_ex: torch's getrf leaves a ~1e-16 pivot (info 0, the noise), funcgrad's LU an exact zero (info 3, NaN)",
        ("value", "fwd1", "fwd2", "rev1", "rev2"),
        _rows(("inverse[rank2]", "inv[rank2]", "inv_ex[rank2]", "cond[rank2]", "tensorsolve[singular_vec]",
               "qr[rank2]"))),
    'ex-failing': (
        "torch.linalg's *_ex at a matrix its factorization fails on (info > 0: singular for inv_ex/solve_ex, not "
        "positive-definite for cholesky_ex): torch returns what LAPACK's getrf/getri/potrf left in its buffer "
        "(the leading factor, infs) with NaN or zero derivatives; funcgrad returns NaN there with torch's info",
        ("value", "fwd1", "fwd2", "rev1", "rev2"),
        _rows((*[f"cholesky_ex[{k}]" for k in ("rank1", "rank2", "zero", "regular")],
               *[f"inv_ex[{k}]" for k in ("rank1", "zero")], "solve_ex[singular_mat]"))),
    'lu-rank2': (
        "torch's forward-over-forward of lu at the rank-2 matrix misses a term: funcgrad's U'' = (0.2324, "
        "-1.6899) in the last column matches finite differences of torch.linalg.lu (torch: 0.5, -1.5)",
        ("fwd2",), _rows(("lu[rank2]", "lu_factor[rank2]", "lu_factor_ex[rank2]"))),
    'lu-zero-pivot': (
        "LU with a zero pivot (rank-1 and zero matrices): L's derivative divides by the pivot, so no derivative "
        "exists; torch gives NaN, funcgrad finite numbers",
        ("fwd1", "fwd2", "rev1", "rev2"), _rows(("lu[rank1]", "lu[zero]", "lu_factor_ex[rank1]", "lu_factor_ex[zero]"))),
    'norm-zero': (
        "the Frobenius norm has a kink at A = 0: no Hessian exists; torch gives NaN, funcgrad 0",
        ("rev2",), _rows(("matrix_norm[zero]",))),
    'svd-rank2': (
        "a zero singular value (rank-2 matrix): the null singular vectors' sign is arbitrary (torch and funcgrad's "
        "LAPACK calls pick opposite ones) and sigma_min = |.| has a kink, so d sigma_min = +-u3^T V v3 follows that "
        "sign (torch +0.173, funcgrad -0.173)",
        ("value", "fwd1", "fwd2", "rev1", "rev2"), _rows(("svd[rank2]", "svdvals[rank2]", "nuclear_norm[rank2]"))),
    'svd-repeated': (
        "a repeated singular value (2, 2, 5): the singular vectors' derivatives are +-inf with a rounding-dependent "
        "sign in both libraries",
        ("fwd1",), _rows(("svd[sym_repeated]",))),
    'lstsq-rank-deficient': (
        "least squares with a rank-1 matrix: the solution (pinv) is discontinuous under perturbations that raise "
        "the rank, so no second derivative exists; torch's gelsy formula gives numbers, funcgrad NaN",
        ("rev2",), _rows(("lstsq[singular_mat]",))),
    'cholesky-inverse-fwd': (
        "torch's forward formula of cholesky_inverse is -X dF X F^H + h.c. (X and F^H swapped: the derivative is "
        "-X (dF F^H + F dF^H) X, its own reverse formula's transpose); it disagrees with torch's reverse mode and "
        "with finite differences of torch.cholesky_inverse (0.0375 at a true Cholesky factor) wherever X and F do "
        "not commute; funcgrad's fwd1 is the transpose of torch's reverse mode",
        ("fwd1",), _rows(tuple(f"cholesky_inverse[{k}]" for k in ("rank1", "rank2", "regular", "spd")))),
    'trisolve-unread-triangle': (
        "torch.triangular_solve's forward formula uses the whole dA, the lower triangle the solve never reads "
        "included; funcgrad's fwd1 (-0.9723, 0.1243, 1.1195 in row 1) is the finite difference of torch's function",
        ("fwd1",), _rows(("triangular_solve[singular_mat]",))),
    'sinc': (
        "torch's sinc derivatives near 0: sinc''(0) is 0 forward and NaN reverse at 0, -0.0 and +-1e-300 "
        "(exact -pi^2/3 = -3.2899, funcgrad's), and sinc'(1e-8) = -2.106e-8 from cancellation (exact "
        "-pi^2 x/3 = -3.290e-8); the exact column checks funcgrad at every point",
        ("fwd1", "fwd2", "rev1", "rev2"), _rows(("sinc[points]",), ("torch", "Tensor", "torch.special"))),
    'bessel-value': (
        "torch's bessel_j0/j1/y0/y1 at x = 6 are accurate to ~4e-7 relative only (j0(6): torch 0.1506452003, "
        "exact 0.1506452572510, funcgrad's); torch declares them not differentiable, so only values are compared",
        ("value",), _rows(("bessel_j0[points]", "bessel_j1[points]", "bessel_y0[points]", "bessel_y1[points]"),
                          ("torch.special",))),
    'i1-small': (
        "torch's second derivatives of i1/i1e at tiny x: i1''(1e-8) = -2.45e-9 from cancellation (exact 3x/8 = "
        "3.75e-9) and 0 reverse; i1e''(+-1e-300) = 0 where i1e = x/2 - x|x|/2 + ... gives -+1 (funcgrad's)",
        ("fwd2", "rev2"), _rows(("i1[points]", "i1e[points]"), ("torch.special",))),
    'frexp-tiny': (
        "torch's frexp derivative divides by 2^e computed in float32 (the int exponent's exp2): at x = +-1e-300 "
        "(e = -996) 2^e underflows to 0 and the derivative is inf; the exact 2^996 = 6.697e299 is funcgrad's and JAX's "
        "(tests/test_special_function_edges.py compares the other points with torch)",
        ("fwd1", "rev1"), _rows(("frexp[points]",), ("torch", "Tensor"))),
    'ndtri-tiny': (
        "JAX's ndtri'' at p = 1e-300 is NaN; the exact value ndtri * ndtri'^2 = -37.05 * (2.70e298)^2 overflows "
        "to -inf (funcgrad's and torch's)",
        ("fwd2", "rev2"), ["jsp.special:ndtri[points]"]),
    'norm-layers-fwd2': (
        "torch's second derivatives of batch_norm / instance_norm / layer_norm (forward-over-forward and the "
        "reverse-built check alike) disagree with finite differences of torch's own function at every one of "
        "these points (e.g. layer_norm[zero]: torch -0.5649, finite differences and funcgrad -0.1160)",
        ("fwd2",), [f"{f}:{n}[{k}]" for f in ("torch", "F") for n in ("batch_norm", "instance_norm")
                    for k in ("identity", "rank1", "rank2", "regular", "spd", "sym_repeated")]
        + [f"{f}:layer_norm[{k}]" for f in ("torch", "F") for k in ("minties", "ties", "zero", "zeros2")]),
    'norm-zero-hessian': (
        "a norm has a kink at 0 (dist of equal vectors, renorm / normalize of a zero row): no Hessian exists; "
        "torch gives NaN, funcgrad 0",
        ("rev2",), ["torch:dist[equal]", "Tensor:dist[equal]", "torch:renorm[zero]", "Tensor:renorm[zero]",
                    "F:normalize[zero]"]),
    'logcumsumexp-noise': (
        "torch's fwd2 of logcumsumexp's first element is 1.04e-12 (rounding); it is x0, whose second "
        "derivative is exactly 0 (funcgrad's)",
        ("fwd2",), _rows(("logcumsumexp[minties]", "logcumsumexp[zeros2]"), ("torch", "Tensor"))),
    'cosine-embedding-zero': (
        "at a zero vector cosine_embedding_loss's second derivatives are ~1/eps^2 (2.7e12); torch and funcgrad "
        "agree to 4e-9 relative, the conditioning of the point, not a 1e-9 target",
        ("fwd2", "rev2"), ["torch:cosine_embedding_loss[zero]"]),
    'hardsigmoid-slope': (
        "torch's forward derivative of hardsigmoid is 1/6 rounded to float32 (0.1666666716) in float64; "
        "funcgrad's is 1/6 exactly (the exact column checks it)",
        ("fwd1",), ["F:hardsigmoid[points]"]),
    'vander-zero': (
        "torch.vander's second derivative of the x^2 column at x = 0 is v^2, half the exact 2 v^2 (funcgrad's: "
        "0.3464 = 2 cos(2)^2); torch.linalg.vander agrees with funcgrad",
        ("fwd2",), ["torch:vander[zero]", "torch:vander[zeros2]"]),
}
# The JAX faces' whole-quantity waivers.
_WAIVED_GROUPS.update({
    'jax-partition-equal': (
        "at an all-equal vector JAX's partition (two lax.top_k calls) takes inputs 0 and 1 for both sides of kth, "
        "so its derivative sends the top side to them a second time and none to inputs 3 and 4: not the derivative "
        "of any ordering of the ties (funcgrad's is that of its stable sort)",
        ("fwd1", "rev1"), ["jnp:partition[equal]"]),
    'jax-qr-singular-noise': (
        "Q's last column at the exactly singular (rank-2) matrix comes from R[2,2] = -7.6e-16, LAPACK's rounding noise "
        "(the same in both: Q and R agree bit for bit), so its derivatives divide by it and are ~1e15-sized sums whose "
        "last bits follow each library's matmul order: dQ[1,2] = 0.5 in JAX, 0.5625 in funcgrad, from the same formula "
        "(dQ = Q (omega - C) + E, E = dA R^-1); the rank-deficient Q has no derivative",
        ("fwd1", "fwd2", "rev2"), ["jnp.linalg:qr[rank2]"]),
    'jax-attention-float32': (
        "JAX's dot_product_attention computes its softmax in float32 also under x64 (jax/_src/nn/functions.py: "
        "'Softmax is always computed in float32'), so its values and derivatives are off by ~3e-8 relative: "
        "at the regular matrix the first row is 6.99998372186004 in mpmath's softmax(q k^T / sqrt(3)) v and "
        "funcgrad's, 6.99998331763795 in JAX's",
        ("value", "fwd1", "fwd2", "rev1", "rev2"),
        [f"jax.nn:dot_product_attention[{k}]" for k in ("rank2", "rank1", "zero", "identity", "regular",
                                                         "sym_repeated", "spd")]),
})
REFERENCE_WAIVED: dict[str, tuple[tuple[str, ...], str]] = {
    _i: (_q, _reason) for _reason, _q, _ids in _WAIVED_GROUPS.values() for _i in _ids}

# (c) Point-level waivers: at the listed points (a predicate of the row's inputs) the function has no derivative
# (a pole, a discontinuity, 0/0) and the reference gives NaN or inf there, or contradicts itself between its
# modes, where funcgrad gives one finite value in every mode. Only those points of the listed quantities are
# skipped (for a row that is not elementwise, the whole quantity when any of its points is listed); every other
# point is still compared, and the exact column still checks funcgrad wherever the function is smooth.
_POINT_WAIVED_GROUPS: dict[str, tuple[str, tuple[str, ...], list[str], object]] = {
    'atan2-origin': (
        "atan2 has no derivative at (0, 0); torch contradicts itself there (reverse mode 0, forward mode and "
        "the Hessian NaN); funcgrad's torch face gives torch's reverse value, 0, in every mode",
        ("fwd1", "fwd2", "rev2"), [f"{f}:{n}[pairs]" for f in ("torch", "Tensor") for n in ("atan2", "arctan2")],
        lambda x, y: (x == 0) & (y == 0)),
    'copysign-kink': (
        "copysign(x, y) = |x| sign(y) has a kink at x = 0, so no Hessian exists there; torch's rule "
        "(grad * result / x) gives 0/0 = NaN, funcgrad 0",
        ("rev2",), ["torch:copysign[pairs]", "Tensor:copysign[pairs]"], lambda x, y: x == 0),
    'xlogy-pole': (
        "xlogy(x, y) at x = 0, y = 0 (xlog1py at y = -1) sits on the pole of log: no derivative exists; torch "
        "gives NaN/inf, funcgrad the limits along x = 0 (0 and 1), the convention that makes entr and kl_div "
        "differentiable at 0",
        ("fwd1", "fwd2", "rev1", "rev2"),
        [*[f"{f}:xlogy[pairs]" for f in ("torch", "Tensor", "torch.special")], "torch.special:xlog1py[pairs]"],
        lambda x, y: (x == 0) & ((y == 0) | (y == -1))),
    'kl_div-target-edge': (
        "kl_div's pointwise term target * (log target - input) is not differentiable in the target at target "
        "<= 0 (log's pole, or outside its domain); torch's derivatives there are NaN, funcgrad's the limits of "
        "its xlogy rule",
        ("fwd1", "fwd2", "rev1", "rev2"), ["torch:kl_div[pairs]", "F:kl_div[zeros]", "F:kl_div[equal]"],
        lambda x, y: y <= 0),
    'logit-poles': (
        "logit has poles at 0 and 1: torch's Hessian there is NaN, funcgrad's the limits -inf/+inf (at -0.0 "
        "torch's 1/(x(1-x)) is -inf, funcgrad +inf); at x = 1e-300 the Hessian -1/x^2 + 1/(1-x)^2 overflows "
        "to -inf (the exact column checks funcgrad's -inf), torch's formula gives NaN",
        ("fwd1", "fwd2", "rev1", "rev2"),
        ["torch:logit[points]", "Tensor:logit[points]", "torch.special:logit[points]"],
        lambda x: (x == 0) | (x == 1) | (np.abs(x) < 1e-150)),
    'pow-zero-base': (
        "x^y at x = 0: the Hessian in y (log x)^2 x^y and the mixed term are 0 * inf forms at the base 0; torch "
        "gives NaN, funcgrad the limits of x^2's (0 and 2)",
        ("rev2",), [f"{f}:{n}[pairs]" for f in ("torch", "Tensor") for n in ("pow", "float_power")],
        lambda x, y: x == 0),
}
# The JAX faces' point-level waivers (the same rule: JAX's NaN/inf or wrong value where the exact value is known,
# or a point where the quantity does not exist).
_POINT_WAIVED_GROUPS.update({
    'jax-ldexp-zero': (
        "jnp.ldexp(x, 3) = 8x has derivative 8 everywhere; at x = 0 JAX's gives 1 (its implementation returns x1 "
        "itself where x1 == 0, through a select); funcgrad's 8 is the exact value",
        ("fwd1", "rev1"), ["jnp:ldexp[points]"], lambda x: x == 0),
    'jax-sinc-tiny': (
        "JAX's sinc derivatives at tiny x lose everything to cancellation: sinc'(1e-300) = -inf and sinc''(1e-300) "
        "NaN (exact -pi^2 x / 3 = -3.29e-300 and -pi^2 / 3 = -3.2899, funcgrad's), sinc'(1e-8) = -1.998e-8 "
        "(exact -3.290e-8) and sinc''(1e-8) = -4.0; the exact column checks funcgrad at every point",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jnp:sinc[points]"], lambda x: (x != 0) & (np.abs(x) < 1e-4)),
    'jax-hypot-ties': (
        "JAX's hypot'' is 0 at |x| == |y| != 0 (its max/min split of the arguments has a kink at the tie); hypot is "
        "smooth there: d^2/dx^2 = y^2 / r^3 = 0.35355 at (1, 1) (funcgrad's, and the exact column's)",
        ("fwd2", "rev2"), ["jnp:hypot[pairs]"], lambda x, y: (np.abs(x) == np.abs(y)) & (x != 0)),
    'jax-i0-zero': (
        "JAX's i0''(0) is 0; I0(x) = 1 + x^2/4 + ... has I0''(0) = 1/2 exactly (funcgrad's)",
        ("fwd2", "rev2"), ["jnp:i0[points]"], lambda x: x == 0),
    'jax-jsp-i0-zero': (
        "jax.scipy.special.i0 at +-0: JAX's i0'(0) = 1 and i0''(0) = 1.5; I0 is even and smooth: I0'(0) = 0 and "
        "I0''(0) = 1/2 exactly (funcgrad's)",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:i0[points]"], lambda x: x == 0),
    'jax-expi-zero': (
        "Ei(x) -> -inf as x -> 0 from either side (Ei(x) = euler_gamma + log|x| + x + ...): scipy.special.expi(0) "
        "and funcgrad give -inf, JAX NaN",
        ("value",), ["jsp.special:expi[points]"], lambda x: x == 0),
    'jax-i1e-tiny': (
        "JAX's i1e'' at tiny x: i1e = x/2 - x|x|/2 + 5x^3/16 - ... has i1e''(x) = -sign(x) + 15x/8 near 0: exactly "
        "-+1 at +-1e-300 and -0.99999998125 at 1e-8 (funcgrad's); JAX gives 0 and -0.99999999598",
        ("fwd2", "rev2"), ["lax:bessel_i1e[points]", "jsp.special:i1e[points]"],
        lambda x: (x != 0) & (np.abs(x) < 1e-4)),
    'jax-digamma-pole': (
        "digamma's pole at 0: funcgrad gives the one-sided limits -inf at +0 and +inf at -0 (scipy.special.digamma's "
        "values, and torch's at +0), JAX NaN",
        ("value",), ["lax:digamma[points]", "jsp.special:digamma[points]"], lambda x: x == 0),
    'jax-igamma-edges': (
        "P(a, x) / Q(a, x) at the edges of their domain a >= 0, x >= 0: JAX's igamma(0, 0.5) is NaN where its own "
        "igamma(0, 1) and igammac(0, 0.5) and scipy give the limit P(0, x) = 1 (funcgrad's); at (a, x) = (1, 0) "
        "JAX's derivatives are NaN (0^0 in x^(a-1)) where the one-sided ones are exact: dP/dx = e^-x = 1, dP/da = 0",
        ("value", "fwd1", "rev1"),
        [f"{f}:{n}[pairs]" for f, n in (("lax", "igamma"), ("lax", "igammac"), ("jsp.special", "gammainc"),
                                        ("jsp.special", "gammaincc"))],
        lambda a, x: ((a == 0) & (x == 0.5)) | ((a == 1) & (x == 0))),
    'jax-zeta-continuation': (
        "zeta(x, q) for x < 1 at a non-positive integer q: the series diverges (its analytic continuation is finite: "
        "zeta(0, 0) = 1/2); JAX gives inf, scipy.special.zeta and funcgrad NaN (outside x > 1), as at every x < 1",
        ("value",), ["lax:zeta[pairs]", "jsp.special:zeta[pairs]"],
        lambda x, q: (x < 1) & (q <= 0) & (q == np.floor(q))),
})
# The jax.scipy.special / jax.scipy.stats rows (issue #20, second pass): JAX's values/derivatives checked against
# mpmath (the exact value, funcgrad's) or at points where the quantity does not exist.
_POINT_WAIVED_GROUPS.update({
    'jax-betaln-ties': (
        "JAX's betaln sorts its arguments (min(a, b), max(a, b)), whose derivatives split 1/2 : 1/2 at a == b, so "
        "its second derivatives there are (d_aa + 2 d_ab + d_bb) / 4 of the symmetric function: 0.17753 at (1, 1) "
        "where d^2/da^2 betaln = psi1(1) - psi1(2) = 1 and d^2/dadb = -psi1(2) = -0.64493 (funcgrad's)",
        ("fwd2", "rev2"), ["jsp.special:beta[pairs]", "jsp.special:betaln[pairs]"], lambda a, b: a == b),
    'jax-poch-poles': (
        "poch(z, m) = Gamma(z + m) / Gamma(z) at a pole of Gamma: for m != 0 JAX's value is NaN where only z is a "
        "pole the value is exactly 0 (poch(-1, 2) = (-1)(0)) and where z + m is one scipy.special.poch gives inf "
        "(funcgrad's values); at m = 0 with z a pole, poch(z, 0) = 1 for every z (d/dz = 0 exactly, funcgrad's) "
        "while poch(-1, m) = 0 for m != 0 near 0 (a jump: no derivative in m exists), and JAX's derivatives are NaN",
        ("value", "fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:poch[pairs]"],
        lambda z, m: ((z <= 0) & (z == np.floor(z))) | ((m != 0) & (z + m <= 0) & (z + m == np.floor(z + m)))),
    'jax-expn-zero': (
        "E_n(0) = int_1^inf t^-n dt = 1 / (n - 1) for n > 1 (scipy.special.expn, mpmath and funcgrad: E_2(0) = 1); "
        "JAX's piecewise case for x == 0 and n >= 2 returns 1 / n (0.5) and the one for n < 2 inf (E_1.5(0) = 2)",
        ("value",), ["jsp.special:expn[pairs]"], lambda n, x: (x == 0) & (n > 1)),
    'jax-fresnel-branches': (
        "JAX's fresnel jvp evaluates sin/cos(pi x^2 / 2) piecewise in r = (x^2 / 2) mod 2; at odd integers x (r = "
        "0.5, a branch edge) its second derivatives are 0 where S''(x) = pi x cos(pi x^2 / 2) = 0 but C''(x) = "
        "-pi x sin(pi x^2 / 2) = -+pi at x = +-1 (funcgrad's: 0.91711 = pi cos(1)^2 at x = -1 of the minties row)",
        ("fwd2", "rev2"), [f"jsp.special:fresnel[{k}]" for k in ("minties", "ties", "zeros2")],
        lambda x: np.abs(x) % 2 == 1),
    'jax-hyp1f1-large-negative': (
        "JAX's hyp1f1(1.5, 2.5, -30) = 0.0080920853 and its derivatives are inaccurate (its series at large |x|); "
        "mpmath: 0.00809010796897732, d/dx 0.000404505398444187, d2/dx2 3.3708783199e-5 (funcgrad's)",
        ("value", "fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:hyp1f1[points]"], lambda x: x == -30),
    'jax-hyp2f1-minus-one': (
        "JAX's hyp2f1(0.5, 1.5, 2.5, -1) = 0.79936728 at the edge |z| = 1 of its series; mpmath: 0.799259963030328, "
        "d/dz 0.138229772765671, d2/dz2 0.0804093889692216 (funcgrad's)",
        ("value", "fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:hyp2f1[inside]"], lambda x: x == -1),
    'jax-jsp-i1-tiny': (
        "JAX's i1'' near 0: I1(x) = x/2 + x^3/16 + ... has I1''(x) = 3x/8 + ...: exactly 0 at +-0 and +-1e-300, "
        "3.75e-9 at 1e-8 (funcgrad's); JAX gives +-1 and -1.1e-8",
        ("fwd2", "rev2"), ["jsp.special:i1[points]"], lambda x: np.abs(x) < 1e-4),
    'jax-kl_div-p-zero': (
        "kl_div(p, q) = p log(p / q) - p + q at p = 0: the edge of its domain p >= 0 (inf below), where the one-sided "
        "derivative log(p / q) in p is -inf: no derivative exists; JAX gives -1, funcgrad 0 (its xlogy limit along "
        "p = 0); d/dq = 1 - p / q = 1 (funcgrad's) is exact",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:kl_div[pairs]"], lambda p, q: p == 0),
    'jax-log_ndtr-tail': (
        "JAX's log_ndtr''(-30) = -0.99889637173; mpmath's -1 + ... = -0.998896228488110 (funcgrad's)",
        ("fwd2", "rev2"), ["jsp.special:log_ndtr[points]"], lambda x: x == -30),
    'jax-loggamma-zero': (
        "loggamma at +-0 (Gamma's pole, Gamma(x) -> +inf as x -> 0+): scipy.special.loggamma(+-0.0) and funcgrad "
        "give inf, JAX NaN",
        ("value",), ["jsp.special:loggamma[points]"], lambda x: x == 0),
    'jax-jsp-logit-tiny': (
        "logit''(1e-300) = -1/x^2 + 1/(1 - x)^2 overflows to -inf (the exact column checks funcgrad's -inf); JAX's "
        "reverse mode gives NaN",
        ("rev2",), ["jsp.special:logit[points]"], lambda x: (x != 0) & (np.abs(x) < 1e-150)),
    'jax-spence-derivatives': (
        "JAX's spence derivatives at 0, 1, tiny x and (reverse) 2: spence'(x) = log(x) / (1 - x) is -inf at 0 (the "
        "one-sided limit at the domain edge), -1 at 1 (the limit; spence''(1) = 1/2), log(1e-300) = -690.7755 at "
        "1e-300 and -log 2 at 2; spence''(x) = ((1 - x) / x + log x) / (1 - x)^2 is 1e300 at 1e-300 and 99999982.5793 "
        "at 1e-8 (mpmath, funcgrad's); JAX gives 0, 0, -691.7755, NaN, NaN and 99999982.0768",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:spence[points]"],
        lambda x: (x == 0) | (x == 1) | (x == 2) | ((x > 0) & (x < 1e-4))),
    'jax-xlogy-pole': (
        "xlogy(x, y) at x = 0, y <= 0 (xlog1py at y <= -1): log's pole or outside its domain, where x log y is "
        "undefined for every x != 0: no derivative exists; JAX's jvp (x_dot log y + y_dot x / y) gives NaN/inf, "
        "funcgrad the limits along x = 0",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:xlogy[pairs]"], lambda x, y: (x == 0) & (y <= 0)),
    'jax-xlog1py-pole': (
        "xlog1py(x, y) at x = 0, y <= -1: the same pole / domain edge of log1p (see jax-xlogy-pole)",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.special:xlog1py[pairs]"], lambda x, y: (x == 0) & (y <= -1)),
    'jax-chi2-zero': (
        "chi2.logpdf(0, df=2) = log(1/2) = -0.693147 (the density of chi2(2) = Exp(mean 2) at 0; scipy.stats and "
        "funcgrad), JAX NaN (0 * log 0 in its kernel)",
        ("value",), ["jsp.stats:chi2.logpdf[pairs]"], lambda x, df: (x == 0) & (df == 2)),
    'jax-gamma-logpdf-zero': (
        "gamma.logpdf(x, a) at x = 0, the edge of the support: d/da = log x - psi(a) is -inf (log's pole), so no "
        "derivative exists; JAX gives NaN (0/0 in its xlogy jvp), funcgrad the limits of its xlogy rule",
        ("fwd1", "fwd2", "rev1", "rev2"), ["jsp.stats:gamma.logpdf[pairs]"], lambda x, a: x == 0),
    'jax-dirichlet-off-simplex': (
        "dirichlet.logpdf off the simplex is the constant -inf: no derivative exists; JAX's gradient is NaN at zero "
        "entries (0/0 of its xlogy jvp leaking through the where), funcgrad's 0",
        ("rev1", "rev2"), [f"jsp.stats:dirichlet.logpdf[{k}]" for k in ("generic", "zeros")],
        lambda x, a: ~(np.all(x >= 0) & np.isclose(np.sum(x), 1.0))),
})
# row id -> [(quantities, predicate), ...]: a row may be listed by several groups, whose points add up
REFERENCE_POINT_WAIVED: dict[str, list[tuple[tuple[str, ...], object]]] = collections.defaultdict(list)
for _reason, _q, _ids, _where in _POINT_WAIVED_GROUPS.values():
    for _i in _ids:
        REFERENCE_POINT_WAIVED[_i].append((_q, _where))

# Rows whose JAX reference never returns at some points, so that the column can run unattended: JAX's exp1 /
# expi / expn evaluate every branch of their piecewise definition at every point (vectorize turns the branch
# switch into a select), and expn's continued fraction (its while loop for x > 1) does not converge in any
# practical number of iterations at x = 1e-300 or 1e-8. Both sides are compared at the other points only
# (face:name -> the points kept); the exact column checks funcgrad at every point.
REFERENCE_HANGS = {f"jsp.special:{n}": (lambda x: ~((x != 0) & (np.abs(x) < 1e-6))) for n in ("exp1", "expi")}


def _terminating(row):
    """The row at the points where its JAX reference terminates (REFERENCE_HANGS)."""
    keep = REFERENCE_HANGS.get(f"{row.face}:{row.name}")
    if keep is None or not row.elementwise:
        return row
    k = np.asarray(keep(*row.inputs))
    return dataclasses.replace(row, inputs=tuple(np.asarray(x)[k] for x in row.inputs))


# Which faces the reference column runs for: by default the torch faces (pytest.importorskip("torch"): on
# wherever torch is installed, CI included: about 35 s of CPU for ~1,900 rows). The JAX faces are opt-in because
# the JAX reference jits each row's quantities once (about 190 s of CPU for ~1,080 rows, 90 s with JAX's compile
# cache warm in .pytest_cache): .ci/run installs JAX after the main test run and runs them as a second step, with
# FUNCGRAD_SPECIAL_MATRIX_REFERENCE=jnp,lax,jax.nn,jsp.special,jsp.stats,jnp.linalg. "all" runs every face
# (unattended: see REFERENCE_HANGS), "off" none, or a comma list of faces.
_REF_ENV = os.environ.get("FUNCGRAD_SPECIAL_MATRIX_REFERENCE", "")


def _reference_on(face: str) -> bool:
    if _REF_ENV in ("off", "none", "0"):
        return False
    if _REF_ENV == "all":
        return True
    if _REF_ENV:
        return face in _REF_ENV.split(",")
    return T.FACES[face][2] == "torch"




# --- rows -------------------------------------------------------------------------------------------

# Functions of a symmetric matrix that read one triangle (torch: cholesky, eigh, eigvalsh with UPLO="L"):
# their derivative along a non-symmetric direction is a convention (torch's forward formulas take the whole
# dA as if it were symmetric, its backward formulas the symmetric part: they disagree with each other), so
# the matrix differentiates them along symmetric directions only, where every convention agrees.
SYMMETRIC_INPUT = {"cholesky", "cholesky_ex", "eigh", "eigvalsh"}


def _directions(row):
    kind, inputs = row.kind, row.inputs
    if kind == "matrix" and row.name in SYMMETRIC_INPUT:
        d = np.cos(np.arange(inputs[0].size) + 1.0).reshape(inputs[0].shape)
        return [((d + d.T) / 2,)]
    if kind == "unary_elem":
        return [(np.ones_like(inputs[0]),)]
    if kind == "binary_elem":
        one, zero = np.ones_like(inputs[0]), np.zeros_like(inputs[0])
        return [(one, zero), (zero, one), (one, one)]
    return [tuple(np.cos(np.arange(x.size) + 1.0 + 0.7 * i).reshape(x.shape) for i, x in enumerate(inputs))]


def build_rows() -> list[T.Row]:
    rows = []
    for face, res in T.classification().items():
        for name, (cls, detail) in sorted(res.items()):
            call = T.caller(face, name)
            if cls == "unary_elem":
                rows.append(T.Row(face, name, cls, "points", (T.UNARY_POINTS,), call, True))
            elif cls == "binary_elem":
                rows.append(T.Row(face, name, cls, "pairs", (T.BINARY_X, T.BINARY_Y), call, True))
            elif cls == "unary_array":
                rows += [T.Row(face, name, cls, k, (v,), call) for k, v in T.VECTOR_INPUTS.items()]
            elif cls == "binary_array":
                rows += [T.Row(face, name, cls, k, v, call) for k, v in T.VECTOR_PAIRS.items()]
            elif cls == "matrix":
                rows += [T.Row(face, name, cls, k, (v,), call) for k, v in T.MATRIX_INPUTS.items()]
            elif cls == "matrix2":
                pairs = T.MATRIX_PAIRS if detail[1].ndim == 2 else \
                    {k: v for k, v in T.MATRIX_PAIRS.items() if v[1].ndim == 1}
                if detail[1].ndim == 2:
                    pairs = {k: v for k, v in pairs.items() if v[1].ndim == 2}
                rows += [T.Row(face, name, cls, k, v, call) for k, v in pairs.items()]
            elif cls == "explicit":
                ex = T.EXPLICIT[face][name]
                rows += [T.Row(face, name, cls, k, v, ex.call, ex.elementwise) for k, v in ex.inputs.items()]
    return rows


ROWS = build_rows()
_ROW_IDS = {r.id for r in ROWS}
REFERENCE_WAIVED = {k: v for k, v in REFERENCE_WAIVED.items() if k in _ROW_IDS}
REFERENCE_POINT_WAIVED = {k: v for k, v in REFERENCE_POINT_WAIVED.items() if k in _ROW_IDS}


def _param(row, open_rows=None):
    reason = KNOWN_OPEN.get(row.id) or (open_rows or {}).get(row.id)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(row, id=row.id, marks=marks)


# --- the quantities -----------------------------------------------------------------------------

def _host_tuple(xs):
    return tuple(None if x is None else T.to_host(x) for x in xs)


def _safe(fn):
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001 - recorded and compared: the other side must fail too
        return None, e


def jax_quantities(lib, lnp, ns, row, jit=False):
    """{quantity: tuple of host arrays or exception} with lib = funcgrad or jax, lnp its numpy.

    jit=True (the JAX reference) evaluates the value and every derivative quantity of the row in one jitted
    call: one compilation per row (XLA's compile is most of the JAX column's time), the cotangents built from
    the output shapes (jax.eval_shape: tracing only). A row that cannot be traced that way falls back to one
    jitted call per quantity, then to eager evaluation.
    """
    xs = tuple(lnp.asarray(x) for x in row.inputs)

    def F(*a):
        return tuple(T.float_leaves(row.call(ns, *a), "jax"))
    if jit:
        shapes, err = _safe(lambda: lib.eval_shape(F, *xs))
        if err is None:
            us = tuple(lnp.asarray(_cotangent(row, np.zeros(s.shape, s.dtype))) for s in shapes)
            progs = {"value": F, **_programs(lib, lnp, F, row, us)}
            together, e = _safe(lambda: lib.jit(lambda *a: {k: p(*a) for k, p in progs.items()})(*xs))
            if e is None:
                return {k: _host_tuple(r) for k, r in together.items()}
    out, err = _safe(lambda: _run(lib, F, xs, jit))
    q = {"value": (_host_tuple(out) if err is None else err)}
    if err is not None:
        return q
    us = tuple(lnp.asarray(_cotangent(row, T.to_host(o))) for o in out)
    for key, prog in _programs(lib, lnp, F, row, us).items():
        r, e = _safe(lambda: _run(lib, prog, xs, jit))
        q[key] = _host_tuple(r) if e is None else e
    return q


def _programs(lib, lnp, F, row, us):
    """The derivative quantities of F at the row's inputs as functions of the inputs: fwd1 / fwd2 / rev2 per
    direction, rev1 with the cotangents `us`."""
    n = len(row.inputs)

    def g(*a):
        return sum(lnp.sum(u * o) for u, o in zip(us, F(*a)))
    progs = {}
    for k, v in enumerate(_directions(row)):
        vv = tuple(lnp.asarray(t) for t in v)

        def h(*a, vv=vv):
            gr = lib.grad(g, argnums=tuple(range(n)))(*a)
            return sum(lnp.sum(gi * vi) for gi, vi in zip(gr, vv))
        progs[f"fwd1[{k}]"] = lambda *a, vv=vv: lib.jvp(F, a, vv)[1]
        progs[f"fwd2[{k}]"] = lambda *a, vv=vv: lib.jvp(lambda *b: lib.jvp(F, b, vv)[1], a, vv)[1]
        progs[f"rev2[{k}]"] = lambda *a, h=h: lib.grad(h, argnums=tuple(range(n)))(*a)
    progs["rev1"] = lambda *a: lib.vjp(F, *a)[1](us)
    return progs


def _run(lib, fn, xs, jit):
    """fn(*xs), jitted when `jit` (falling back to eager where fn cannot be traced)."""
    if not jit:
        return fn(*xs)
    try:
        return lib.jit(fn)(*xs)
    except Exception:  # noqa: BLE001 - untraceable (data-dependent shapes, concrete values): run eagerly
        return fn(*xs)


def torch_quantities(lib, ns, row, reference=False):
    """The same quantities on the torch face: lib = funcgrad (as torch) or torch (reference=True)."""
    def mk(x):
        return lib.tensor(np.asarray(x), dtype=lib.float64)
    xs = tuple(mk(x) for x in row.inputs)

    def F(*a):
        return tuple(T.float_leaves(row.call(ns, *a), "torch"))
    out, err = _safe(lambda: F(*xs))
    q = {"value": (_host_tuple(out) if err is None else err)}
    if err is not None:
        return q
    us = tuple(mk(_cotangent(row, T.to_host(o))) for o in out)
    if reference and _not_differentiable(lib, F, xs):
        # torch declares the function not differentiable (its outputs never require grad: the orthogonal
        # polynomials of torch.special, frexp, ...): torch has no derivative to compare, not a zero one
        why = NotImplementedError(f"torch: {row.name} is not differentiable")
        q.update({k: why for d in range(len(_directions(row))) for k in (f"fwd1[{d}]", f"fwd2[{d}]", f"rev2[{d}]")})
        q["rev1"] = why
        return q

    def rev(vv):
        leaves = tuple(x.detach().clone().requires_grad_(True) for x in xs)
        o = F(*leaves)
        g = sum((u * oi).sum() for u, oi in zip(us, o) if oi.requires_grad)
        if not isinstance(g, lib.Tensor) or not g.requires_grad:
            z = tuple(lib.zeros_like(x) for x in xs)
            return z, z
        gr = lib.autograd.grad(g, leaves, create_graph=True, allow_unused=True)
        gr = tuple(lib.zeros_like(x) if gi is None else gi for x, gi in zip(xs, gr))
        terms = [(gi * lib.tensor(vi, dtype=lib.float64)).sum() for gi, vi in zip(gr, vv) if gi.requires_grad]
        if not terms:
            return gr, tuple(lib.zeros_like(x) for x in xs)
        hv = lib.autograd.grad(sum(terms), leaves, allow_unused=True)
        return gr, tuple(lib.zeros_like(x) if hi is None else hi for x, hi in zip(xs, hv))

    for k, v in enumerate(_directions(row)):
        vv = tuple(mk(t) for t in v)
        r, e = _safe(lambda: lib.func.jvp(F, xs, vv)[1])
        q[f"fwd1[{k}]"] = _host_tuple(r) if e is None else e
        r, e = _safe(lambda: _host_tuple(lib.func.jvp(lambda *a: lib.func.jvp(F, a, vv)[1], xs, vv)[1]))
        if reference and e is None and all(np.all(np.isfinite(o)) for o in q["value"]):
            r = _reverse_checked_fwd2(lib, F, xs, vv, r)
        q[f"fwd2[{k}]"] = r if e is None else e
        r, e = _safe(lambda: rev(v))
        if e is None:
            q["rev1"] = _host_tuple(r[0])
            q[f"rev2[{k}]"] = _host_tuple(r[1])
        else:
            q["rev1"] = q[f"rev2[{k}]"] = e
    return q


def _not_differentiable(torch, F, xs):
    """Whether torch declares F not differentiable: no output requires grad when every input does."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return not any(o.requires_grad for o in F(*(x.detach().clone().requires_grad_(True) for x in xs)))
    except Exception:  # noqa: BLE001 - torch refuses grad for some input (a target): the rev path handles it
        return False


def _reverse_checked_fwd2(torch, F, xs, vv, fwd2):
    """torch's forward-over-forward d^2/dt^2 F(x + t v), checked against the same quantity built from
    torch's reverse mode (two nested double-backward jvps, torch.autograd.functional.jvp).

    torch's forward-mode formulas of det/slogdet/logdet/cholesky/eigh/svd/qr/lu/solve/inverse are not
    forward-differentiable again: their jvp of jvp misses second-order terms even at regular matrices
    (torch 2.13: d^2/dt^2 det(I + t V) gives 0.0076 where (tr V)^2 - tr(V^2) = 0.0332, which finite
    differences and torch's own reverse mode give). Where both are finite and they disagree, torch
    contradicts itself; the reverse-mode value, the one consistent with finite differences, is the
    reference. Elsewhere (agreement, NaN in either, or a row whose value is not finite, where there is no
    function to difference) the forward-over-forward value is kept.
    """
    AF = torch.autograd.functional

    def inner(*a):
        return AF.jvp(F, a, vv, create_graph=True)[1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alt = _host_tuple(AF.jvp(inner, xs, vv)[1])
    except Exception:  # noqa: BLE001 - reverse mode unavailable: keep the forward value
        return fwd2
    if len(alt) != len(fwd2):
        return fwd2
    out = []
    for f, r in zip(fwd2, alt):
        if f is None or r is None or f.shape != r.shape or not (np.all(np.isfinite(f)) and np.all(np.isfinite(r))):
            out.append(f)
        else:
            out.append(r if not np.allclose(f, r, rtol=RTOL, atol=ATOL) else f)
    return tuple(out)


def _cotangent(row, out):
    if row.elementwise:
        return np.ones_like(out)
    return np.sin(np.arange(out.size) + 0.5).reshape(out.shape) + 0.25


def funcgrad_quantities(row):
    path, _, kind = T.FACES[row.face]
    ns = T.resolve(path)
    if kind == "jax":
        import funcgrad.numpy as fnp
        return jax_quantities(funcgrad, fnp, ns, row)
    return torch_quantities(funcgrad, ns, row)


def reference_quantities(row):
    path, ref, kind = T.FACES[row.face]
    if kind == "jax":
        jax = pytest.importorskip("jax")
        import jax.numpy as jjnp
        ns = T.resolve(ref)
        if not _has(ns, row.name, row.face):
            return None
        return jax_quantities(jax, jjnp, ns, row, jit=True)
    torch = pytest.importorskip("torch")
    ns = T.resolve(ref)
    if not _has(ns, row.name, row.face):
        return None
    return torch_quantities(torch, ns, row, reference=True)


def _has(ns, name, face):
    try:
        T.lookup(ns, name)
        return True
    except AttributeError:
        return False


# --- comparison --------------------------------------------------------------------------------

def compare(got, want, what, rtol, atol):
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what}[{i}]: shape {g.shape}, expected {w.shape}"
        g, w = np.atleast_1d(g), np.atleast_1d(w)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if np.any(bad):
            idx = list(zip(*np.nonzero(bad)))[:6]
            detail = ", ".join(f"at {tuple(int(j) for j in ix)}: {g[ix]!r} vs {w[ix]!r}" for ix in idx)
            raise AssertionError(f"{what}[{i}]: {int(bad.sum())} of {g.size} differ ({detail})")


@pytest.fixture
def x64():
    prev = funcgrad.config.read("enable_x64")
    funcgrad.config.update("enable_x64", True)
    jax = None
    try:
        import jax
        jprev = jax.config.read("jax_enable_x64")
        jax.config.update("jax_enable_x64", True)
    except ImportError:
        pass
    yield
    funcgrad.config.update("enable_x64", prev)
    if jax is not None:
        jax.config.update("jax_enable_x64", jprev)


@pytest.fixture(scope="module")
def jax_compile_cache(pytestconfig, tmp_path_factory):
    """While the JAX column runs: JAX's persistent compilation cache in pytest's cache directory, so that a rerun
    (locally, or in CI keeping .pytest_cache) loads each row's compiled program instead of compiling it again
    (XLA's compilation is most of the column's time). Kept off where the user set a cache directory of their own
    or FUNCGRAD_SPECIAL_MATRIX_JAX_CACHE=off; the previous settings come back after the module."""
    jax_faces = [f for f, (_, _, kind) in T.FACES.items() if kind == "jax"]
    if os.environ.get("FUNCGRAD_SPECIAL_MATRIX_JAX_CACHE") == "off" or not any(map(_reference_on, jax_faces)):
        yield
        return
    try:
        import jax
        from jax.experimental.compilation_cache import compilation_cache as cc
    except ImportError:
        yield
        return
    names = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes")
    prev = {n: getattr(jax.config, n) for n in names}
    if prev["jax_compilation_cache_dir"]:
        yield
        return
    cache = getattr(pytestconfig, "cache", None)  # (None under -p no:cacheprovider: a fresh directory then)
    where = cache.mkdir("jax-compilation-cache") if cache is not None else tmp_path_factory.mktemp("jax-cache")
    jax.config.update(names[0], str(where))
    jax.config.update(names[1], 0.0)  # the rows' programs compile in ~0.05 s each: keep them all
    jax.config.update(names[2], 0)
    cc.reset_cache()
    yield
    for n, v in prev.items():
        jax.config.update(n, v)
    cc.reset_cache()


def _points_note(row):
    return f"inputs {[np.asarray(x).tolist() for x in row.inputs]}"


@pytest.mark.parametrize("row", [_param(r, REFERENCE_OPEN) for r in ROWS])
def test_matches_reference(row, x64, jax_compile_cache):
    if not _reference_on(row.face):
        pytest.skip(f"reference column off for {row.face} (FUNCGRAD_SPECIAL_MATRIX_REFERENCE={_REF_ENV!r})")
    row = _terminating(row)
    ours = funcgrad_quantities(row)
    ref = reference_quantities(row)
    if ref is None:
        pytest.skip(f"{row.face}:{row.name} has no counterpart in the reference library")
    errors = []
    waived = REFERENCE_WAIVED.get(row.id, ((), ""))[0]
    domain = _domain(row, ref)
    point_groups = REFERENCE_POINT_WAIVED.get(row.id, [])

    def kept_for(quantity):
        """The points of the row compared for `quantity` (None: all), after the point-level waivers."""
        keep = None
        for quantities, where in point_groups:
            if quantity in quantities:
                k = ~np.asarray(where(*row.inputs))
                keep = k if keep is None else keep & k
        return keep
    for key, want in ref.items():
        got = ours.get(key)
        if key.split("[")[0] in waived:
            continue  # (c): not a target at this point (REFERENCE_WAIVED says why)
        mask = domain
        kept = kept_for(key.split("[")[0])
        point_waived = kept is not None
        if point_waived:  # (c): not a target at these points (_POINT_WAIVED_GROUPS)
            if not row.elementwise:
                if not kept.all():
                    continue
            else:
                mask = kept if mask is None else mask & kept
        if isinstance(want, Exception):
            continue  # the reference cannot compute this quantity: nothing to compare
        if isinstance(got, Exception) or got is None:
            errors.append(f"{key}: funcgrad raised {type(got).__name__}: {got} (the reference computes it)")
            continue
        if key == "value":  # values are compared at every point but the point-waived ones
            mask = kept if point_waived and row.elementwise else None
        if mask is not None:
            got, want = _at(got, mask), _at(want, mask)
        try:
            compare(got, want, key, RTOL, ATOL)
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, f"{row.id} vs the reference; {_points_note(row)}\n  " + "\n  ".join(errors)


def _domain(row, ref):
    """For an elementwise row, the points where the reference's value is finite: outside a function's domain
    (acosh(-1), atanh(2): NaN) or at a pole (lgamma(-1), rsqrt(-0.0): inf) no derivative exists, so only the
    values (compared everywhere) are targets there, not the sign of an infinite or NaN derivative."""
    value = ref.get("value")
    if not row.elementwise or isinstance(value, Exception) or len(value) != 1:
        return None
    return np.isfinite(value[0])


def _at(xs, mask):
    return tuple(x[mask] if x is not None and x.shape == mask.shape else x for x in xs)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS if T.has_exact(r)])
def test_matches_exact(row, x64):
    exact = T.exact_for(row)  # computed here, not at collection: mpmath takes seconds for the whole table
    mask = next(iter(exact.values()))[1]
    ours = funcgrad_quantities(row)
    errors = []
    for key, (want, mask) in exact.items():
        got = ours.get(key)
        if isinstance(got, Exception) or got is None:
            errors.append(f"{key}: funcgrad raised {type(got).__name__}: {got}")
            continue
        try:
            compare(tuple(np.asarray(g)[mask] for g in got), tuple(w[mask] for w in want), key,
                    EXACT_RTOL, EXACT_ATOL)
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, f"{row.id} vs the exact values at {T.UNARY_POINTS[mask].tolist()}\n  " + \
        "\n  ".join(errors)


def test_listed_rows_exist():
    """Every xfail and every waiver group names rows of the table (a typo would silently list nothing)."""
    unknown = sorted(i for i in REFERENCE_OPEN if i not in _ROW_IDS)
    empty = sorted(g for g, (_, _, ids) in _WAIVED_GROUPS.items() if not set(ids) & _ROW_IDS)
    empty += sorted(g for g, (_, _, ids, _) in _POINT_WAIVED_GROUPS.items() if not set(ids) & _ROW_IDS)
    assert not unknown and not empty, f"unknown xfail rows {unknown}, waiver groups naming no row {empty}"


def test_row_counts(capsys):
    counts = collections.Counter(r.face for r in ROWS)
    with capsys.disabled():
        print("\nspecial-points matrix rows per face:", dict(counts), "total", len(ROWS))
    assert len(ROWS) > 500


def _unclassified():
    return {face: sorted(n for n, (cls, _) in res.items() if cls == "unclassified")
            for face, res in T.classification().items()}


def test_every_public_name_is_covered_or_listed():
    missing = {face: names for face, names in _unclassified().items() if names}
    assert not missing, "public names neither covered nor listed with a reason:\n" + "\n".join(
        f"  {face} ({len(v)}): {', '.join(v)}" for face, v in missing.items())


def test_classification_summary(capsys):
    """Per face: how many public names each class holds (covered rows, listed skips, automatic ones)."""
    summary = {face: dict(collections.Counter(cls for cls, _ in res.values()))
               for face, res in T.classification().items()}
    with capsys.disabled():
        for face, counts in summary.items():
            print(f"\n  {face}: {counts}", end="")
        print()
    covered = sum(n for c in summary.values() for k, n in c.items()
                  if k in ("unary_elem", "binary_elem", "unary_array", "binary_array", "matrix", "matrix2"))
    assert covered > 700
