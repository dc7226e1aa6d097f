"""Automatic differentiation as interpreters of a recorded tape.

`record` runs a function on tracers of a value-carrying trace: every primitive applied to them is
recorded as an equation whose values are computed one level down. Then
- jvp walks the tape forward applying each primitive's jvp rule to tangents;
- vjp walks it in reverse applying vjp rules to cotangents.
The rules are funcgrad operations, so the walks are themselves traceable: higher orders nest.
Python control flow over concrete values works, since the tape holds the values.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Callable, Sequence

from ..core import dtypes
import numpy as np

from ..core.array import Array, ArrayBase, canonical_array, get_aval, to_array
from ..core.errors import user_location
from ..core.primitive import hooks
from ..core.trace import Tracer, new_trace
from ..core.jaxpr import Eqn, Var
from ..core.tree_util import register_pytree_node, tree_flatten, tree_unflatten, tree_map
from ..prims.elementwise import add, add_p, zeros_like, ones_like, convert_element_type
from . import backward_cache
from ..prims.shape import full


class Tape:
    """A recorded computation: the trace's equations plus its input and output tracers."""

    def __init__(self, trace, inputs, outputs):
        self.trace, self.inputs, self.outputs = trace, inputs, outputs

    def out_values(self) -> list:
        return [_lower(self.trace, o) for o in self.outputs]


def _lower(trace, x):
    """The value of x one level below `trace` (x itself when it is not one of trace's tracers)."""
    return x.val if isinstance(x, Tracer) and x._trace is trace else x


def _is_float0(x) -> bool:
    """A float0 (co)tangent: the zero derivative of an integer or boolean value, as JAX passes it."""
    return isinstance(x, np.ndarray) and x.dtype == dtypes.float0


def _as_tangent(x):
    """A (co)tangent leaf as an Array, or None (zero) for a float0 one."""
    return None if _is_float0(x) else _as_array(x)


def _as_array(x):
    if isinstance(x, ArrayBase):
        return x
    try:
        return canonical_array(x)
    except TypeError:
        raise TypeError(f"{type(x).__name__} is not a valid funcgrad type: arguments and outputs of "
                        "transformed functions must be arrays, scalars or pytrees of them") from None


@contextmanager
def gc_paused():
    """The cyclic garbage collector paused while a tape is recorded and walked. A tape is thousands of
    small objects that all stay alive until the walk ends and then die by reference counting (a tape has
    no cycles), so collections in between would scan them for nothing (a fifth of an eager grad's time)."""
    if not gc.isenabled():  # (paused further out, or by the user)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def record(flat_fun: Callable, primals: Sequence, name: str) -> Tape:
    """Run flat_fun(*primals) on tracers of a new value-carrying trace."""
    primals = [_as_array(p) for p in primals]
    with gc_paused(), new_trace(name, carries_values=True) as trace:
        ins = [trace.new_arg(get_aval(p), p) for p in primals]
        outs = [_as_array(o) for o in flat_fun(*ins)]
    return Tape(trace, ins, outs)


