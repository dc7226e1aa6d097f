"""Structured control flow: cond/switch, while_loop, fori_loop and scan.

Each body is traced once to a jaxpr. Outside any transform (no tracers among the operands) the loops run
directly as Python over the user's functions, checking every step's carry against the initial carry's types
as the traced loop checks its body (a loop with no steps traces its body to check it), and cond/switch trace
every branch to check their output types before running the one a known index picks: eager and traced calls
raise the same TypeErrors, as in JAX. Under a transform they bind a primitive whose
card transforms the body jaxprs: jvp/vjp/batch rules build new control-flow equations from the jvp, vjp or
vmap of their bodies, so every transform composes with them.
"""
from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, get_aval, to_array, wrap, canonical_array
from ..core.aval import ShapedArray
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.primitive import Primitive
from ..core.trace import concrete_value, find_top, hoist_tracer_consts, new_trace, transform_active, Tracer
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims import elementwise as ew
from ..prims.reduction import reduce_max
from ..prims.shape import broadcast_in_dim, concatenate, expand_dims, full, pad, rev, slice as lslice, squeeze
from ..interpreters import compiler
from ..interpreters.ad import jvp, vjp, backward, record
from ..interpreters.batching import vmap
from ..prims._util import batch_size
from ..prims.shape import move_axis, to_front
from ..interpreters.compiler.dce import dce


# --- tracing bodies -------------------------------------------------------------------------------

def _as_arrays(leaves):
    return [x if isinstance(x, ArrayBase) else canonical_array(x) for x in leaves]


def trace_flat(fun: Callable, in_avals, name: str) -> Jaxpr:
    """Trace a flat function (list of arrays -> list of arrays) to a closed jaxpr."""
    with new_trace(name, carries_values=False) as trace:
        ins = [trace.new_arg(a) for a in in_avals]
        outs = _as_arrays(fun(*ins))
        return trace.to_jaxpr(ins, outs)


def _tree_trace(fun: Callable, in_tree, in_avals, name: str, splat: bool = True):
    """Trace fun over pytree inputs: fun(*tree) when splat (operands), else fun(tree) (a carry)."""
    store = []

    def flat(*leaves):
        tree = tree_unflatten(in_tree, list(leaves))
        out = fun(*tree) if splat else fun(tree)
        out_leaves, out_tree = tree_flatten(out)
        store.append(out_tree)
        return out_leaves

    jaxpr = trace_flat(flat, in_avals, name)
    return jaxpr, store[-1]


