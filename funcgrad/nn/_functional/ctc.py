"""torch.nn.functional.ctc_loss: the connectionist temporal classification loss, by the forward recursion."""
from __future__ import annotations

import math

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import is_grad_enabled as _is_grad_enabled
from ..._torch._argcheck import DtypeName

__all__ = ["ctc_loss"]


def _lse(xs):
    """logsumexp over a list of same-shaped tensors, -inf (with no NaN gradient) where all are -inf."""
    st = _fg.stack(xs, 0)
    m = st.max(0).values.detach()
    dead = _fg.isinf(m) & (m < 0)
    safe_m = _fg.where(dead, _fg.zeros_like(m), m)
    st = _fg.where(dead.unsqueeze(0), _fg.zeros_like(st), st)
    r = _fg.log(_fg.exp(st - safe_m).sum(0)) + safe_m
    return _fg.where(dead, _fg.full_like(r, -math.inf), r)


def _as_lengths(v, n, what):
    if isinstance(v, _fg.Tensor):
        v = v.tolist()
    v = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
    if len(v) != n:
        raise RuntimeError(f"Expected {what} to have value at most {n}, but got {len(v)}")
    return v


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss: -log of the total probability of all alignments of each
    target with its input (log_probs (T, N, C) or (T, C), log-softmax outputs), by the forward recursion."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    for name, v in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(v, _fg.Tensor) and v._np_dtype().kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
    if log_probs.dtype != _fg.float32 and log_probs.dtype != _fg.float64:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{DtypeName(log_probs.dtype)}'")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    T, N, Cn = lp.shape
    if not 0 <= blank < Cn:
        raise RuntimeError("blank must be in label range")
    il = _as_lengths(input_lengths, N, "input_lengths")
    tl = _as_lengths(target_lengths, N, "target_lengths")
    tgt = targets.tolist()
    if not batched:  # one sequence
        seqs = [tgt[:tl[0]]]
    elif targets.dim() == 1:  # the targets concatenated
        offs = np.concatenate([[0], np.cumsum(tl)]).astype(int)
        seqs = [tgt[offs[b]:offs[b + 1]] for b in range(N)]
    else:  # (N, S_max), padded
        seqs = [tgt[b][:tl[b]] for b in range(N)]
    losses = []
    for b in range(N):
        Tb, seq = il[b], seqs[b]
        if Tb > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {Tb} (while "
                               f"checking arguments for ctc_loss_cpu)")
        ext = [blank]
        for c in seq:
            ext += [int(c), blank]
        S = len(ext)
        emit = lp[:Tb, b, :].index_select(1, _fg.tensor(ext, dtype=_fg.int64))  # (Tb, S)
        skip = _fg.tensor([s >= 2 and ext[s] != blank and ext[s] != ext[s - 2] for s in range(S)])
        ninf = _fg.full((1,), -math.inf, dtype=lp.dtype)
        init = np.full(S, -np.inf)
        init[:2] = 0.0
        alpha = emit[0] + _fg.tensor(init, dtype=lp.dtype) if Tb else None
        for t in range(1, Tb):
            a1 = alpha
            a2 = _fg.cat([ninf, alpha[:-1]])
            a3 = _fg.where(skip, _fg.cat([ninf, ninf, alpha[:-2]]) if S > 2 else _fg.full_like(alpha, -math.inf),
                           _fg.full_like(alpha, -math.inf))
            alpha = _lse([a1, a2, a3]) + emit[t]
        if alpha is None:
            loss = _fg.tensor(0.0 if S == 1 else math.inf, dtype=lp.dtype)
        else:
            loss = -_lse([alpha[-1], alpha[-2]] if S > 1 else [alpha[-1]])
        if Tb and lp.requires_grad and _is_grad_enabled():
            # torch's gradient for log_probs is that of the logits under a log_softmax: exp(log_probs) times
            # the loss's cotangent is added for t < input_length (through log_softmax it cancels, so chains
            # through it are unchanged). A term of value 0 carries it.
            seg = lp[:Tb, b, :]
            d = seg.detach()
            loss = loss + (d.exp() * _fg.where(_fg.isfinite(d), seg - d, _fg.zeros_like(d))).sum()
            if not zero_infinity and math.isinf(float(loss)):
                # no alignment: torch's backward is exp(lp) - exp(-inf + inf - lp), NaN for t < input_length
                # whatever the cotangent; a term of value 0 whose derivative is NaN (sign(0) * inf) carries it
                loss = loss + (seg - d).abs().sqrt().sum()
        if zero_infinity:
            loss = _fg.where(_fg.isinf(loss), _fg.zeros_like(loss), loss)
        losses.append(loss)
    out = _fg.stack(losses)
    if reduction == "none":
        return out if batched else out[0]
    if reduction == "sum":
        return out.sum()
    lens = _fg.tensor([max(v, 1) for v in tl], dtype=lp.dtype)
    return (out / lens).mean()
