"""while_loop: the while card (jvp and batch rules build new while loops; reverse mode raises as JAX's
does) and the user function, which runs as Python over the user's functions outside any transform,
checking every step's carry against the initial carry's types as the traced loop checks its body."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core import dtypes
from ..core.array import ArrayBase, get_aval
from ..core.aval import ShapedArray
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.primitive import Primitive
from ..core.tree_util import tree_flatten, tree_unflatten
from ..prims import elementwise as ew
from ..prims.reduction import reduce_max
from ..prims.shape import broadcast_in_dim
from ..interpreters.ad import jvp
from ..interpreters.batching import vmap
from ..prims._util import batch_size
from ..prims.shape import to_front
from ._bodies import (_as_arrays, _aval_str, _avals, _carry_error, _compiled, _concrete, _fn, _partial,
                     _promote_weak_carry, _tree_trace, _typematch, _zeros, trace_flat)


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