def _aval_str(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """JAX's core.typematch: the same shape and dtype; the weak type is ignored."""
    return a.shape == b.shape and a.dtype == b.dtype


def _why(a: ShapedArray, b: ShapedArray) -> str:
    if a.shape != b.shape:
        return "so the shapes do not match" if a.dtype == b.dtype else "so the shapes and dtypes do not match"
    return "so the dtypes do not match"


def _fun_desc(f) -> str:
    """'name at file:line' for a user's function in messages."""
    code = getattr(f, "__code__", None)
    name = getattr(f, "__name__", type(f).__name__)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code is not None else name


def _param_name(f, i: int, default: str) -> str:
    import inspect
    try:
        return list(inspect.signature(f).parameters)[i]
    except (TypeError, ValueError, IndexError):
        return default


def _leaf_paths(tree) -> list:
    paths = []

    def walk(x, p):
        if isinstance(x, dict):
            for k in sorted(x, key=str):
                walk(x[k], f"{p}[{k!r}]")
        elif isinstance(x, (tuple, list)):
            fields = getattr(x, "_fields", None)
            for i, v in enumerate(x):
                walk(v, f"{p}.{fields[i]}" if fields else f"{p}[{i}]")
        elif x is not None:
            paths.append(p)
    walk(tree, "")
    return paths


def _carry_error(name: str, fun, carry_arg: int, init, in_tree, in_avals, out_tree, out_avals):
    """The TypeError (as JAX's) for a loop body whose carry output differs from its carry input in pytree
    structure, shape or dtype (weak types aside), naming the loop, the carry component, both types and
    the fix; None when they agree."""
    cname = _param_name(fun, carry_arg, "carry")
    desc = _fun_desc(fun)
    if in_tree != out_tree:
        return TypeError(
            f"{name}: the body function's carry input and carry output must have the same pytree structure, "
            f"but they differ: the input carry {cname} is {in_tree} but the carry output is {out_tree}. Revise "
            f"the body function ({desc}) so that the carry output has the same pytree structure as the carry "
            "input (the same containers, keys and number of arrays).")
    paths = _leaf_paths(init)
    if len(paths) != len(in_avals):
        paths = [f" leaf {i}" for i in range(len(in_avals))]
    diffs = [f"the input carry {cname}{p} has type {a.str_short()} but the corresponding output carry component "
             f"has type {b.str_short()}, {_why(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not _typematch(a, b)]
    if not diffs:
        return None
    return TypeError(
        f"{name}: the body function's carry input and carry output must have equal types (shapes and dtypes), "
        f"but they differ: {'; '.join(diffs)}. Revise the body function ({desc}) so that every carry output "
        "has the type of its input (for example with .astype(dtype), a reshape or a broadcast), or start the "
        "loop from a carry of the type the body returns.")


def _branch_error(name: str, label_a: str, fun_a, tree_a, avals_a, label_b: str, fun_b, tree_b, avals_b):
    """The TypeError (as JAX's) for cond/switch branches whose outputs differ; None when they agree."""
    funs = f"{label_a} is {_fun_desc(fun_a)}, {label_b} is {_fun_desc(fun_b)}"
    if tree_a != tree_b:
        return TypeError(
            f"{name}: branch outputs must have the same pytree structure, but they differ: {label_a}'s output "
            f"is {tree_a} but {label_b}'s output is {tree_b} ({funs}). Revise {label_a} and/or {label_b} so "
            "that they return the same pytree structure.")
    diffs = [f"the output{' leaf ' + str(i) if len(avals_a) > 1 else ''} of {label_a} has type {a.str_short()} "
             f"but the corresponding output of {label_b} has type {b.str_short()}, {_why(a, b)}"
             for i, (a, b) in enumerate(zip(avals_a, avals_b)) if not _typematch(a, b)]
    if not diffs:
        return None
    return TypeError(
        f"{name}: branches must have equal output types (shapes and dtypes), but they differ: {'; '.join(diffs)} "
        f"({funs}). Revise {label_a} and/or {label_b} so that all output types match (for example with "
        ".astype(dtype) or a broadcast).")


def _promote_weak_carry(leaves, out_avals):
    """JAX's weak-type promotion of a loop's initial carry: a weakly typed leaf (a Python scalar) whose type
    the body changes becomes strongly typed result_type(leaf, output); returns the new leaves, or None
    when nothing changed. (Whatever still differs afterwards is an error.)"""
    changed = False
    new = []
    for x, out in zip(leaves, out_avals):
        a = get_aval(x)
        if a.weak_type and not _typematch(a, out):
            dt, _ = dtypes.result_type((a.dtype, True), (out.dtype, out.weak_type))
            x = ew.convert_element_type(x, dt, False)
            changed = True
        new.append(x)
    return new if changed else None


def _avals(leaves) -> list:
    return [get_aval(x) for x in leaves]


def _zeros(av):
    return full(av.shape, 0, av.dtype)


def _compiled(jaxpr: Jaxpr):
    c = jaxpr._cache.get("compiled")
    if c is None:
        c = jaxpr._cache["compiled"] = compiler.compile_jaxpr(jaxpr)
    return c


def _fn(jaxpr):
    return lambda *a: eval_jaxpr(jaxpr, *a)


def _concrete(leaves) -> bool:
    """Outside every transform, loops run directly as Python (bodies may close over tracers otherwise)."""
    return not transform_active() and find_top([x for x in leaves if isinstance(x, ArrayBase)]) is None


# --- cond / switch --------------------------------------------------------------------------------

def _cond_rule(index, *ops, branches):
    if index.dtype != dtypes.int32 or index.shape != ():
        raise TypeError(f"cond: index must be an int32 scalar, got {index.str_short()}")
    return list(branches[0].out_avals)


def _cond_impl(xp):
    def run(index, *ops, branches):
        i = int(min(max(int(index), 0), len(branches) - 1))
        return _compiled(branches[i])(*ops)
    return run


def _partial(jaxpr, ops, idx):
    """eval_jaxpr(jaxpr) as a function of the operands at positions idx (the others fixed to ops'),
    followed by any further inputs after ops."""
    def f(*d):
        full = list(ops)
        for i, v in zip(idx, d):
            full[i] = v
        return eval_jaxpr(jaxpr, *full, *d[len(idx):])
    return f


# The derivative rules differentiate only the operands that need it (a tangent, or a cotangent asked
# for): the others, such as values the branches close over from an enclosing transform, stay fixed.

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


# Branch functions already checked for operand types (as JAX caches its traced branches per function):
# key (name, ids of the branches, operand tree, avals) -> (weak references to the branches, branch 0's
# output tree and types). A known index skips re-tracing branches it has checked.
_CHECKED: dict = {}


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


# --- while_loop -----------------------------------------------------------------------------------

def _while_rule(*args, cond_jaxpr, body_jaxpr, n_cond_consts, n_body_consts):
    return list(body_jaxpr.out_avals)


def _while_impl(xp):
    def run(*args, cond_jaxpr, body_jaxpr, n_cond_consts, n_body_consts):
        cc = list(args[:n_cond_consts])
        bc = list(args[n_cond_consts:n_cond_consts + n_body_consts])
        carry = list(args[n_cond_consts + n_body_consts:])
        c, b = _compiled(cond_jaxpr), _compiled(body_jaxpr)
        while bool(c(*cc, *carry)[0]):
            carry = list(b(*bc, *carry))
        return carry
    return run


def _while_jvp(args, tangents, ans, *, cond_jaxpr, body_jaxpr, n_cond_consts, n_body_consts):
    nc, nb = n_cond_consts, n_body_consts
    cc, bc, carry = args[:nc], args[nc:nc + nb], args[nc + nb:]
    bidx = [i for i in range(nb) if tangents[nc + i] is not None]  # the others stay fixed
    m = len(bidx)
    bct = [tangents[nc + i] for i in bidx]
    ct = [_zeros(get_aval(a)) if t is None else t for a, t in zip(carry, tangents[nc + nb:])]
    k = len(carry)
    # New carry: (primal carry, carry tangents); body consts: (consts, tangents of those that have one).
    cavals = [get_aval(a) for a in list(cc) + list(carry) + list(carry)]
    new_cond = trace_flat(lambda *a: eval_jaxpr(cond_jaxpr, *a[:nc + k]), cavals, "while")
    bavals = [get_aval(a) for a in list(bc) + bct + list(carry) + ct]

    def body(*a):
        consts, cts_, c, t = a[:nb], a[nb:nb + m], a[nb + m:nb + m + k], a[nb + m + k:]
        out, tout = jvp(_partial(body_jaxpr, consts, bidx), [consts[i] for i in bidx] + list(c),
                        list(cts_) + list(t))
        return list(out) + list(tout)

    new_body = trace_flat(body, bavals, "while")
    outs = while_p.bind(*cc, *bc, *bct, *carry, *ct, cond_jaxpr=new_cond, body_jaxpr=new_body,
                        n_cond_consts=nc, n_body_consts=nb + m)
    return list(outs[k:])


def _while_vjp(cts, ans, args, needs, **params):
    raise ValueError("Reverse-mode differentiation does not work for while_loop: its number of iterations "
                    "is not known in advance, so the intermediate values cannot be stored. Use "
                    "funcgrad.lax.fori_loop with static bounds, or funcgrad.lax.scan, instead.")


def _while_batch(args, dims, *, cond_jaxpr, body_jaxpr, n_cond_consts, n_body_consts):
    size = batch_size(args, dims)
    nc, nb = n_cond_consts, n_body_consts
    cc, bc, carry = list(args[:nc]), list(args[nc:nc + nb]), list(args[nc + nb:])
    ccd, bcd = list(dims[:nc]), list(dims[nc:nc + nb])
    carry = [to_front(a, d, size) for a, d in zip(carry, dims[nc + nb:])]  # every carry batched at 0
    k = len(carry)
    vcond = vmap(_fn(cond_jaxpr), in_axes=tuple(ccd) + (0,) * k, axis_size=size)
    vbody = vmap(_fn(body_jaxpr), in_axes=tuple(bcd) + (0,) * k, out_axes=0, axis_size=size)
    cavals = [get_aval(a) for a in cc + carry]
    new_cond = trace_flat(lambda *a: [reduce_max(vcond(*a)[0], (0,))], cavals, "while")
    bavals = [get_aval(a) for a in cc + bc + carry]

    def body(*a):
        c_consts, b_consts, c = a[:nc], a[nc:nc + nb], list(a[nc + nb:])
        live = vcond(*c_consts, *c)[0]
        new = vbody(*b_consts, *c)
        return [ew.select(broadcast_in_dim(live, n.shape, (0,)), n, o) for n, o in zip(new, c)]

    new_body = trace_flat(body, bavals, "while")
    outs = while_p.bind(*cc, *cc, *bc, *carry, cond_jaxpr=new_cond, body_jaxpr=new_body,
                        n_cond_consts=nc, n_body_consts=nc + nb)
    return list(outs), [0] * len(outs)


while_p = Primitive("while", impl=_while_impl, abstract_eval=_while_rule, jvp_full=_while_jvp,
                    vjp_full=_while_vjp, batch=_while_batch, multiple_results=True)
while_p.is_call = True


def _closure_jaxpr(fun, in_tree, avals, name):
    """Trace fun, then hoist its constants into explicit leading inputs (so transforms see them)."""
    jaxpr, out_tree = _tree_trace(fun, in_tree, avals, name, splat=False)
    consts = list(jaxpr.consts)
    open_jaxpr = Jaxpr([], [], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.eqns, jaxpr.outvars)
    return open_jaxpr, consts, out_tree


def _check_pred(name: str, pred) -> None:
    """JAX's rule: cond_fun returns a boolean scalar (a Python bool or a bool[] array)."""
    if isinstance(pred, (bool, np.bool_)):
        return
    a = pred if isinstance(pred, ShapedArray) else \
        get_aval(pred) if isinstance(pred, (ArrayBase, int, float, complex, np.generic)) else None
    if a is None or a.shape != () or a.dtype != dtypes.bool_:
        got = a.str_short() if a is not None else type(pred).__name__
        raise TypeError(f"{name}: cond_fun must return a boolean scalar, but got output type {got}; compare "
                        "explicitly (for example `c < n` or `jnp.any(...)`)")


def _while_traced(cond_fun, body_fun, leaves, tree, init_val, name: str, carry_arg: int = 0, bind: bool = True):
    """Trace cond_fun and body_fun over the carry's types (promoting weak Python-scalar leaves the body
    changes, as JAX), check them, and bind while_p (or only check, when not `bind`)."""
    leaves = _as_arrays(leaves)
    avals = _avals(leaves)
    body_j, body_consts, body_tree = _closure_jaxpr(body_fun, tree, avals, name + " body")
    promoted = _promote_weak_carry(leaves, body_j.out_avals) if body_tree == tree else None
    if promoted is not None:
        leaves, avals = promoted, _avals(promoted)
        body_j, body_consts, body_tree = _closure_jaxpr(body_fun, tree, avals, name + " body")
    err = _carry_error(name, body_fun, carry_arg, init_val, tree, avals, body_tree, body_j.out_avals)
    if err is not None:
        raise err
    cond_j, cond_consts, _ = _closure_jaxpr(cond_fun, tree, avals, name + " cond")
    if len(cond_j.outvars) != 1:
        raise TypeError(f"{name}: cond_fun must return a boolean scalar, but got {len(cond_j.outvars)} outputs "
                        f"{_aval_str(cond_j.out_avals)}")
    _check_pred(name, cond_j.out_avals[0])
    if not bind:
        return None
    outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        n_cond_consts=len(cond_consts), n_body_consts=len(body_consts))
    return tree_unflatten(tree, outs)


def _check_eager_carry(name, fun, carry_arg, init_val, tree, avals, leaves, first: bool, out):
    """Check an eager loop step's carry output `out` against the loop's carry types (tree, avals), as the
    traced loop checks its body once; returns the output's leaves as arrays. On the first step, a weakly
    typed initial leaf that JAX would promote raises _Promote, so that the loop restarts from promoted leaves
    (as JAX traces the body again)."""
    o_leaves, o_tree = tree_flatten(out)
    o_leaves = _as_arrays(o_leaves)
    if o_tree == tree:
        o_avals = _avals(o_leaves)
        for a, b in zip(avals, o_avals):
            if not _typematch(a, b):
                break
        else:
            return o_leaves
        if first:
            promoted = _promote_weak_carry(leaves, o_avals)
            if promoted is not None:
                raise _Promote(promoted)
    else:
        o_avals = None
    raise _carry_error(name, fun, carry_arg, init_val, tree, avals, o_tree, o_avals)


class _Promote(Exception):
    """An eager loop's first step asks for JAX's weak-type promotion of the initial carry."""

    def __init__(self, leaves):
        super().__init__()
        self.leaves = leaves


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; the carry keeps its types (as jax.lax.while_loop):
    a body that changes the carry's structure, shape or dtype raises TypeError, run eagerly or traced.

    Forward mode (jvp) works; reverse mode does not (the number of iterations is unknown, so nothing can
    be stored for the backward pass): ValueError, as in JAX. Use `fori_loop` with static bounds or `scan`.

    Examples:
        >>> from funcgrad import lax
        >>> lax.while_loop(lambda i: i < 10, lambda i: i * 2, 1)
        Array(16, dtype=int32, weak_type=True)
    """
    leaves, tree = tree_flatten(init_val)
    if _concrete(leaves):  # the carry is still made of arrays, as a traced loop's is
        leaves = _as_arrays(leaves)
        for _ in range(2):
            avals = _avals(leaves)
            val, first = tree_unflatten(tree, leaves), True
            try:
                while True:
                    pred = cond_fun(val)
                    _check_pred("while_loop", pred)
                    if not bool(pred):
                        break
                    new = _check_eager_carry("while_loop", body_fun, 0, init_val, tree, avals, leaves, first,
                                             body_fun(val))
                    val, first = tree_unflatten(tree, new), False
            except _Promote as p:
                leaves = p.leaves
                continue
            if first:  # no step ran: check the body's types as a traced loop does
                _while_traced(cond_fun, body_fun, leaves, tree, init_val, "while_loop", bind=False)
            return val
    return _while_traced(cond_fun, body_fun, leaves, tree, init_val, "while_loop")


# --- scan -----------------------------------------------------------------------------------------

def _scan_rule(*args, jaxpr, n_consts, n_carry, length, reverse):
    outs = jaxpr.out_avals
    ys = [ShapedArray((length,) + a.shape, a.dtype, a.weak_type) for a in outs[n_carry:]]
    return list(outs[:n_carry]) + ys


def _scan_impl(xp):
    def run(*args, jaxpr, n_consts, n_carry, length, reverse):
        consts, carry, xs = list(args[:n_consts]), list(args[n_consts:n_consts + n_carry]), args[n_consts + n_carry:]
        body = _compiled(jaxpr)
        ys = None
        order = range(length - 1, -1, -1) if reverse else range(length)
        for i in order:
            out = body(*consts, *carry, *[x[i] for x in xs])
            carry = list(out[:n_carry])
            if ys is None:
                ys = [xp.empty((length,) + np.shape(y), dtype=np.asarray(y).dtype if xp is np else y.dtype)
                      for y in out[n_carry:]]
            for buf, y in zip(ys, out[n_carry:]):
                buf[i] = y
        if ys is None:
            ys = [xp.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[n_carry:]]
        return carry + ys
    return run


def _scan_jvp(args, tangents, ans, *, jaxpr, n_consts, n_carry, length, reverse, res=None):
    nc, k = n_consts, n_carry
    cidx = [i for i in range(nc) if tangents[i] is not None]  # consts without a tangent stay fixed
    m = len(cidx)
    ts = [_zeros(get_aval(a)) if t is None else t for a, t in zip(args, tangents)]
    consts, carry, xs = args[:nc], args[nc:nc + k], args[nc + k:]
    tc, tk, tx = [ts[i] for i in cidx], ts[nc:nc + k], ts[nc + k:]
    nx = len(xs)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs]
    avals = ([get_aval(a) for a in list(consts) + list(tc) + list(carry) + list(tk)] + x_avals + x_avals)

    def body(*a):
        c, dc = a[:nc], a[nc:nc + m]
        h, dh = a[nc + m:nc + m + k], a[nc + m + k:nc + m + 2 * k]
        x, dx = a[nc + m + 2 * k:nc + m + 2 * k + nx], a[nc + m + 2 * k + nx:]
        out, tout = jvp(_partial(jaxpr, c, cidx), [c[i] for i in cidx] + list(h) + list(x),
                        list(dc) + list(dh) + list(dx))
        return list(out[:k]) + list(tout[:k]) + list(out[k:]) + list(tout[k:])

    key = ("jvp", nc, k, nx, tuple(cidx), _avals_key(avals))
    new = jaxpr._cache.get(key)
    if new is None:
        new = jaxpr._cache[key] = trace_flat(body, avals, "scan")
    outs = scan_p.bind(*consts, *tc, *carry, *tk, *xs, *tx, jaxpr=new, n_consts=nc + m, n_carry=2 * k,
                       length=length, reverse=reverse)
    ny = len(jaxpr.outvars) - k
    return list(outs[k:2 * k]) + list(outs[2 * k + ny:])


def _avals_key(avals) -> tuple:
    """A hashable key for derived body jaxprs: everything tracing depends on in each aval."""
    return tuple((tuple(a.shape), np.dtype(a.dtype).str, bool(a.weak_type)) for a in avals)


_VIEW_PRIMS = frozenset({"slice", "reshape", "squeeze", "expand_dims", "transpose", "broadcast_in_dim", "rev"})


def _tape_values(tape):
    """Every place a recorded tape keeps a value the backward walk may read: (holder, how) pairs for its
    variables and for the residuals a primitive's tape rule stored in its parameters (scan, custom_vjp)."""
    seen, places = set(), []
    for v in [t.var for t in tape.inputs] + [v for e in tape.trace.eqns for v in e.invars + e.outvars]:
        if id(v) not in seen:
            seen.add(id(v))
            places.append(v)
    stored = []
    for e in tape.trace.eqns:
        if "res" in e.params:
            leaves, tree = tree_flatten(e.params["res"])
            if any(isinstance(x, Tracer) for x in leaves):
                stored.append((e, leaves, tree))
    return places, stored


def _residual_bodies(jaxpr, nc, k, cidx, fwd_avals, ny):
    """The scan body split into a forward that also returns, per step, every value its vjp reads, and a
    backward that reads them instead of recomputing the step (as JAX's partial evaluation does):

        fwd: (consts, carry, x) -> (carry', y, *residuals)
        bwd: (consts, g_carry, g_consts, x, g_y, *residuals) -> (g_carry_before, g_consts', g_x)

    Residuals the backward does not read are dropped from both. Cached on the body jaxpr."""
    key = ("vjp_residuals", nc, k, tuple(cidx), _avals_key(fwd_avals))
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    m, nx = len(cidx), len(fwd_avals) - nc - k
    box = {}

    def fwd_body(*a):
        c, h, x = list(a[:nc]), list(a[nc:nc + k]), list(a[nc + k:])
        tape = record(_partial(jaxpr, c, cidx), [c[i] for i in cidx] + h + x, "scan")
        outs = _as_arrays(tape.out_values())
        inputs = {id(t): t for t in c + x}  # the backward gets these as its own inputs
        places, stored = _tape_values(tape)
        # a view of another value (a gate sliced out of a stacked product, a reshape) is cheaper to
        # take again in the backward than to save for every step
        views = [e for e in tape.trace.eqns if e.prim.name in _VIEW_PRIMS and len(e.invars) == 1
                 and isinstance(e.invars[0].val, Tracer) and isinstance(e.outvars[0].val, Tracer)]
        cid = {id(e.outvars[0].val) for e in views}
        cands = []
        for val in [v.val for v in places] + [x for _, leaves, _ in stored for x in leaves]:
            if isinstance(val, Tracer) and id(val) not in inputs and id(val) not in cid:
                cid.add(id(val))
                cands.append(val)
        box.update(tape=tape, c=c, x=x, cands=cands, places=places, stored=stored, views=views)
        return outs + cands

    fwd = trace_flat(fwd_body, fwd_avals, "scan")
    tape, cands = box["tape"], box["cands"]
    n_out = k + ny
    res_avals = [v.aval for v in fwd.outvars[n_out:]]
    bwd_avals = (list(fwd_avals[:nc]) + list(fwd.out_avals[:k]) + [fwd_avals[i] for i in cidx]
                 + list(fwd_avals[nc + k:]) + list(fwd.out_avals[k:n_out]) + res_avals)

    def bwd_body(*a):
        c = a[:nc]
        g_h = list(a[nc:nc + k])
        g_c = list(a[nc + k:nc + k + m])
        x = a[nc + k + m:nc + k + m + nx]
        g_y = list(a[nc + k + m + nx:nc + k + m + nx + ny])
        res = a[nc + k + m + nx + ny:]
        new = {id(t): u for t, u in zip(box["c"] + box["x"] + cands, list(c) + list(x) + list(res))}
        for e in box["views"]:
            new[id(e.outvars[0].val)] = e.prim.bind(new[id(e.invars[0].val)], **e.params)
        for v in box["places"]:  # the tape now reads this trace's values
            val = v.val
            if isinstance(val, Tracer) and id(val) in new:
                v.val = new[id(val)]
        for e, leaves, tree in box["stored"]:
            e.params = dict(e.params, res=tree_unflatten(tree, [new.get(id(x), x) for x in leaves]))
        gs = backward(tape, g_h + g_y)
        gs = [_zeros(av) if g is None else g for g, av in zip(gs, [fwd_avals[i] for i in cidx]
                                                                   + list(fwd_avals[nc:]))]
        new_gc = [ew.add(acc, g) for acc, g in zip(g_c, gs[:m])]
        return list(gs[m:m + k]) + new_gc + list(gs[m + k:])

    bwd = dce(trace_flat(bwd_body, bwd_avals, "scan"))
    # keep only the residuals the backward reads
    n_fixed = nc + k + m + nx + ny
    used_vars = {id(v) for e in bwd.eqns for v in e.invars} | {id(v) for v in bwd.outvars}
    keep = [r for r, v in enumerate(bwd.invars[n_fixed:]) if id(v) in used_vars]
    fwd = Jaxpr(fwd.constvars, fwd.consts, fwd.invars, fwd.eqns,
                list(fwd.outvars[:n_out]) + [fwd.outvars[n_out + r] for r in keep])
    bwd = Jaxpr(bwd.constvars, bwd.consts, list(bwd.invars[:n_fixed]) + [bwd.invars[n_fixed + r] for r in keep],
                bwd.eqns, bwd.outvars)
    hit = jaxpr._cache[key] = (fwd, bwd)
    return hit


def _tape_cidx(args, nc, traced):
    """The consts a tape-recorded scan keeps residuals for: the tape's own operands of a float or complex
    dtype, those its backward walk may ask a cotangent for (it may ask for fewer)."""
    return [i for i in range(nc) if (traced is None or traced[i]) and dtypes.is_inexact(get_aval(args[i]).dtype)]


def _fwd_avals(args, nc, k):
    return [get_aval(a) for a in args[:nc + k]] + [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype,
                                                               get_aval(x).weak_type) for x in args[nc + k:]]


