"""jit: trace once per input signature, optimise the jaxpr, generate straight-line backend code, cache.

Called on concrete arrays, a jitted function hashes the signature, finds the compiled function and calls
it. Called under another transform (grad of jit, vmap of jit, jit of jit) it binds the `pjit` call
primitive, whose rules transform the traced jaxpr and compile the result, so it stays compiled.
"""
from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from typing import Callable

import numpy as np

from ..core.array import Array, ArrayBase, get_aval, to_array, wrap
from ..core.aval import ShapedArray
from ..core.errors import user_location
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.primitive import Primitive
from ..core.trace import Tracer
from ..core.tree_util import tree_flatten, tree_unflatten
from . import compiler
from .batching import trace_to_jaxpr

log = logging.getLogger("funcgrad.jit")


class _Config:
    log_compiles = False
    jit_cache_size = 4096
    disable_jit = False


config = _Config()


def _hashable_static(v, where: str):
    try:
        hash(v)
    except TypeError:
        raise ValueError(f"jit: static argument {where} of type {type(v).__name__} is not hashable; "
                         "static arguments must be hashable (use a tuple instead of a list, or make the "
                         "argument non-static)") from None
    return v


def _leaf_key(x):
    if x.__class__ is Array:
        b = x._buf
        return (b.shape, b.dtype, x.weak_type, type(b))
    if isinstance(x, Tracer):
        a = x.aval
        return (a.shape, a.dtype, a.weak_type, Tracer)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return ((), type(x), True, None)
    a = get_aval(x)
    return (a.shape, a.dtype, a.weak_type, type(x))


class Lowered:
    """What jit will run for one signature: the optimised jaxpr and the generated Python source."""

    def __init__(self, jaxpr: Jaxpr, compiled):
        self.jaxpr, self._compiled = jaxpr, compiled

    def as_text(self) -> str:
        return str(self.jaxpr)

    def source(self) -> str:
        return self._compiled.source

    def compile(self):
        return self


class JitFunction:
    """The callable returned by `jit(f)`."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), donate_argnums=()):
        self.fun = fun
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self._cache: OrderedDict = OrderedDict()
        self.compile_count = 0
        functools.update_wrapper(self, fun)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _split(self, args, kwargs):
        n = len(args)
        static_nums = set()
        for i in self.static_argnums:
            if not -n <= i < n:
                raise ValueError(f"jit: static_argnums {i} is out of range for a call with {n} positional "
                                 f"argument(s) to {getattr(self.fun, '__name__', 'fun')}")
            static_nums.add(i % n)
        static = tuple((i, _hashable_static(args[i], f"{i}")) for i in sorted(static_nums))
        static_kw = tuple(sorted((k, _hashable_static(v, repr(k))) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return static, static_kw, dyn_args, dyn_kwargs, n

    def _signature(self, args, kwargs):
        static, static_kw, dyn_args, dyn_kwargs, n = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        key = (in_tree, static, static_kw, n, tuple(_leaf_key(x) for x in leaves))
        return key, leaves, in_tree, static, static_kw, n

    def _trace(self, leaves, in_tree, static, static_kw, n):
        store = []
        fun = self.fun

        def flat_fun(*dyn_leaves):
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, dyn_leaves)
            it = iter(dyn_args)
            statics = dict(static)
            full = [statics[i] if i in statics else next(it) for i in range(n)]
            out = fun(*full, **dyn_kwargs, **dict(static_kw))
            out_leaves, out_tree = tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        avals = [get_aval(x) for x in leaves]
        jaxpr = trace_to_jaxpr(flat_fun, avals, "jit")
        return jaxpr, store[-1]

    def _entry(self, args, kwargs):
        key, leaves, in_tree, static, static_kw, n = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            jaxpr, out_tree = self._trace(leaves, in_tree, static, static_kw, n)
            jaxpr = compiler.optimize(jaxpr)
            entry = (jaxpr, out_tree, None)
            self._cache[key] = entry
            self.compile_count += 1
            if config.log_compiles:
                log.warning("Compiling %s for signature %s", getattr(self.fun, "__name__", "fun"),
                            [a.str_short() for a in jaxpr.in_avals])
            while len(self._cache) > config.jit_cache_size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return entry, key, leaves

    def __call__(self, *args, **kwargs):
        if config.disable_jit:
            return self.fun(*args, **kwargs)
        (jaxpr, out_tree, compiled), key, leaves = self._entry(args, kwargs)
        if any(isinstance(x, Tracer) for x in leaves):
            outs = pjit_p.bind(*leaves, jaxpr=jaxpr, name=getattr(self.fun, "__name__", "fun"))
            return tree_unflatten(out_tree, outs)
        if compiled is None:
            compiled = compiler.compile_jaxpr(jaxpr)
            self._cache[key] = (jaxpr, out_tree, compiled)
        bufs = [x._buf if x.__class__ is Array else to_array(x, copy=False)._buf for x in leaves]
        outs = compiled(*bufs)
        return tree_unflatten(out_tree, [wrap(o, w) for o, w in zip(outs, compiled.out_weak)])

    def lower(self, *args, **kwargs) -> Lowered:
        (jaxpr, out_tree, compiled), key, leaves = self._entry(args, kwargs)
        return Lowered(jaxpr, compiler.compile_jaxpr(jaxpr))

    def eval_shape(self, *args, **kwargs):
        (jaxpr, out_tree, _), _, _ = self._entry(args, kwargs)
        return tree_unflatten(out_tree, jaxpr.out_avals)

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        self._cache.clear()


def jit(fun: Callable | None = None, *, static_argnums=(), static_argnames=(), donate_argnums=(),
        **unused):
    """Compile `fun`: trace once per input signature, optimise, generate straight-line code, cache it."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames)
    if not callable(fun):
        raise TypeError(f"jit: expected a callable, got {type(fun).__name__}")
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums)


