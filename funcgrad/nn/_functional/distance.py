"""torch.nn.functional's distances: cosine_similarity, pairwise_distance, pdist."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

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
    iu = _fg.triu_indices(n, n, 1)
    diff = input.index_select(0, iu[0]) - input.index_select(0, iu[1])
    return _fg.norm(diff, p, 1)
