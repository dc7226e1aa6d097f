"""ONNX rules for the control-flow cards: cond -> If (a chain of Ifs for a switch), scan and while ->
Loop, so loops export as loops, not unrolled. Bodies read the outer graph's values by name."""
from __future__ import annotations

import numpy as np

from ._graph import rule


@rule("cond")
def _cond(ctx, eqn, ins):
    index, ops = ins[0], ins[1:]
    branches = list(eqn.params["branches"])
    idx_dtype = eqn.invars[0].aval.dtype
    outs = eqn.outvars

    def chain(k):  # branch k when index <= k (lax.switch clamps the index into range), else the rest
        if k == len(branches) - 1:
            return ctx.translate(branches[k], ops)
        pred = ctx.op("LessOrEqual", [index, ctx.const(np.asarray(k, idx_dtype))])
        then_g = ctx.subgraph("branch", lambda: list(zip(ctx.translate(branches[k], ops), outs)))
        else_g = ctx.subgraph("branch", lambda: list(zip(chain(k + 1), outs)))
        res = ctx.op("If", [pred], n_out=len(outs), then_branch=then_g, else_branch=else_g)
        return res if isinstance(res, list) else [res]
    return chain(0)


@rule("scan")
def _scan(ctx, eqn, ins):
    p = eqn.params
    body, nc, nk = p["jaxpr"], int(p["n_consts"]), int(p["n_carry"])
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    x_vars = eqn.invars[nc + nk:]
    length = ctx.shape(x_vars[0])[0] if x_vars else int(p["length"])
    reverse = bool(p.get("reverse", False))
    m = ctx.scalar_dim(length)
    it, cond_in = ctx.fresh("iter"), ctx.fresh("cond")
    carry_in = [ctx.fresh("carry") for _ in carry]
    body_carry_vars = body.invars[nc:nc + nk]

    def build():
        i = ctx.op("Sub", [ctx.op("Sub", [m, ctx.const(np.int64(1))]), it]) if reverse else it
        slices = [ctx.op("Gather", [x, i], axis=0) for x in xs]
        outs = ctx.translate(body, consts + carry_in + slices)
        return ([(ctx.op("Identity", [cond_in]), (np.bool_, ()))] +
                list(zip(outs, body.outvars)))
    inputs = ([ctx.info(it, np.int64, ()), ctx.info(cond_in, np.bool_, ())] +
              [ctx.value_info(n, v) for n, v in zip(carry_in, body_carry_vars)])
    g = ctx.subgraph("scan_body", build, inputs)
    n_out = len(eqn.outvars)
    res = ctx.op("Loop", [m, ""] + carry, n_out=n_out, body=g)
    res = res if isinstance(res, list) else [res]
    if reverse:  # Loop stacks the ys in iteration order
        res = res[:nk] + [ctx.op("Slice", [y, ctx.i64([-1]), ctx.i64([np.iinfo(np.int64).min]), ctx.i64([0]),
                                           ctx.i64([-1])]) for y in res[nk:]]
    return res


@rule("while")
def _while(ctx, eqn, ins):
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    ncc, nbc = int(p["n_cond_consts"]), int(p["n_body_consts"])
    cc, bc, carry = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    first = ctx.translate(cj, cc + carry)[0]
    it, cond_in = ctx.fresh("iter"), ctx.fresh("cond")
    carry_in = [ctx.fresh("carry") for _ in carry]

    def build():
        new = ctx.translate(bj, bc + carry_in)
        go = ctx.translate(cj, cc + new)[0]
        return [(go, (np.bool_, ()))] + list(zip(new, bj.outvars))
    inputs = ([ctx.info(it, np.int64, ()), ctx.info(cond_in, np.bool_, ())] +
              [ctx.value_info(n, v) for n, v in zip(carry_in, bj.invars[nbc:])])
    g = ctx.subgraph("while_body", build, inputs)
    res = ctx.op("Loop", ["", first] + carry, n_out=len(eqn.outvars), body=g)
    return res if isinstance(res, list) else [res]

