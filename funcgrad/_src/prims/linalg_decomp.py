"""Matrix factorisations and solves: cholesky, triangular_solve, cholesky_solve, solve, det, slogdet, eigh, svd,
qr, eig.

Every primitive takes stacks of matrices `(..., M, N)`: leading dimensions are batch dimensions (the
batch rules move a vmapped axis to the front). The impls call the backend's `linalg` module (NumPy or
CuPy), so float32 / complex64 input stays in its precision; input must be float32, float64, complex64
or complex128 (funcgrad.numpy.linalg converts integers first). A non-positive-definite input to cholesky
gives NaN (JAX's convention) or raises numpy.linalg.LinAlgError (torch's; the card's `convention` parameter,
chosen by the face); solve of an exactly singular matrix gives inf / NaN, as JAX's LU solve does, and so does a triangular solve with a zero
on the diagonal (plain substitution, as BLAS trsm in JAX and torch); bad shapes
raise LinAlgError (a ValueError) from the shape rule, naming the operation and the shapes.

The derivative rules are the standard ones, written with funcgrad operations so that they are
differentiable again:
- cholesky: Murray (2016), "Differentiation of the Cholesky decomposition";
- eigh: dw = diag(V^H dA V), dV = V (F * V^H dA V) with F_ij = 1 / (w_j - w_i), F_ii = 0;
- svd: Townsend (2016), "Differentiating the singular value decomposition" (reduced SVD);
- qr: Walter & Lehmann (2018) for M >= N, extended to M < N by splitting A = [X | Y];
- solve, slogdet, triangular_solve, cholesky_solve: implicit differentiation of A X = B (cholesky_solve with
  a per-face convention for its factor: see its section);
- det: d det = tr(adj(A) dA), with the adjugate's own rules (valid at singular A; see `adjugate`).
Complex input is differentiable too, with JAX's convention: a jvp is the directional derivative of
the (real-linear) map, and a vjp is its transpose under the pairing Re sum(a * b), with no
conjugation, so grad of a real-valued function of complex input equals jax.grad's. Where JAX's rules
have an extra complex term, so do these: slogdet's sign moves by sign * i Im tr(A^-1 dA); qr keeps
R's diagonal real (i Im diag(Q^H dA R^-1) joins omega). eigh's eigenvectors and svd's singular
vectors are defined only up to a phase each; the jvps fix it as JAX's do (eigh: diag(V^H dV) = 0;
svd: the phase change i Im(U^H dA V)_ii / s_i goes to U alone), so only functions invariant under
that phase (eigenvalues, |v|^2, V diag(f(w)) V^H, U diag(s) V^H, ...) have gauge-independent
derivatives, exactly as in JAX.

Degenerate inputs give inf / NaN derivatives, as in JAX: repeated eigenvalues (eigh's eigenvectors),
repeated or zero singular values (svd's U and V; zero ones also for M != N), rank-deficient input to
qr; slogdet's derivative at a singular matrix is inf / NaN (as JAX's), det's is the adjugate. Derivatives of eigenvalues alone (or of singular values
alone) are finite even when they repeat: the reverse-mode rules drop the eigenvector terms when the
eigenvectors get no cotangent.
"""
from __future__ import annotations

import numpy as np
from numpy.linalg import LinAlgError

from ..core import dtypes, threads
from ..core.aval import ShapedArray
from ..core.errors import user_location
from ..core.primitive import Primitive
from . import elementwise as ew
from . import shape as sh
from ._util import batch_size, type_error
from .shape import to_front
from .linalg import dot_general
from .reduction import argmax, prod_others, reduce_sum

_DTYPES = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


# --- shape rules ----------------------------------------------------------------------------------

def _linalg_error(op: str, msg: str):
    raise LinAlgError(f"{op}: {msg} (at {user_location(3)})")