def _forward_with_residuals(args, jaxpr, nc, k, length, reverse, cidx):
    """The scan's outputs plus the stacked residuals of its vjp (see _residual_bodies)."""
    ny = len(jaxpr.outvars) - k
    fwd, _ = _residual_bodies(jaxpr, nc, k, cidx, _fwd_avals(args, nc, k), ny)
    outs = scan_p.bind(*args, jaxpr=fwd, n_consts=nc, n_carry=k, length=length, reverse=reverse)
    return list(outs[:k + ny]), list(outs[k + ny:])


def _scan_tape(lower, params, traced=None):
    """On a tape, run the forward scan once, keeping the per-step residuals for the backward pass."""
    nc = params["n_consts"]
    cidx = _tape_cidx(lower, nc, traced)
    outs, stacked = _forward_with_residuals(list(lower), params["jaxpr"], nc, params["n_carry"],
                                            params["length"], params["reverse"], cidx)
    return outs, dict(params, res=(tuple(cidx), stacked))


def _scan_vjp(cts, ans, args, needs, *, jaxpr, n_consts, n_carry, length, reverse, res=None):
    nc, k = n_consts, n_carry
    consts, carry, xs = list(args[:nc]), list(args[nc:nc + k]), list(args[nc + k:])
    outs_avals = _scan_rule(*[get_aval(a) for a in args], jaxpr=jaxpr, n_consts=nc, n_carry=k,
                            length=length, reverse=reverse)
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, outs_avals)]
    ct_carry, ct_ys = cts[:k], cts[k:]
    ny = len(ct_ys)
    # 1. The per-step residuals: kept from the forward pass when recorded on a tape, else computed now
    # (for the consts whose cotangent is asked for).
    if res is not None:
        cidx, stacked = list(res[0]), res[1]
    else:
        cidx = [i for i in range(nc) if needs[i]]
        stacked = _forward_with_residuals(list(args), jaxpr, nc, k, length, reverse, cidx)[1]
    _, bwd = _residual_bodies(jaxpr, nc, k, cidx, _fwd_avals(args, nc, k), ny)
    # 2. Backward, in the opposite order: carry (ct of carry, accumulated ct of consts); per step
    # (x_t, ct_y_t, residuals_t).
    zero_c = [_zeros(get_aval(consts[i])) for i in cidx]
    out = scan_p.bind(*consts, *ct_carry, *zero_c, *xs, *ct_ys, *stacked, jaxpr=bwd, n_consts=nc,
                      n_carry=k + len(cidx), length=length, reverse=not reverse)
    m = len(cidx)
    g_init, g_consts, g_xs = out[:k], out[k:k + m], out[k + m:]
    out_c = [None] * nc
    for i, g in zip(cidx, g_consts):
        if needs[i]:
            out_c[i] = g
    return out_c + list(g_init) + list(g_xs)


