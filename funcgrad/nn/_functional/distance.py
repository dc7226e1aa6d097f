"""torch.nn.functional's distances: cosine_similarity, pairwise_distance, pdist."""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._src.core.array import Array as _Array
from ..._torch import _jnp  # funcgrad.numpy with torch's dtypes
from ..._torch._dispatch import _apply1
from ..._torch.ops.reductions import _vector_norm

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]



def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """<x1, x2> / (max(||x1||, eps) * max(||x2||, eps)) along dim (inputs broadcast)."""
    x1, x2 = _fg.broadcast_tensors(x1, x2)
    n1 = _fg.clamp(_fg.norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = _fg.clamp(_fg.norm(x2, 2, dim, keepdim=True), min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    nd = max(x1.dim(), x2.dim())
    return _fg.norm(x1 - x2 + eps, p, nd - 1 if nd else None, keepdim=keepdim)


def pdist(input, p=2):
    """The p-norm distances between all pairs of rows i < j of an (N, M) input, in row-major order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    n = input.shape[0]
    v = input._v
    if v is not None and v.dtype.kind == "f" and v.dtype.itemsize >= 4 and n > 1:
        # one node, torch's PdistBackward0: the row differences' norms (the p-norm's own derivatives)
        i, j = (_Array(k) for k in np.triu_indices(n, 1))
        norm = _vector_norm(p, (1,), False)
        return _apply1("Pdist", lambda a: norm(_jnp.take(a, i, axis=0) - _jnp.take(a, j, axis=0)), input)
    iu = _fg.triu_indices(n, n, 1)
    diff = input.index_select(0, iu[0]) - input.index_select(0, iu[1])
    return _fg.norm(diff, p, 1)
