"""Tensor's method forms of the op families' functions (funcgrad/_torch/ops/*, the LU and decomposition modules,
_special_ops), their in-place `op_` variants (through `_methods._make_inplace`, so they are recorded like every
other in-place op), and torch's top-level in-place functions (torch.relu_(x) == x.relu_()).

`install` runs once the package has given the families' functions torch's argument checks (`_argcheck`), so
the methods are the checked functions."""
from __future__ import annotations

from . import _linalg_decomp, _linalg_lu
from .ops import arithmetic, comparison, products, reductions, unary
from . import _special_ops as S
from ._methods import _make_inplace
from ._tensor import Tensor
from .ops import complex_parts, construction, info, pointwise, scans, scatter, search, shape, spectral, stats
from .ops import linalg as ops_linalg

# the op families (each declares METHODS and INPLACE: its functions that Tensor has as methods)
FAMILIES = (pointwise, complex_parts, scans, construction, shape, search, ops_linalg, spectral, info, stats, scatter,
            _linalg_lu, _linalg_decomp)
_SPECIAL_METHODS = ["i0", "igamma", "igammac"]  # (_special_ops)


def _inplace_ops() -> dict:
    """The ops outside the families whose in-place variants this module installs, by method name."""
    return {
        "i0": S.i0, "igamma": S.igamma, "igammac": S.igammac, "addmv": products.addmv, "addmm": products.addmm,
        "baddbmm": products.baddbmm, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod, "absolute": unary.abs, "arccos": unary.acos,
        "arcsin": unary.asin, "arctan": unary.atan, "arccosh": unary.acosh, "arcsinh": unary.asinh, "arctanh": unary.atanh,
        "arctan2": arithmetic.atan2, "sgn": unary.sgn, "greater": comparison.gt, "greater_equal": comparison.ge, "less": comparison.lt, "less_equal": comparison.le,
        "not_equal": comparison.ne, "bitwise_left_shift": comparison.bitwise_left_shift, "bitwise_right_shift": comparison.bitwise_right_shift,
    }


def _lu_method(self, pivot=True, get_infos=False):
    return _linalg_lu.lu(self, pivot, get_infos)


def _torch_inplace_fn(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


def methods() -> dict:
    """The families' method forms and in-place variants (name -> method), installed by _methods.install."""
    m = {}
    for fam in FAMILIES:  # each family declares its methods (METHODS) and their in-place variants (INPLACE)
        for name in fam.METHODS:
            m[name] = getattr(fam, name)
        for name in fam.INPLACE:
            m[name + "_"] = _make_inplace(getattr(fam, name), name.capitalize())
    for name in _SPECIAL_METHODS:
        m[name] = getattr(S, name)
    m["polygamma"] = lambda self, n: S.polygamma(n, self)
    m["polygamma_"] = _make_inplace(lambda x, n: S.polygamma(n, x), "Polygamma")
    m["lu"] = _lu_method
    m["orgqr"] = _linalg_decomp.householder_product
    m["geqrf"] = _linalg_decomp.geqrf
    m["ormqr"] = _linalg_decomp.ormqr
    m["solve"] = lambda self, *a, **k: ops_linalg.solve()
    m["lstsq"] = lambda self, *a, **k: ops_linalg.lstsq()
    m["eig"] = lambda self, *a, **k: ops_linalg.eig()
    m["symeig"] = lambda self, *a, **k: ops_linalg.symeig()
    for name, op in _inplace_ops().items():
        m[name + "_"] = _make_inplace(op, name.capitalize())
    m["stft"] = spectral.stft
    m["istft"] = spectral.istft
    m["new_empty_strided"] = lambda self, size, stride, *, dtype=None, device=None, requires_grad=False, \
        layout=None, pin_memory=False: construction.empty_strided(size, stride, dtype=dtype or self.dtype,
                                                                  requires_grad=requires_grad)
    return m


def torch_inplace_fns() -> dict:
    """torch's top-level in-place functions (torch.relu_(x) is x.relu_()), for the methods Tensor has."""
    return {name: _torch_inplace_fn(name) for name in TORCH_INPLACE_FNS if hasattr(Tensor, name)}


# the in-place functions torch exports at its top level (torch.relu_(x) == x.relu_())
TORCH_INPLACE_FNS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
    "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_",
    "fix_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
    "zero_",
)