def _scan_batch(args, dims, *, jaxpr, n_consts, n_carry, length, reverse):
    size = batch_size(args, dims)
    nc, k = n_consts, n_carry
    consts = list(args[:nc])
    cdims = list(dims[:nc])
    carry = [to_front(a, d, size) for a, d in zip(args[nc:nc + k], dims[nc:nc + k])]
    xs, xdims = [], []
    for a, d in zip(args[nc + k:], dims[nc + k:]):
        if d is None:
            xs.append(a)
            xdims.append(None)
        else:
            xs.append(move_axis(a, d, 1))  # scanned axis stays first; batch second
            xdims.append(0)
    vbody = vmap(_fn(jaxpr), in_axes=tuple(cdims) + (0,) * k + tuple(xdims), out_axes=0, axis_size=size)
    avals = ([get_aval(a) for a in consts + carry]
             + [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs])
    new = trace_flat(lambda *a: list(vbody(*a)), avals, "scan")
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=new, n_consts=nc, n_carry=k, length=length, reverse=reverse)
    return list(outs), [0] * k + [1] * (len(outs) - k)


scan_p = Primitive("scan", impl=_scan_impl, abstract_eval=_scan_rule, jvp_full=_scan_jvp,
                   vjp_full=_scan_vjp, batch=_scan_batch, tape_rule=_scan_tape, multiple_results=True)
