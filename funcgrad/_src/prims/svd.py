"""The singular value decomposition: the svd card, its jvp and vjp (which divide by singular-value gaps, made
safe where two values tie), full_matrices and compute_uv as LAPACK's gesdd."""
from __future__ import annotations

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from .linalg_decomp import (_H, _T, _check_matrix, _cj, _cols, _diag, _diag_embed, _front_batch, _imag_part,
                           _impl_check, _like, _mm, _real_dtype, _rows, _skew_inverse_gaps)


def _svd_rule(x: ShapedArray, *, full_matrices, compute_uv):
    _check_matrix("svd", x)
    m, n = x.shape[-2:]
    k = min(m, n)
    b = tuple(x.shape[:-2])
    s = ShapedArray(b + (k,), _real_dtype(x.dtype), x.weak_type)
    if not compute_uv:
        return [s]
    return [ShapedArray(b + (m, m if full_matrices else k), x.dtype, x.weak_type), s,
            ShapedArray(b + (n if full_matrices else k, n), x.dtype, x.weak_type)]


def _svd_impl(xp):
    def f(x, *, full_matrices, compute_uv):
        _impl_check(x)
        if not compute_uv:
            return [xp.linalg.svd(x, compute_uv=False)]
        u, s, vh = xp.linalg.svd(x, full_matrices=full_matrices)
        return [u, s, vh]
    return f


def _svd_factors(x, ans, full_matrices, compute_uv):
    """(u, s, v) of the reduced SVD of x (v = vh^H), from the outputs when they hold them."""
    m, n = x.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(f"svd: derivatives of the full_matrices=True SVD of a non-square matrix "
                                  f"({m}x{n}) are not defined (U or V is not unique); use "
                                  "full_matrices=False")
    if not compute_uv:
        ans = svd_p.bind(x, full_matrices=False, compute_uv=True)
    u, s, vh = ans
    return u, s, _H(vh)


def _safe_inverse(s):
    """1 / s, and 0 where s is 0 (as JAX's svd jvp)."""
    zero = ew.convert_element_type(ew.eq(s, ew.zeros_like(s)), s.dtype)
    return ew.sub(ew.div(sh.full(s.shape, 1, s.dtype), ew.add(s, zero)), zero)


def _svd_jvp(primals, tangents, ans, *, full_matrices, compute_uv):
    x, = primals
    t, = tangents
    cx = dtypes.is_complex(x.dtype)
    u, s, v = _svd_factors(x, ans, full_matrices, compute_uv)
    m, n = x.shape[-2:]
    k = min(m, n)
    ds_mat = _mm(_H(u), _mm(t, v))
    ds = ew.real(_diag(ds_mat)) if cx else _diag(ds_mat)
    if not compute_uv:
        return [ds]
    sc = _like(s, x)  # s in x's dtype
    s_j, s_i = _cols(sc, k), _rows(sc, k)
    f = _like(_skew_inverse_gaps(ew.mul(s, s)), x)  # 1 / (s_j^2 - s_i^2)
    dss = ew.mul(ds_mat, s_j)  # dS S
    sds = ew.mul(s_i, ds_mat)  # S dS
    inner_u = ew.mul(f, ew.add(dss, _H(dss)))
    if cx:  # JAX's gauge: the phase change i Im(dS_ii) / s_i goes to U alone
        inner_u = ew.add(inner_u, _diag_embed(ew.mul(_imag_part(_diag(ds_mat)), _like(_safe_inverse(s), x))))
    du = _mm(u, inner_u)
    dv = _mm(v, ew.mul(f, ew.add(sds, _H(sds))))
    if m > k:  # the part of dA V outside span(U)
        dav = _mm(t, v)
        du = ew.add(du, ew.div(ew.sub(dav, _mm(u, _mm(_H(u), dav))), _cols(sc, m)))
    if n > k:
        dahu = _mm(_H(t), u)
        dv = ew.add(dv, ew.div(ew.sub(dahu, _mm(v, _mm(_H(v), dahu))), _cols(sc, n)))
    return [du, ds, _H(dv)]


def _svd_vjp(cts, ans, args, needs, *, full_matrices, compute_uv):
    x, = args
    cx = dtypes.is_complex(x.dtype)
    if compute_uv:
        gu, gs, gvh = cts
    else:
        gu, gs, gvh = None, cts[0], None
    if gu is None and gs is None and gvh is None:
        return [None]
    u, s, v = _svd_factors(x, ans, full_matrices, compute_uv)
    m, n = x.shape[-2:]
    k = min(m, n)
    # The transpose of the jvp under the pairing Re sum(a * b) (no conjugation, as JAX); for real x:
    # A_bar = U [diag(s_bar) + (J + J^T) S + S (K + K^T)] V^T + (I - U U^T) U_bar S^-1 V^T
    #         + U S^-1 V_bar^T (I - V V^T),   J = F * (U^T U_bar), K = F * (V^T V_bar);
    # for complex x the outer U and the projectors' U, V are conjugated, J^T, K^T become J^H, K^H,
    # and diag(i Im(U^T U_bar)_ii / s_i) joins the bracket (the transpose of the jvp's phase term).
    inner = None if gs is None else _diag_embed(_like(gs, x))
    extra = None

    def acc(a, b):
        return b if a is None else ew.add(a, b)

    sc = _like(s, x)
    if gu is not None or gvh is not None:
        f = _like(_skew_inverse_gaps(ew.mul(s, s)), x)
    if gu is not None:
        ut_gu = _mm(_T(u), gu)
        j = ew.mul(f, ut_gu)
        inner = acc(inner, ew.mul(ew.add(j, _H(j)), _cols(sc, k)))
        if cx:
            inner = acc(inner, _diag_embed(ew.mul(_imag_part(_diag(ut_gu)), _like(_safe_inverse(s), x))))
        if m > k:
            gu_s = ew.div(gu, _cols(sc, m))
            extra = acc(extra, _mm(ew.sub(gu_s, _mm(_cj(u), _mm(_T(u), gu_s))), _T(v)))
    if gvh is not None:
        gv = _H(gvh)
        kk = ew.mul(f, _mm(_T(v), gv))
        inner = acc(inner, ew.mul(_rows(sc, k), ew.add(kk, _H(kk))))
        if n > k:
            gv_s_h = _H(ew.div(gv, _cols(sc, n)))  # S^-1 V_bar^H
            extra = acc(extra, _mm(_cj(u), ew.sub(gv_s_h, _mm(_mm(gv_s_h, _cj(v)), _T(v)))))
    out = _mm(_cj(u), _mm(inner, _T(v)))
    return [out if extra is None else ew.add(out, extra)]


svd_p = Primitive("svd", impl=_svd_impl, abstract_eval=_svd_rule, jvp_full=_svd_jvp, vjp_full=_svd_vjp,
                  multiple_results=True)


svd_p.batch = _front_batch(svd_p)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True):
    """[u, s, vh] (or [s] without compute_uv), as numpy.linalg.svd; s is descending.

    Differentiable for the reduced SVD (full_matrices=False, or any square input) and for s alone.
    Repeated singular values make U and V derivatives inf / NaN (as in JAX), and so do zero singular
    values of a non-square matrix; reverse-mode derivatives of s alone stay finite."""
    return svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
