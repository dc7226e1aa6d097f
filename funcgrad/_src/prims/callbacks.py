"""Host callbacks: `debug_callback` (a side effect, no results), `pure_callback` (results of declared
shapes computed by Python on NumPy arrays) and `io_callback` (like pure_callback, but an effect: kept
by jit even when its results are unused, and called once per element under vmap).

Both are staged like any primitive, so under jit they run when the compiled function runs, not when it
is traced. `debug_callback` is marked `effectful`: jit's dead-code elimination keeps it although nothing
reads its (absent) results. Neither is in the primitive registry: their behaviour is the user's
callback, which the registry-wide property tests cannot know; tests/test_callbacks.py checks them.

Batching: `debug_callback` calls the callback once per batch element, in order (as JAX does).
`pure_callback` follows its `vmap_method`: "sequential" / "sequential_unrolled" (one call per element, results stacked),
"expand_dims" (one call; unbatched operands get a size-1 leading axis), "broadcast_all" (one call; every
operand broadcast to the batch), "legacy_vectorized" (as expand_dims); None raises, as in JAX.
Derivatives: `debug_callback` has none (it is invisible to differentiation); `pure_callback` raises,
as JAX does, pointing to custom_jvp / custom_vjp.
"""
from __future__ import annotations

import numpy as np

from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from .shape import move_axis
from .shape import broadcast_in_dim, concatenate, expand_dims, slice as _slice, squeeze
from ..core.jaxpr import Jaxpr


def _host(b):
    if isinstance(b, (np.ndarray, np.generic)):
        return np.asarray(b)
    return b.get() if hasattr(b, "get") else np.asarray(b)


def _index(x, d, i):
    """x[i] along axis d (as a traced op, so it stages under jit)."""
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[d], limits[d] = i, i + 1
    return squeeze(_slice(x, tuple(starts), tuple(limits), None), (d,))


def _batch_size(args, dims) -> int:
    return next(a.shape[d] for a, d in zip(args, dims) if d is not None)


# --- debug_callback -------------------------------------------------------------------------------

def _debug_impl(xp):
    def run(*bufs, callback, **_):
        callback(*[_host(b) for b in bufs])
        return []
    return run


def _per_element(prim, args, dims, **params) -> list:
    """prim bound once per batch element, in order (the sequential vmap of a callback): each call's results."""
    return [prim.bind(*[a if d is None else _index(a, d, i) for a, d in zip(args, dims)], **params)
            for i in range(_batch_size(args, dims))]


def _stacked(rows, n):
    """The per-element results of _per_element stacked along a new leading batch axis."""
    return [concatenate([expand_dims(r[k], (0,)) for r in rows], 0) for k in range(n)], [0] * n


def _debug_batch(args, dims, **params):
    _per_element(debug_callback_p, args, dims, **params)
    return [], []


debug_callback_p = Primitive("debug_callback", impl=_debug_impl, abstract_eval=lambda *a, **p: [],
                             batch=_debug_batch, multiple_results=True, differentiable=False, register=False)
debug_callback_p.effectful = True
debug_callback_p.foldable = False


# --- pure_callback --------------------------------------------------------------------------------

def _pure_abstract(*avals, callback, result_avals, vmap_method):
    return list(result_avals)


def _pure_impl(xp):
    def run(*bufs, callback, result_avals, vmap_method):
        outs = callback(*[_host(b) for b in bufs])
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if len(outs) != len(result_avals):
            raise ValueError(f"pure_callback: the callback returned {len(outs)} arrays, but "
                             f"result_shape_dtypes declares {len(result_avals)}")
        res = []
        for o, av in zip(outs, result_avals):
            o = np.asarray(o)
            if o.shape != av.shape or o.dtype != av.dtype:
                raise TypeError(f"pure_callback: the callback returned an array {o.dtype}{list(o.shape)}, "
                                f"but result_shape_dtypes declares {av.str_short()}")
            res.append(xp.asarray(o))
        return res
    return run


def _batched_avals(result_avals, size):
    return tuple(ShapedArray((size,) + av.shape, av.dtype, av.weak_type) for av in result_avals)


def _pure_batch(args, dims, *, callback, result_avals, vmap_method):
    size = _batch_size(args, dims)
    n = len(result_avals)
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for pure_callback when vmap_method is given: 'sequential', "
            "'sequential_unrolled', 'expand_dims', 'broadcast_all' or 'legacy_vectorized'")
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _stacked(_per_element(pure_callback_p, args, dims, callback=callback, result_avals=result_avals,
                                     vmap_method=vmap_method), n)
    if vmap_method in ("expand_dims", "legacy_vectorized", "broadcast_all"):
        new = []
        for a, d in zip(args, dims):
            if d is not None:
                new.append(move_axis(a, d, 0))
            elif vmap_method == "broadcast_all":
                new.append(broadcast_in_dim(a, (size,) + a.shape, tuple(range(1, a.ndim + 1))))
            else:
                new.append(expand_dims(a, (0,)))
        outs = pure_callback_p.bind(*new, callback=callback, result_avals=_batched_avals(result_avals, size),
                                    vmap_method=vmap_method)
        return list(outs), [0] * n
    raise ValueError(f"pure_callback: unknown vmap_method {vmap_method!r}; expected 'sequential', "
                     "'sequential_unrolled', 'expand_dims', 'broadcast_all' or 'legacy_vectorized'")


def _raises(message: str):
    """A derivative rule that refuses with `message` (the callbacks have no derivative of their own)."""
    def rule(*args, **params):
        raise ValueError(message)
    return rule


def _callback_primitive(name: str, batch, no_derivative: str, effectful: bool) -> Primitive:
    """pure_callback's and io_callback's card: the user's function on host arrays, results of declared
    avals (never weak), never constant-folded; `effectful` ones are kept by jit even when unused."""
    p = Primitive(name, impl=_pure_impl, abstract_eval=_pure_abstract, jvp_full=_raises(no_derivative),
                  vjp_full=_raises(no_derivative), batch=batch, multiple_results=True, register=False)
    p.weak_type_rule = lambda weaks, params: False
    p.foldable, p.effectful = False, effectful
    return p


pure_callback_p = _callback_primitive(
    "pure_callback", _pure_batch, "Pure callbacks do not support JVP or transposition. Use funcgrad.custom_jvp "
    "or funcgrad.custom_vjp to give a pure_callback a derivative.", effectful=False)

__all__ = ["debug_callback_p", "pure_callback_p", "io_callback_p", "drop_effects"]


def _io_batch(args, dims, **params):
    return _stacked(_per_element(io_callback_p, args, dims, **params), len(params["result_avals"]))


io_callback_p = _callback_primitive(
    "io_callback", _io_batch, "io_callback is not differentiable (its callback may have side effects); use "
    "pure_callback with custom_jvp / custom_vjp for a differentiable host function", effectful=True)


def drop_effects(jaxpr):
    """`jaxpr` without its effectful equations (debug callbacks), for the recomputations inside
    derivative rules: the effect already happened when the primal ran."""
    def droppable(e):  # effects without results (io_callback's results may be needed)
        return getattr(e.prim, "effectful", False) and not e.outvars
    if not any(droppable(e) for e in jaxpr.eqns):
        return jaxpr
    j = jaxpr._cache.get("no_effects")
    if j is None:
        eqns = [e for e in jaxpr.eqns if not droppable(e)]
        j = jaxpr._cache["no_effects"] = Jaxpr(jaxpr.constvars, jaxpr.consts, jaxpr.invars, eqns, jaxpr.outvars)
    return j
