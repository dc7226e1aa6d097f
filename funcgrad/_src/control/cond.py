"""cond and switch: the cond card (its jvp, vjp and batch rules build new conds from the branches'
jvp, vjp or vmap) and the user functions, which trace every branch to check their output types before
running the one a known index picks, so eager and traced calls raise the same TypeErrors, as in JAX."""
from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, get_aval, canonical_array
from ..core.jaxpr import eval_jaxpr
from ..core.primitive import Primitive
from ..core.trace import concrete_value, hoist_tracer_consts
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims import elementwise as ew
from ..prims.shape import broadcast_in_dim, full
from ..interpreters.ad import jvp, vjp
from ..interpreters.batching import vmap
from ..prims._util import batch_size
from ..prims.shape import move_axis, to_front
from ._bodies import (_as_arrays, _avals, _branch_error, _compiled, _fn, _partial, _tree_trace, _typematch, _zeros,
                     trace_flat)


def _cond_rule(index, *ops, branches):
    if index.dtype != dtypes.int32 or index.shape != ():
        raise TypeError(f"cond: index must be an int32 scalar, got {index.str_short()}")
    return list(branches[0].out_avals)


def _cond_impl(xp):
    def run(index, *ops, branches):
        i = int(min(max(int(index), 0), len(branches) - 1))
        return _compiled(branches[i])(*ops)
    return run


def _cond_jvp(args, tangents, ans, *, branches):
    index, ops = args[0], list(args[1:])
    idx = [i for i, t in enumerate(tangents[1:]) if t is not None]
    ts = [tangents[1 + i] for i in idx]
    avals = [get_aval(a) for a in ops] + [get_aval(t) for t in ts]
    n = len(ops)

    def make(b):
        return lambda *pt: list(jvp(_partial(b, pt[:n], idx), [pt[i] for i in idx], list(pt[n:]))[1])

    new = tuple(trace_flat(make(b), avals, "cond") for b in branches)
    return list(cond_p.bind(index, *ops, *ts, branches=new))


def _cond_vjp(cts, ans, args, needs, *, branches):
    index, ops = args[0], list(args[1:])
    idx = [i for i, need in enumerate(needs[1:]) if need]
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, branches[0].out_avals)]
    n = len(ops)
    avals = [get_aval(a) for a in ops] + [get_aval(c) for c in cts]

    def make(b):
        return lambda *pc: list(vjp(_partial(b, pc[:n], idx), *[pc[i] for i in idx])[1](list(pc[n:])))

    new = tuple(trace_flat(make(b), avals, "cond") for b in branches)
    out = [None] * (n + 1)
    for i, c in zip(idx, cond_p.bind(index, *ops, *cts, branches=new)):
        out[1 + i] = c
    return out


def _cond_batch(args, dims, *, branches):
    index, ops = args[0], list(args[1:])
    idim, odims = dims[0], list(dims[1:])
    size = batch_size(args, dims)
    if idim is None:
        avals = [get_aval(a) for a in ops]
        new = tuple(trace_flat(lambda *o, b=b: list(vmap(_fn(b), in_axes=tuple(odims), out_axes=0,
                                                         axis_size=size)(*o)), avals, "cond")
                    for b in branches)
        outs = cond_p.bind(index, *ops, branches=new)
        return list(outs), [0] * len(outs)
    # A batched predicate: evaluate every branch and select per example.
    ops = [to_front(a, d, size) for a, d in zip(ops, odims)]
    index = move_axis(index, idim, 0)
    results = [vmap(_fn(b), out_axes=0, axis_size=size)(*ops) if ops else
               [broadcast_in_dim(o, (size,) + tuple(o.shape), tuple(range(1, o.ndim + 1)))
                for o in eval_jaxpr(b)] for b in branches]
    last = len(branches) - 1
    index = ew.max(ew.min(index, full((size,), last, dtypes.int32)), full((size,), 0, dtypes.int32))
    outs = []
    for k in range(len(results[0])):
        out = results[last][k]
        for i in range(last - 1, -1, -1):
            pred = broadcast_in_dim(ew.eq(index, full((size,), i, dtypes.int32)), out.shape, (0,))
            out = ew.select(pred, results[i][k], out)
        outs.append(out)
    return outs, [0] * len(outs)


