"""Determinants: det, slogdet and the adjugate, det's derivative (adj(A)^T), computed so that it stays valid
for singular matrices, where det's usual formula det * inv(A)^T divides by zero."""
from __future__ import annotations

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from .reduction import prod_others, reduce_sum
from .linalg_decomp import (_H, _T, _check_matrix, _cj, _cols, _diag, _diag_embed, _eye, _front_batch, _imag_part,
                           _impl_check, _inv_T, _like, _mm, _real_dtype, _scalar_bcast, _trace, solve)
from .svd import svd_p


def _det_rule(a: ShapedArray) -> ShapedArray:
    _check_matrix("det", a, square=True)
    return ShapedArray(a.shape[:-2], a.dtype, a.weak_type)


def _det_jvp(t, ans, a):
    # d det = tr(adj(A) dA): the adjugate exists for every A, singular or not
    return reduce_sum(ew.mul(_T(adjugate(a)), t), (a.ndim - 2, a.ndim - 1))


def _det_vjp(g, ans, a):
    return ew.mul(_scalar_bcast(g, a), _T(adjugate(a)))


def _det_impl(xp):
    def f(a):
        _impl_check(a, square=True)
        return xp.linalg.det(a)
    return f


det_p = Primitive("det", impl=_det_impl, abstract_eval=_det_rule,
                  jvp=[_det_jvp], vjp=[_det_vjp])


det_p.batch = _front_batch(det_p)


def _adjugate_rule(a: ShapedArray) -> ShapedArray:
    _check_matrix("adjugate", a, square=True)
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def _exclusive_products(xp, s):
    """out[..., i] = prod_{k != i} s[..., k], without division."""
    one = xp.ones(s.shape[:-1] + (1,), s.dtype)
    before = xp.cumprod(xp.concatenate([one, s[..., :-1]], -1), -1)
    after = xp.cumprod(xp.concatenate([one, s[..., :0:-1]], -1), -1)[..., ::-1]
    return before * after


def _adjugate_impl(xp):
    def f(a):
        _impl_check(a, square=True)
        n = a.shape[-1]
        if n <= 1:
            return xp.ones(a.shape, a.dtype)
        u, s, vh = xp.linalg.svd(a)
        sigma = xp.linalg.det(u) * xp.linalg.det(vh)
        g = _exclusive_products(xp, s).astype(a.dtype)
        adj = xp.matmul(xp.swapaxes(vh, -1, -2).conj() * g[..., None, :], xp.swapaxes(u, -1, -2).conj())
        return adj * sigma[..., None, None]
    return f


def _adjugate_basis(a):
    """(u, v, sigma, P) of the module comment, for square a (..., n, n), n >= 2."""
    u, s, vh = svd_p.bind(a, full_matrices=False, compute_uv=True)
    n = a.shape[-1]
    eye = _eye(tuple(s.shape) + (n,), s.dtype)
    ones = sh.full(eye.shape, 1, s.dtype)
    rows = ew.select(ew.eq(eye, ones), ones, _cols(s, n))  # rows[i, k] = s_k, 1 at k = i
    p = ew.mul(prod_others(rows, (rows.ndim - 1,)), ew.sub(ones, eye))  # P_ij = prod_{k != i, j} s_k
    sigma = ew.mul(det_p.bind(u), det_p.bind(vh))
    return u, _H(vh), sigma, _like(p, a)


def _adjugate_inner(p, c):
    """diag(P diag(c)) - P * c: the first-order cofactors of diag(s) + c."""
    d = reduce_sum(ew.mul(p, _cols(_diag(c), c.shape[-1])), (c.ndim - 1,))
    return ew.sub(_diag_embed(d), ew.mul(p, c))


def _adjugate_jvp(t, ans, a):
    if a.shape[-1] <= 1:
        return ew.zeros_like(t)
    u, v, sigma, p = _adjugate_basis(a)
    inner = _adjugate_inner(p, _mm(_H(u), _mm(t, v)))
    return ew.mul(_scalar_bcast(sigma, a), _mm(v, _mm(inner, _H(u))))


def _adjugate_vjp(g, ans, a):
    if a.shape[-1] <= 1:
        return ew.zeros_like(g)
    u, v, sigma, p = _adjugate_basis(a)
    h = ew.mul(_scalar_bcast(sigma, a), _mm(_T(v), _mm(g, _cj(u))))
    return _mm(_cj(u), _mm(_adjugate_inner(p, h), _T(v)))


adjugate_p = Primitive("adjugate", impl=_adjugate_impl, abstract_eval=_adjugate_rule,
                       jvp=[_adjugate_jvp], vjp=[_adjugate_vjp])


adjugate_p.batch = _front_batch(adjugate_p)


def adjugate(a):
    """The adjugate (classical adjoint) adj(A), with adj(A) A = det(A) I: det(A) A^-1 for invertible A,
    and defined (by the SVD, without division) for singular A too."""
    return adjugate_p.bind(a)


def _slogdet_rule(a: ShapedArray):
    _check_matrix("slogdet", a, square=True)
    return [ShapedArray(a.shape[:-2], a.dtype, a.weak_type),
            ShapedArray(a.shape[:-2], _real_dtype(a.dtype), a.weak_type)]


def _slogdet_impl(xp):
    def f(a):
        _impl_check(a, square=True)
        sign, logdet = xp.linalg.slogdet(a)
        return [sign, logdet]
    return f


def _slogdet_jvp(primals, tangents, ans):
    a, = primals
    # With d = tr(A^-1 dA): d log|det| = Re d; the sign is locally constant for real input, and for
    # complex input it turns with the phase: d sign = sign i Im d (as JAX).
    d = _trace(solve(a, tangents[0]))
    if not dtypes.is_complex(a.dtype):
        return [None, d]
    return [ew.mul(ans[0], _imag_part(d)), ew.real(d)]


def _slogdet_vjp(cts, ans, args, needs):
    a, = args
    g_sign, g_log = cts
    if dtypes.is_complex(a.dtype):
        # The transpose of the jvp: the cotangent of d is g_log + i Im(sign g_sign).
        gd = None if g_log is None else _like(g_log, a)
        if g_sign is not None:
            t = _imag_part(ew.mul(ans[0], g_sign))
            gd = t if gd is None else ew.add(gd, t)
    else:
        gd = g_log
    if gd is None:
        return [None]
    return [ew.mul(_scalar_bcast(gd, a), _inv_T(a))]


slogdet_p = Primitive("slogdet", impl=_slogdet_impl, abstract_eval=_slogdet_rule, jvp_full=_slogdet_jvp,
                      vjp_full=_slogdet_vjp, multiple_results=True)


slogdet_p.batch = _front_batch(slogdet_p)


def det(a):
    return det_p.bind(a)


def slogdet(a):
    """[sign, log|det|] of square matrices, as numpy.linalg.slogdet."""
    return slogdet_p.bind(a)
