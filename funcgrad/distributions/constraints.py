"""Constraints: the regions a distribution's parameters and values live in (torch.distributions.constraints).

`c.check(value)` returns a boolean of shape value.shape[:value.ndim - c.event_dim]: a Tensor for a Tensor
value, an Array otherwise. The tests are written once, on Arrays (`_check`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._src.core.trace import Tracer
from .._torch import _jnp as jnp
from .._torch._tensor import Tensor, _make
from .utils import arr, call_nograd

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
    "less_than", "lower_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_semidefinite", "positive_definite",
    "positive_integer", "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A region of valid values. `event_dim` dims on the right form one event; `is_discrete` for lattices."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean (Tensor for a Tensor value) telling, per event, whether value satisfies the constraint."""
        if isinstance(value, Tensor):
            v = value._v
            if v is not None and self._np_check is not None:  # a concrete tensor: checked in NumPy at once
                r = self._np_check(v)
                if r is not None:
                    return _make(np.asarray(r))
            return call_nograd(self._check, value)
        return self._check(jnp.asarray(value))

    def _check(self, value):
        raise NotImplementedError

    # `_np_check(v)`: the same test on a NumPy array v (the validation of every distribution's arguments and
    # samples runs it, so it is kept cheap), or None where it does not cover v (then `_check` runs); or None
    # for a constraint without one. Its result must equal `_check`'s, dtype and shape included.
    _np_check = None

    def __repr__(self) -> str:
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """Placeholder for a constraint that depends on other parameters; it cannot be checked."""

    def __init__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether constraint is a (placeholder) dependent constraint."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint (for `support` that depends on parameters)."""

    def __init__(self, fn=None, *, is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _OnBase(Constraint):
    """A constraint made from another, base_constraint: discrete when it is."""

    def __init__(self, base_constraint: Constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError("base_constraint must be a Constraint")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return self.base_constraint.is_discrete


class _IndependentConstraint(_OnBase):
    """base_constraint with its `reinterpreted_batch_ndims` rightmost batch dims made event dims."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int):
        super().__init__(base_constraint)
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def _check(self, value):
        result = self.base_constraint._check(value)
        if result.ndim < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.ndim}")
        r = self.reinterpreted_batch_ndims
        return jnp.all(result, axis=tuple(range(result.ndim - r, result.ndim))) if r else result

    def __repr__(self) -> str:
        return f"{self.__class__.__name__[1:]}({repr(self.base_constraint)}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(_OnBase):
    """The support of a MixtureSameFamily: the component distribution's support, reduced over the
    mixture dimension."""

    @property
    def event_dim(self) -> int:
        return self.base_constraint.event_dim

    def _check(self, value):
        unsqueezed = jnp.expand_dims(value, -1 - self.event_dim)
        result = self.base_constraint._check(unsqueezed)
        if value.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        n = result.ndim - value.ndim + self.event_dim
        return jnp.all(jnp.reshape(result, result.shape[:result.ndim - n] + (-1,)), axis=-1)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({repr(self.base_constraint)})"


class _Boolean(Constraint):
    is_discrete = True

    def _check(self, value):
        return (value == 0) | (value == 1)

    def _np_check(self, v):
        return (v == 0) | (v == 1) if v.dtype.kind in "biuf" else None


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def _check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = jnp.sum(value, axis=-1) == 1
        return jnp.all(is_boolean, axis=-1) & is_normalized


class _Bounded(Constraint):
    """value above lower_bound and/or below upper_bound (integral too when discrete): the subclass's __init__
    says which bounds it takes; `_strict` names the bounds compared strictly (< rather than <=)."""
    _strict: tuple = ()

    def __init__(self, lower_bound=None, upper_bound=None):
        if lower_bound is not None:
            self.lower_bound = lower_bound
        if upper_bound is not None:
            self.upper_bound = upper_bound
        super().__init__()

    def _check(self, value):
        ok = (jnp.remainder(value, 1) == 0) if self.is_discrete else None
        if hasattr(self, "lower_bound"):
            lo = arr(self.lower_bound)
            above = lo < value if "lower" in self._strict else lo <= value
            ok = above if ok is None else ok & above
        if hasattr(self, "upper_bound"):
            hi = arr(self.upper_bound)
            below = value < hi if "upper" in self._strict else value <= hi
            ok = below if ok is None else ok & below
        return ok

    def _np_check(self, v):
        k = v.dtype.kind
        if k == "f":
            ok = ((np.floor(v) == v) & np.isfinite(v)) if self.is_discrete else None
            kinds = (int, float)
        elif k in "iu":
            ok = None  # (integers are integral)
            kinds = (int,)
            info = np.iinfo(v.dtype)
        else:
            return None
        for b in ("lower_bound", "upper_bound"):
            if not hasattr(self, b):
                continue
            x = getattr(self, b)
            if x.__class__ not in kinds:  # (a tensor bound, or one whose promotion with v's dtype differs)
                return None
            if k != "f" and not info.min <= x <= info.max:  # (NumPy refuses an out-of-range Python int)
                return None
            if b == "lower_bound":
                c = np.less(x, v) if "lower" in self._strict else np.less_equal(x, v)
            else:
                c = np.less(v, x) if "upper" in self._strict else np.less_equal(v, x)
            ok = c if ok is None else ok & c
        if ok is None:
            ok = np.ones(v.shape, bool)
        return ok

    def __repr__(self) -> str:
        bounds = ", ".join(f"{b}={getattr(self, b)}" for b in ("lower_bound", "upper_bound") if hasattr(self, b))
        return f"{self.__class__.__name__[1:]}({bounds})"


class _IntegerInterval(_Bounded):
    """Integers in [lower_bound, upper_bound] (constraints.integer_interval)."""
    is_discrete = True


class _IntegerLessThan(_Bounded):
    is_discrete = True

    def __init__(self, upper_bound):
        super().__init__(upper_bound=upper_bound)


class _IntegerGreaterThan(_Bounded):
    is_discrete = True

    def __init__(self, lower_bound):
        super().__init__(lower_bound=lower_bound)


class _Real(Constraint):
    def _check(self, value):
        return value == value  # False only for NaN

    def _np_check(self, v):
        return v == v if v.dtype.kind in "biufc" else None


class _GreaterThan(_Bounded):
    """Reals above lower_bound (constraints.greater_than)."""
    _strict = ("lower",)

    def __init__(self, lower_bound):
        super().__init__(lower_bound=lower_bound)


class _GreaterThanEq(_GreaterThan):
    """Reals at or above lower_bound (constraints.greater_than_eq)."""
    _strict = ()


class _LessThan(_Bounded):
    """Reals below upper_bound (constraints.less_than)."""
    _strict = ("upper",)

    def __init__(self, upper_bound):
        super().__init__(upper_bound=upper_bound)


class _Interval(_Bounded):
    """Reals in [lower_bound, upper_bound] (constraints.interval)."""
    def __init__(self, lower_bound, upper_bound):
        super().__init__(lower_bound, upper_bound)


class _HalfOpenInterval(_Interval):
    """Reals in [lower_bound, upper_bound) (constraints.half_open_interval)."""
    _strict = ("upper",)


class _Simplex(Constraint):
    event_dim = 1

    def _check(self, value):
        return jnp.all(value >= 0, axis=-1) & (jnp.abs(jnp.sum(value, axis=-1) - 1) < 1e-6)

    def _np_check(self, v):
        if v.dtype.kind != "f" or v.dtype.itemsize < 4 or v.ndim == 0:  # (low precisions: the sum's dtype differs)
            return None
        return np.all(v >= 0, axis=-1) & (np.abs(np.sum(v, axis=-1) - 1) < 1e-6)


class _Multinomial(Constraint):
    """Nonnegative integer vectors summing to at most upper_bound (the sum is checked, not integrality)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def _check(self, x):
        return jnp.all(x >= 0, axis=-1) & (jnp.sum(x, axis=-1) <= arr(self.upper_bound))


class _LowerTriangular(Constraint):
    event_dim = 2

    def _check(self, value):
        ok = jnp.tril(value) == value
        return jnp.all(jnp.reshape(ok, value.shape[:-2] + (-1,)), axis=-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def _check(self, value):
        lower = jnp.all(jnp.reshape(jnp.tril(value) == value, value.shape[:-2] + (-1,)), axis=-1)
        positive_diagonal = jnp.all(jnp.diagonal(value, axis1=-2, axis2=-1) > 0, axis=-1)
        return lower & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: positive diagonal and rows of unit norm."""
    event_dim = 2

    def _check(self, value):
        tol = jnp.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = jnp.linalg.norm(value, axis=-1)
        unit_row_norm = jnp.all(jnp.abs(row_norm - 1.0) <= tol, axis=-1)
        return _LowerCholesky()._check(value) & unit_row_norm


class _Square(Constraint):
    event_dim = 2

    def _check(self, value):
        return jnp.full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=bool)


class _Symmetric(_Square):
    def _check(self, value):
        square_check = super()._check(value)
        if not _traced(square_check) and not bool(jnp.all(square_check)):
            return square_check
        close = jnp.isclose(value, jnp.swapaxes(value, -1, -2), atol=1e-6)
        return jnp.all(jnp.all(close, axis=-2), axis=-1)


def _traced(x) -> bool:
    return isinstance(x, Tracer)


class _PositiveSemidefinite(_Symmetric):
    def _check(self, value):
        sym_check = super()._check(value)
        if not _traced(sym_check) and not bool(jnp.all(sym_check)):
            return sym_check
        return jnp.all(jnp.linalg.eigvalsh(value) >= 0, axis=-1)


class _PositiveDefinite(_Symmetric):
    def _check(self, value):
        sym_check = super()._check(value)
        if not _traced(sym_check) and not bool(jnp.all(sym_check)):
            return sym_check
        return jnp.all(jnp.linalg.eigvalsh(value) > 0, axis=-1)


class _AlongDim(Constraint):
    """Constraints cseq applied to parts of a value along dim: discrete when any of them is."""

    def __init__(self, cseq, dim: int = 0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)


class _Cat(_AlongDim):
    """Constraints cseq applied to consecutive pieces (of sizes `lengths`) along dim."""

    def __init__(self, cseq, dim: int = 0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError("cat: cseq and lengths must have the same length")

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def _check(self, value):
        if not -value.ndim <= self.dim < value.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-value.ndim}, "
                             f"{value.ndim - 1}], but got {self.dim})")
        checks, start = [], 0
        for constr, length in zip(self.cseq, self.lengths):
            v = jnp.take(value, jnp.arange(start, start + length), axis=self.dim)
            checks.append(constr._check(v))
            start += length
        return jnp.concatenate(checks, axis=self.dim)


class _Stack(_AlongDim):
    """Constraints cseq applied to the slices of dim."""

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def _check(self, value):
        if not -value.ndim <= self.dim < value.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-value.ndim}, "
                             f"{value.ndim - 1}], but got {self.dim})")
        vs = [jnp.take(value, i, axis=self.dim) for i in range(value.shape[self.dim])]
        return jnp.stack([c._check(v) for v, c in zip(vs, self.cseq)], axis=self.dim)


# Public names, as torch.distributions.constraints has them
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
