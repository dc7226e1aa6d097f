"""Eigendecompositions: eigh (Hermitian: real eigenvalues, orthonormal vectors; its derivatives divide by
eigenvalue gaps) and eig (general matrices: complex results, vectors normalised as LAPACK does)."""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from .reduction import argmax, reduce_sum
from .linalg_decomp import (_H, _T, _check_matrix, _cj, _cols, _diag, _diag_embed, _front_batch, _impl_check, _like,
                           _mm, _real_dtype, _skew_inverse_gaps, _sym, solve)


def _eigh_rule(x: ShapedArray):
    _check_matrix("eigh", x, square=True)
    return [ShapedArray(x.shape[:-1], _real_dtype(x.dtype), x.weak_type), x]


def _eigh_impl(xp):
    def f(x):
        _impl_check(x, square=True)
        w, v = xp.linalg.eigh(0.5 * (x + xp.swapaxes(x, -1, -2).conj()))  # symmetrize as JAX does
        return [w, v]
    return f


def _eigh_jvp(primals, tangents, ans):
    x, = primals
    w, v = ans
    vh_dx_v = _mm(_H(v), _mm(_sym(tangents[0]), v))  # Hermitian: real diagonal
    if not dtypes.is_complex(x.dtype):
        dv = _mm(v, ew.mul(_skew_inverse_gaps(w), vh_dx_v))
        return [_diag(vh_dx_v), dv]
    # JAX's gauge for complex eigenvectors: V^H dV has a zero diagonal (F_ii = 0).
    dv = _mm(v, ew.mul(_like(_skew_inverse_gaps(w), v), vh_dx_v))
    return [ew.real(_diag(vh_dx_v)), dv]


def _eigh_vjp(cts, ans, args, needs):
    # The transpose of the jvp under the pairing Re sum(a * b) (no conjugation, as JAX):
    # A_bar = herm(conj(V) (diag(w_bar) + F * (V^T V_bar)) V^T).
    x, = args
    gw, gv = cts
    w, v = ans
    inner = None if gw is None else _diag_embed(_like(gw, v))
    if gv is not None:  # the eigenvector term; skipped when only eigenvalues are used
        term = ew.mul(_like(_skew_inverse_gaps(w), v), _mm(_T(v), gv))
        inner = term if inner is None else ew.add(inner, term)
    if inner is None:
        return [None]
    return [_sym(_mm(_cj(v), _mm(inner, _T(v))))]


eigh_p = Primitive("eigh", impl=_eigh_impl, abstract_eval=_eigh_rule, jvp_full=_eigh_jvp,
                   vjp_full=_eigh_vjp, multiple_results=True)


eigh_p.batch = _front_batch(eigh_p)


def eigh(x):
    """[w, v]: eigenvalues (ascending) and eigenvectors (columns) of the Hermitian part (x + x^H) / 2.

    Derivatives: dw = diag(V^H dA V) and dV = V (F * (V^H dA V)), F_ij = 1 / (w_j - w_i), F_ii = 0
    (for complex input a phase convention: diag(V^H dV) = 0, as in JAX).
    Repeated eigenvalues make F infinite, so eigenvector derivatives are inf / NaN there (as in JAX);
    reverse-mode derivatives of the eigenvalues alone stay finite."""
    return eigh_p.bind(x)


_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
            dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}


def _eig_rule(x: ShapedArray, *, vectors, eigvec_derivs):
    _check_matrix("eig", x, square=True)
    c = _COMPLEX[np.dtype(x.dtype)]
    w = ShapedArray(x.shape[:-1], c)
    return [w, ShapedArray(x.shape, c)] if vectors else [w]


def _eig_impl(xp):
    def f(x, *, vectors, eigvec_derivs):
        _impl_check(x, square=True)
        c = _COMPLEX[np.dtype(x.dtype)]
        xh = np.asarray(x.get() if hasattr(x, "get") else x)  # LAPACK geev runs on the host (as in JAX)
        bad = ~np.isfinite(xh).all(axis=(-2, -1))
        if bad.any():  # NaN/inf matrices give NaN results (as in JAX), the others their decomposition
            xh = np.where(bad[..., None, None], 0, xh)
        if not vectors:
            w = np.linalg.eigvals(xh).astype(c, copy=False)
            if bad.any():
                w[bad] = complex(np.nan, np.nan)
            return [xp.asarray(w)]
        w, v = np.linalg.eig(xh)
        w, v = w.astype(c, copy=False), v.astype(c, copy=False)
        if bad.any():
            w[bad] = complex(np.nan, np.nan)
            v[bad] = complex(np.nan, np.nan)
        return [xp.asarray(w), xp.asarray(v)]
    return f