cond_p = Primitive("cond", impl=_cond_impl, abstract_eval=_cond_rule, jvp_full=_cond_jvp,
                   vjp_full=_cond_vjp, batch=_cond_batch, multiple_results=True)


cond_p.is_call = True


_NO_OPERAND = object()
# Branch functions already checked for operand types (as JAX caches its traced branches per function):
# key (name, ids of the branches, operand tree, avals) -> (weak references to the branches, branch 0's
# output tree and types). A known index skips re-tracing branches it has checked.
_CHECKED: dict = {}


def _check_index(name: str, index):
    """JAX's rule: a switch index is an integer (a Python int or an integer-dtype scalar array)."""
    if isinstance(index, ArrayBase):
        dt = index.dtype
    elif isinstance(index, (int, np.integer)) and not isinstance(index, (bool, np.bool_)):
        return
    else:
        try:
            dt = get_aval(index).dtype
        except TypeError:
            dt = None
    if dt is None or not dtypes.is_integer(dt):
        raise TypeError(f"{name}: the index must be an integer, got {index!r}"
                        f"{' as ' + str(dt) if dt is not None else ''}; convert it with .astype(int) (or use "
                        "lax.cond for a boolean predicate)")


def _trace_branches(name: str, labels, branches, in_tree, avals) -> list:
    """Every branch traced over the operands' types, their outputs checked to agree (TypeError otherwise)."""
    traced = [_tree_trace(b, in_tree, avals, name) for b in branches]
    for k in range(1, len(traced)):
        a, b = (0, k) if name != "cond" else (k, 0)  # (cond's message names true_fun first, as JAX's)
        err = _branch_error(name, labels(a), branches[a], traced[a][1], traced[a][0].out_avals,
                            labels(b), branches[b], traced[b][1], traced[b][0].out_avals)
        if err is not None:
            raise err
    return traced


def _checked_branches(name: str, labels, branches, in_tree, avals):
    key = (name, tuple(id(b) for b in branches), in_tree, tuple(avals))
    hit = _CHECKED.get(key)
    if hit is not None and all(r() is b for r, b in zip(hit[0], branches)):
        return hit[1], hit[2]
    traced = _trace_branches(name, labels, branches, in_tree, avals)
    j0, t0 = traced[0]
    try:
        refs = tuple(weakref.ref(b) for b in branches)
    except TypeError:  # (a callable that takes no weak reference: not cached)
        return t0, j0.out_avals
    if len(_CHECKED) >= 512:
        _CHECKED.clear()
    _CHECKED[key] = (refs, t0, j0.out_avals)
    return t0, j0.out_avals


