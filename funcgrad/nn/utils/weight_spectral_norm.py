"""torch.nn.utils.weight_norm / spectral_norm (the hook-based forms) and their remove_* functions.

weight_norm splits a parameter w into a magnitude g and a direction v (w = g v / ||v||, the norm over every
dim but `dim`); spectral_norm divides w by its largest singular value, estimated by power iteration on the
weight reshaped to a matrix (u, v kept as buffers and refined once per training-mode forward). Both recompute
the weight in a forward pre-hook from differentiable Tensor ops, so gradients reach g/v or weight_orig."""
from __future__ import annotations

import warnings

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from .._functional.normalization import normalize as _normalize
from ..parameter import Parameter

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


def _norm_except_dim(v, dim):
    if dim is None or dim == -1 and v.dim() == 0:
        return v.norm()
    d = dim % v.dim()
    dims = [i for i in range(v.dim()) if i != d]
    return v.norm(2, dims, keepdim=True) if dims else v.abs()


class _WeightNorm:
    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Reparameterise module.<name> as <name>_g * <name>_v / ||<name>_v|| (deprecated in torch for
    nn.utils.parametrizations.weight_norm, which warns the same way)."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of `torch.nn.utils.parametrizations."
                  "weight_norm`.", FutureWarning, stacklevel=2)
    for h in module._forward_pre_hooks.values() if hasattr(module, "_forward_pre_hooks") else ():
        if isinstance(h, _WeightNorm) and h.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    w = getattr(module, name)
    if dim is None:
        dim = -1
    del module._parameters[name]
    with _no_grad():
        g = _norm_except_dim(w, dim if dim != -1 else None)
    module.register_parameter(name + "_g", Parameter(g.detach().clone()))
    module.register_parameter(name + "_v", Parameter(w.detach().clone()))
    fn = _WeightNorm(name, dim if dim != -1 else None)
    setattr(module, name, fn.compute(module))
    return _install(module, "weight_norm", name, fn)


def remove_weight_norm(module, name: str = "weight"):
    """Fold g and v back into one parameter <name>."""
    return _remove(module, "weight_norm", name, parameters=("_g", "_v"))


def _install(module, kind: str, name: str, fn):
    """Register the hook fn, which recomputes module.<name> before every forward, and remember it (with its
    handle) for remove_<kind>."""
    handle = module.register_forward_pre_hook(fn)
    module.__dict__.setdefault("_fg_reparam", {})[(kind, name)] = (fn, handle)
    return module


def _remove(module, kind: str, name: str, parameters=(), buffers=()):
    """Undo _install: <name> is again a parameter, holding the weight the hook computes (without a power
    iteration); the parameters and buffers <name><suffix> that it computed the weight from go."""
    entry = module.__dict__.get("_fg_reparam", {}).pop((kind, name), None)
    if entry is None:
        raise ValueError(f"{kind} of '{name}' not found in {module}")
    fn, handle = entry
    with _no_grad():
        w = fn.compute(module)
    handle.remove()
    delattr(module, name)
    for suffix in parameters:
        del module._parameters[name + suffix]
    for suffix in buffers:
        del module._buffers[name + suffix]
    module.register_parameter(name, Parameter(w.detach().clone()))
    return module


class _SpectralNorm:
    def __init__(self, name, n_power_iterations, dim, eps):
        self.name, self.n, self.dim, self.eps = name, n_power_iterations, dim, eps

    def _matrix(self, w):
        if self.dim != 0:
            perm = [self.dim] + [d for d in range(w.dim()) if d != self.dim]
            w = w.permute(*perm)
        return w.reshape(w.shape[0], -1)

    def compute(self, module, do_power_iteration=False):
        w = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self._matrix(w)
        if do_power_iteration:
            with _no_grad():
                for _ in range(self.n):
                    v.copy_(_normalize(_fg.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(_normalize(_fg.mv(mat, v), dim=0, eps=self.eps))
                if self.n > 0:
                    u, v = u.clone(), v.clone()
        sigma = _fg.dot(u, _fg.mv(mat, v))
        return w / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute(module, do_power_iteration=module.training))


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None):
    """Divide module.<name> by its spectral norm before every forward (power iteration in training mode)."""
    if n_power_iterations <= 0:
        raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                         f"{n_power_iterations}")
    if dim is None:
        dim = 1 if type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d") else 0
    w = getattr(module, name)
    fn = _SpectralNorm(name, n_power_iterations, dim, eps)
    with _no_grad():
        mat = fn._matrix(w)
        h, wd = mat.shape
        u = _normalize(_fg.randn(h, dtype=w.dtype), dim=0, eps=eps)
        v = _normalize(_fg.randn(wd, dtype=w.dtype), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", w)
    setattr(module, name, w.detach() * 1.0)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    return _install(module, "spectral_norm", name, fn)


def remove_spectral_norm(module, name: str = "weight"):
    """<name> is again one parameter, holding the weight divided by its current spectral norm estimate."""
    return _remove(module, "spectral_norm", name, parameters=("_orig",), buffers=("_u", "_v"))