def _check_matrix(op: str, x: ShapedArray, square: bool = False, what: str = "operand") -> None:
    if x.dtype not in _DTYPES:
        type_error(op, f"{what} {x.str_short()} has unsupported dtype {x.dtype}; linear algebra needs "
                       "float32, float64, complex64 or complex128 (convert with astype)")
    if x.ndim < 2:
        _linalg_error(op, f"{x.ndim}-dimensional array given ({what} {x.str_short()}); array must be at "
                          "least two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        _linalg_error(op, f"last 2 dimensions of the array must be square, got {what} {x.str_short()}")


def _check_rhs(op: str, a: ShapedArray, b: ShapedArray, axis: int) -> None:
    """b shares a's dtype, rank and batch dimensions, and b.shape[axis] == a's size."""
    _check_matrix(op, b, what="right-hand side")
    if a.dtype != b.dtype:
        type_error(op, f"operands must share one dtype, got {a.str_short()} and {b.str_short()}")
    if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        type_error(op, f"operands must have equal batch dimensions (the leading dimensions), got "
                       f"{a.str_short()} and {b.str_short()}; broadcast them first")
    if b.shape[axis] != a.shape[-1]:
        type_error(op, f"matrix {a.str_short()} and right-hand side {b.str_short()} do not fit: dimension "
                       f"{axis % b.ndim} of the right-hand side must have size {a.shape[-1]}")


def _impl_check(*xs, square: bool = False) -> None:
    """The eager path skips the shape rule: an impl rejects what NumPy would silently accept (integer
    input, mixed dtypes), so that the rule runs and reports it."""
    for x in xs:
        if x.dtype not in _DTYPES or x.dtype != xs[0].dtype or x.ndim < 2:
            raise TypeError("invalid operands")
    if square and xs[0].shape[-1] != xs[0].shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _real_dtype(dt) -> np.dtype:
    """The real dtype of a complex one (a real dtype is its own)."""
    return _REAL.get(np.dtype(dt), np.dtype(dt))


# --- matrix helpers (funcgrad operations, so differentiable and batchable) ------------------------

def _T(x):
    """Swap the last two axes."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return sh.transpose(x, perm)


def _mm(a, b):
    """Batched matrix product of (..., m, k) and (..., k, n) with equal batch dimensions."""
    nd = a.ndim
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _iotas(shape):
    nd = len(shape)
    return (sh.broadcasted_iota(dtypes.int32, shape, nd - 2),
            sh.broadcasted_iota(dtypes.int32, shape, nd - 1))


def _tri_mask(shape, lower: bool, k: int = 0):
    """True on and below diagonal k (lower) or on and above it (upper)."""
    rows, cols = _iotas(shape)
    off = ew.sub(cols, rows)
    kk = sh.full(shape, k, dtypes.int32)
    return ew.le(off, kk) if lower else ew.ge(off, kk)


def _tril(x, k: int = 0):
    return ew.select(_tri_mask(x.shape, True, k), x, ew.zeros_like(x))


def _triu(x, k: int = 0):
    return ew.select(_tri_mask(x.shape, False, k), x, ew.zeros_like(x))


def _eye(shape, dtype):
    rows, cols = _iotas(shape)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _diag(x):
    """The diagonal (..., n) of square matrices (..., n, n): exact, by a strided slice."""
    n = x.shape[-1]
    flat = sh.reshape(x, tuple(x.shape[:-2]) + (n * n,))
    nd = flat.ndim
    return sh.slice(flat, (0,) * nd, flat.shape, (1,) * (nd - 1) + (n + 1,))


def _diag_embed(v):
    """Square matrices (..., n, n) with v (..., n) on the diagonal, zeros elsewhere."""
    n = v.shape[-1]
    cfg = [(0, 0, 0)] * (v.ndim - 1) + [(0, 0, n)]
    return sh.reshape(sh.pad(v, sh.full((), 0, v.dtype), cfg), tuple(v.shape[:-1]) + (n, n))


def _trace(x):
    return reduce_sum(_diag(x), (x.ndim - 2,))


def _cols(v, rows: int):
    """r[..., i, j] = v[..., j] for i < rows."""
    return sh.broadcast_in_dim(v, tuple(v.shape[:-1]) + (rows, v.shape[-1]),
                               tuple(range(v.ndim - 1)) + (v.ndim,))


def _rows(v, cols: int):
    """r[..., i, j] = v[..., i] for j < cols."""
    return sh.broadcast_in_dim(v, tuple(v.shape) + (cols,), tuple(range(v.ndim)))


def _scalar_bcast(s, like):
    """A (...)-shaped array broadcast over the trailing matrix dimensions of `like` (..., m, n)."""
    return sh.broadcast_in_dim(s, like.shape, tuple(range(s.ndim)))


def _H(x):
    """The conjugate transpose of the last two axes (the transpose for real x)."""
    return ew.conj(_T(x)) if dtypes.is_complex(x.dtype) else _T(x)


def _cj(x):
    """The complex conjugate of complex x; real x itself (unchanged, and still real)."""
    return ew.conj(x) if dtypes.is_complex(x.dtype) else x


def _like(x, ref):
    """x converted to ref's dtype (real -> complex: a zero imaginary part; x itself if equal)."""
    return x if x.dtype == ref.dtype else ew.convert_element_type(x, ref.dtype)


def _imag_part(x):
    """i Im(x) in x's (complex) dtype: the projection that is its own transpose under Re sum(a * b)."""
    return ew.complex(ew.zeros_like(ew.real(x)), ew.imag(x))


def _sym(x):
    """(x + x^H) / 2: the Hermitian part ((x + x^T) / 2 for real x)."""
    return ew.mul(ew.add(x, _H(x)), sh.full(x.shape, 0.5, x.dtype))


def _skew_inverse_gaps(w):
    """F[..., i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (inf where two entries of w tie)."""
    n = w.shape[-1]
    eye = _eye(tuple(w.shape[:-1]) + (n, n), w.dtype)
    gaps = ew.add(ew.sub(_cols(w, n), _rows(w, n)), eye)  # 1 on the diagonal: no division by zero
    return ew.sub(ew.div(sh.full(eye.shape, 1, eye.dtype), gaps), eye)


def _front_batch(prim):
    """vmap rule for a primitive over stacks of matrices: batch at the front of every operand."""
    def rule(args, dims, **params):
        size = batch_size(args, dims)
        out = prim.bind(*[to_front(a, d, size) for a, d in zip(args, dims)], **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


# --- cholesky -------------------------------------------------------------------------------------

def _cholesky_rule(x: ShapedArray, *, convention="jax") -> ShapedArray:
    _check_convention("cholesky", convention)
    _check_matrix("cholesky", x, square=True)
    return x


def _fit_lapack(xp, a, nrhs: int = 0) -> None:
    """BLAS threads for factoring n x n matrices (~n^3/3 multiply-adds) and solving for nrhs columns
    (n^2 each): one thread for small ones, as for a small matrix product (core/threads.py)."""
    if xp is np:
        n = a.shape[-1]
        threads.fit(n * n * (n // 3 + nrhs))


def _cholesky_impl(xp):
    def f(x, *, convention="jax"):
        _impl_check(x, square=True)
        _fit_lapack(xp, x)
        h = 0.5 * (x + xp.swapaxes(x, -1, -2).conj())  # symmetrize as JAX does
        try:
            L = xp.linalg.cholesky(h)
            if convention == "torch" and not xp.isfinite(xp.diagonal(L, 0, -2, -1)).all():
                raise LinAlgError("Matrix is not positive definite")  # NaN/inf input: potrf fails (torch)
            return L
        except LinAlgError:
            if convention == "torch":
                raise
        # JAX: a matrix whose Hermitian part is not positive definite factors to NaN (LAPACK's potrf reports it;
        # jax.lax.linalg.cholesky replaces that batch element, and keeps the zeros above the diagonal), the others
        # as usual
        flat = h.reshape((-1,) + h.shape[-2:])
        out = xp.tril(xp.full(flat.shape, np.nan, flat.dtype))
        for i in range(flat.shape[0]):
            try:
                out[i] = xp.linalg.cholesky(flat[i])
            except LinAlgError:
                pass
        return out.reshape(h.shape)
    return f


def _phi(x):
    """The lower triangle of x with its diagonal halved (Murray's Phi)."""
    return ew.add(_tril(x, -1), _diag_embed(ew.mul(_diag(x), sh.full(x.shape[:-1], 0.5, x.dtype))))


def _cholesky_jvp(t, L, x, **params):
    # dL = L Phi(L^-1 dA L^-H), dA made Hermitian (the impl reads the Hermitian part of its input).
    # (lower triangular; kept so explicitly, as JAX's tril of the factor does, where a NaN factor would spread)
    tmp = triangular_solve(L, _sym(t), left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    return _tril(_mm(L, _phi(triangular_solve(L, tmp, left_side=True, lower=True))))


def _cholesky_vjp(g, L, x, **params):
    # The (linear, unconjugated) transpose of the jvp: herm(L^-T Phi(L^T Lbar) conj(L)^-1); the
    # Hermitian-part map is its own transpose, as conj is.
    p = _phi(_mm(_T(L), g))
    tmp = triangular_solve(L, p, left_side=True, lower=True, transpose_a=True)
    return _sym(triangular_solve(L, tmp, left_side=False, lower=True, conjugate_a=True))


cholesky_p = Primitive("cholesky", impl=_cholesky_impl, abstract_eval=_cholesky_rule,
                       jvp=[_cholesky_jvp], vjp=[_cholesky_vjp])
cholesky_p.batch = _front_batch(cholesky_p)


def cholesky(x, *, convention: str = "jax"):
    """Lower Cholesky factor L (L L^H = x) of the Hermitian part (x + x^H) / 2 of x, as JAX.

    Where that part is not positive definite, convention "jax" gives a matrix of NaN (per batch element, as
    jax.lax.linalg.cholesky), "torch" raises numpy.linalg.LinAlgError (torch.linalg.cholesky raises)."""
    return cholesky_p.bind(x, convention=convention)


# --- triangular_solve -----------------------------------------------------------------------------

def _tri_rule(a: ShapedArray, b: ShapedArray, *, left_side, lower, transpose_a, conjugate_a,
              unit_diagonal) -> ShapedArray:
    op = "triangular_solve"
    _check_matrix(op, a, square=True, what="matrix")
    _check_rhs(op, a, b, -2 if left_side else -1)
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _tri_impl(xp):
    def f(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
        _impl_check(a, b, square=True)
        m = a.shape[-1]
        if a.shape[:-2] != b.shape[:-2] or a.ndim != b.ndim or b.shape[-2 if left_side else -1] != m:
            raise ValueError("shapes do not fit")
        a = xp.tril(a) if lower else xp.triu(a)
        if unit_diagonal:
            a = xp.where(xp.eye(m, dtype=bool), xp.ones((), a.dtype), a)
        if conjugate_a:
            a = a.conj()
        if transpose_a:
            a, lower = xp.swapaxes(a, -1, -2), not lower
        if not left_side:  # x op(a) = b  <=>  op(a)^T x^T = b^T
            a, b, lower = xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not lower
        if lower:  # reverse rows and columns: an upper triangular system, which LU solves without pivoting
            a, b = a[..., ::-1, ::-1], b[..., ::-1, :]
        _fit_lapack(xp, a, b.shape[-1])
        try:
            x = xp.linalg.solve(a, b)
        except LinAlgError:  # a zero on the diagonal: inf / NaN, as torch's and JAX's trsm
            x = _back_substitute(a, b)
        if lower:
            x = x[..., ::-1, :]
        return xp.swapaxes(x, -1, -2) if not left_side else x
    return f


def _back_substitute(a, b):
    """a^-1 b for upper triangular a by plain back substitution, every product a_ij x_j included, so a zero
    on the diagonal gives inf / NaN exactly where BLAS trsm (torch, JAX) gives them (NumPy's solve raises)."""
    x = b.copy()
    with np.errstate(all="ignore"):
        for i in range(a.shape[-1] - 1, -1, -1):
            x[..., i, :] = (x[..., i, :] - (a[..., i, i + 1:, None] * x[..., i + 1:, :]).sum(-2)) / a[..., i, i, None]
    return x


def _tri_part(x, lower, unit_diagonal):
    """The part of a matrix triangular_solve reads."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _tril(x, k) if lower else _triu(x, k)


def _tri_op(x, transpose_a, conjugate_a):
    """op(x) as the solve applies it to a; being linear (conj counts as its own transpose), it also
    maps the cotangent of op(a) to the cotangent of a."""
    if conjugate_a and dtypes.is_complex(x.dtype):
        x = ew.conj(x)
    return _T(x) if transpose_a else x


def _tri_jvp_a(t, ans, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # left: op(A) X = B  =>  dX = -op(A)^-1 op(dA) X;   right: X op(A) = B  =>  dX = -X op(dA) op(A)^-1
    dop = _tri_op(_tri_part(t, lower, unit_diagonal), transpose_a, conjugate_a)
    rhs = _mm(dop, ans) if left_side else _mm(ans, dop)
    return ew.neg(triangular_solve_p.bind(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                          conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))


def _tri_jvp_b(t, ans, a, b, **params):
    return triangular_solve_p.bind(a, t, **params)


def _tri_vjp(cts, ans, args, needs, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    g = cts[0]
    if g is None:
        return [None, None]
    a, b = args
    # The cotangent of b solves the transposed system: op(A)^T gb = g (left), gb op(A)^T = g (right).
    gb = triangular_solve_p.bind(a, g, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                                 conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    ga = None
    if needs[0]:
        m = ew.neg(_mm(gb, _T(ans)) if left_side else _mm(_T(ans), gb))  # cotangent of op(A)
        ga = _tri_part(_tri_op(m, transpose_a, conjugate_a), lower, unit_diagonal)
    return [ga, gb if needs[1] else None]


triangular_solve_p = Primitive("triangular_solve", impl=_tri_impl, abstract_eval=_tri_rule,
                               jvp=[_tri_jvp_a, _tri_jvp_b], vjp_full=_tri_vjp)
triangular_solve_p.batch = _front_batch(triangular_solve_p)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    """Solve op(a) x = b (left_side) or x op(a) = b with a triangular, as jax.lax.linalg.triangular_solve.

    Only the triangle of `a` named by `lower` is read (without its diagonal if unit_diagonal);
    op(a) is a, a^T, conj(a) or a^H per transpose_a / conjugate_a. A zero on the diagonal gives inf / NaN
    (plain substitution), as JAX's and torch's triangular solves do."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


# --- cholesky_solve -------------------------------------------------------------------------------
#
# X = A^-1 B with A = T T^H (lower) or T^H T (upper), T the triangle of c that the solve reads. The
# derivative has one formula, dX = A^-1 (dB - dA X) with dA = dS S^H + S dS^H (upper: dS^H S + S^H dS),
# and a per-face convention for the factor, chosen by the face that binds it:
# - "jax": S = T, dS = the triangle of dc: the derivative of the function (as two triangular solves,
#   JAX's cho_solve);
# - "torch": S = c and dS = dc, both triangles: torch's cholesky_solve / cholesky_inverse formulas, which
#   treat the factor as a whole matrix (a gradient in the triangle the solve never reads, and the values
#   of that triangle in S).

def _check_convention(op: str, convention) -> None:
    if convention not in ("jax", "torch"):
        type_error(op, f"convention must be 'jax' or 'torch', got {convention!r}")


def _cho_solve_rule(c: ShapedArray, b: ShapedArray, *, lower, convention) -> ShapedArray:
    op = "cholesky_solve"
    _check_convention(op, convention)
    _check_matrix(op, c, square=True, what="factor")
    _check_rhs(op, c, b, -2)
    return ShapedArray(b.shape, b.dtype, c.weak_type and b.weak_type)


def _cho_solve_impl(xp):
    tri = _tri_impl(xp)

    def f(c, b, *, lower, convention):
        # lower: T y = b, T^H x = y; upper: T^H y = b, T x = y (inf / NaN at a zero on T's diagonal)
        cx = c.dtype.kind == "c"
        kw = dict(left_side=True, lower=lower, unit_diagonal=False)
        y = tri(c, b, transpose_a=not lower, conjugate_a=cx and not lower, **kw)
        return tri(c, y, transpose_a=lower, conjugate_a=cx and lower, **kw)
    return f


def _cho_factor_parts(c, t, lower, convention):
    """(S, dS) of the module comment: the factor and its tangent as the convention reads them."""
    if convention == "torch":
        return c, t
    return _tri_part(c, lower, False), _tri_part(t, lower, False)


def _cho_solve_jvp_c(t, ans, c, b, *, lower, convention):
    s, ds = _cho_factor_parts(c, t, lower, convention)
    da = ew.add(_mm(ds, _H(s)), _mm(s, _H(ds))) if lower else ew.add(_mm(_H(ds), s), _mm(_H(s), ds))
    return ew.neg(cholesky_solve_p.bind(c, _mm(da, ans), lower=lower, convention=convention))


def _cho_solve_jvp_b(t, ans, c, b, **params):
    return cholesky_solve_p.bind(c, t, **params)


def _cho_solve_vjp(cts, ans, args, needs, *, lower, convention):
    # The transpose of the jvp under the pairing Re sum(a * b): gB = A^-T G = conj(A^-1 conj(G)) (A is
    # Hermitian), gA = -gB X^T, and the factor's cotangent (gA + gA^H) conj(S) (upper: conj(S) (gA + gA^H)),
    # restricted to the triangle under the "jax" convention.
    g = cts[0]
    if g is None:
        return [None, None]
    c, b = args
    gb = _cj(cholesky_solve_p.bind(c, _cj(g), lower=lower, convention=convention))
    gc = None
    if needs[0]:
        ga = ew.neg(_mm(gb, _T(ans)))
        s = _cho_factor_parts(c, c, lower, convention)[0]
        sym = ew.add(ga, _H(ga))
        gc = _mm(sym, _cj(s)) if lower else _mm(_cj(s), sym)
        if convention != "torch":
            gc = _tri_part(gc, lower, False)
    return [gc, gb if needs[1] else None]


cholesky_solve_p = Primitive("cholesky_solve", impl=_cho_solve_impl, abstract_eval=_cho_solve_rule,
                             jvp=[_cho_solve_jvp_c, _cho_solve_jvp_b], vjp_full=_cho_solve_vjp)
cholesky_solve_p.batch = _front_batch(cholesky_solve_p)


def cholesky_solve(c, b, *, lower: bool = True, convention: str = "jax"):
    """x with A x = b, A = T T^H (lower) or T^H T (upper), T the triangle of the Cholesky factor c named by
    `lower`; b is (..., n, k) with c's batch dimensions. A zero on T's diagonal gives inf / NaN.

    convention picks how the derivative reads the factor: "jax" (the triangle: the function's derivative)
    or "torch" (the whole matrix c, as torch.cholesky_solve's and cholesky_inverse's formulas)."""
    return cholesky_solve_p.bind(c, b, lower=bool(lower), convention=convention)


# --- solve ----------------------------------------------------------------------------------------

def _solve_rule(a: ShapedArray, b: ShapedArray, *, transpose=False) -> ShapedArray:
    _check_matrix("solve", a, square=True, what="matrix")
    _check_rhs("solve", a, b, -2)
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _solve_impl(xp):
    def f(a, b, *, transpose=False):
        _impl_check(a, b, square=True)
        if a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or b.shape[-2] != a.shape[-1]:
            raise ValueError("shapes do not fit")
        _fit_lapack(xp, a, b.shape[-1])
        if transpose:
            # A^T x = b by A's own factorisation, as JAX's transpose solve: LAPACK's LU of A has an exactly zero
            # pivot (det 0) for some singular A whose transpose's LU does not, so NumPy's solve of A^T would give
            # rounding noise (~1e16) where JAX gives inf / NaN
            if not bool((xp.linalg.det(a) == 0).any()):
                return xp.linalg.solve(xp.swapaxes(a, -1, -2), b)
            return _solve_ieee(xp, a, b, True)
        try:
            return xp.linalg.solve(a, b)
        except LinAlgError:  # an exactly singular matrix: inf / NaN, as JAX (LAPACK's getrf + getrs)
            return _solve_ieee(xp, a, b, False)
    return f


def _solve_ieee(xp, a, b, transpose):
    """a^-1 b (a^-T b when `transpose`) by LU with partial pivoting (LAPACK's, see lu.py) and substitution in
    trsm's order, letting a zero pivot give inf / NaN (where NumPy raises): the values JAX's lu_solve returns
    for singular input."""
    from .lu import _lu_impl
    lu, _, perm = _lu_impl(xp)(a)
    perm = perm.astype(np.intp)
    with np.errstate(all="ignore"):
        if not transpose:  # L U x = P b
            x = xp.take_along_axis(b, xp.broadcast_to(perm[..., :, None], b.shape), axis=-2).copy()
            _substitute(xp, lu, x, lower=True, unit=True)
            _substitute(xp, lu, x, lower=False, unit=False)
            return x
        # U^T L^T (P x) = b
        lut = xp.swapaxes(lu, -1, -2)
        x = b.copy()
        _substitute(xp, lut, x, lower=True, unit=False)
        _substitute(xp, lut, x, lower=False, unit=True)
        inv = xp.argsort(perm, axis=-1)
        return xp.take_along_axis(x, xp.broadcast_to(inv[..., :, None], b.shape), axis=-2)


def _substitute(xp, t, x, *, lower, unit):
    """x <- t^-1 x in place for t triangular (the `lower` triangle read, its diagonal taken as ones when `unit`),
    a row at a time, each solved row scaled by 1 / t_ii and subtracted from the rows still to solve, in order
    (as BLAS trsm): so a zero on the diagonal gives inf / NaN exactly where trsm does."""
    n = t.shape[-1]
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        if not unit:
            x[..., i, :] *= 1 / t[..., i, i, None]
        rest = slice(i + 1, n) if lower else slice(0, i)
        x[..., rest, :] -= t[..., rest, i, None] * x[..., i, None, :]


def _solve_jvp(primals, tangents, x, *, transpose=False):
    a, b = primals
    ta, tb = tangents
    rhs = tb
    if ta is not None:
        dax = _mm(_T(ta) if transpose else ta, x)
        rhs = ew.neg(dax) if rhs is None else ew.sub(rhs, dax)
    return solve(a, rhs, transpose=transpose)


def _solve_vjp(cts, x, args, needs, *, transpose=False):
    # x = op(A)^-1 b: gb = op(A)^-T g (the other solve with A's factorisation), gA = -gb x^T (transposed back
    # for op(A) = A^T)
    g = cts[0]
    if g is None:
        return [None, None]
    a, b = args
    gb = solve(a, g, transpose=not transpose)
    ga = None
    if needs[0]:
        ga = ew.neg(_mm(x, _T(gb)) if transpose else _mm(gb, _T(x)))
    return [ga, gb if needs[1] else None]


solve_p = Primitive("solve", impl=_solve_impl, abstract_eval=_solve_rule, jvp_full=_solve_jvp,
                    vjp_full=_solve_vjp)
solve_p.batch = _front_batch(solve_p)


def solve(a, b, *, transpose: bool = False):
    """x with a x = b (a^T x = b when `transpose`: a's own factorisation, as JAX's transpose solve) for square a
    (..., n, n) and b (..., n, k) of the same batch shape; an exactly singular a gives inf / NaN (as JAX), not an
    error."""
    return solve_p.bind(a, b, transpose=bool(transpose))


def _inv_T(a):
    """a^-T, by a transposed solve with the identity (a's factorisation, as JAX's transpose rules)."""
    return solve(a, _eye(a.shape, a.dtype), transpose=True)


# --- det and slogdet ------------------------------------------------------------------------------

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


# --- adjugate: det's derivative, valid for singular matrices ---------------------------------------
#
# With the SVD A = U diag(s) V^H: adj(A) = adj(V^H) adj(diag(s)) adj(U) = sigma V diag(g) U^H, where
# g_i = prod_{k != i} s_k and sigma = det(U) conj(det(V)) (a unit scalar). No division, so it holds at
# any rank (rank n-1: a rank-one adjugate; lower: 0). Its derivative in the same basis, with
# C = U^H dA V and P_ij = prod_{k != i, j} s_k (P_ii = 0), is
#   d adj = sigma V (diag(P diag(C)) - P * C) U^H
# (the first-order cofactors of diag(s) + C), again without division; so det's second derivative is
# right at singular matrices and at repeated singular values (the identity) alike. The vjp is its
# transpose under the pairing Re sum(a * b): conj(U) (diag(P diag(H)) - P * H) V^T, H = sigma V^T G conj(U).
# (A third derivative differentiates the SVD, so it is finite only for distinct singular values.)

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


# --- eigh -----------------------------------------------------------------------------------------

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


# --- svd ------------------------------------------------------------------------------------------

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


# --- qr -------------------------------------------------------------------------------------------

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


# --- eig (general, non-symmetric) -----------------------------------------------------------------

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


__all__ = ["cholesky", "triangular_solve", "cholesky_solve", "solve", "det", "slogdet", "eigh", "svd", "qr",
           "cholesky_p", "triangular_solve_p", "cholesky_solve_p", "solve_p", "det_p", "adjugate", "adjugate_p",
           "slogdet_p", "eigh_p", "svd_p", "qr_p", "eig", "eig_p"]