scan_p.is_call = True


def _index(x, i):
    return squeeze(lslice(x, (i,) + (0,) * (x.ndim - 1), (i + 1,) + tuple(x.shape[1:])), (0,))


def _stack(ys):
    return concatenate([expand_dims(y, (0,)) for y in ys], 0)


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False, unroll: int = 1):
    """Loop `carry, y = f(carry, x)` over the leading axis of xs, stacking the ys (as jax.lax.scan). The
    carry keeps its types: a body that changes its structure, shape or dtype raises TypeError, run
    eagerly or traced (a weakly typed Python-scalar carry takes the body's dtype where JAX allows).

    The body is traced once and run `length` times; the loop is differentiable in both modes (reverse
    mode stores each step's residuals). Combine with `checkpoint` on the body to trade memory for compute.

    Args:
        f: `f(carry, x) -> (new_carry, y)`.
        init: the initial carry (a pytree).
        xs: the pytree scanned over its leading axis, or None (then `length` is required).
        length: the number of steps, when xs is None (or to check it).
        reverse: scan from the end.
        unroll: accepted (a compiler hint in JAX); the result is the same.

    Returns:
        `(final_carry, ys)`, the ys stacked along a new leading axis.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0))
        (Array(6., dtype=float32), Array([0., 0., 2., 9.], dtype=float32))
    """
    return _scan(f, init, xs, length, reverse, unroll, "scan", f, 0)


