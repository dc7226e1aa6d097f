"""ONNX rules for the sorting cards: sort (one key, any number of operands carried along) and top_k, both
through TopK, whose ties keep the lower index first (a stable sort, as funcgrad's)."""
from __future__ import annotations

import numpy as np

from ._graph import rule


@rule("sort")
def _sort(ctx, eqn, ins):
    if int(eqn.params.get("num_keys", 1)) != 1:
        raise ctx.unsupported("a sort on more than one key (lexicographic) has no ONNX operator")
    dim = int(eqn.params["dimension"])
    keys = eqn.invars[0]
    if keys.aval.dtype.kind in "bc":
        raise ctx.unsupported(f"sorting {keys.aval.dtype} keys (ONNX TopK takes numbers)")
    n = ctx.dim(ctx.shape(keys)[dim])
    values, order = ctx.op("TopK", [ins[0], n], n_out=2, axis=dim, largest=0, sorted=1)
    return [values] + [ctx.op("GatherElements", [x, order], axis=dim) for x in ins[1:]]


@rule("top_k")
def _top_k(ctx, eqn, ins):
    values, order = ctx.op("TopK", [ins[0], ctx.i64([int(eqn.params["k"])])], n_out=2, axis=-1, largest=1,
                           sorted=1)
    dt = eqn.outvars[1].aval.dtype
    return [values, order if dt == np.int64 else ctx.op("Cast", [order], to=ctx.dtype(dt))]
