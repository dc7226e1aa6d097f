"""Invertible (and a few non-invertible) transforms with log |det J| (torch.distributions.transforms).

Each transform writes its forward map, inverse and log-abs-det-Jacobian once on Arrays (`_f`, `_finv`,
`_ladj`, taking the transform's parameters `_params()` as extra arguments); `utils.call` runs them on
Arrays or records them for Tensors. Transforms are pytrees (parameters are children).
"""
from __future__ import annotations

import math
import weakref
from typing import Sequence

from .._torch import _jnp as jnp
from .._src.core.array import ArrayBase
from .._src.core.tree_util import register_pytree_node
from ..numpy import linalg as jla
from .._src.prims.elementwise import abs as _abs
from .._torch._dtype import Size
from .._torch._tensor import Tensor
from . import constraints
from .._torch.ops import join_split
from .distribution import Distribution
from .utils import _vec_to_tril, broadcast_all, call, forwarded, sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
           "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform"]


def _softplus(x):
    return jnp.logaddexp(x, 0.0)


def _log_sigmoid(x):
    return -_softplus(-x)


class Transform:
    """An invertible map with computable log |det J|. Subclasses give `_f`, `_finv`, `_ladj` on Arrays."""
    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_pytree_node(cls, _t_flatten, lambda aux, ch, _c=cls: _t_unflatten(_c, aux, ch))

    def __init__(self, cache_size: int = 0):
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._inv = None
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform (y -> x)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """The sign of the Jacobian determinant, for monotone univariate transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size: int = 1) -> "Transform":
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def _params(self) -> tuple:
        return ()

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is not x_old:
            self._cached_x_y = x, self._call(x)
        return self._cached_x_y[1]

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is not y_old:
            self._cached_x_y = self._inverse(y), y
        return self._cached_x_y[0]

    def _call(self, x):
        return call(type(self).__name__, self._f, x, *self._params())

    def _inverse(self, y):
        return call(type(self).__name__ + "Inverse", self._finv, y, *self._params())

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| at (x, y = self(x)), summed over the transform's event dims."""
        return call(type(self).__name__ + "LogAbsDetJacobian", self._ladj, x, y, *self._params())

    def _f(self, x, *p):
        raise NotImplementedError

    def _finv(self, y, *p):
        raise NotImplementedError

    def _ladj(self, x, y, *p):
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


def _t_flatten(t):
    keys, children, static = [], [], []
    for k in sorted(t.__dict__):
        v = t.__dict__[k]
        if k == "_cached_x_y" or (k == "_inv" and not isinstance(v, Transform)):
            continue
        if isinstance(v, (Tensor, ArrayBase, Transform, Distribution)) or (
                isinstance(v, list) and v and all(isinstance(p, Transform) for p in v)):
            keys.append(k)
            children.append(v)
        else:
            static.append((k, v))
    return children, (tuple(keys), tuple(static))


def _t_unflatten(cls, aux, children):
    keys, static = aux
    obj = cls.__new__(cls)
    obj.__dict__.update(static)
    obj.__dict__.update(zip(keys, children))
    if not isinstance(obj.__dict__.get("_inv"), Transform):
        obj._inv = None
    if obj.__dict__.get("_cache_size", 0) == 1:
        obj._cached_x_y = None, None
    return obj


class _InverseTransform(Transform):
    """The inverse of a transform (shares its cache)."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = forwarded("_inv", "codomain")
    codomain = forwarded("_inv", "domain")
    bijective = forwarded("_inv", "bijective")
    sign = forwarded("_inv", "sign")

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self._inv)})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return _neg(self._inv.log_abs_det_jacobian(y, x))

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class _ParameterFree(Transform):
    """A transform without parameters: all instances of a class are the same map, so one equals any
    instance of that class (or of its subclasses), as torch's per-class `__eq__`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if _ParameterFree in cls.__bases__:
            cls._map_class = cls

    def __eq__(self, other):
        return isinstance(other, self._map_class)

    __hash__ = object.__hash__


def _neg(x):
    return call("Neg", lambda a: -a, x)