def _scan(f, init, xs, length, reverse, unroll, name: str, fun, carry_arg: int):
    """scan, with `name`, `fun` and `fun`'s carry argument position for messages (fori_loop's body)."""
    x_leaves, x_tree = tree_flatten(xs)
    lengths = {int(get_aval(x).shape[0]) if get_aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError(f"{name}: every leaf of xs needs a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError(f"{name}: xs leaves and length disagree on the scan length: {sorted(lengths)}")
    if not lengths:
        raise ValueError(f"{name}: give xs or length")
    n = lengths.pop()
    c_leaves, c_tree = tree_flatten(init)
    if n and _concrete(c_leaves + x_leaves):
        return _scan_python(f, init, c_leaves, c_tree, x_leaves, x_tree, n, reverse, name, fun, carry_arg)
    c_leaves, x_leaves = _as_arrays(c_leaves), _as_arrays(x_leaves)
    c_avals = _avals(c_leaves)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype, get_aval(x).weak_type) for x in x_leaves]
    store = []

    def body(*a):
        carry = tree_unflatten(c_tree, list(a[:len(c_leaves)]))
        x = tree_unflatten(x_tree, list(a[len(c_leaves):]))
        new_c, y = _scan_pair(name, f(carry, x))
        nc_leaves, nc_tree = tree_flatten(new_c)
        y_leaves, y_tree = tree_flatten(y)
        store.append((nc_tree, y_tree, len(nc_leaves)))
        return nc_leaves + y_leaves

    closed = trace_flat(body, c_avals + x_avals, name)
    nc_tree, y_tree, n_c = store[-1]
    promoted = _promote_weak_carry(c_leaves, closed.out_avals[:n_c]) if nc_tree == c_tree else None
    if promoted is not None:
        c_leaves, c_avals = promoted, _avals(promoted)
        closed = trace_flat(body, c_avals + x_avals, name)
        nc_tree, y_tree, n_c = store[-1]
    err = _carry_error(name, fun, carry_arg, init, c_tree, c_avals, nc_tree, closed.out_avals[:n_c])
    if err is not None:
        raise err
    consts = list(closed.consts)
    open_j = Jaxpr([], [], list(closed.constvars) + list(closed.invars), closed.eqns, closed.outvars)
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=open_j, n_consts=len(consts),
                       n_carry=len(c_leaves), length=n, reverse=bool(reverse))
    return tree_unflatten(c_tree, outs[:n_c]), tree_unflatten(y_tree, outs[n_c:])


