"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal as parametrizations
(see parametrize.py); the originals live under module.parametrizations.<name>."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    if dim is None:
        return v.norm()
    d = dim % v.dim()
    dims = [i for i in range(v.dim()) if i != d]
    return v.norm(2, dims, keepdim=True) if dims else v.abs()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, None if self.dim == -1 else self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, None if self.dim == -1 else self.dim), weight


def weight_norm(module, name: str = "weight", dim: int = 0):
    """weight = g * v / ||v|| (norm over all dims but dim), with original0 = g and original1 = v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        nd = weight.ndim
        if dim >= nd or dim < -nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{nd}, {nd - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + nd
        self.eps = eps
        if nd > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = F.normalize(_fg.randn(h, dtype=weight.dtype), dim=0, eps=self.eps)
            v = F.normalize(_fg.randn(w, dtype=weight.dtype), dim=0, eps=self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.movedim(self.dim, 0)
        return weight.flatten(1)

    def _power_method(self, mat, n):
        with _no_grad():
            for _ in range(n):
                self._u.copy_(F.normalize(_fg.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_fg.mv(mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _fg.vdot(u, _fg.mv(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None):
    """weight / sigma(weight), sigma estimated by power iteration (refined once per training-mode access)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _fg.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_orthogonal(Q) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * _fg.finfo(Q.dtype).eps
    return bool(_fg.allclose(Q.mH @ Q, _fg.eye(k, dtype=Q.dtype), atol=eps))


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) real and non-negative (torch's, through geqrf)."""
    X, tau = _fg.geqrf(A)
    Q = _fg.linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """torch's: Q = map(X) with map the matrix exponential or Cayley transform of A - A^H (A the lower triangle of
    the original, n >= k after transposing) or a product of Householder reflectors; with use_trivialization,
    Q = base @ map(X), base the orthogonal matrix the last assignment gave (the original is then reset)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = _fg.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = _fg.matrix_exp(A)
            else:
                Id = _fg.eye(n, dtype=A.dtype)
                Q = _fg.linalg.solve(_fg.add(Id, A, alpha=-0.5), _fg.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:  # householder (real only): reflectors below the diagonal, the diagonal's signs (+-1) kept
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _fg.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    @_no_grad()
    def right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {_fg.Size(self.shape)}. Got a tensor "
                             f"of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in ("cayley", "matrix_exp"):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = _fg.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:  # complete Q into an n x n orthogonal matrix
            N = _fg.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_fg.cat([Q, N], dim=-1))
        self.base = Q
        neg_id = _fg.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name: str = "weight", orthogonal_map=None, *, use_trivialization: bool = True):
    """Constrain module.<name> to orthonormal columns (or rows), as torch's: 'matrix_exp' (the default for a square
    or complex weight), 'cayley' or 'householder' (the default otherwise); the initial weight is the orthogonal
    matrix nearest the current one (its QR's Q)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _fg.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex() else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(f"orthogonal_map has to be one of \"matrix_exp\", \"cayley\", \"householder\". Got: "
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
