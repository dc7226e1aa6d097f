"""User-defined derivative rules (custom_jvp, custom_vjp) and checkpoint (rematerialisation).

Each is a call primitive holding the traced function as a jaxpr (for shapes, jit and plain evaluation)
plus the user's rules; its card's jvp/vjp/batch rules apply those rules rather than the jaxpr's own.
"""
from __future__ import annotations

import functools
from typing import Callable

from ..core.array import ArrayBase, get_aval, to_array, wrap, canonical_array
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.primitive import Primitive
from ..core.errors import UnexpectedTracerError, ConcretizationError
from ..core.trace import Tracer, concrete_value, find_top, hoist_tracer_consts, new_trace, transform_active
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims.shape import full
from .batching import trace_to_jaxpr, vmap
from . import compiler
from .ad import vjp as vjp_transform, jvp, vjp
from ..prims._util import batch_size
from ..prims.shape import to_front


def _zeros(av):
    return full(av.shape, 0, av.dtype)


def _jaxpr_impl(xp):
    def run(*bufs, jaxpr: Jaxpr, **params):
        compiled = jaxpr._cache.get("compiled")
        if compiled is None:
            compiled = jaxpr._cache["compiled"] = compiler.compile_jaxpr(jaxpr)
        return compiled(*bufs)
    return run


def _jaxpr_rule(*avals, jaxpr: Jaxpr, **params):
    return list(jaxpr.out_avals)


def _as_leaves(args):
    return [a if isinstance(a, ArrayBase) else canonical_array(a) for a in args]


def _batched_jaxpr(jaxpr, args, dims):
    """The jaxpr of vmap(eval_jaxpr(jaxpr)) for these batch dims, with outputs batched at 0."""
    avals = [get_aval(a) for a in args]
    f = vmap(lambda *a: eval_jaxpr(jaxpr, *a), in_axes=tuple(dims))
    return trace_to_jaxpr(lambda *a: f(*a), avals, "vmap")


def _concat(pair) -> list:
    return list(pair[0]) + list(pair[1])


def _split_nondiff(args, nondiff_argnums):
    nondiff = tuple(args[i] for i in nondiff_argnums)
    diff = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return nondiff, diff


def _merge(nondiff_argnums, nondiff, diff):
    out, it_n, it_d = [], iter(nondiff), iter(diff)
    for i in range(len(nondiff) + len(diff)):
        out.append(next(it_n) if i in nondiff_argnums else next(it_d))
    return out


class _FlatCall:
    """fun(*args) as a function of the flat leaves of its differentiable arguments (the rest are held
    fixed); records each output tree structure in `out_trees`. `eager` when no argument is traced."""

    def __init__(self, fun, nondiff_argnums, args):
        self.fun, self.nondiff_argnums = fun, nondiff_argnums
        self.nondiff, diff = _split_nondiff(args, nondiff_argnums)
        leaves, self.in_tree = tree_flatten(diff)
        # Outside every transform, call fun directly; under one, even with concrete arguments fun may
        # close over its tracers, so it is traced.
        self.eager = not transform_active() and find_top([x for x in leaves if isinstance(x, ArrayBase)]) is None
        self.leaves = leaves if self.eager else _as_leaves(leaves)
        self.out_trees = []

    def __call__(self, *ls):
        out = self.fun(*_merge(self.nondiff_argnums, self.nondiff, tree_unflatten(self.in_tree, ls)))
        o_leaves, o_tree = tree_flatten(out)
        self.out_trees.append(o_tree)
        return o_leaves


def _trace_rule_fun(flat_fun, leaves, name: str) -> Jaxpr:
    """The jaxpr of the function a custom rule stands for. Traced abstractly; where that needs a value
    (Python control flow on an argument) and every argument's value is known (differentiation outside
    jit and vmap), traced again on those values, as JAX then runs the function on concrete primals.
    The jaxpr is then specific to these values, which are the only ones it is evaluated at."""
    avals = [get_aval(x) for x in leaves]
    try:
        return trace_to_jaxpr(flat_fun, avals, name)
    except ConcretizationError:
        values = [concrete_value(x) for x in leaves]
        if any(v is None for v in values):
            raise
    with new_trace(name, carries_values=True) as trace:
        ins = [trace.new_arg(a, v) for a, v in zip(avals, values)]
        outs = [o if isinstance(o, ArrayBase) else canonical_array(o) for o in flat_fun(*ins)]
        return trace.to_jaxpr(ins, outs)