def _scan_pair(name: str, out):
    if not (isinstance(out, tuple) and len(out) == 2):
        got = f"a tuple of {len(out)}" if isinstance(out, tuple) else type(out).__name__
        raise TypeError(f"{name}: the body function must return a pair (carry, y), got {got}")
    return out


def _scan_python(f, init, c_leaves, c_tree, x_leaves, x_tree, n, reverse, name, fun, carry_arg):
    """scan outside every transform: the body runs as Python on each slice, its carry checked against
    the initial carry's types at every step (as the traced scan checks its body once)."""
    x_leaves = _as_arrays(x_leaves)
    c_leaves = _as_arrays(c_leaves)
    order = range(n - 1, -1, -1) if reverse else range(n)
    while True:
        c_avals = _avals(c_leaves)
        carry, ys, y_type = tree_unflatten(c_tree, c_leaves), [], None
        try:
            for k, i in enumerate(order):
                x = tree_unflatten(x_tree, [_index(x, i) for x in x_leaves])
                new_c, y = _scan_pair(name, f(carry, x))
                carry = tree_unflatten(c_tree, _check_eager_carry(name, fun, carry_arg, init, c_tree, c_avals,
                                                                  c_leaves, k == 0, new_c))
                y_leaves, y_tree = tree_flatten(y)
                y_leaves = _as_arrays(y_leaves)
                t = (y_tree, [(a.shape, a.dtype) for a in _avals(y_leaves)])
                if y_type is None:
                    y_type = t
                elif t != y_type:
                    raise TypeError(f"{name}: the body function returned y of different types at different steps: "
                                    f"{y_type[0]} {[str(d) + str(list(s)) for s, d in y_type[1]]} and then "
                                    f"{t[0]} {[str(d) + str(list(s)) for s, d in t[1]]}; every step must return "
                                    "the same structure, shapes and dtypes (as when the body is traced once)")
                ys.append(y_leaves)
        except _Promote as p:
            c_leaves = p.leaves
            continue
        break
    if reverse:
        ys.reverse()
    stacked = [_stack([yl[j] for yl in ys]) for j in range(len(ys[0]))]
    return carry, tree_unflatten(y_type[0], stacked)


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """body_fun(i, val) for i in [lower, upper). Static bounds lower to scan, so reverse mode works.
    `unroll` (a scan hint in JAX) changes nothing in the result; it is accepted and passed to scan.
    The carry keeps its types: a body that changes its structure, shape or dtype raises TypeError naming
    fori_loop, run eagerly or traced (even with no iterations), as in JAX.

    Examples:
        >>> import funcgrad as jax
        >>> from funcgrad import lax
        >>> lax.fori_loop(0, 5, lambda i, s: s + i, 0)
        Array(10, dtype=int32, weak_type=True)
        >>> jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, y: y * x, 1.0))(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    if not callable(body_fun):
        raise TypeError("fori_loop: body_fun argument should be callable")
    _check_bounds(lower, upper)
    weak_index = get_aval(lower).weak_type and get_aval(upper).weak_type  # (Python ints: JAX's weak index)
    lo, hi = concrete_value(lower) if isinstance(lower, ArrayBase) else lower, \
        concrete_value(upper) if isinstance(upper, ArrayBase) else upper
    if lo is not None and hi is not None:
        lo, hi = int(lo), int(hi)
        leaves, tree = tree_flatten(init_val)
        if hi > lo and _concrete(leaves):  # run as Python; the index and the carry are arrays, as when traced
            leaves = _as_arrays(leaves)
            while True:
                avals = _avals(leaves)
                val = tree_unflatten(tree, leaves)
                try:
                    for i in range(lo, hi):
                        val = tree_unflatten(tree, _check_eager_carry(
                            "fori_loop", body_fun, 1, init_val, tree, avals, leaves, i == lo,
                            body_fun(wrap(np.int32(i), weak_index), val)))
                except _Promote as p:
                    leaves = p.leaves
                    continue
                return val
        idx = wrap(np.arange(lo, max(lo, hi), dtype=np.int32), weak_index)
        carry, _ = _scan(lambda c, i: (body_fun(i, c), None), init_val, idx, max(0, hi - lo), False,
                         1 if unroll is None else unroll, "fori_loop", body_fun, 1)
        return carry

    def cond_fun(c):
        return ew.lt(c[0], _bound(upper, c[0]))

    def body(c):
        new = body_fun(c[0], c[1])
        in_leaves, in_tree = tree_flatten(c[1])
        if not any(x.weak_type for x in in_leaves):  # (a weak carry leaf may yet be promoted: checked then)
            out_leaves, out_tree = tree_flatten(new)
            err = _carry_error("fori_loop", body_fun, 1, init_val, in_tree, _avals(in_leaves), out_tree,
                               _avals(_as_arrays(out_leaves)))
            if err is not None:
                raise err
        return (ew.add(c[0], full((), 1, c[0].dtype)), new)

    start = lower if isinstance(lower, ArrayBase) else wrap(np.asarray(lower, np.int32), weak_index)
    return _while_traced(cond_fun, body, *tree_flatten((start, init_val)), (start, init_val), "fori_loop")[1]


def _check_bounds(lower, upper) -> None:
    """JAX's rule for fori_loop's bounds: the same dtype, or signed integers of which one is weakly typed
    (a Python int beside an integer array)."""
    a, b = get_aval(lower), get_aval(upper)
    if a.dtype == b.dtype:
        return
    if a.dtype.kind == "i" and b.dtype.kind == "i" and a.weak_type != b.weak_type:
        return
    raise TypeError(f"fori_loop: lower and upper must have equal types, got {a.str_short()} and {b.str_short()} "
                    f"({lower!r}, {upper!r}); give integer bounds of one dtype (int(), .astype(jnp.int32))")


def _bound(b, like):
    b = b if isinstance(b, ArrayBase) else to_array(np.asarray(b, dtype=like.dtype))
    return ew.convert_element_type(b, like.dtype)


def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 - lax name
    """Apply f to each slice of xs along the leading axis (a scan with no carry). `batch_size`, which
    in JAX vmaps f over that many slices per step, gives the same result; it is accepted and unused.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> from funcgrad import lax
        >>> lax.map(lambda x: x ** 2, jnp.arange(4.0))
        Array([0., 1., 4., 9.], dtype=float32)
    """
    if batch_size is not None and int(batch_size) < 1:
        raise ValueError(f"lax.map: batch_size must be positive, got {batch_size}")
    return scan(lambda _, x: ((), f(x)), (), xs)[1]


# --- associative_scan -----------------------------------------------------------------------------
