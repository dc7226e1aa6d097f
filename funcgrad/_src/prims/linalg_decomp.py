"""Matrix factorisations and solves: cholesky, triangular_solve, cholesky_solve and solve here, with the
shape rules and matrix helpers the linear-algebra cards share; det/slogdet/adjugate are in det.py, eigh/eig
in eigen.py, svd in svd.py and qr in qr.py. What follows holds for all of them.

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
from .reduction import reduce_sum

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

def _cholesky_rule(x: ShapedArray, *, convention="jax", symmetrize=True) -> ShapedArray:
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
    def f(x, *, convention="jax", symmetrize=True):
        _impl_check(x, square=True)
        _fit_lapack(xp, x)
        if symmetrize:
            h = 0.5 * (x + xp.swapaxes(x, -1, -2).conj())  # symmetrize as JAX does
        else:   # the lower triangle only (LAPACK's potrf, JAX's symmetrize_input=False)
            h = xp.tril(x) + xp.swapaxes(xp.tril(x, -1), -1, -2).conj()
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


def _cholesky_jvp(t, L, x, *, symmetrize=True, **params):
    # dL = L Phi(L^-1 dA L^-H), dA made Hermitian (the impl reads the Hermitian part of its input); with
    # symmetrize=False dA is the tangent as it is, as JAX's rule takes it (its value read the lower triangle).
    # (lower triangular; kept so explicitly, as JAX's tril of the factor does, where a NaN factor would spread)
    tmp = triangular_solve(L, _sym(t) if symmetrize else t, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=True)
    return _tril(_mm(L, _phi(triangular_solve(L, tmp, left_side=True, lower=True))))


def _cholesky_vjp(g, L, x, *, symmetrize=True, **params):
    # The (linear, unconjugated) transpose of the jvp: herm(L^-T Phi(L^T Lbar) conj(L)^-1) (without herm
    # for symmetrize=False); the Hermitian-part map is its own transpose, as conj is.
    p = _phi(_mm(_T(L), g))
    tmp = triangular_solve(L, p, left_side=True, lower=True, transpose_a=True)
    out = triangular_solve(L, tmp, left_side=False, lower=True, conjugate_a=True)
    return _sym(out) if symmetrize else out


cholesky_p = Primitive("cholesky", impl=_cholesky_impl, abstract_eval=_cholesky_rule,
                       jvp=[_cholesky_jvp], vjp=[_cholesky_vjp])
cholesky_p.batch = _front_batch(cholesky_p)


def cholesky(x, *, convention: str = "jax", symmetrize: bool = True):
    """Lower Cholesky factor L (L L^H = x) of the Hermitian part (x + x^H) / 2 of x, as JAX; with
    symmetrize=False, of the Hermitian matrix of x's lower triangle, differentiated as JAX's
    symmetrize_input=False is (the tangent taken as it is, so the upper triangle gets a gradient too).

    Where that part is not positive definite, convention "jax" gives a matrix of NaN (per batch element, as
    jax.lax.linalg.cholesky), "torch" raises numpy.linalg.LinAlgError (torch.linalg.cholesky raises)."""
    if symmetrize:
        return cholesky_p.bind(x, convention=convention)
    return cholesky_p.bind(x, convention=convention, symmetrize=False)


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
            with np.errstate(over="ignore", invalid="ignore"):  # (a float32 det overflows to inf: not zero)
                singular = bool((xp.linalg.det(a) == 0).any())
            if not singular:
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
