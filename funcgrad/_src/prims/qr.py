"""The QR decomposition: the qr card (reduced, complete and r-only modes) and its jvp/vjp for square, tall
and wide matrices."""
from __future__ import annotations

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from .linalg_decomp import (_H, _T, _check_matrix, _cj, _diag, _diag_embed, _front_batch, _imag_part, _impl_check, _mm,
                           _tril, triangular_solve)


def _qr_rule(x: ShapedArray, *, full_matrices):
    _check_matrix("qr", x)
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    b = tuple(x.shape[:-2])
    return [ShapedArray(b + (m, k), x.dtype, x.weak_type), ShapedArray(b + (k, n), x.dtype, x.weak_type)]


def _qr_impl(xp):
    def f(x, *, full_matrices):
        _impl_check(x)
        q, r = xp.linalg.qr(x, mode="complete" if full_matrices else "reduced")
        return [q, r]
    return f


def _qr_check(x, full_matrices):
    m, n = x.shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(f"qr: derivatives of the complete QR of a tall matrix ({m}x{n}) are not "
                                  "defined (Q is not unique); use the reduced mode")


def _split(x, m):
    """x (..., m, n) with m < n as its first m columns and the rest."""
    nd = x.ndim
    head = sh.slice(x, (0,) * nd, tuple(x.shape[:-1]) + (m,))
    tail = sh.slice(x, (0,) * (nd - 1) + (m,), tuple(x.shape))
    return head, tail


def _qr_square_jvp(q, r, t):
    # E = dA R^-1, C = Q^H E, omega = tril(C, -1) - tril(C, -1)^H (skew-Hermitian), plus, for complex
    # input, i Im(diag C) on the diagonal (R keeps a real diagonal, as in JAX);
    # dQ = Q (omega - C) + E, dR = (C - omega) R
    e = triangular_solve(r, t, left_side=False, lower=False)
    c = _mm(_H(q), e)
    low = _tril(c, -1)
    omega = ew.sub(low, _H(low))
    if dtypes.is_complex(c.dtype):
        omega = ew.add(omega, _diag_embed(_imag_part(_diag(c))))
    return ew.add(_mm(q, ew.sub(omega, c)), e), _mm(ew.sub(c, omega), r)


def _qr_jvp(primals, tangents, ans, *, full_matrices):
    x, = primals
    t, = tangents
    _qr_check(x, full_matrices)
    q, r = ans
    m, n = x.shape[-2:]
    if m >= n:
        return list(_qr_square_jvp(q, r, t))
    # A = [X | Y]: Q R1 = X is a square QR and R2 = Q^H Y.
    r1, _ = _split(r, m)
    x_y = _split(x, m)[1]
    t_x, t_y = _split(t, m)
    dq, dr1 = _qr_square_jvp(q, r1, t_x)
    dr2 = ew.add(_mm(_H(dq), x_y), _mm(_H(q), t_y))
    return [dq, sh.concatenate([dr1, dr2], r.ndim - 1)]


def _copyltu(mat):
    """The symmetric matrix with mat's lower triangle."""
    return ew.add(_tril(mat), _T(_tril(mat, -1)))


def _qr_square_vjp(q, r, gq, gr):
    # The transpose of the jvp under the pairing Re sum(a * b) (no conjugation, as JAX):
    # A_bar = (Q_bar + conj(Q) G) R^-T,  M = R R_bar^T - Q_bar^T Q, G = copyltu(M) for real input;
    # for complex input G = tril(M, -1)^T + conj(tril(M, -1)) + Re(diag M) (the omega terms'
    # transposes: the conjugate transpose, and the self-transposing i Im(.) on the diagonal).
    mat = None
    if gr is not None:
        mat = _mm(r, _T(gr))
    if gq is not None:
        qq = _mm(_T(gq), q)
        mat = ew.neg(qq) if mat is None else ew.sub(mat, qq)
    if dtypes.is_complex(mat.dtype):
        low = _tril(mat, -1)
        d = _diag(mat)
        g = ew.add(ew.add(_T(low), ew.conj(low)), _diag_embed(ew.sub(d, _imag_part(d))))
    else:
        g = _copyltu(mat)
    b = _mm(_cj(q), g)
    if gq is not None:
        b = ew.add(b, gq)
    return triangular_solve(r, b, left_side=False, lower=False, transpose_a=True)


def _qr_vjp(cts, ans, args, needs, *, full_matrices):
    x, = args
    gq, gr = cts
    if gq is None and gr is None:
        return [None]
    _qr_check(x, full_matrices)
    q, r = ans
    m, n = x.shape[-2:]
    if m >= n:
        return [_qr_square_vjp(q, r, gq, gr)]
    r1, _ = _split(r, m)
    x_y = _split(x, m)[1]
    gr1, gr2 = _split(gr, m) if gr is not None else (None, None)
    if gr2 is not None:  # transpose of dQ -> dQ^H Y
        extra = _mm(_cj(x_y), _H(gr2))
        gq = extra if gq is None else ew.add(gq, extra)
    g_x = _qr_square_vjp(q, r1, gq, gr1)
    g_y = _mm(_cj(q), gr2) if gr2 is not None else sh.full(x_y.shape, 0, x.dtype)
    return [sh.concatenate([g_x, g_y], x.ndim - 1)]


qr_p = Primitive("qr", impl=_qr_impl, abstract_eval=_qr_rule, jvp_full=_qr_jvp, vjp_full=_qr_vjp,
                 multiple_results=True)


qr_p.batch = _front_batch(qr_p)


def qr(x, *, full_matrices: bool = False):
    """[q, r] with x = q r, as numpy.linalg.qr (mode 'complete' when full_matrices, else 'reduced').

    Differentiable in reduced mode for any shape (and in complete mode when M <= N); a rank-deficient
    input gives inf / NaN derivatives (R is singular)."""
    return qr_p.bind(x, full_matrices=bool(full_matrices))


# --- geqrf: the Householder form (numpy.linalg.qr's mode 'raw', jnp.linalg.qr(mode='raw')) ---------

def _geqrf_rule(x: ShapedArray):
    _check_matrix("geqrf", x)
    m, n = x.shape[-2:]
    b = tuple(x.shape[:-2])
    return [ShapedArray(b + (m, n), x.dtype, x.weak_type), ShapedArray(b + (min(m, n),), x.dtype, x.weak_type)]


def _geqrf_impl(xp):
    def f(x):
        _impl_check(x)
        h, tau = xp.linalg.qr(x, mode="raw")   # (LAPACK's geqrf; NumPy hands back h transposed)
        return [xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau]
    return f


def _geqrf_no_derivative(*args, **params):
    raise NotImplementedError("Differentiation rule for 'geqrf' not implemented")


geqrf_p = Primitive("geqrf", impl=_geqrf_impl, abstract_eval=_geqrf_rule, jvp_full=_geqrf_no_derivative,
                    vjp_full=_geqrf_no_derivative, multiple_results=True)
geqrf_p.batch = _front_batch(geqrf_p)


def geqrf(x):
    """[a, taus]: LAPACK's geqrf of x (as jax.lax.linalg.geqrf): R on and above the diagonal of a, the
    Householder vectors below it, and their scale factors taus. No derivative (as JAX's)."""
    return geqrf_p.bind(x)