class SymbolicZero:
    """The tangent (or cotangent) of a value that is not being differentiated, handed to rules defined
    with symbolic_zeros=True instead of an array of zeros: `.aval` (and `.shape`, `.dtype`) describe the
    array it stands for; `instantiate()` makes it."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def instantiate(self):
        return _zeros(self.aval)

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"


# --- custom_jvp -----------------------------------------------------------------------------------

def _closed_over_error(kind: str, name: str) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"Differentiation of the {kind} function {name} with respect to a value it closes over (a tracer "
        f"of the transform differentiating it): its custom rule only gives derivatives with respect to "
        f"its explicit arguments. Pass the closed-over value to {name} as an argument and extend the "
        f"rule, or use funcgrad.closure_convert.")


def _cjvp_jvp(args, tangents, ans, *, jaxpr, jvp, name, n_consts=0):
    if any(t is not None for t in tangents[:n_consts]):
        raise _closed_over_error("custom_jvp", name)
    if getattr(jvp, "takes_symbolic_zeros", False):  # the user's rule: it is told which tangents are zero
        return list(jvp(list(args), list(tangents))[1])
    ts = [_zeros(get_aval(a)) if t is None else t for a, t in zip(args, tangents)]
    return list(jvp(list(args), ts)[1])


def _cjvp_vjp(cts, ans, args, needs, *, jaxpr, jvp, name, n_consts=0):
    # The tangent map t -> jvp(args, t) is linear, so its vjp (at any point) is its transpose.
    if any(needs[:n_consts]):
        raise _closed_over_error("custom_jvp", name)
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    if getattr(jvp, "takes_symbolic_zeros", False):  # transpose in the needed tangents only
        idx = [i for i, need in enumerate(needs) if need]

        def lin(*ts):
            full = [None] * len(args)
            for i, t in zip(idx, ts):
                full[i] = t
            return list(jvp(list(args), full)[1])

        _, pull = vjp_transform(lin, *[_zeros(get_aval(args[i])) for i in idx])
        out = [None] * len(args)
        for i, c in zip(idx, pull(cts)):
            out[i] = c
        return out
    zeros = [_zeros(get_aval(a)) for a in args]
    _, pull = vjp_transform(lambda *ts: list(jvp(list(args), list(ts))[1]), *zeros)
    return list(pull(cts))


def _cjvp_tape(lower, params, traced=None):
    """The call's value on a tape (an inner grad or jvp). Where the function closes over tracers of enclosing
    transforms, the value is the rule's primal output, computed with ordinary operations on those tracers (as
    JAX, whose JVP of the call runs the rule): an enclosing derivative then goes through the rule (through a
    scan's residuals too) instead of into the call, whose rule covers only its explicit arguments."""
    n = params.get("n_consts", 0)
    if n and any(isinstance(a, Tracer) for a in lower[:n]):
        return list(params["jvp"](list(lower), [_zeros(get_aval(a)) for a in lower])[0]), params
    return custom_jvp_call_p.bind(*lower, **params), params


def _cjvp_batch(args, dims, *, jaxpr, jvp, name, n_consts=0):
    size = batch_size(args, dims)
    args = [to_front(a, d, size) for a, d in zip(args, dims)]
    bj = _batched_jaxpr(jaxpr, args, [0] * len(args))
    bjvp = vmap(lambda p, t: tuple(jvp(list(p), list(t))))
    outs = custom_jvp_call_p.bind(*args, jaxpr=bj, jvp=lambda p, t: bjvp(p, t), name=name, n_consts=n_consts)
    return outs, [0] * len(outs)


custom_jvp_call_p = Primitive("custom_jvp_call", impl=_jaxpr_impl, abstract_eval=_jaxpr_rule,
                              jvp_full=_cjvp_jvp, vjp_full=_cjvp_vjp, batch=_cjvp_batch,
                              tape_rule=_cjvp_tape, multiple_results=True)
custom_jvp_call_p.is_call = True


class _CustomDerivative:
    """What custom_jvp and custom_vjp share: the wrapped function (its name and docstring too) and its
    nondiff_argnums, to which the positions of nondiff_argnames in its signature are added (as JAX)."""

    def __init__(self, fun: Callable, nondiff_argnums=(), nondiff_argnames=()):
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        if nondiff_argnames:
            self.nondiff_argnums = tuple(sorted(set(self.nondiff_argnums)
                                                | set(_argnums_of(fun, nondiff_argnames, type(self).__name__))))
        functools.update_wrapper(self, fun)

    def _staged(self, args, rule, kind: str, setter: str):
        """The call flattened for staging (a _FlatCall), or None where `fun` simply runs (no transform is
        active); a call before the rule is set is refused."""
        if rule is None:
            raise AttributeError(f"No {kind} rule defined for {type(self).__name__} function {self.__name__}; "
                                 f"call .{setter} first")
        call = _FlatCall(self.fun, self.nondiff_argnums, args)
        return None if call.eager else call


class custom_jvp(_CustomDerivative):
    """A function with a user-supplied forward-mode derivative rule (decorator), as `jax.custom_jvp`.

    Use it where the automatic derivative is unstable or wrong (`log1p(exp(x))` overflows to nan for
    large x), or to define derivatives at kinks. Set the rule with `f.defjvp(rule)` (also as a decorator):
    `rule(primals, tangents) -> (primal_out, tangent_out)`, primals and tangents tuples of the arguments.
    Reverse mode is derived from the rule by transposition, so grad, vjp and jacrev work too; write the
    rule with funcgrad operations and it is differentiable again. `f.defjvps(t0, t1, ...)` gives one
    function per argument instead.

    Args:
        fun: the function (its primal computation).
        nondiff_argnums: positional arguments that are not differentiated (Python values, functions);
            the rule receives them first, before `primals`.
        nondiff_argnames: the same, by parameter name.

    Differences from JAX:
        None known. As in JAX, differentiating with respect to a value the function closes over raises
        UnexpectedTracerError. Test a rule with `funcgrad.testing.check_grads`.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> @jax.custom_jvp
        ... def log1pexp(x):
        ...     return jnp.log1p(jnp.exp(x))
        >>> @log1pexp.defjvp
        ... def log1pexp_jvp(primals, tangents):
        ...     x, = primals
        ...     x_dot, = tangents
        ...     return log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * x_dot
        >>> jax.grad(log1pexp)(100.0)
        Array(1., dtype=float32, weak_type=True)
    """

    jvp = None

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule jvp(primals, tangents) -> (primal_out, tangent_out). With symbolic_zeros=True
        the tangent of an argument that is not being differentiated is a SymbolicZero (and the rule may
        return SymbolicZero for an output tangent)."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *tangent_fns) -> None:
        """One function per argument, t_i(g, ans, *args) -> output tangent contribution."""
        def jvp(primals, tangents):
            ans = self.fun(*primals)
            out = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is not None:
                    c = fn(t, ans, *primals)
                    out = c if out is None else out + c
            return ans, out
        self.jvp = jvp

    def __call__(self, *args):
        call = self._staged(args, self.jvp, "jvp", "defjvp(rule)")
        if call is None:
            return self.fun(*args)
        nondiff, leaves, in_tree, flat_fun, store = call.nondiff, call.leaves, call.in_tree, call, call.out_trees

        symbolic = getattr(self, "symbolic_zeros", False)

        def flat_jvp(primals, tangents):
            tangents = [(SymbolicZero(get_aval(x)) if symbolic else _zeros(get_aval(x))) if t is None else t
                        for x, t in zip(primals, tangents)]
            p = tree_unflatten(in_tree, primals)
            t = tree_unflatten(in_tree, tangents)
            out, t_out = self.jvp(*nondiff, tuple(p), tuple(t))
            out_leaves = tree_flatten(out)[0]
            t_leaves = tree_flatten(t_out, is_leaf=lambda x: isinstance(x, SymbolicZero))[0]
            return out_leaves, [_zeros(get_aval(o)) if isinstance(t, SymbolicZero) else t
                                for o, t in zip(out_leaves, t_leaves)]

        flat_jvp.takes_symbolic_zeros = True  # None tangents are zeros it makes itself

        avals = [get_aval(x) for x in leaves]
        jaxpr = _trace_rule_fun(flat_fun, leaves, "custom_jvp")
        if not any(isinstance(c, Tracer) for c in jaxpr.consts):
            outs = custom_jvp_call_p.bind(*leaves, jaxpr=jaxpr, jvp=flat_jvp, name=self.__name__)
            return tree_unflatten(store[-1], outs)
        # fun closes over tracers of enclosing transforms: so may its rule. Both are traced now, while
        # those tracers are live, and the tracers become leading operands (as in JAX, transforms other
        # than differentiation with respect to them then work).
        n = len(leaves)
        rule_j = trace_to_jaxpr(lambda *pt: _concat(flat_jvp(list(pt[:n]), list(pt[n:]))), avals + avals,
                                "custom_jvp rule")
        (jaxpr, rule_j), hoisted = hoist_tracer_consts([jaxpr, rule_j])
        k = len(hoisted)

        def closed_jvp(primals, tangents):
            res = eval_jaxpr(rule_j, *primals, *tangents[k:])
            m = len(res) // 2
            return res[:m], res[m:]

        outs = custom_jvp_call_p.bind(*hoisted, *leaves, jaxpr=jaxpr, jvp=closed_jvp, name=self.__name__,
                                      n_consts=k)
        return tree_unflatten(store[-1], outs)


# --- custom_vjp -----------------------------------------------------------------------------------

def _cvjp_tape(lower, params, traced=None):
    """Under a value-carrying trace, run the user's fwd now and keep its residuals for bwd."""
    outs, res = params["fwd"](list(lower))
    return list(outs), dict(params, res=res)


def _cvjp_vjp(cts, ans, args, needs, *, jaxpr, fwd, bwd, name, res=None, n_consts=0):
    if any(needs[:n_consts]):
        raise _closed_over_error("custom_vjp", name)
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    if res is None:  # not recorded on a tape (a vjp rule traced for a control-flow body): run fwd now
        res = fwd(list(args))[1]
    return [None] * n_consts + list(bwd(res, cts))


def _cvjp_jvp(args, tangents, ans, **params):
    raise TypeError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp function "
                    f"({params['name']}); define it with custom_jvp instead, or use reverse mode")


