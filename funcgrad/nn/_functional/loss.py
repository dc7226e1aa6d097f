"""torch.nn.functional's losses: regression, classification, embedding/ranking (CTC: ctc.py)."""
from __future__ import annotations

import math
import warnings
import numpy as np
import numpy as _np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ... import numpy as _fnp
from ...autograd import is_grad_enabled as _is_grad_enabled
from ..._src.core.array import Array as _Array
from ..._src.prims import elementwise as _ew
from ..._src.prims.indexing import gather_p as _gather_p
from ..._src.prims.reduction import reduce_sum_p as _reduce_sum_p
from ..._torch.ops._common import _bc
from ..._torch._argcheck import check_same_dtype as _check_same_dtype, dtype_error as _dtype_error
from ..._torch._dispatch import _apply
from ..._torch._errors import _legacy
from .activation import _softplus, log_softmax, logsigmoid, relu, softplus
from .linear import linear as _linear
from .common import _REDUCTIONS, _check_target_size, _concrete, _legacy_get_string, _reduce, _reduction, _size, _weighted
from .distance import pairwise_distance

_bc_lt, _bc_mul, _bc_div, _bc_sub, _bc_logaddexp = (_bc(p) for p in (_ew.lt, _ew.mul, _ew.div, _ew.sub, _ew.logaddexp))

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "poisson_nll_loss", "gaussian_nll_loss", "kl_div",
           "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]



# --- regression losses ----------------------------------------------------------------------------------
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) squared error."""
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is None and _one_node_ok(input, target):  # one recorded node, torch's MseLossBackward0
        def fn(a, b):
            d = _ew.sub(a, b)
            return _reduced(_ew.mul(d, d), reduction, cn)
        cn = _count(input)
        return _apply("MseLoss", fn, (input, target))
    if weight is None and reduction != "none" and input.shape == target.shape and input.dtype == target.dtype:
        # (float16 / bfloat16: one node too)
        red = _fnp.mean if reduction == "mean" else _fnp.sum
        return _apply("MseLoss", lambda a, b: red((a - b) ** 2), (input, target))
    return _weighted((input - target) ** 2, weight, input, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) absolute error."""
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted(_fg.abs(input - target), weight, input, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - beta/2 elsewhere (L1 when beta == 0)."""
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta != 0 and _one_node_ok(input, target):  # one recorded node, torch's SmoothL1LossBackward0
        return _piecewise_loss("SmoothL1Loss", input, target, reduction, beta)
    d = input - target
    z = _fg.abs(d)
    # the square of d itself, not of |d|, so the second derivative at d == 0 is 1 / beta (torch's)
    loss = z if beta == 0 else _fg.where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| <= delta, delta (|d| - delta/2) elsewhere."""
    _check_target_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None and _one_node_ok(input, target):  # one recorded node, torch's HuberLossBackward0
        return _piecewise_loss("HuberLoss", input, target, reduction, delta)
    d = input - target
    z = _fg.abs(d)
    loss = _fg.where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta))  # (d * d: second derivative 1 at 0)
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


def _one_node_ok(input, target) -> bool:
    """Whether a loss of input and target is recorded as one node of its binds: two non-empty tensors of one
    shape and one float dtype of at least 32 bits (float16 and bfloat16 take torch's op-by-op rounding)."""
    dt = input._np_dtype()
    return input.shape == target.shape and dt == target._np_dtype() and dt.kind == "f" and dt.itemsize >= 4 \
        and input.numel() > 0


_CONSTS: dict = {}  # (name, dtype, parameter, numel) -> the 0-d constants of _piecewise_loss's binds
_COUNTS: dict = {}  # (dtype, numel) -> numel as a 0-d constant of the dtype; (dtype, "one"/"zero") -> 1/0 in it


def _count(t):
    """t's element count as a 0-d constant of its dtype (the divisor of a mean, as torch's)."""
    dt = t._np_dtype()
    n = t.numel()
    c = _COUNTS.get((dt, n))
    if c is None:
        if len(_COUNTS) > 1024:
            _COUNTS.clear()
        c = _COUNTS[(dt, n)] = _Array(np.array(n, dt))
    return c


def _one(dt):
    c = _COUNTS.get((dt, "one"))
    if c is None:
        c = _COUNTS[(dt, "one")] = _Array(np.array(1, dt))
    return c