def _switch(name: str, labels, index, branches, operands):
    """switch's body, shared with cond: every branch is traced (also when the index is known, so that eager
    and traced calls check the same types, as JAX does); a known index then runs its branch directly."""
    leaves, in_tree = tree_flatten(operands)
    leaves = _as_arrays(leaves)
    avals = _avals(leaves)
    idx = concrete_value(index) if isinstance(index, ArrayBase) else index
    if idx is not None:  # a known index: run the branch directly (its derivative is the cond's), on
        # and to arrays, as a traced branch; the output's weak types are branch 0's (as the traced cond's)
        t0, out_avals = _checked_branches(name, labels, branches, in_tree, avals)
        branch = branches[int(np.clip(int(idx), 0, len(branches) - 1))]
        out = branch(*tree_unflatten(in_tree, leaves))
        o_leaves, o_tree = tree_flatten(out)
        o_leaves = _as_arrays(o_leaves)
        if o_tree == t0:
            o_leaves = [ew.convert_element_type(o, o.dtype, a.weak_type)
                        if _typematch(get_aval(o), a) and bool(o.weak_type) != a.weak_type else o
                        for o, a in zip(o_leaves, out_avals)]
        return tree_unflatten(o_tree, o_leaves)
    traced = _trace_branches(name, labels, branches, in_tree, avals)
    t0 = traced[0][1]
    index = index if isinstance(index, ArrayBase) else canonical_array(index)
    if index.dtype != dtypes.int32:
        index = ew.convert_element_type(index, dtypes.int32)
    # Tracers the branches close over become leading operands, shared by every branch.
    jaxprs, hoisted = hoist_tracer_consts([j for j, _ in traced])
    outs = cond_p.bind(index, *hoisted, *leaves, branches=tuple(jaxprs))
    return tree_unflatten(t0, outs)


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """Apply `branches[index](*operands)`, with index clamped into range (as jax.lax.switch). Every branch
    must return the same pytree structure, shapes and dtypes (TypeError otherwise, as in JAX, also when
    the index is known).

    Under jit and vmap every branch is traced and the choice happens at run time (under vmap with a
    batched index, every branch runs and the results are selected); differentiable in the operands.

    Args:
        index: an integer scalar (Python int or array).
        branches: a sequence of functions with the same signature.
        *operands: the branches' arguments (pytrees of arrays).

    Examples:
        >>> from funcgrad import lax
        >>> lax.switch(1, [lambda x: x, lambda x: 2 * x, lambda x: 3 * x], 5.0)
        Array(10., dtype=float32, weak_type=True)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("switch: give the operands positionally or as operand=, not both")
        operands = (operand,)
    branches = list(branches)
    if not branches:
        raise ValueError("switch: needs at least one branch (an empty branch sequence)")
    if not all(callable(b) for b in branches):
        raise TypeError("switch: every branch must be callable")
    _check_index("switch", index)
    if isinstance(index, ArrayBase) and index.shape != ():
        raise TypeError(f"switch: the index must be a scalar, got shape {index.shape}")
    return _switch("switch", lambda k: f"branch {k}", index, branches, operands)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND):
    """true_fun(*operands) if pred else false_fun(*operands); traced structurally under jit/vmap.
    Both branches must return the same pytree structure, shapes and dtypes (TypeError otherwise, as in
    JAX, also for a known pred). JAX's older forms are accepted too: cond(pred, fun_t, fun_f, operand=x)
    and cond(pred, x_true, fun_t, x_false, fun_f).

    Use it instead of a Python `if` on a traced value (which raises ConcretizationError under jit).

    Args:
        pred: a boolean (or integer) scalar.
        true_fun, false_fun: functions of the operands with matching outputs.
        *operands: their arguments (pytrees of arrays).

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.cond(True, lambda x: x + 1, lambda x: x - 1, 10)
        Array(11, dtype=int32, weak_type=True)
        >>> f = jax.jit(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))
        >>> f(0.0)
        Array(1., dtype=float32, weak_type=True)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("cond: give the operands positionally or as operand=, not both")
        operands = (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, operands[0], operands[1]
            return cond(pred, lambda a, _: f_true(a), lambda _, b: f_false(b), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if isinstance(pred, ArrayBase):
        if pred.shape != ():
            raise TypeError(f"cond: pred must be a scalar, got shape {pred.shape}")
        if pred.dtype != dtypes.bool_:
            pred = ew.ne(pred, ew.zeros_like(pred))
        index = ew.convert_element_type(pred, dtypes.int32)
    else:
        if np.shape(pred) != ():
            raise TypeError(f"cond: pred must be a scalar, got shape {np.shape(pred)}")
        index = int(bool(pred))
    return _switch("cond", lambda k: ("false_fun", "true_fun")[k], index, [false_fun, true_fun], operands)
