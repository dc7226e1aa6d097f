"""jax.extend.core: the jaxpr classes, and `Primitive(name)` for operations defined by the user with
`def_impl` and `def_abstract_eval`, as JAX's "How primitives work" and jaxpr-interpreter guides do."""
from __future__ import annotations

import numpy as np

from ..._src.core.array import Array, ArrayBase, get_aval, wrap
from ..._src.core.aval import ShapedArray
from ..._src.core.jaxpr import Eqn, Jaxpr, Literal, Var, jaxpr_as_fun
from ..._src.core.primitive import Primitive as _Card
from ...interpreters import ad, batching
from ..._src.interpreters.batching import trace_to_jaxpr
from ..._src.prims.shape import full
from ..._src.interpreters.ad import vjp

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
        # derivative and batching rules come from jax.interpreters' tables, looked up when used
        self.jvp_full, self.vjp_full, self.batch = self._jvp_rule, self._vjp_rule, self._batch_rule

    def _jvp_rule(self, args, tangents, ans, **params):
        rule = ad.primitive_jvps.get(self)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{self.name}' not implemented")
        ts = tuple(ad.Zero(get_aval(a)) if t is None else t for a, t in zip(args, tangents))
        _, t_out = rule(tuple(args), ts, **params)
        if self.multiple_results:
            return [ad.instantiate_zeros(t) for t in t_out]
        return ad.instantiate_zeros(t_out)

    def _vjp_rule(self, cts, ans, args, needs, **params):
        # JAX's way: the tangent map of the jvp rule, traced, then transposed equation by equation
        rule = ad.primitive_jvps.get(self)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{self.name}' not implemented")
        idx = [i for i, need in enumerate(needs) if need]

        def tangent_map(*ts):
            full = [ad.Zero(get_aval(a)) for a in args]
            for i, t in zip(idx, ts):
                full[i] = t
            _, t_out = rule(tuple(args), tuple(full), **params)
            t_out = list(t_out) if self.multiple_results else [t_out]
            return [ad.instantiate_zeros(t) for t in t_out]

        linear = trace_to_jaxpr(tangent_map, [get_aval(args[i]) for i in idx], f"{self.name} jvp")
        in_cts = _transpose(linear, list(cts))
        out = [None] * len(args)
        for i, c in zip(idx, in_cts):
            out[i] = c
        return out

    def _batch_rule(self, args, dims, **params):
        rule = batching.primitive_batchers.get(self)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{self.name}' not implemented")
        return rule(list(args), list(dims), **params)

    def def_impl(self, impl):
        self._user_impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        self._user_abstract = abstract_eval
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        self._user_abstract = lambda *a, **p: effectful_abstract_eval(*a, **p)[0]
        return effectful_abstract_eval


def _transpose(jaxpr, cts) -> list:
    """Cotangents of the inputs of a jaxpr linear in them, given its outputs' cotangents (None: zero).
    User primitives use their registered transpose rules; the library's own, linear in the traced
    inputs here, their vjp rules (a linear map's vjp is its transpose)."""
    linear = set(jaxpr.invars)
    env = dict(zip(jaxpr.constvars, jaxpr.consts))
    linear_eqns = []
    for e in jaxpr.eqns:  # the non-linear part (primal values the tangents are scaled by) runs now
        if any(v in linear for v in e.invars):
            linear.update(e.outvars)
            linear_eqns.append(e)
        else:
            outs = e.prim.bind(*[env[v] for v in e.invars], **e.params)
            env.update(zip(e.outvars, outs if e.prim.multiple_results else [outs]))
    ct_env: dict = {}

    def add(v, c):
        ct_env[v] = c if v not in ct_env else ct_env[v] + c

    for v, c in zip(jaxpr.outvars, cts):
        if v in linear and c is not None:
            add(v, c)
    zeros = lambda av: full(av.shape, 0, av.dtype)  # noqa: E731
    for e in reversed(linear_eqns):
        out_cts = [ct_env.pop(v, None) for v in e.outvars]
        if all(c is None for c in out_cts):
            continue
        is_lin = [v in linear for v in e.invars]
        user_rule = ad.primitive_transposes.get(e.prim)
        if user_rule is not None:
            cs = [ad.Zero(v.aval) if c is None else c for v, c in zip(e.outvars, out_cts)]
            in_cts = user_rule(cs if e.prim.multiple_results else cs[0],
                               *[ad.UndefinedPrimal(v.aval) if lin else env[v] for v, lin in zip(e.invars, is_lin)],
                               **e.params)
        elif isinstance(e.prim, Primitive):
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{e.prim.name}' not implemented")
        else:
            li = [i for i, lin in enumerate(is_lin) if lin]

            def apply(*lin_vals, e=e, li=li):
                vals = [None if lin else env[v] for v, lin in zip(e.invars, is_lin)]
                for i, x in zip(li, lin_vals):
                    vals[i] = x
                return e.prim.bind(*vals, **e.params)

            _, pull = vjp(apply, *[zeros(e.invars[i].aval) for i in li])
            cs = [zeros(v.aval) if c is None else c for v, c in zip(e.outvars, out_cts)]
            got = pull(list(cs) if e.prim.multiple_results else cs[0])
            in_cts = [None] * len(e.invars)
            for i, c in zip(li, got):
                in_cts[i] = c
        for v, lin, c in zip(e.invars, is_lin, in_cts):
            if lin and c is not None and not isinstance(c, ad.Zero):
                add(v, c)
    return [ct_env.get(v) for v in jaxpr.invars]


__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "ShapedArray", "Var", "jaxpr_as_fun",
           "primitives"]


def __getattr__(name):
    if name == "primitives":
        import importlib
        return importlib.import_module(__name__ + ".primitives")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