class ComposeTransform(Transform):
    """parts applied in order (the empty composition is the identity)."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return call("ZerosLike", jnp.zeros_like, x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        fmt_string = self.__class__.__name__ + "(\n    "
        fmt_string += ",\n    ".join([p.__repr__() for p in self.parts])
        fmt_string += "\n)"
        return fmt_string


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its rightmost `reinterpreted_batch_ndims` dims treated as event dims."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    bijective = forwarded("base_transform", "bijective")
    sign = forwarded("base_transform", "sign")

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self.base_transform)}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost event dims from in_shape to out_shape (a unit Jacobian)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _f(self, x):
        batch_shape = x.shape[:x.ndim - len(self.in_shape)]
        return jnp.reshape(x, tuple(batch_shape) + tuple(self.out_shape))

    def _finv(self, y):
        batch_shape = y.shape[:y.ndim - len(self.out_shape)]
        return jnp.reshape(y, tuple(batch_shape) + tuple(self.in_shape))

    def _ladj(self, x, y):
        batch_shape = x.shape[:x.ndim - len(self.in_shape)]
        return jnp.zeros(batch_shape, dtype=x.dtype)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return Size(tuple(shape[:cut]) + tuple(self.in_shape))


class ExpTransform(_ParameterFree):
    """y = exp(x)."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _f(self, x):
        return jnp.exp(x)

    def _finv(self, y):
        return jnp.log(y)

    def _ladj(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return call("Sign", jnp.sign, self.exponent)

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(call("Eq", lambda a, b: jnp.all(a == b), self.exponent, other.exponent))

    __hash__ = object.__hash__

    def _params(self):
        return (self.exponent,)

    def _f(self, x, e):
        return jnp.power(x, e)

    def _finv(self, y, e):
        return jnp.power(y, 1 / e)

    def _ladj(self, x, y, e):
        return jnp.log(jnp.abs(e * y / x))

    def forward_shape(self, shape):
        return Size(jnp.broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ()))))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    finfo = jnp.finfo(x.dtype)
    return jnp.clip(jnp.logistic(x), finfo.tiny, 1.0 - finfo.eps)


class SigmoidTransform(_ParameterFree):
    """y = 1 / (1 + exp(-x)), clipped into (0, 1)."""
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _f(self, x):
        return _clipped_sigmoid(x)

    def _finv(self, y):
        finfo = jnp.finfo(y.dtype)
        y = jnp.clip(y, finfo.tiny, 1.0 - finfo.eps)
        return jnp.log(y) - jnp.log1p(-y)

    def _ladj(self, x, y):
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(_ParameterFree):
    """y = log(1 + exp(x))."""
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _f(self, x):
        return _softplus(x)

    def _finv(self, y):
        return jnp.log(-jnp.expm1(-y)) + y

    def _ladj(self, x, y):
        return -_softplus(-x)


