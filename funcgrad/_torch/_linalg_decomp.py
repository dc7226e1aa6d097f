"""Decompositions beyond linalg.py's: the general eigendecomposition (linalg.eig, linalg.eigvals: the eig
primitive, LAPACK geev on the host, differentiable) and LAPACK's Householder QR (geqrf, linalg.householder_product
= orgqr, ormqr)."""
from __future__ import annotations

import numpy as np

from .._src.core.array import Array
from .._src.prims import linalg_decomp as _ld
from .._src.prims import eigen as _ld_eigen
from .ops import join_split, products
from .ops._common import _out
from . import return_types as _rt
from ._creation import eye, ones, zeros
from ._tensor import _wrap
from ._dispatch import _apply, _apply1
from .linalg import _square


_eig_t = _rt.linalg_eig


_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
              "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


def _eig_gauge_hook(V):
    """torch's check: a loss may not depend on the eigenvectors' phases, i.e. Im(diag(V^H gV)) == 0
    (within torch's tolerance). Only a check: the gradient itself comes from the eig primitive's rule."""
    def hook(g):
        v, gv = V.detach()._host(), g.detach()._host()
        phase = np.imag(np.sum(np.conj(v) * gv, axis=-2))
        if not np.allclose(phase, 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_EIG_PHASE)
    return hook


def linalg_eig(A, *, out=None):
    """(eigenvalues, eigenvectors) of square matrices, complex (as torch.linalg.eig); eigenvectors have unit
    norm. Differentiable through the eig primitive (distinct eigenvalues needed for the eigenvector part);
    as in torch, backward raises RuntimeError when the loss depends on the eigenvectors' phases."""
    _square(A, "eig")
    w, v = _apply("LinalgEig", lambda a: _ld_eigen.eig(a, vectors=True, eigvec_derivs=True), (A,))
    if v.requires_grad:
        v.register_hook(_eig_gauge_hook(v))
    return _eig_t(w, v)


def linalg_eigvals(A, *, out=None):
    """The eigenvalues of square matrices (complex), differentiable (dw = diag(V^-1 dA V))."""
    _square(A, "eigvals")
    return _apply1("LinalgEigvals", lambda a: _ld_eigen.eig(a, vectors=False)[0], A)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i = (0, ..., 0, 1, A[i+1:, i]) (the Q of
    a geqrf factorisation), composed of differentiable Tensor ops."""
    if A.ndim < 2:
        raise RuntimeError(f"torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    batch = tuple(A.shape[:-2])
    X = eye(m, n, dtype=A.dtype).expand(*batch, m, n)
    for i in reversed(range(k)):
        v = join_split.cat([zeros(*batch, i, dtype=A.dtype), ones(*batch, 1, dtype=A.dtype), A[..., i + 1:, i]], -1)
        vh = v.conj() if v.is_complex() else v
        X = X - tau[..., i, None, None] * (v.unsqueeze(-1) * (vh.unsqueeze(-2) @ X))
    return _out(X, out)


orgqr = householder_product
_geqrf_t = _rt.geqrf


def geqrf(input, *, out=None):
    """LAPACK's QR in Householder form (a, tau): R on and above a's diagonal, the reflectors' vectors below
    (computed on the host; no derivative, as in torch)."""
    if input.ndim < 2:
        raise RuntimeError(f"torch.geqrf: input must have at least 2 dimensions.")
    h = input._host()
    batch = h.shape[:-2]
    flat = h.reshape((-1,) + h.shape[-2:])
    a_out, tau_out = [], []
    for mat in flat:
        raw, tau = np.linalg.qr(mat, mode="raw")
        a_out.append(raw.T)
        tau_out.append(tau)
    a = np.stack(a_out).reshape(h.shape).astype(h.dtype)
    tau = np.stack(tau_out).reshape(batch + (min(h.shape[-2:]),)).astype(h.dtype)
    return _geqrf_t(_wrap(Array(np.ascontiguousarray(a))), _wrap(Array(np.ascontiguousarray(tau))))


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """other multiplied by Q (or Q^H when transpose) of the Householder form (input, tau), from the left or the
    right; differentiable (Q is built by householder_product)."""
    m = input.shape[-2]
    sq = input if input.shape[-1] == m else join_split.cat(
        [input[..., :, :min(m, input.shape[-1])], zeros(*input.shape[:-2], m, max(m - input.shape[-1], 0),
                                                         dtype=input.dtype)], -1)
    Q = householder_product(sq, tau)
    if transpose:
        Q = Q.mH
    return _out(products.matmul(Q, other) if left else products.matmul(other, Q), out)



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ()
INPLACE = ()

__all__ = ["orgqr", "geqrf", "ormqr"]

# torch.linalg's names for the functions here (installed on funcgrad._torch.linalg by the package)
LINALG = {"eig": linalg_eig, "eigvals": linalg_eigvals, "householder_product": householder_product}
