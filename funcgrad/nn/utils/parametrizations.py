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


class _Orthogonal(Module):
    """Q = map(A - A^H)[:, :k] from the lower triangle A of the original (n >= k after transposing), with map
    the matrix exponential or the Cayley transform: orthonormal columns for any original."""

    def __init__(self, weight, orthogonal_map):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        A = X.tril()
        if n != k:
            A = _fg.cat([A, _fg.zeros(*A.shape[:-2], n, n - k, dtype=A.dtype)], -1)
        A = A - A.mH
        if self.orthogonal_map == "matrix_exp":
            Q = _fg.matrix_exp(A)
        else:  # cayley: (I - A/2)^-1 (I + A/2)
            Id = _fg.eye(n, dtype=A.dtype)
            Q = _fg.linalg.solve(Id - A / 2, Id + A / 2)
        Q = Q[..., :k]
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        """The zero original (whose image is the identity frame): assignments re-initialise to it."""
        return _fg.zeros_like(Q)


def orthogonal(module, name: str = "weight", orthogonal_map=None, *, use_trivialization: bool = True):
    """Constrain module.<name> to orthonormal columns (or rows): Q = exp(A - A^H)[:, :k] ('matrix_exp') or the
    Cayley map. The original starts at 0, so the initial weight is the identity frame (torch instead starts
    from the orthogonal matrix nearest the current weight); 'householder' is not available."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _fg.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    orthogonal_map = orthogonal_map or "matrix_exp"
    if orthogonal_map not in ("matrix_exp", "cayley"):
        raise ValueError(f"orthogonal_map has to be one of \"matrix_exp\", \"cayley\" here. Got: {orthogonal_map}")
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orthogonal_map), unsafe=True)
    return module
