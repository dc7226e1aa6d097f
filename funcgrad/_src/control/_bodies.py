"""What the control-flow cards share: tracing a body to a jaxpr (`trace_flat`), checking a loop's carry or a
cond's branches against each other with errors naming the leaf and the types, and the small helpers their rules
use. The cards themselves are in cond.py, while_loop.py and scan.py.

Each body is traced once to a jaxpr. Outside any transform (no tracers among the operands) the loops run
directly as Python over the user's functions, checking every step's carry against the initial carry's types
as the traced loop checks its body, and cond/switch trace every branch to check their output types before
running the one a known index picks: eager and traced calls raise the same TypeErrors, as in JAX. Under a
transform they bind a primitive whose card transforms the body jaxprs: jvp/vjp/batch rules build new
control-flow equations from the jvp, vjp or vmap of their bodies, so every transform composes with them.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, get_aval, canonical_array
from ..core.aval import ShapedArray
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.trace import find_top, new_trace, transform_active
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims import elementwise as ew
from ..prims.shape import full
from ..interpreters import compiler


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


class _Body:
    """A loop body's or branch's compiled code, as jit's cache entries hold theirs: `fn` runs the NumPy code
    generation, and with the native tier (compiler/native.py, numba) swaps in native code once the body has
    run `jit_native_threshold` times (a scan of 35 steps reaches it in its third call). The native code is
    `exact`: only what gives the NumPy code's results bit for bit (elementwise arithmetic, slices,
    concatenations) joins its regions; matrix products and reductions stay on NumPy, so an eager loop (the
    torch face's nn.LSTM) gives the same values before and after tiering."""
    __slots__ = ("fn", "native")

    def __init__(self, jaxpr: Jaxpr, tiered: bool):
        compiled = compiler.compile_jaxpr(jaxpr)
        self.fn, self.native = compiled.fn, None
        if tiered:
            self.fn = compiler.native.tier(self, compiled, exact=True)


def _compiled(jaxpr: Jaxpr):
    """The body's code for this run (read at each loop's start: the native code replaces it when ready). With
    the native tier turned off (jit_native) a body keeps the NumPy code: an entry of its own."""
    tiered = compiler.native.wanted(np)
    c = jaxpr._cache.get(("compiled", tiered))
    if c is None:
        c = jaxpr._cache[("compiled", tiered)] = _Body(jaxpr, tiered)
    return c.fn


def _fn(jaxpr):
    return lambda *a: eval_jaxpr(jaxpr, *a)


def _concrete(leaves) -> bool:
    """Outside every transform, loops run directly as Python (bodies may close over tracers otherwise)."""
    return not transform_active() and find_top([x for x in leaves if isinstance(x, ArrayBase)]) is None


# --- cond / switch --------------------------------------------------------------------------------


# The derivative rules differentiate only the operands that need it (a tangent, or a cotangent asked
# for): the others, such as values the branches close over from an enclosing transform, stay fixed.


# --- while_loop -----------------------------------------------------------------------------------


# --- scan -----------------------------------------------------------------------------------------


def _partial(jaxpr, ops, idx):
    """eval_jaxpr(jaxpr) as a function of the operands at positions idx (the others fixed to ops'),
    followed by any further inputs after ops."""
    def f(*d):
        full = list(ops)
        for i, v in zip(idx, d):
            full[i] = v
        return eval_jaxpr(jaxpr, *full, *d[len(idx):])
    return f