def _sum(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return add(a, b)


def _instantiate(ct, aval_src):
    return zeros_like(aval_src) if ct is None else ct


def _differentiable(v) -> bool:
    return not v.is_const and dtypes.is_inexact(v.aval.dtype)


def forward(tape: Tape, tangents: Sequence) -> list:
    """Tangents of the tape's outputs given tangents of its inputs (None means zero)."""
    env = {}
    for t_in, tan in zip(tape.inputs, tangents):
        if tan is not None:
            env[t_in.var] = tan
    inexact = _INEXACT
    accumulate = add_p.bind
    for eqn in tape.trace.eqns:
        prim = eqn.prim
        if not prim.multiple_results and prim.jvp_full is None:  # the common case, in one pass
            if not prim.differentiable:
                continue
            out = args = None
            invars = eqn.invars
            for i, v in enumerate(invars):
                t = env.get(v)
                if t is None:
                    continue
                rule = prim.jvp[i]
                if rule is None:
                    continue
                if args is None:
                    args = [w.val for w in invars]
                    ans = eqn.outvars[0].val
                c = rule(t, ans, *args, **eqn.params)
                if c is not None:
                    out = c if out is None else accumulate(out, c)
            if out is not None:
                v = eqn.outvars[0]
                dt = v.aval.dtype
                d = inexact.get(dt)
                if d is None:
                    d = inexact[dt] = dtypes.is_inexact(dt)
                if d:
                    env[v] = out
            continue
        ts = [env.get(v) for v in eqn.invars]
        if all(t is None for t in ts) or not eqn.prim.differentiable:
            continue
        args = [v.val for v in eqn.invars]
        prim, params = eqn.prim, eqn.params
        if prim.multiple_results:
            ans = [v.val for v in eqn.outvars]
        else:
            ans = eqn.outvars[0].val
        if prim.jvp_full is not None:
            outs = prim.jvp_full(args, ts, ans, **params)
            outs = outs if prim.multiple_results else [outs]
        else:
            out = None
            for i, t in enumerate(ts):
                if t is not None:
                    rule = prim.jvp[i]
                    if rule is not None:
                        out = _sum(out, rule(t, ans, *args, **params))
            outs = [out]
        for v, t in zip(eqn.outvars, outs):
            if t is not None and dtypes.is_inexact(v.aval.dtype):
                env[v] = t
    return [env.get(o.var) if isinstance(o, Tracer) and o._trace is tape.trace else None
            for o in tape.outputs]


def _accumulate(owned: set, prev, c):
    """prev + c for the backward walk. A sum made here (a fresh Array that nothing else holds; its id is in
    `owned`) takes later concrete NumPy contributions in place, one ufunc call each, instead of a new array
    per contribution (a weight read at every step of a loop gets one per step). A sum stops being owned
    once the walk hands it to a rule, since a rule may pass it on unchanged."""
    if prev.__class__ is Array and c.__class__ is Array and id(prev) in owned and not hooks.active:
        pb, cb = prev._buf, c._buf
        if pb.__class__ is np.ndarray and cb.__class__ is np.ndarray and pb.shape == cb.shape \
                and pb.dtype == cb.dtype:
            np.add(pb, cb, out=pb)
            return prev
    owned.discard(id(prev))
    r = add_p.bind(prev, c)
    if r.__class__ is Array and r._buf.__class__ is np.ndarray and r._buf.flags.writeable:
        owned.add(id(r))
    return r


def backward(tape: Tape, cts: Sequence) -> list:
    """Cotangents of the tape's inputs given cotangents of its outputs (None means zero). A tape whose
    structure repeats runs its walk compiled (backward_cache.py); the walk itself is `walk_backward`."""
    trace = tape.trace
    in_vars = [t.var for t in tape.inputs]
    out_vars = [o.var if isinstance(o, Tracer) and o._trace is trace else None for o in tape.outputs]
    if backward_cache.usable():
        res = backward_cache.compiled_backward(trace.eqns, in_vars, out_vars, cts, walk_backward)
        if res is not None:
            return res
    return walk_backward(trace.eqns, in_vars, out_vars, cts)


def walk_backward(eqns: Sequence, in_vars: Sequence, out_vars: Sequence, cts: Sequence,
                  fit: Callable | None = None) -> list:
    """The reverse walk over `eqns` applying vjp rules: cotangents of `in_vars` given cotangents of
    `out_vars` (an output that is not a variable of the tape is None there and gets no cotangent).

    This is the one backward sweep: `grad`/`vjp` run it over a tape, and the torch face's engine over each
    graph node's eagerly recorded binds (`funcgrad.autograd.node_record.Recorded`). `fit(c, shape)`, when given,
    brings a contribution whose shape differs from its variable's to that shape: eager binds on concrete
    NumPy operands may broadcast implicitly, where a tape's equations never do."""
    env = {}
    for v, ct in zip(out_vars, cts):
        if ct is not None and v is not None:
            env[v] = _sum(env.get(v), ct)
    inexact = _INEXACT
    owned = set()  # the sums _accumulate made and may still add into in place
    for eqn in reversed(eqns):
        prim = eqn.prim
        if not prim.multiple_results and prim.vjp_full is None:  # the common case, in one pass
            g = env.pop(eqn.outvars[0], None)
            if g is None or not prim.differentiable:
                continue
            if owned:
                owned.discard(id(g))
            invars = eqn.invars
            args = None
            vjps = prim.vjp
            i = -1
            for v in invars:
                i += 1
                if v.is_const:
                    continue
                dt = v.aval.dtype
                d = inexact.get(dt)
                if d is None:
                    d = inexact[dt] = dtypes.is_inexact(dt)
                if not d:
                    continue
                rule = vjps[i]
                if rule is None:
                    continue
                if args is None:
                    n = len(invars)  # (no comprehension: it costs a frame per equation)
                    args = (invars[0].val,) if n == 1 else (invars[0].val, invars[1].val) if n == 2 \
                        else tuple([w.val for w in invars])
                    ans = eqn.outvars[0].val
                    params = eqn.params
                c = rule(g, ans, *args, **params) if params else rule(g, ans, *args)
                if c is not None:
                    if fit is not None and c.shape != v.aval.shape:
                        c = fit(c, v.aval.shape)
                    prev = env.get(v)
                    env[v] = c if prev is None else _accumulate(owned, prev, c)
            continue
        if prim.multiple_results:
            outs_ct = [env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in outs_ct):
                continue
            for c in outs_ct:
                owned.discard(id(c))
        else:
            g = env.pop(eqn.outvars[0], None)
            if g is None:
                continue
            owned.discard(id(g))
        if not prim.differentiable:
            continue
        params = eqn.params
        invars = eqn.invars
        needs = []
        for v in invars:
            if v.is_const:
                needs.append(False)
            else:
                dt = v.aval.dtype
                d = inexact.get(dt)
                if d is None:
                    d = inexact[dt] = dtypes.is_inexact(dt)
                needs.append(d)
        if not any(needs):
            continue
        if prim.multiple_results:
            g, ans = outs_ct, [v.val for v in eqn.outvars]
        else:
            ans = eqn.outvars[0].val
        in_cts = eqn_vjp(prim, params, [v.val for v in invars], ans, g, needs)
        for v, need, c in zip(invars, needs, in_cts):
            if need and c is not None:
                if fit is not None and c.shape != v.aval.shape:
                    c = fit(c, v.aval.shape)
                prev = env.get(v)
                env[v] = c if prev is None else _accumulate(owned, prev, c)
    return list(map(env.get, in_vars))


_INEXACT: dict = {}  # dtype -> dtypes.is_inexact(dtype), for the backward walk


def eqn_vjp(prim, params: dict, args: Sequence, ans, g, needs: Sequence) -> list:
    """The cotangents of one equation's operands (None where not `needs`, or where the card has no rule)
    given the cotangent `g` of its output (a list, None for zero, for a multiple-result card): the card's
    vjp_full, else its per-operand vjp rules. The step `walk_backward` takes at each equation outside its
    inlined common case, and the whole backward of a torch graph node that is one primitive bind."""
    if prim.vjp_full is not None:
        return prim.vjp_full(g if prim.multiple_results else [g], ans, list(args), needs, **params)
    if prim.multiple_results:
        g = [_instantiate(c, a) for c, a in zip(g, ans)]
    rules = prim.vjp
    out = []  # (no comprehension: it costs a frame, and a torch graph node calls this once)
    i = 0
    for need in needs:
        rule = rules[i] if need else None
        out.append(None if rule is None else rule(g, ans, *args, **params) if params else rule(g, ans, *args))
        i += 1
    return out


# --- the public transforms ------------------------------------------------------------------------

def _flat_fun(fun, in_tree, out_store):
    def flat(*leaves):
        args = tree_unflatten(in_tree, leaves)
        out = fun(*args)
        out_leaves, out_tree = tree_flatten(out)
        out_store.append(out_tree)
        return out_leaves
    return flat


# jvp's and vjp's messages when the (co)tangents do not match: (structures differ, a leaf's shapes differ),
# formatted with the reference (primal or output) first
_MISMATCH = {
    "jvp": ("jvp: primal and tangent structures differ: {0} and {1}", "jvp: primal {0} and tangent {1} shapes differ"),
    "vjp": ("vjp: cotangent structure {1} differs from output structure {0}",
            "vjp: cotangent {1} does not match output {0}"),
}


def _check_like(kind: str, ref_leaves, ref_tree, leaves, tree, check_dtypes: bool = False) -> None:
    """ValueError (kind's message) unless the pytree (leaves, tree) has ref's structure and each leaf its
    reference leaf's shape; with check_dtypes, TypeError unless each leaf of an inexact reference has its dtype."""
    structure_differs, shapes_differ = _MISMATCH[kind]
    if tree != ref_tree:
        raise ValueError(structure_differs.format(ref_tree, tree))
    for r, x in zip(ref_leaves, leaves):
        ra = get_aval(r)
        if _is_float0(x):  # float0 is the zero (co)tangent of an integer or boolean leaf
            if dtypes.is_inexact(ra.dtype):
                err = TypeError if kind == "jvp" else ValueError  # as JAX raises
                raise err(f"{kind}: a float0 (co)tangent is only for an integer or boolean "
                          f"{'primal' if kind == 'jvp' else 'output'}, got one for {ra.str_short()}")
            if ra.shape != x.shape:
                raise ValueError(shapes_differ.format(ra.str_short(), f"float0{list(x.shape)}"))
            continue
        xa = get_aval(x)
        if ra.shape != xa.shape:
            raise ValueError(shapes_differ.format(ra.str_short(), xa.str_short()))
        if check_dtypes and dtypes.is_inexact(ra.dtype) and xa.dtype != ra.dtype:
            raise TypeError(f"{kind}: primal and tangent arguments do not match; dtypes must be equal, got "
                            f"primal {ra.str_short()} and tangent {xa.str_short()}")


def jvp(fun: Callable, primals, tangents, has_aux: bool = False, *, _check_dtypes: bool = False):
    """(fun(*primals), J·tangents): forward-mode derivative along `tangents` (pytrees like primals).

    The public funcgrad.jvp checks, as JAX does, that each float tangent has its primal's dtype
    (TypeError otherwise); internal callers (the Tensor face's forward AD, which lets a tangent keep
    its own dtype as PyTorch does) skip the check."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples or lists of arguments, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    _check_like("jvp", p_leaves, p_tree, t_leaves, t_tree, _check_dtypes)
    tape, out_tree, store = _record_fun(fun, p_leaves, p_tree, has_aux, "jvp")
    t_in = [_as_tangent(t) for t in t_leaves]
    t_out = forward(tape, t_in)
    out_vals = tape.out_values()
    t_out = [zeros_like(v) if t is None else t for t, v in zip(t_out, out_vals)]
    primal_out = tree_unflatten(out_tree, out_vals)
    tangent_out = tree_unflatten(out_tree, t_out)
    if has_aux:
        return primal_out, tangent_out, _take_aux(store, tape.trace)
    return primal_out, tangent_out


def _aux_split(fun, has_aux, store):
    if not has_aux:
        return fun

    def f(*args):
        out = fun(*args)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("has_aux=True requires the function to return a pair (output, aux)")
        store.append(("aux", out[1]))
        return out[0]
    return f


def _record_fun(fun, p_leaves, p_tree, has_aux: bool, name: str):
    """fun recorded on the primals' leaves (`name`, the transformation, names the recording): the tape, the
    output's tree (the last thing _flat_fun stores) and the store, where has_aux's aux waits for _take_aux."""
    store = []
    tape = record(_flat_fun(_aux_split(fun, has_aux, store), p_tree, store), p_leaves, name)
    return tape, store[-1], store


def _take_aux(store, trace):
    for item in store:
        if isinstance(item, tuple) and len(item) == 2 and item[0] == "aux":
            return tree_map(lambda x: _lower(trace, x), item[1])
    return None


def linearize(fun: Callable, *primals, has_aux: bool = False):
    """Evaluate `fun` once and return its linear approximation (forward mode) as a function.

    Args:
        fun: a function of arrays (pytrees of arrays) returning arrays.
        *primals: the point to linearise at, one argument per positional parameter of `fun`.
        has_aux: `fun` returns a pair `(output, aux)`; aux is returned as it is, not differentiated.

    Returns:
        `(fun(*primals), f_jvp)`, or `(out, f_jvp, aux)` with `has_aux`. `f_jvp(*tangents)` (tangents
        shaped like `primals`) returns the Jacobian-vector product without re-running `fun`: the recorded
        program is replayed on the tangents only, so it pays off when one point is pushed many tangents.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> y, f_jvp = jax.linearize(jnp.exp, 0.0)
        >>> f_jvp(2.0)
        Array(2., dtype=float32, weak_type=True)
    """
    p_leaves, p_tree = tree_flatten(primals)
    tape, out_tree, store = _record_fun(fun, p_leaves, p_tree, has_aux, "linearize")
    out_vals = tape.out_values()

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != p_tree:
            raise ValueError(f"linearize: tangent structure {t_tree} differs from primal structure {p_tree}")
        t_out = forward(tape, [_as_array(t) for t in t_leaves])
        return tree_unflatten(out_tree, [zeros_like(v) if t is None else t for t, v in zip(t_out, out_vals)])

    if has_aux:
        return tree_unflatten(out_tree, out_vals), f_jvp, _take_aux(store, tape.trace)
    return tree_unflatten(out_tree, out_vals), f_jvp


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """Reverse mode: evaluate `fun` and return a function that pulls output cotangents back to the inputs.

    Args:
        fun: a function of arrays (pytrees of arrays) returning arrays.
        *primals: the point to differentiate at, one argument per positional parameter of `fun`.
        has_aux: `fun` returns a pair `(output, aux)`; aux is returned as it is, not differentiated.
        reduce_axes: deprecated in JAX; accepted only empty (NotImplementedError otherwise).

    Returns:
        `(fun(*primals), f_vjp)`, or `(out, f_vjp, aux)` with `has_aux`. `f_vjp(ct)` takes a cotangent
        with the structure, shapes and dtypes of the output and returns a tuple with one cotangent per
        primal (`ct` times the Jacobian). It may be called many times, and is a pytree whose leaves are
        its residuals (VjpFunction), as JAX's.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> y, f_vjp = jax.vjp(lambda x: x ** 2, 3.0)
        >>> y
        Array(9., dtype=float32, weak_type=True)
        >>> f_vjp(1.0)
        (Array(6., dtype=float32, weak_type=True),)
    """
    if reduce_axes:
        raise NotImplementedError("vjp: reduce_axes is not supported (it is deprecated in JAX)")
    p_leaves, p_tree = tree_flatten(primals)
    tape, out_tree, store = _record_fun(fun, p_leaves, p_tree, has_aux, "vjp")
    out_vals = tape.out_values()
    in_avals = [get_aval(p) for p in tape.inputs]

    f_vjp = VjpFunction(tape, out_vals, out_tree, in_avals, p_tree)
    out = tree_unflatten(out_tree, out_vals)
    if has_aux:
        return out, f_vjp, _take_aux(store, tape.trace)
    return out, f_vjp


class VjpFunction:
    """vjp's pullback `f_vjp(ct)`, and a pytree as JAX's (a tree_util.Partial over the residuals): its leaves
    are the values the backward walk reads (every non-constant value on the tape), its structure the tape's
    equations. So f_vjp can be returned from make_jaxpr/jit (the residuals become outputs), flattened, and
    rebuilt from other leaves (tracers, say): the rebuilt pullback walks the same equations over those
    values, which is how JAX's docs print a backward pass as a function of its residuals."""
    __slots__ = ("tape", "out_vals", "out_tree", "in_avals", "p_tree", "res")

    def __init__(self, tape, out_vals, out_tree, in_avals, p_tree, res=None):
        self.tape, self.out_vals, self.out_tree = tape, out_vals, out_tree
        self.in_avals, self.p_tree = in_avals, p_tree
        self.res = res  # None: the tape's own values (the common, fast case); else one value per _res_vars

    def __call__(self, ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        _check_like("vjp", self.out_vals, self.out_tree, ct_leaves, ct_tree)
        cts = [_as_tangent(c) for c in ct_leaves]
        tape = self.tape
        if self.res is None:
            cts = backward(tape, cts)
        else:
            new = {v: Var(v.aval, r) for v, r in zip(_res_vars(tape), self.res)}
            sub = lambda vs: [new.get(v, v) for v in vs]
            eqns = [Eqn(e.prim, sub(e.invars), sub(e.outvars), e.params) for e in tape.trace.eqns]
            trace = tape.trace
            outs = [o.var if isinstance(o, Tracer) and o._trace is trace else None for o in tape.outputs]
            cts = walk_backward(eqns, sub([t.var for t in tape.inputs]), sub(outs), cts)
        cts = [_zeros_for(a) if c is None else c for c, a in zip(cts, self.in_avals)]
        return tree_unflatten(self.p_tree, cts)

    def _flatten(self):
        res = [v.val for v in _res_vars(self.tape)] if self.res is None else list(self.res)
        return res, self

    @staticmethod
    def _unflatten(aux, res):
        return VjpFunction(aux.tape, aux.out_vals, aux.out_tree, aux.in_avals, aux.p_tree, list(res))


def _res_vars(tape) -> list:
    """The tape's non-constant variables in first-use order (inputs first): the residuals of a VjpFunction."""
    seen, out = set(), []
    for v in [t.var for t in tape.inputs] + [v for e in tape.trace.eqns for v in (*e.invars, *e.outvars)]:
        if not v.is_const and v not in seen:
            seen.add(v)
            out.append(v)
    return out


register_pytree_node(VjpFunction, VjpFunction._flatten, VjpFunction._unflatten)


def _zeros_for(aval):
    return full(aval.shape, 0, aval.dtype)


def _check_argnums(argnums, nargs, name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError(f"{name}: argnums must not be empty")
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"{name}: argnums must be ints, got {type(a).__name__}")
        if a >= nargs:  # JAX: a TypeError, the caller passed too few positional arguments
            raise TypeError(f"{name}: differentiating with respect to argnums {a} requires at least "
                            f"{a + 1} positional arguments to be passed by the caller, but got only {nargs}")
        if a < -nargs:
            raise ValueError(f"{name}: argnums {a} is out of range for a call with {nargs} positional "
                             "argument(s)")
    return single, tuple(a % nargs for a in nums)


def _diff_args(fun, args, kwargs, argnums, name, holomorphic, allow_int, input_name=None):
    """A call of a derivative of `fun` (grad, jacrev, jacfwd): argnums and the differentiated inputs'
    dtypes checked; (whether argnums is one int, the differentiated arguments, `fun` of those alone)."""
    single, nums = _check_argnums(argnums, len(args), name)
    diff = tuple(args[i] for i in nums)
    for leaf in tree_flatten(diff)[0]:
        _check_grad_input(leaf, input_name or name, holomorphic, allow_int)

    def partial(*d):
        full = list(args)
        for i, v in zip(nums, d):
            full[i] = v
        return fun(*full, **kwargs)
    return single, diff, partial


def _check_grad_input(x, name, holomorphic, allow_int):
    dt = get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires complex inputs, got {dt}")
    elif not dtypes.is_inexact(dt) and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (a float or complex dtype), but "
                        f"got an input of dtype {dt}. Differentiate with respect to float inputs, or use "
                        "vjp / allow_int=True for integer ones.")


def value_and_grad(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False, reduce_axes=()):
    """A function that evaluates `fun` and its gradient in one pass (reverse mode).

    Args:
        fun: a function whose output is a real scalar (shape `()`, a float dtype), or with `has_aux` a pair
            `(scalar, aux)`. Its arguments may be pytrees of arrays.
        argnums: which positional argument(s) to differentiate: an int, or a tuple of ints (the gradient
            is then a tuple with one entry per argnum).
        has_aux: `fun` returns `(output, aux)`; aux is passed through, not differentiated.
        holomorphic: differentiate a holomorphic function of complex inputs with a complex output.
        allow_int: allow integer (or bool) inputs; their gradients are float0 zeros, as in JAX.
        reduce_axes: deprecated in JAX; ignored.

    Returns:
        A function with `fun`'s signature returning `(value, grad)`, or `((value, aux), grad)` with
        `has_aux`. The gradient has the structure and dtypes of the differentiated argument(s).

    Raises:
        TypeError: the output is not a real scalar, or an input has an integer dtype without allow_int.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.value_and_grad(lambda x: jnp.sum(x ** 2))(jnp.array([1.0, 2.0]))
        (Array(5., dtype=float32), Array([2., 4.], dtype=float32))
        >>> (value, aux), g = jax.value_and_grad(lambda x: (x ** 2, x + 1), has_aux=True)(3.0)
        >>> value, aux, g
        (Array(9., dtype=float32, weak_type=True), Array(4., dtype=float32, weak_type=True), Array(6., dtype=float32, weak_type=True))
    """
    name = "value_and_grad"

    def vg(*args, **kwargs):
        single, diff, partial = _diff_args(fun, args, kwargs, argnums, name, holomorphic, allow_int, "grad")
        with gc_paused():  # (until the tape has died: see gc_paused)
            out, pullback, *aux = vjp(partial, *diff, has_aux=has_aux)
            if has_aux:
                value, aux = out, aux[0]
            else:
                value = out
            _check_grad_output(value, holomorphic)
            g = pullback(ones_like(value) if not value.weak_type else _ones_strong(value))
            del pullback
        g = tree_map(_weak_as, g, diff)
        if allow_int:  # integer and boolean inputs get float0 zeros, as in JAX
            g = tree_map(_float0_for_int, g, diff)
        g = g[0] if single else g
        return ((value, aux), g) if has_aux else (value, g)

    vg.__name__ = f"value_and_grad({getattr(fun, '__name__', 'fun')})"
    vg.__wrapped__ = fun
    return vg


def _check_grad_output(value, holomorphic):
    leaves = tree_flatten(value)[0]
    if len(leaves) != 1 or getattr(leaves[0], "shape", ()) != () or not isinstance(value, ArrayBase):
        shape = getattr(value, "shape", None)
        raise TypeError(f"grad requires a scalar (shape ()) output, got "
                        f"{'shape ' + str(shape) if shape is not None else type(value).__name__}. "
                        "For non-scalar outputs use vjp, jacrev or jacfwd (at "
                        f"{user_location(4)}).")
    out_dt = value.dtype
    if holomorphic and not dtypes.is_complex(out_dt):
        raise TypeError(f"grad with holomorphic=True requires a complex output, got {out_dt}")
    if not holomorphic and not dtypes.is_float(out_dt):
        raise TypeError(f"grad requires a real-valued (float) output, got {out_dt}; for complex "
                        "outputs use holomorphic=True or vjp")


def _float0_for_int(g, primal):
    dt = get_aval(primal).dtype
    traced = isinstance(primal, ArrayBase) and type(primal) is not Array
    if dtypes.is_inexact(dt) or type(g) is not Array or traced:
        return g  # (under jit, with a traced primal, the integer zeros stay: a traced function returns Arrays)
    return dtypes.float0_zeros(get_aval(primal).shape)


def _weak_as(g, primal):
    """The gradient typed as its primal, weak type included: in JAX a weakly typed primal (a Python
    scalar) gets a weakly typed gradient, whatever strongly typed arrays it met on the way."""
    weak = bool(get_aval(primal).weak_type)
    if not isinstance(g, ArrayBase) or bool(getattr(g, "weak_type", False)) == weak:
        return g
    return convert_element_type(g, g.dtype, weak)


def _ones_strong(v):
    return full(v.shape, 1, v.dtype)


def grad(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False, reduce_axes=()):
    """The gradient of a scalar-valued function (reverse mode), as a new function.

    Args:
        fun: a function whose output is a real scalar (shape `()`, a float dtype), or with `has_aux` a pair
            `(scalar, aux)`. Its arguments may be pytrees of arrays (nested tuples, lists, dicts).
        argnums: which positional argument(s) to differentiate: an int, or a tuple of ints (the result is
            then a tuple of gradients).
        has_aux: `fun` returns `(output, aux)`: the gradient is taken of `output` and the function returns
            `(grad, aux)`; use it to carry metrics or state out of a loss.
        holomorphic: differentiate a holomorphic function of complex inputs with a complex output.
        allow_int: allow integer (or bool) inputs; their gradients are float0 zeros, as in JAX.
        reduce_axes: deprecated in JAX; ignored.

    Returns:
        A function with `fun`'s signature returning the gradient (shaped and typed like the argument), or
        `(grad, aux)` with `has_aux`. Compose freely: `grad(grad(f))`, `jit(grad(f))`, `vmap(grad(f))`.

    Raises:
        TypeError: the output is not a real scalar (use `vjp`, `jacrev` or `jacfwd`), or an input has an
            integer dtype without allow_int.

    Differences from JAX:
        None in what is computed. Outside `jit` the function runs eagerly and records a tape; a training loop
        whose tape repeats gets its backward walk compiled from the second call on (`backward_cache_size`).

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.grad(jnp.sin)(0.0)
        Array(1., dtype=float32, weak_type=True)
        >>> jax.grad(lambda x, y: x * y, argnums=(0, 1))(3.0, 4.0)
        (Array(4., dtype=float32, weak_type=True), Array(3., dtype=float32, weak_type=True))
        >>> jax.grad(lambda x: (x ** 2, x ** 3), has_aux=True)(2.0)
        (Array(4., dtype=float32, weak_type=True), Array(8., dtype=float32, weak_type=True))
        >>> jax.grad(jax.grad(lambda x: x ** 3))(2.0)
        Array(12., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    def g(*args, **kwargs):
        out, gr = vg(*args, **kwargs)
        return (gr, out[1]) if has_aux else gr

    g.__name__ = f"grad({getattr(fun, '__name__', 'fun')})"
    g.__wrapped__ = fun
    return g


def public_jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """Forward mode: the value of `fun` at `primals` and its directional derivative along `tangents`.

    Args:
        fun: a function of arrays (pytrees of arrays) returning arrays.
        primals: a tuple or list with one entry per positional argument of `fun`.
        tangents: the same structure, shapes and dtypes as `primals` (as in JAX, a float tangent must have
            its primal's dtype: TypeError otherwise).
        has_aux: `fun` returns `(output, aux)`; aux is returned as it is, not differentiated.

    Returns:
        `(fun(*primals), J @ tangents)`, or `(out, tangent_out, aux)` with `has_aux`; the output tangent
        has the output's structure.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> jax.jvp(jnp.sin, (0.0,), (2.0,))
        (Array(0., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))
        >>> x = jnp.array([1.0, 2.0])
        >>> jax.jvp(lambda x: x ** 2, (x,), (jnp.ones(2),))[1]
        Array([2., 4.], dtype=float32)
    """
    return jvp(fun, primals, tangents, has_aux, _check_dtypes=True)


public_jvp.__name__ = public_jvp.__qualname__ = "jvp"
