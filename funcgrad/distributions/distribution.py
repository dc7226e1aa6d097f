"""Distribution: the base class of torch.distributions' API, for both of funcgrad's faces.

A distribution's parameters are either all Tensors (the PyTorch face: autograd records through the
formulas, `sample(sample_shape)` draws from `funcgrad.default_generator`) or all funcgrad Arrays (the
functional face: every distribution is a pytree whose children are its parameters, so it passes through
`jit`, `vmap` and `grad`, and sampling is stateless: `sample(key, sample_shape)`). Python numbers alone
give Tensors, as in PyTorch. Either face accepts `key=` to draw from an explicit PRNG key.
"""
from __future__ import annotations

import warnings
from numbers import Number

import numpy as np

from .._torch import _jnp as jnp
from ..autograd.grad_mode import no_grad
from .._src.core.array import ArrayBase
from .._src.core.tree_util import register_pytree_node
from .._torch._creation import default_generator
from .._torch._dtype import Size
from .._torch._tensor import Tensor
from . import constraints
from .utils import broadcast_all, call, expand_to, is_concrete, lazy_property, stop_gradient

__all__ = ["Distribution"]


def _fmt(x) -> str:
    if isinstance(x, (Tensor, ArrayBase)) and x.ndim == 0 and is_concrete(x):
        return str(x.item())
    return str(x)


# The key _sample_args passes on the tensor face to a family whose `_draws_as_torch` is true: its _sample/_rsample
# then draws with torch's own transform of the default generator (torch.randn, rand, bernoulli), so its samples
# are bit-identical to torch's after the same manual_seed.
TORCH_STREAM = object()


def _is_key(x) -> bool:
    return isinstance(x, ArrayBase) and not isinstance(x, Tensor) and x.dtype == jnp.uint32 and x.shape[-1:] == (2,)


def _batch_of(v):
    """The shape a child contributes to its parent's batch shape (None if it has none)."""
    if isinstance(v, (Tensor, ArrayBase)):
        return tuple(v.shape)
    if isinstance(v, Distribution):
        return tuple(v.batch_shape)
    return None


def _is_child(v) -> bool:
    from .transforms import Transform
    if isinstance(v, list):
        return bool(v) and all(isinstance(t, Transform) for t in v)
    return isinstance(v, (Tensor, ArrayBase, Distribution, Transform))


def _all(valid) -> bool:
    """Whether every entry of a constraint's concrete result is true (a Tensor's in NumPy at once)."""
    v = valid._v if isinstance(valid, Tensor) else None
    return bool(v.all()) if v.__class__ is np.ndarray else bool(valid.all())