# --- the pjit call primitive ----------------------------------------------------------------------

def _pjit_rule(*avals, jaxpr: Jaxpr, name: str):
    for a, b in zip(avals, jaxpr.in_avals):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"pjit {name}: argument {a.str_short()} does not match traced {b.str_short()}")
    return list(jaxpr.out_avals)


def _pjit_impl(xp):
    def run(*bufs, jaxpr: Jaxpr, name: str):
        compiled = jaxpr._cache.get("compiled")
        if compiled is None:
            compiled = jaxpr._cache["compiled"] = compiler.compile_jaxpr(jaxpr)
        return compiled(*bufs)
    return run


def _eval_fn(jaxpr):
    return lambda *a: eval_jaxpr(jaxpr, *a)


def _derived(jaxpr, key, make):
    f = jaxpr._cache.get(key)
    if f is None:
        f = jaxpr._cache[key] = make()
    return f


def _zeros(av):
    from ..primitives.shape import full
    return full(av.shape, 0, av.dtype)


def _pjit_jvp(args, tangents, ans, *, jaxpr, name):
    from .ad import jvp
    f = _derived(jaxpr, "jvp", lambda: jit(lambda p, t: jvp(_eval_fn(jaxpr), p, t)[1]))
    ts = [_zeros(get_aval(a)) if t is None else t for a, t in zip(args, tangents)]
    return f(list(args), ts)


def _pjit_vjp(cts, ans, args, needs, *, jaxpr, name):
    from .ad import vjp
    f = _derived(jaxpr, "vjp", lambda: jit(lambda p, c: vjp(_eval_fn(jaxpr), *p)[1](c)))
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    return list(f(list(args), cts))


def _pjit_batch(args, dims, *, jaxpr, name):
    from .batching import vmap
    f = _derived(jaxpr, ("batch", tuple(dims)), lambda: jit(vmap(_eval_fn(jaxpr), in_axes=tuple(dims))))
    outs = f(*args)
    return list(outs), [0] * len(outs)


pjit_p = Primitive("pjit", impl=_pjit_impl, abstract_eval=_pjit_rule, jvp_full=_pjit_jvp,
                   vjp_full=_pjit_vjp, batch=_pjit_batch, multiple_results=True)
pjit_p.is_call = True
pjit_p.weak_type_rule = lambda weaks, params: False


def make_jaxpr(fun: Callable, static_argnums=()):
    """A function that traces `fun` on its arguments and returns the (unoptimised) jaxpr."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make(*args, **kwargs):
        j = JitFunction(fun, static_argnums)
        _, leaves, in_tree, static, static_kw, n = j._signature(args, kwargs)
        jaxpr, _ = j._trace(leaves, in_tree, static, static_kw, n)
        return jaxpr
    return make