def _zero(dt):
    c = _COUNTS.get((dt, "zero"))
    if c is None:
        c = _COUNTS[(dt, "zero")] = _Array(np.array(0, dt))
    return c


def _reduced(loss, reduction, cn):
    """The binds of a loss's reduction over all its elements: 'none' keeps it, 'sum' sums, 'mean' divides the
    sum by the count cn (a 0-d loss is its own sum and mean)."""
    if reduction == "none" or not loss.ndim:
        return loss
    s = _reduce_sum_p.bind(loss, axes=tuple(range(loss.ndim)))
    return _ew.div(s, cn) if reduction == "mean" else s


def _piecewise_loss(name, input, target, reduction, k):
    """smooth_l1_loss (k = beta > 0) or huber_loss (k = delta > 0) of non-empty same-shaped float tensors as
    ONE recorded node (`name`, torch's) of the binds of torch's kernel (numbers entering as 0-d constants of
    the dtype), so torch's values, with derivatives from the binds' own rules. With d = x - t and z = |d|
    (torch's kink: sign(0) = 0): smooth L1 is d * d / (2 beta) where z < beta (torch's 0.5 * z * z / beta
    exactly: halving is exact), else z - beta / 2; Huber is d * d / 2 where z < delta, else
    delta * (z - delta / 2). The square is of d, not z, so the second derivative at d == 0 is torch's
    (1 / beta, 1). The mean divides the sum by the count, as torch's."""
    dt = input._np_dtype()
    n = input.numel()
    key = (name, dt, k, n)
    c = _CONSTS.get(key)
    if c is None:
        if len(_CONSTS) > 1024:
            _CONSTS.clear()
        c = _CONSTS[key] = tuple(_Array(np.array(v, dt)) for v in (k, 2 * k if name == "SmoothL1Loss" else 2,
                                                                      0.5 * k, n))
    huber = name == "HuberLoss"
    ck, c2k, chalf, cn = c

    def fn(a, b):
        d = _ew.sub(a, b)
        z = _ew.abs_p.bind(d, kink="torch")
        far = _bc_sub(z, chalf)
        loss = _ew.select(_bc_lt(z, ck), _bc_div(_ew.mul(d, d), c2k), _bc_mul(ck, far) if huber else far)
        return _reduced(loss, reduction, cn)
    return _apply(name, fn, (input, target))


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log likelihood of target ~ Poisson(exp(input)) (or Poisson(input) with log_input=False)."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = _fg.exp(input) - target * input
    else:
        loss = input - target * _fg.log(input + eps)
    if full:  # (torch's formula: the term masked after, so its gradient at target = 0 is 0 * log 0, NaN)
        stirling = target * _fg.log(target) - target + 0.5 * _fg.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) [+ 0.5 log 2 pi], var clamped below at eps (gradient passes)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _fg.ones_like(input) * var
    elif _concrete(var) and bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    clamped = _fg.clamp(var.detach(), min=eps)
    var = var + (clamped - var.detach())  # clamp the value only: the gradient reaches var unchanged
    loss = 0.5 * (_fg.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input) pointwise (input holds log-probabilities); 'batchmean' divides by N."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if reduction not in _REDUCTIONS + ("batchmean",):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = _fg.exp(target) * (target - input)
    else:
        loss = _fg.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# --- classification losses ----------------------------------------------------------------------------
def _to_last(x):
    """(N, C, d1, ...) -> (N*d1*..., C)."""
    if x.dim() > 2:
        x = x.movedim(1, -1)
    return x.reshape(-1, x.shape[-1])


def _check_class_target(input, target, name="nll_loss"):
    """torch's checks of a class-index target, in its order: the shapes (nll_loss_nd, the kernel's meta
    function), then the target's dtype (the kernel)."""
    _check_class_target_shape(input, target)
    tdt = target._np_dtype()
    if tdt not in (_np.dtype(_np.int64), _np.dtype(_np.uint8)):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_legacy(tdt)}")