class Distribution:
    """The base class of probability distributions (torch.distributions.Distribution)."""
    has_rsample = False
    _draws_as_torch = False  # (see TORCH_STREAM)
    has_enumerate_support = False
    _validate_args = __debug__
    _static_fields: tuple = ()  # children that are not batch-shaped (kept as they are by expand)

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Set whether validation is enabled (default: on, as Python's __debug__)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_pytree_node(cls, _tree_flatten, lambda aux, ch, _c=cls: _tree_unflatten(_c, aux, ch))

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with `validate_args=False` "
                              "to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(_class_attr(type(self), param), lazy_property):
                    continue  # a lazily computed alternative parametrisation (probs vs logits)
                value = getattr(self, param)
                if not is_concrete(value):
                    continue
                valid = constraint.check(value)
                if not _all(valid):
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {repr(self)} to satisfy the "
                                     f"constraint {repr(constraint)}, but found invalid values:\n{_fmt(value)}")
        super().__init__()

    def _init_broadcast(self, validate_args, **params) -> None:
        """Initialise a family whose parameters broadcast together: store each broadcast
        (`utils.broadcast_all`) under its name and take their common shape as the batch shape."""
        values = broadcast_all(*params.values())
        for name, value in zip(params, values):
            setattr(self, name, value)
        Distribution.__init__(self, values[0].shape, validate_args=validate_args)

    # --- shapes -----------------------------------------------------------------------------------------
    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape=Size()) -> Size:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dims expanded to batch_shape (parameters are broadcast views)."""
        batch_shape = Size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        cached = self.__dict__.get("_lazy_cached", ())
        nb = len(self._batch_shape)
        for k, v in self.__dict__.items():
            if k in cached or k in ("_lazy_cached", "_batch_shape"):
                continue
            if k in self._static_fields or not _is_child(v) or _batch_of(v) is None:
                new.__dict__[k] = v
                continue
            shape = _batch_of(v)
            extra = len(shape) - nb
            tail = shape[len(shape) - extra:] if extra > 0 else ()
            if isinstance(v, Distribution):
                new.__dict__[k] = v.expand(batch_shape + tail)
            else:
                new.__dict__[k] = expand_to(v, batch_shape + tail)
        new._batch_shape = batch_shape
        return new

    # --- parameters and summaries (overridden per family) ------------------------------------------
    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return _sqrt(self.variance)

    # --- sampling -----------------------------------------------------------------------------------
    def _tensor_face(self) -> bool:
        for k, v in self.__dict__.items():
            if isinstance(v, Tensor):
                return True
            if isinstance(v, ArrayBase):
                return False
            if isinstance(v, Distribution):
                return v._tensor_face()
        return True

    def _sample_args(self, args, kwargs, what="sample"):
        key = kwargs.pop("key", None)
        shape = kwargs.pop("sample_shape", None)
        if kwargs:
            raise TypeError(f"{what}() got unexpected keyword arguments {sorted(kwargs)}")
        args = list(args)
        if args and _is_key(args[0]):
            key = args.pop(0)
        if args:
            if shape is not None:
                raise TypeError(f"{what}() got multiple values for argument 'sample_shape'")
            shape = args.pop(0)
        if args:
            raise TypeError(f"{what}() takes at most 2 positional arguments (key, sample_shape)")
        if key is None:
            if not self._tensor_face():
                raise TypeError(f"{type(self).__name__}.{what}: a distribution with funcgrad Array parameters "
                                f"samples functionally; pass a PRNG key: d.{what}(key, sample_shape)")
            # a family that draws as torch does takes its numbers from the default generator's own stream
            key = TORCH_STREAM if self._draws_as_torch else default_generator.next_key()
        if shape is None:
            shape = ()
        elif isinstance(shape, int):
            shape = (shape,)
        return key, Size(shape)

    def sample(self, *args, **kwargs):
        """Draw a sample of shape sample_shape + batch_shape + event_shape, with no gradient:
        `sample(sample_shape=())` on the Tensor face, `sample(key, sample_shape=())` on the functional face."""
        key, shape = self._sample_args(args, kwargs)
        if self._tensor_face():
            with no_grad():
                return self._sample(key, shape)
        return stop_gradient(self._sample(key, shape))

    def rsample(self, *args, **kwargs):
        """A reparameterised sample (differentiable in the parameters); same arguments as sample."""
        if not self.has_rsample:
            raise NotImplementedError
        key, shape = self._sample_args(args, kwargs, "rsample")
        return self._rsample(key, shape)

    def _sample(self, key, sample_shape):
        if self.has_rsample:
            return self._rsample(key, sample_shape)
        raise NotImplementedError

    def _rsample(self, key, sample_shape):
        raise NotImplementedError

    def sample_n(self, n: int, *args, **kwargs):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        key, _ = self._sample_args(args, kwargs)
        return self.sample(Size((n,)), key=key)

    # --- densities ----------------------------------------------------------------------------------
    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _exp(self.entropy())

    # --- validation ---------------------------------------------------------------------------------
    def _validate_sample(self, value) -> None:
        if isinstance(value, (Number, np.ndarray)) and not self._tensor_face():
            value = jnp.asarray(value)  # the functional face takes array-likes, as funcgrad.numpy does
        if not isinstance(value, (Tensor, ArrayBase)):
            raise ValueError("The value argument to log_prob must be a Tensor")
        vshape = Size(value.shape)
        event_dim_start = len(vshape) - len(self._event_shape)
        if vshape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {vshape} vs "
                             f"{self._event_shape}.")
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(vshape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {vshape} vs "
                                 f"{Size(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        assert support is not None
        if not is_concrete(value):
            return
        valid = support.check(value)
        if is_concrete(valid) and not _all(valid):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(vshape)}) to be "
                             f"within the support ({repr(support)}) of the distribution {repr(self)}, but found "
                             f"invalid values:\n{_fmt(value)}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for p in names:
            v = self.__dict__[p]
            if isinstance(v, (Tensor, ArrayBase)):
                parts.append(f"{p}: {_fmt(v) if _numel(v) == 1 else Size(v.shape)}")
            else:
                parts.append(f"{p}: {v}")
        return self.__class__.__name__ + "(" + ", ".join(parts) + ")"


def _numel(v) -> int:
    n = 1
    for s in v.shape:
        n *= s
    return n


def _class_attr(cls, name):
    for c in cls.__mro__:
        if name in vars(c):
            return vars(c)[name]
    return None


def _sqrt(x):
    return call("Sqrt", jnp.sqrt, x)


def _exp(x):
    return call("Exp", jnp.exp, x)


# --- pytree registration ---------------------------------------------------------------------------------

def _tree_flatten(d: Distribution):
    cached = d.__dict__.get("_lazy_cached", ())
    nb = len(d.__dict__.get("_batch_shape", ()))
    keys, children, extras, static = [], [], [], []
    for k in sorted(d.__dict__):
        v = d.__dict__[k]
        if k in cached or k == "_lazy_cached":
            continue
        if _is_child(v):
            keys.append(k)
            children.append(v)
            shape = _batch_of(v)
            extras.append(None if shape is None or k in d._static_fields else len(shape) - nb)
        else:
            static.append((k, v))
    return children, (tuple(keys), tuple(extras), tuple(static))


def _tree_unflatten(cls, aux, children):
    keys, extras, static = aux
    obj = cls.__new__(cls)
    obj.__dict__.update(static)
    obj.__dict__.update(zip(keys, children))
    shapes = []
    for c, extra in zip(children, extras):
        if extra is None:
            continue
        s = _batch_of(c)
        if s is None:  # a placeholder leaf (a transform's in_axes spec, ...): keep the recorded shape
            return obj
        shapes.append(s[:len(s) - extra] if extra > 0 else s)
    if shapes:
        obj._batch_shape = Size(jnp.broadcast_shapes(*shapes))
    return obj