def _cvjp_batch(args, dims, *, jaxpr, fwd, bwd, name, res=None, n_consts=0):
    size = batch_size(args, dims)
    args = [to_front(a, d, size) for a, d in zip(args, dims)]
    bj = _batched_jaxpr(jaxpr, args, [0] * len(args))
    bfwd = vmap(lambda a: fwd(list(a)))
    bbwd = vmap(lambda r, c: tuple(bwd(r, list(c))))
    outs = custom_vjp_call_p.bind(*args, jaxpr=bj, fwd=lambda a: bfwd(tuple(a)),
                                  bwd=lambda r, c: bbwd(r, tuple(c)), name=name, n_consts=n_consts)
    return outs, [0] * len(outs)


custom_vjp_call_p = Primitive("custom_vjp_call", impl=_jaxpr_impl, abstract_eval=_jaxpr_rule,
                              jvp_full=_cvjp_jvp, vjp_full=_cvjp_vjp, batch=_cvjp_batch,
                              tape_rule=_cvjp_tape, multiple_results=True)
custom_vjp_call_p.is_call = True


class custom_vjp(_CustomDerivative):
    """A function with a user-supplied reverse-mode derivative (decorator), as `jax.custom_vjp`.

    Set the rule with `f.defvjp(fwd, bwd)`: `fwd(*args) -> (out, residuals)` runs the forward pass and
    saves what the backward pass needs; `bwd(residuals, g) -> tuple` returns one cotangent per
    (differentiable) argument for the output cotangent `g`. Forward mode (jvp, jacfwd) is not available
    for such a function, as in JAX.

    Args:
        fun: the function (its primal computation, used when not differentiating).
        nondiff_argnums: positional arguments that are not differentiated; `bwd` receives them first.
        nondiff_argnames: the same, by parameter name.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> @jax.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> def fwd(x):
        ...     return x, None
        >>> def bwd(residuals, g):
        ...     return (jnp.clip(g, -1.0, 1.0),)
        >>> clip_gradient.defvjp(fwd, bwd)
        >>> jax.grad(lambda x: 5.0 * clip_gradient(x))(2.0)
        Array(1., dtype=float32, weak_type=True)
    """

    fwd = bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        call = self._staged(args, self.fwd, "vjp", "defvjp(fwd, bwd)")
        if call is None:
            return self.fun(*args)
        nondiff, leaves, in_tree, flat_fun, store = call.nondiff, call.leaves, call.in_tree, call, call.out_trees

        def flat_fwd(ls):
            out, res = self.fwd(*_merge(self.nondiff_argnums, nondiff, tree_unflatten(in_tree, ls)))
            return tree_flatten(out)[0], res

        def flat_bwd(res, cts):
            ct = tree_unflatten(store[0], cts)
            in_cts = self.bwd(*nondiff, res, ct)
            if not isinstance(in_cts, (tuple, list)):
                raise TypeError(f"custom_vjp bwd of {self.__name__} must return a tuple with one cotangent "
                                f"per differentiable argument, got {type(in_cts).__name__}")
            if len(in_cts) != len(args) - len(nondiff):
                raise ValueError(f"custom_vjp bwd of {self.__name__} returned {len(in_cts)} cotangents for "
                                 f"{len(args) - len(nondiff)} differentiable arguments")
            return tree_flatten(tuple(in_cts), is_leaf=lambda x: x is None)[0]

        avals = [get_aval(x) for x in leaves]
        jaxpr = _trace_rule_fun(flat_fun, leaves, "custom_vjp")
        if not any(isinstance(c, Tracer) for c in jaxpr.consts):
            outs = custom_vjp_call_p.bind(*leaves, jaxpr=jaxpr, fwd=flat_fwd, bwd=flat_bwd, name=self.__name__)
            return tree_unflatten(store[-1], outs)
        # fun closes over tracers of enclosing transforms: trace fwd and bwd too while they are live,
        # and make those tracers leading operands (JAX's semantics: vmap and jit work; differentiating
        # with respect to a closed-over value raises).
        res_store = []

        def fwd_flat(*ls):
            out, res = flat_fwd(list(ls))
            res_leaves, res_tree = tree_flatten(res)
            res_store.append((res_tree, len(out)))
            return list(out) + list(res_leaves)

        fwd_j = trace_to_jaxpr(fwd_flat, avals, "custom_vjp fwd")
        res_tree, n_out = res_store[-1]
        res_avals = fwd_j.out_avals[n_out:]

        def bwd_flat(*rc):
            in_cts = flat_bwd(tree_unflatten(res_tree, list(rc[:len(res_avals)])), list(rc[len(res_avals):]))
            return [_zeros(a) if c is None else c for c, a in zip(in_cts, avals)]

        bwd_j = trace_to_jaxpr(bwd_flat, list(res_avals) + list(fwd_j.out_avals[:n_out]), "custom_vjp bwd")
        (jaxpr, fwd_j, bwd_j), hoisted = hoist_tracer_consts([jaxpr, fwd_j, bwd_j])
        k = len(hoisted)

        def closed_fwd(args_):
            outs_ = eval_jaxpr(fwd_j, *args_)
            return outs_[:n_out], (list(args_[:k]), outs_[n_out:])

        def closed_bwd(res, cts):
            consts, res_leaves = res
            return eval_jaxpr(bwd_j, *consts, *res_leaves, *cts)

        outs = custom_vjp_call_p.bind(*hoisted, *leaves, jaxpr=jaxpr, fwd=closed_fwd, bwd=closed_bwd,
                                      name=self.__name__, n_consts=k)
        return tree_unflatten(store[-1], outs)


