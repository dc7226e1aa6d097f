"""jax.extend.core: the jaxpr classes, and `Primitive(name)` for operations defined by the user with
`def_impl` and `def_abstract_eval`, as JAX's "How primitives work" and jaxpr-interpreter guides do."""
from __future__ import annotations

import numpy as np

from ...core.array import Array, ArrayBase, wrap
from ...core.aval import ShapedArray
from ...core.jaxpr import Eqn, Jaxpr, Literal, Var, jaxpr_as_fun
from ...core.primitive import Primitive as _Card

ClosedJaxpr = Jaxpr
JaxprEqn = Eqn


def _to_buf(x, xp):
    """A backend buffer from whatever a user's impl returned (an Array, a NumPy array, a scalar)."""
    if isinstance(x, ArrayBase):
        return x._buf if isinstance(x, Array) else np.asarray(x)
    return xp.asarray(x)


class _AnyPrimitive(type):
    """Every funcgrad primitive counts as a `Primitive` here, as every JAX primitive is a
    jax.extend.core.Primitive."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _Card)


class Primitive(_Card, metaclass=_AnyPrimitive):
    """A primitive the user defines: `p = Primitive("name")`, then `p.def_impl(f)` (f receives and may
    return arrays), `p.def_abstract_eval(g)` (g(*avals, **params) -> ShapedArray, or a list of them with
    `p.multiple_results = True`), and `p.bind(*args, **params)`. Differentiating or batching a user
    primitive raises: it has no derivative or batching rules."""

    def __init__(self, name: str):
        self._user_impl = None
        self._user_abstract = None

        def impl_factory(xp):
            def run(*bufs, **params):
                if self._user_impl is None:
                    raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
                out = self._user_impl(*[wrap(b) for b in bufs], **params)
                if self.multiple_results:
                    return [_to_buf(o, xp) for o in out]
                return _to_buf(out, xp)
            return run

        def abstract(*avals, **params):
            if self._user_abstract is None:
                raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented")
            out = self._user_abstract(*avals, **params)
            return list(out) if self.multiple_results else out

        super().__init__(name, impl=impl_factory, abstract_eval=abstract, register=False)

    def def_impl(self, impl):
        self._user_impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self._user_abstract = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        self._user_abstract = lambda *a, **p: effectful_abstract_eval(*a, **p)[0]
        return effectful_abstract_eval


__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "ShapedArray", "Var", "jaxpr_as_fun",
           "primitives"]


def __getattr__(name):
    if name == "primitives":
        import importlib
        return importlib.import_module(__name__ + ".primitives")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