def _check_class_target_shape(input, target):
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return
    n = target.shape[0] if target.dim() else 0  # (torch reads a 0-d target's batch size as 0)
    if input.shape[0] != n:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({n}).")
    if input.dim() == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.dim() == 4:  # torch's nll_loss2d
        if target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.dim()}")
        if list(target.shape[1:]) != list(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    else:
        want = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != want:
            raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")


def _check_bounds(t, valid, c):
    if _concrete(t) and t.numel():
        bad = valid & ((t < 0) | (t >= c))
        if bool(bad.any().item()):
            raise IndexError(f"Target {int(t[bad][0].item())} is out of bounds.")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] (weighted), over (N, C) or (N, C, d1, ...) inputs; ignore_index entries drop out."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_target(input, target)
    c = input.shape[0] if input.dim() == 1 else input.shape[1]
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    _check_same_dtype("expected scalar type {0} but found {1}", input, weight)
    if weight is None and input.dim() == 2 and target.dim() == 1 and _concrete(input, target):
        return _nll_rows(input, target._v, ignore_index, reduction)
    if input.dim() == 1:
        input, target = input.unsqueeze(0), target.reshape(1)
        out_shape = ()
    else:
        out_shape = tuple(target.shape)
    logp = _to_last(input)
    t = target.reshape(-1)
    valid = t != ignore_index
    _check_bounds(t, valid, c)
    tc = _fg.where(valid, t, _fg.zeros_like(t))
    picked = -logp.gather(1, tc.unsqueeze(1)).squeeze(1)
    w = weight[tc] if weight is not None else _fg.ones_like(picked)
    w = w * valid.to(picked.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    if _concrete(target) and not bool(valid.any()):  # every target ignored: NaN, with torch's zero gradient
        return loss.sum() * 0.0 + float("nan")
    return loss.sum() / w.sum()


_umax = _np.maximum.reduce
_ROWS: dict = {}  # n -> arange(n), read-only (the row column of _nll_rows's index pairs)


def _rows(n):
    r = _ROWS.get(n)
    if r is None:
        if len(_ROWS) > 256:
            _ROWS.clear()
        r = _ROWS[n] = _np.arange(n)
        r.flags.writeable = False
    return r


def _nll_rows(input, t, ignore_index, reduction):
    """nll_loss of (N, C) log-probabilities against N class indices t (a NumPy array), unweighted: one
    recorded op (the picked entries, masked where t == ignore_index, then the reduction): a gather at host
    (row, class) pairs, a negation, [a mask,] a sum and a division by the count, bound directly."""
    c = input._v.shape[1]
    n = len(t)
    if n and t.dtype == _np.int64 and not 0 <= ignore_index < c and _umax(t.view(_np.uint64)) < c:
        all_valid = True  # (the common case in one reduction: every target in [0, c), so none is ignored)
    else:
        valid = t != ignore_index
        all_valid = bool(valid.all())
        tv = t if all_valid else t[valid]
        if tv.size and (tv.min() < 0 or tv.max() >= c):
            raise IndexError(f"Target {int(tv[(tv < 0) | (tv >= c)][0])} is out of bounds.")
    dt = input._v.dtype
    at = _np.empty((n, 2), _np.int64)  # (row, class) pairs
    at[:, 0] = _rows(n)
    at[:, 1] = t if all_valid else _np.where(valid, t, 0)
    at = _Array(at)
    mask = None if all_valid else _Array(valid.astype(dt))
    count = _np.asarray(n if all_valid else valid.sum(), dt)
    cn = _Array(count)

    def fn(lp):
        loss = _ew.neg(_gather_p.bind(lp, at, axes=(0, 1)))
        if mask is not None:
            loss = _ew.mul(loss, mask)
        if reduction == "none":
            return loss
        total = _reduce_sum_p.bind(loss, axes=(0,))
        if reduction == "sum":
            return total
        if count == 0:  # every target ignored: NaN, with torch's zero gradient
            return _ew.add(_ew.mul(total, _zero(dt)), _Array(_np.asarray(_np.nan, dt)))
        return _ew.div(total, cn)
    return _apply("NllLoss", fn, (input,))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim, then NLL against class indices or class probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if input.dim() == 1 else 1
    C = input.shape[cdim]
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, cdim)
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        wshape = [1] * input.dim()
        wshape[cdim] = C
        term = logp * target
        if weight is not None:
            term = term * weight.reshape(wshape)
        loss = -term.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // C) if input.numel() else loss.sum() / 0.0
        return _reduce(loss, reduction)
    if target.is_floating_point() and target.dim() >= 1 and input.dim() >= 2 and target.dim() == input.dim():
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    if input.dim() == 1:
        logp, target = logp.unsqueeze(0), target.reshape(1)
    lp = _to_last(logp)
    t = target.reshape(-1)
    valid = (t != ignore_index).to(lp.dtype)
    smooth = -(lp * weight).sum(1) if weight is not None else -lp.sum(1)
    smooth = smooth.masked_fill(t == ignore_index, 0)  # (torch's: an ignored row's gradient is 0, never 0 * inf)
    if reduction == "none":
        smooth = smooth.reshape(tuple(target.shape)) if input.dim() > 1 else smooth.reshape(())
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        if weight is not None:
            tc = _fg.where(t != ignore_index, t, _fg.zeros_like(t))
            smooth = smooth.sum() / (weight[tc] * valid).sum()
        else:
            smooth = smooth.sum() / valid.sum()
    return (1 - label_smoothing) * nll + (label_smoothing / C) * smooth


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch does."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the input size "
                         f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    _check_same_dtype("Found dtype {1} but expected {0}", input, target)
    xv = input._v
    if xv is not None:
        if xv.size and ((xv < 0) | (xv > 1)).any():  # (NaN passes, as torch's check)
            raise RuntimeError("all elements of input should be between 0 and 1")
        if weight is None and _one_node_ok(input, target) and not (xv * (1 - xv) < 1e-12).any():
            # one recorded node, torch's BinaryCrossEntropyBackward0: no entry at or next to 0 or 1, so the logs
            # are above -100 (the clamps are identities) and the formula's gradient is torch's
            def fn(x, t):
                one = _one(x.dtype)
                return _reduced(_ew.neg(_ew.add(_ew.mul(t, _ew.log(x)), _ew.mul(_bc_sub(one, t),
                                                                               _ew.log(_bc_sub(one, x))))),
                                reduction, cn)
            cn = _count(input)
            return _apply("BinaryCrossEntropy", fn, (input, target))
    elif _concrete(input) and input.numel() and bool(((input < 0) | (input > 1)).any().item()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    def bce(x):
        return -(target * _fg.clamp(_fg.log(x), min=-100) + (1 - target) * _fg.clamp(_fg.log(1 - x), min=-100))
    loss = bce(input)
    if input.requires_grad and _is_grad_enabled():
        # torch's input gradient is (x - t) / max(x (1 - x), 1e-12): the formula's own where x (1 - x) is
        # at least that, and (x - t) * 1e12 at and next to 0 and 1 (where the clamped logs give NaN / 0)
        edge = (input * (1 - input) < 1e-12).detach()
        if bool(edge.any()):
            safe = _fg.where(edge, _fg.full_like(input, 0.5), input)
            d = ((input - target) / _fg.clamp(input * (1 - input), min=1e-12)).detach()
            at_edge = bce(input.detach()) + (input - input.detach()) * d
            loss = _fg.where(edge, at_edge, bce(safe))
    if weight is not None:
        loss = loss * weight.expand(_fg.broadcast_shapes(tuple(weight.shape), tuple(target.shape)))
        if loss._np_dtype() != input._np_dtype():  # (torch multiplies in place: the input's dtype)
            loss = loss.to(input.dtype)
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed stably; pos_weight scales the positive term per class."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    td = target._np_dtype()
    if td.kind in "iu":  # (torch's loss starts as 1 - target and is updated in place, so takes its dtype)
        raise _dtype_error("result type {0} can't be cast to the desired output type {1}", input, target)
    if weight is None and pos_weight is None and _one_node_ok(input, target):
        # one recorded node, torch's BinaryCrossEntropyWithLogitsBackward0: the binds of the formula below
        def fn(x, t):
            sp = _bc_logaddexp(_ew.neg(x), _zero(x.dtype))  # softplus(-x), jax.nn.softplus's card
            return _reduced(_ew.add(_ew.mul(_bc_sub(_one(x.dtype), t), x), sp), reduction, cn)
        cn = _count(input)
        return _apply("BinaryCrossEntropyWithLogits", fn, (input, target))
    sp = _softplus(-input)  # log(1 + exp(-x))
    if pos_weight is not None:
        lw = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input + lw * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    if loss._np_dtype() != td and (td.kind == "f" or td.name == "bfloat16"):
        loss = loss.to(target.dtype)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), in the input's dtype (torch computes it in place on -input: log1p of exp,
    so inf where the exponent overflows); one node, torch's SoftMarginLossBackward0, not differentiable in
    target (torch refuses a target that requires grad)."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.requires_grad and _is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument "
                           "'target'. This input cannot have requires_grad True.")
    if _one_node_ok(input, target):
        cn = _count(input)
        return _apply("SoftMarginLoss", lambda a, b: _reduced(_ew.log1p(_ew.exp(_ew.mul(_ew.neg(a), b))),
                                                              reduction, cn), (input, target))
    loss = softplus(-target * input)
    if loss._np_dtype() != input._np_dtype() and input.is_floating_point():
        loss = loss.to(input.dtype)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class BCE with logits, averaged over classes, then reduced over samples."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (weighted by weight[y])."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    if x.dim() != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    t = target.reshape(-1)
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}")
    c = x.shape[1]
    _check_same_dtype("expected scalar type {0} but found {1}", input, weight)
    if _concrete(t) and t.numel() and bool(((t < 0) | (t >= c)).any().item()):
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    z = relu(margin - xy + x)  # torch's kernel: no gradient where the margin is met exactly (z == 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[t].unsqueeze(1)
    not_y = _fg.arange(c).unsqueeze(0) != t.unsqueeze(1)
    loss = (z * not_y.to(z.dtype)).sum(1) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C; target lists class
    indices, ended by the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.is_floating_point():
        raise RuntimeError("expected scalar type Long but found Float")
    x = input.unsqueeze(0) if input.dim() <= 1 else input
    t = target.reshape(x.shape) if input.dim() <= 1 else target
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    c = x.shape[1]
    valid = _fg.cumprod((t >= 0).long(), 1).bool()  # the targets before the first -1
    if _concrete(t) and t.numel() and bool((valid & (t >= c)).any().item()):
        raise RuntimeError("target out of range")
    tc = _fg.where(valid, t, _fg.zeros_like(t))
    classes = _fg.arange(c)
    is_target = ((tc.unsqueeze(2) == classes) & valid.unsqueeze(2)).any(1)  # (N, C)
    xj = x.gather(1, tc)  # (N, J)
    z = relu(1 - xj.unsqueeze(2) + x.unsqueeze(1))  # (N, J, C); no gradient at z == 0, as torch's kernel
    m = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = (z * m.to(z.dtype)).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# --- embedding / ranking losses -----------------------------------------------------------------------
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() not in (1, 2) or input1.shape != input2.shape:
        raise RuntimeError(f"cosine_embedding_loss: expected input1 and input2 of the same 1D or 2D size, got "
                           f"{list(input1.shape)} and {list(input2.shape)}")
    d = input1.dim() - 1
    if input1.dim() == 2 and (target.dim() != 1 or target.shape[0] != input1.shape[0]) or \
            input1.dim() == 1 and target.dim() != 0:
        raise RuntimeError(f"{input1.dim()}D target tensor expects {input1.dim() - 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)} and target of size "
                           f"{list(target.shape)}")
    eps = 1e-12
    prod = (input1 * input2).sum(d)
    mag = _fg.sqrt(((input1 * input1).sum(d) + eps) * ((input2 * input2).sum(d) + eps))
    cos = prod / mag
    zeros = _fg.zeros_like(cos)
    pos = _fg.where(target == 1, 1 - cos, zeros)
    neg = _fg.where(target == -1, _fg.clamp(cos - margin, min=0), zeros)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (x1 - x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")
    return _reduce(_fg.clamp(-target * (input1 - input2) + margin, min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x for target 1, max(0, margin - x) for target -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _fg.zeros_like(input)
    loss = _fg.where(target != -1, input, zeros) + _fg.where(target != 1, _fg.clamp(margin - input, min=0), zeros)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, d(a, p) - d(a, n) + margin) with d the p-norm pairwise distance."""
    reduction = _reduction(size_average, reduce, reduction)
    a, po, ne = anchor.dim(), positive.dim(), negative.dim()
    if not (a == po == ne):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {po}D, and negative {ne}D inputs")
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = _fg.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce(_fg.clamp(margin + d_ap - d_an, min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """The triplet loss with any distance function (pairwise_distance by default)."""
    reduction = _reduction(None, None, reduction)
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = _fg.minimum(d_an, dist(positive, negative))
    return _reduce(_fg.clamp(margin + d_ap - d_an, min=0), reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, W, b) reshaped to (*batch, C, *out_features), target), torch 2.13's
    F.linear_cross_entropy: linear_weight is (C, *out_features, in_features). `options` (chunking) is checked
    as torch does and the loss computed by the reference path (the same value)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"} or label_smoothing != 0.0
                                or target.dtype != _fg.int64):
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                      "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                      f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=2)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes), in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = _linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)