# --- checkpoint -----------------------------------------------------------------------------------

def _of_some(jaxpr, args, idx):
    """eval_jaxpr(jaxpr) as a function of the operands at `idx` only, the others held fixed: as jit and cond,
    checkpoint differentiates only the operands that need it, so a value closed over from an enclosing
    transform is not differentiated by an inner one."""
    def f(*some):
        full = list(args)
        for i, v in zip(idx, some):
            full[i] = v
        return eval_jaxpr(jaxpr, *full)
    return f


def _remat_jvp(args, tangents, ans, *, jaxpr, name):
    idx = [i for i, t in enumerate(tangents) if t is not None]
    if not idx:
        return [None] * len(jaxpr.out_avals)
    return list(jvp(_of_some(jaxpr, args, idx), [args[i] for i in idx], [tangents[i] for i in idx])[1])


def _remat_vjp(cts, ans, args, needs, *, jaxpr, name):
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    idx = [i for i, need in enumerate(needs) if need]
    _, pull = vjp(_of_some(jaxpr, args, idx), *[args[i] for i in idx])  # recomputes the forward pass here
    out = [None] * len(args)
    for i, c in zip(idx, pull(cts)):
        out[i] = c
    return out


def _remat_batch(args, dims, *, jaxpr, name):
    bj = _batched_jaxpr(jaxpr, args, dims)
    outs = remat_p.bind(*args, jaxpr=bj, name=name)
    return outs, [0] * len(outs)