class TanhTransform(_ParameterFree):
    """y = tanh(x)."""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _f(self, x):
        return jnp.tanh(x)

    def _finv(self, y):
        return jnp.arctanh(y)

    def _ladj(self, x, y):
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(_ParameterFree):
    """y = |x| (not injective: the inverse picks the nonnegative root)."""
    domain = constraints.real
    codomain = constraints.positive

    def _f(self, x):
        return _abs(x, "torch")

    def _finv(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, with event_dim rightmost dims forming one event."""
    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)):
                if a != b:
                    return False
            elif not bool(call("Eq", lambda u, v: jnp.all(u == v), a, b)):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, (int, float)):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return call("Sign", jnp.sign, self.scale)

    def _params(self):
        return (self.loc, self.scale)

    def _f(self, x, loc, scale):
        return loc + scale * x

    def _finv(self, y, loc, scale):
        return (y - loc) / scale

    def _ladj(self, x, y, loc, scale):
        shape = x.shape
        result = jnp.broadcast_to(jnp.log(jnp.abs(jnp.asarray(scale, dtype=x.dtype))), shape)
        if self.event_dim:
            result = jnp.sum(jnp.reshape(result, tuple(result.shape[:result.ndim - self.event_dim]) + (-1,)), -1)
        return result

    def forward_shape(self, shape):
        return Size(jnp.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                         tuple(getattr(self.scale, "shape", ()))))

    def inverse_shape(self, shape):
        return Size(jnp.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                         tuple(getattr(self.scale, "shape", ()))))


class CorrCholeskyTransform(_ParameterFree):
    """Unconstrained vectors of length D(D-1)/2 -> Cholesky factors of DxD correlation matrices
    (tanh to partial correlations, then stick breaking along each row)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        n = self._dim(x.shape[-1])
        return call("CorrCholeskyTransform", lambda a: _corr_chol_f(a, n), x)

    def _inverse(self, y):
        return call("CorrCholeskyTransformInverse", _corr_chol_inv, y)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        return call("CorrCholeskyTransformLogAbsDetJacobian", _corr_chol_ladj, x, y)

    @staticmethod
    def _dim(N):
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return D

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        D = self._dim(shape[-1])
        return Size(tuple(shape[:-1]) + (D, D))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return Size(tuple(shape[:-2]) + (D * (D - 1) // 2,))


def _tril_to_vec(m, diag):
    import numpy as np
    rows, cols = np.tril_indices(m.shape[-1], k=diag)
    return m[..., rows, cols]


def _corr_chol_f(x, n):
    x = jnp.tanh(x)
    eps = jnp.finfo(x.dtype).eps
    x = jnp.clip(x, -1 + eps, 1 - eps)
    r = _vec_to_tril(x, n, -1)
    z = r ** 2
    z1m_cumprod_sqrt = jnp.cumprod(jnp.sqrt(1 - z), axis=-1)
    r = r + jnp.eye(n, dtype=x.dtype)
    pad = [(0, 0)] * (r.ndim - 1) + [(1, 0)]
    return r * jnp.pad(z1m_cumprod_sqrt[..., :-1], pad, constant_values=1.0)


def _corr_chol_inv(y):
    y_cumsum = 1 - jnp.cumsum(y * y, axis=-1)
    pad = [(0, 0)] * (y.ndim - 1) + [(1, 0)]
    y_cumsum_shifted = jnp.pad(y_cumsum[..., :-1], pad, constant_values=1.0)
    y_vec = _tril_to_vec(y, -1)
    y_cumsum_vec = _tril_to_vec(y_cumsum_shifted, -1)
    t = y_vec / jnp.sqrt(y_cumsum_vec)
    return (jnp.log1p(t) - jnp.log1p(-t)) / 2


def _corr_chol_ladj(x, y):
    y1m_cumsum = 1 - jnp.cumsum(y * y, axis=-1)
    y1m_cumsum_tril = _tril_to_vec(y1m_cumsum, -2)
    stick_breaking_logdet = 0.5 * jnp.sum(jnp.log(y1m_cumsum_tril), axis=-1)
    tanh_logdet = -2 * jnp.sum(x + _softplus(-2 * x) - math.log(2.0), axis=-1)
    return stick_breaking_logdet + tanh_logdet


class SoftmaxTransform(_ParameterFree):
    """Unconstrained vectors -> the simplex by exp and normalisation (not bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _f(self, x):
        probs = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return probs / jnp.sum(probs, axis=-1, keepdims=True)

    def _finv(self, y):
        return jnp.log(y)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(_ParameterFree):
    """R^(K-1) -> the K-simplex by stick breaking (bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _f(self, x):
        k = x.shape[-1]
        offset = (k + 1) - jnp.arange(1, k + 1, dtype=x.dtype)
        z = jnp.logistic(x - jnp.log(offset))
        z_cumprod = jnp.cumprod(1 - z, axis=-1)
        pad0 = [(0, 0)] * (x.ndim - 1)
        return jnp.pad(z, pad0 + [(0, 1)], constant_values=1.0) * \
            jnp.pad(z_cumprod, pad0 + [(1, 0)], constant_values=1.0)

    def _finv(self, y):
        y_crop = y[..., :-1]
        k = y.shape[-1]
        offset = k - jnp.arange(1, k, dtype=y.dtype)
        sf = 1 - jnp.cumsum(y_crop, axis=-1)
        sf = jnp.maximum(sf, jnp.finfo(y.dtype).tiny)
        return jnp.log(y_crop) - jnp.log(sf) + jnp.log(offset)

    def _ladj(self, x, y):
        k = x.shape[-1]
        offset = (k + 1) - jnp.arange(1, k + 1, dtype=x.dtype)
        x = x - jnp.log(offset)
        return jnp.sum(-x + _log_sigmoid(x) + jnp.log(y[..., :-1]), axis=-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


def _lower_cholesky_f(x):
    d = jnp.diagonal(x, axis1=-2, axis2=-1)
    n = x.shape[-1]
    return jnp.tril(x, -1) + jnp.exp(d)[..., None, :] * jnp.eye(n, dtype=x.dtype)


def _lower_cholesky_inv(y):
    d = jnp.diagonal(y, axis1=-2, axis2=-1)
    n = y.shape[-1]
    return jnp.tril(y, -1) + jnp.log(d)[..., None, :] * jnp.eye(n, dtype=y.dtype)


class LowerCholeskyTransform(_ParameterFree):
    """Unconstrained square matrices -> lower triangular with positive diagonal (exp on the diagonal)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _f(self, x):
        return _lower_cholesky_f(x)

    def _finv(self, y):
        return _lower_cholesky_inv(y)


class PositiveDefiniteTransform(_ParameterFree):
    """Unconstrained square matrices -> positive definite ones, L L^T with L = LowerCholeskyTransform(x)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _f(self, x):
        L = _lower_cholesky_f(x)
        return L @ jnp.swapaxes(L, -1, -2)

    def _finv(self, y):
        return _lower_cholesky_inv(jla._cholesky(y, convention="torch"))


class CatTransform(Transform):
    """Transforms tseq applied to consecutive pieces (of sizes `lengths`) along dim, then concatenated."""

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0):
        assert all(isinstance(t, Transform) for t in tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        assert len(self.lengths) == len(self.transforms)
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, x, fns):
        assert -x.ndim <= self.dim < x.ndim
        assert x.shape[self.dim] == self.length
        out, start = [], 0
        dim = self.dim % x.ndim
        for fn, length in zip(fns, self.lengths):
            idx = (slice(None),) * dim + (slice(start, start + length),)
            out.append(fn(x[idx]))
            start += length
        return out

    def _cat(self, parts):
        if isinstance(parts[0], Tensor):
            return join_split.cat(parts, self.dim)
        return jnp.concatenate(parts, axis=self.dim)

    def _call(self, x):
        return self._cat(self._pieces(x, self.transforms))

    def _inverse(self, y):
        return self._cat(self._pieces(y, [t.inv for t in self.transforms]))

    def log_abs_det_jacobian(self, x, y):
        assert -x.ndim <= self.dim < x.ndim
        assert x.shape[self.dim] == self.length
        assert -y.ndim <= self.dim < y.ndim
        assert y.shape[self.dim] == self.length
        logdetjacs, start = [], 0
        dim = self.dim % x.ndim
        for trans, length in zip(self.transforms, self.lengths):
            idx = (slice(None),) * dim + (slice(start, start + length),)
            logdetjac = trans.log_abs_det_jacobian(x[idx], y[idx])
            if trans.event_dim < self.event_dim:
                logdetjac = sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
            start += length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.ndim
        dim = dim + self.event_dim
        if dim < 0:
            if isinstance(logdetjacs[0], Tensor):
                return join_split.cat(logdetjacs, dim)
            return jnp.concatenate(logdetjacs, axis=dim)
        out = logdetjacs[0]
        for t in logdetjacs[1:]:
            out = out + t
        return out

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms tseq applied to the slices of dim, then stacked."""

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0):
        assert all(isinstance(t, Transform) for t in tseq)
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        dim = self.dim % z.ndim
        return [z[(slice(None),) * dim + (i,)] for i in range(z.shape[dim])]

    def _stack(self, parts):
        if isinstance(parts[0], Tensor):
            return join_split.stack(parts, self.dim)
        return jnp.stack(parts, axis=self.dim)

    def _call(self, x):
        assert -x.ndim <= self.dim < x.ndim
        assert x.shape[self.dim] == len(self.transforms)
        return self._stack([t(v) for v, t in zip(self._slices(x), self.transforms)])

    def _inverse(self, y):
        assert -y.ndim <= self.dim < y.ndim
        assert y.shape[self.dim] == len(self.transforms)
        return self._stack([t.inv(v) for v, t in zip(self._slices(y), self.transforms)])

    def log_abs_det_jacobian(self, x, y):
        assert -x.ndim <= self.dim < x.ndim
        assert x.shape[self.dim] == len(self.transforms)
        return self._stack([t.log_abs_det_jacobian(a, b) for a, b, t in
                            zip(self._slices(x), self._slices(y), self.transforms)])

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): a univariate distribution's support -> the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