def _eig_parts(x, ans, vectors):
    """(w, v) of x: the outputs, or (when only eigenvalues were asked for) a fresh decomposition."""
    if vectors:
        return ans[0], ans[1]
    return tuple(eig_p.bind(x, vectors=True, eigvec_derivs=True))


def _eig_no_vector_derivs():
    raise NotImplementedError(
        "eig: derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that "
        "cannot be checked (distinct eigenvalues); pass enable_eigvec_derivs=True to funcgrad.lax.linalg.eig "
        "to opt in, or differentiate eigvals only")


def _eig_mask(v):
    """mask[..., i, j] = 1 where i = argmax_i |v_ij| (LAPACK makes that component of v_j real), and
    d[..., j] = Re v_{k_j j}."""
    k = argmax(ew.abs(v), v.ndim - 2, dtypes.int32)
    rows = sh.broadcasted_iota(dtypes.int32, v.shape, v.ndim - 2)
    mask = ew.convert_element_type(ew.eq(rows, _cols(k, v.shape[-2])), v.dtype)
    d = ew.real(reduce_sum(ew.mul(mask, v), (v.ndim - 2,)))
    return mask, d


def _eig_jvp(primals, tangents, ans, *, vectors, eigvec_derivs):
    x, = primals
    if vectors and not eigvec_derivs:
        _eig_no_vector_derivs()
    w, v = _eig_parts(x, ans, vectors)
    dx = ew.convert_element_type(tangents[0], v.dtype)
    p = _mm(solve(v, dx), v)  # V^-1 dA V
    dw = _diag(p)
    if not vectors:
        return [dw]
    u = _mm(v, ew.mul(_skew_inverse_gaps(w), p))
    # dv_j = u_j + c_j v_j; unit norm fixes Re c_j, the real largest component fixes Im c_j
    nd = v.ndim
    mask, d = _eig_mask(v)
    re = ew.neg(ew.real(reduce_sum(ew.mul(ew.conj(v), u), (nd - 2,))))
    im = ew.neg(ew.div(ew.imag(reduce_sum(ew.mul(mask, u), (nd - 2,))), d))
    c = ew.complex(re, im)
    return [dw, ew.add(u, ew.mul(v, _cols(c, v.shape[-2])))]


def _eig_vjp(cts, ans, args, needs, *, vectors, eigvec_derivs):
    x, = args
    gw = cts[0]
    gv = cts[1] if vectors else None
    if gw is None and gv is None:
        return [None]
    if vectors and not eigvec_derivs:
        _eig_no_vector_derivs()
    w, v = _eig_parts(x, ans, vectors)
    n = v.shape[-1]
    gp = None if gw is None else _diag_embed(gw)
    if gv is not None:  # transpose of the jvp's eigenvector term, under the pairing Re sum(a * b)
        nd = v.ndim
        mask, d = _eig_mask(v)
        s = reduce_sum(ew.mul(gv, v), (nd - 2,))
        gu = ew.sub(gv, ew.mul(ew.conj(v), _cols(ew.complex(ew.real(s), ew.zeros_like(d)), n)))
        gu = ew.sub(gu, ew.mul(mask, _cols(ew.complex(ew.zeros_like(d), ew.div(ew.imag(s), d)), n)))
        term = ew.mul(_skew_inverse_gaps(w), _mm(_T(v), gu))
        gp = term if gp is None else ew.add(gp, term)
    ga = solve(_T(v), _mm(gp, _T(v)))  # V^-T gP V^T
    if not dtypes.is_complex(x.dtype):
        ga = ew.real(ga)
    return [ga]


eig_p = Primitive("eig", impl=_eig_impl, abstract_eval=_eig_rule, jvp_full=_eig_jvp, vjp_full=_eig_vjp,
                  multiple_results=True)


eig_p.batch = _front_batch(eig_p)


def eig(x, *, vectors: bool = True, eigvec_derivs: bool = False):
    """[w] or [w, v]: eigenvalues and right eigenvectors (columns) of general square matrices, always
    complex (complex64 for float32 / complex64 input), as LAPACK's geev gives them: each v_j has unit
    2-norm and a real largest-magnitude component. Runs on the host (NumPy's LAPACK).

    Derivatives (non-degenerate perturbation theory): with P = V^-1 dA V, dw = diag(P) and
    dv_j = u_j + c_j v_j, U = V (F * P), F_ij = 1 / (w_j - w_i) (0 on the diagonal), where the complex c_j
    keeps geev's normalisation: c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj, k = argmax_i |v_ij|.
    Eigenvector derivatives need eigvec_derivs=True (as in JAX) and distinct eigenvalues; eigenvalue
    derivatives alone are finite for repeated eigenvalues of a diagonalisable matrix in reverse mode."""
    return eig_p.bind(x, vectors=bool(vectors), eigvec_derivs=bool(eigvec_derivs))