remat_p = Primitive("remat", impl=_jaxpr_impl, abstract_eval=_jaxpr_rule, jvp_full=_remat_jvp,
                    vjp_full=_remat_vjp, batch=_remat_batch, multiple_results=True)
remat_p.is_call = True


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy=None, static_argnums=(), static_argnames=(),
               concrete: bool = False) -> Callable:
    """`fun` with its intermediates recomputed in the backward pass instead of stored (rematerialisation).

    Reverse mode normally keeps every intermediate of the forward pass until the backward pass; a
    checkpointed function keeps only its inputs and runs again during the backward pass, trading compute
    for memory (useful for deep stacks of layers). Values and derivatives are unchanged. `funcgrad.remat`
    is the same function.

    Args:
        fun: the function to checkpoint.
        prevent_cse: keep the recomputation from being merged with the forward pass by common-subexpression
            elimination under jit (as in JAX).
        policy: a function from `funcgrad.checkpoint_policies` saying which intermediates may be saved
            anyway (e.g. `checkpoint_policies.dots_saveable`).
        static_argnums: positional arguments that are Python values (not traced).
        static_argnames: the same, by parameter name.
        concrete: removed in JAX; True raises NotImplementedError, as there.

    Returns:
        The checkpointed function, with `fun`'s signature.

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> f = jax.checkpoint(lambda x: jnp.sin(x) * x)
        >>> jax.grad(f)(0.0)
        Array(0., dtype=float32, weak_type=True)
    """
    if concrete:
        raise NotImplementedError("checkpoint: concrete=True is not supported (removed in JAX); mark the Python "
                                  "values static with static_argnums instead")
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if static_argnames:
        static_argnums = tuple(sorted(set(static_argnums) | set(_argnums_of(fun, static_argnames, "checkpoint"))))

    @functools.wraps(fun)
    def wrapped(*args):
        static, dyn = _split_nondiff(args, static_argnums)
        leaves, in_tree = tree_flatten(dyn)
        if not transform_active():
            return fun(*args)
        leaves = _as_leaves(leaves)
        store = []

        def flat_fun(*ls):
            out = fun(*_merge(static_argnums, static, tree_unflatten(in_tree, ls)))
            o_leaves, o_tree = tree_flatten(out)
            store.append(o_tree)
            return o_leaves

        jaxpr = trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves], "checkpoint")
        (jaxpr,), hoisted = hoist_tracer_consts([jaxpr])  # closed-over tracers become operands
        outs = remat_p.bind(*hoisted, *leaves, jaxpr=jaxpr, name=getattr(fun, "__name__", "fun"))
        return tree_unflatten(store[-1], outs)

    return wrapped


remat = checkpoint


def _argnums_of(fun: Callable, argnames, what: str) -> tuple:
    """The positions of the parameters of `fun` named in `argnames` (JAX's nondiff_argnames /
    static_argnames), from its signature."""
    import inspect
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: argument names {argnames} need a function with an inspectable signature") from None
    nums = []
    for name in argnames:
        if name not in params:
            raise ValueError(f"{what}: {name!r} is not a parameter of {getattr(fun, '__name__', 'fun')} "
                             f"(its parameters: {params})")
        nums.append(params.index(name))
    return tuple(nums)
