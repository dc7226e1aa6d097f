"""HIPS's primitive/defvjp/defjvp extension API over funcgrad.custom_vjp / custom_jvp.

A primitive is called on plain values directly; when some positional arguments are funcgrad tracers it
is bound as a custom_vjp (or custom_jvp when only JVPs are defined) of those arguments, the others closed
over, and its VJP/JVP makers (HIPS's signatures) supply the derivative.
"""
import functools
import warnings

import funcgrad
import funcgrad.numpy

from .core import vspace
Tracer = funcgrad.core.Tracer

from .wrap_util import get_name, subvals


def isbox(x):
    return isinstance(x, Tracer)


def getval(x):
    return x


class Primitive:
    def __init__(self, fun):
        self.fun = fun
        self.vjps = {}     # argnum -> maker(ans, *args, **kwargs) -> (g -> cotangent)
        self.vjp_argnums = None  # maker(argnums, ans, args, kwargs) -> (g -> tuple of cotangents)
        self.jvps = {}     # argnum -> maker(g, ans, *args, **kwargs) -> tangent of the output
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        traced = tuple(i for i, a in enumerate(args) if isbox(a))
        if not traced:
            return self.fun(*args, **kwargs)

        def f(*xs):
            return self.fun(*subvals(args, zip(traced, xs)), **kwargs)

        if self.vjps or self.vjp_argnums is not None:
            return self._bind_vjp(f, args, kwargs, traced)
        return self._bind_jvp(f, args, kwargs, traced)  # with no rule at all, both modes raise

    # HIPS's deprecated (pre-1.2) method forms, which its tests still exercise.
    def defgrad(self, maker, argnum=0):
        warnings.warn("defgrad is deprecated; use autograd.extend.defvjp", stacklevel=2)
        self.vjps[argnum] = maker

    def defvjp(self, vjpfun, argnum=0):
        warnings.warn("Primitive.defvjp is deprecated; use autograd.extend.defvjp", stacklevel=2)
        self.vjps[argnum] = lambda ans, *args, **kw: (
            lambda g: vjpfun(g, ans, vspace(ans), vspace(g), *args, **kw))

    def defvjp_is_zero(self, argnums=(0,)):
        warnings.warn("defvjp_is_zero is deprecated", stacklevel=2)
        for i in argnums:
            self.vjps[i] = lambda ans, *args, _i=i, **kw: (lambda g: funcgrad.numpy.zeros_like(args[_i]))

    def _bind_vjp(self, f, args, kwargs, traced):
        name = get_name(self.fun)
        cf = funcgrad.custom_vjp(f)

        def fwd(*xs):
            ans = f(*xs)
            return ans, (xs, ans)

        def bwd(res, g):
            xs, ans = res
            full = subvals(args, zip(traced, xs))
            if self.vjp_argnums is not None:
                return tuple(self.vjp_argnums(traced, ans, full, kwargs)(g))
            missing = [i for i in traced if i not in self.vjps]
            if missing:
                raise NotImplementedError(f"VJP of {name} wrt argnum {missing[0]} not defined")
            return tuple(self.vjps[i](ans, *full, **kwargs)(g) for i in traced)

        cf.defvjp(fwd, bwd)
        return cf(*(args[i] for i in traced))

    def _bind_jvp(self, f, args, kwargs, traced):
        name = get_name(self.fun)
        cf = funcgrad.custom_jvp(f)

        def rule(primals, tangents):
            ans = f(*primals)
            full = subvals(args, zip(traced, primals))
            out = None
            for i, t in zip(traced, tangents):
                if i not in self.jvps:
                    raise NotImplementedError(f"JVP of {name} wrt argnum {i} not defined")
                term = self.jvps[i](t, ans, *full, **kwargs)
                out = term if out is None else out + term
            return ans, out

        cf.defjvp(rule)
        return cf(*(args[i] for i in traced))


def primitive(fun):
    return Primitive(fun)


def primitive_with_deprecation_warnings(fun):
    warnings.warn("autograd.primitive is deprecated; use autograd.extend.primitive", stacklevel=2)
    return Primitive(fun)
