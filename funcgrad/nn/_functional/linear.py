"""torch.nn.functional's linear maps: linear, bilinear, identity."""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from ... import lax as _lax
from ..._torch._argcheck import check_same_dtype as _check_same_dtype, dtype_error as _dtype_error
from ..._torch.ops.arithmetic import _add as _add_bc
from ..._src.prims.linalg import dot_general_p as _dot_p, linear_p as _linear_p
from ..._torch._dispatch import _apply, _apply_prim

__all__ = ["linear", "bilinear", "identity"]



# --- linear -----------------------------------------------------------------------------------------
def _xwt(x):
    return (((x.ndim - 1,), (1,)), ((), ()))  # dot_general's x W^T: x's last dim against W's second


def _addmm(x, w, b):
    """x W^T + b on Arrays by dot_general and an add: linear's binds under transforms."""
    dt = x.dtype
    if dt.itemsize == 2 and dt.kind in "fV":  # float16, bfloat16: torch's CPU addmm in float32, rounded once
        f32 = [_lax.convert_element_type(a, "float32") for a in (x, w, b)]
        return _lax.convert_element_type(_lax.dot_general(f32[0], f32[1], _xwt(x)) + f32[2], x.dtype)
    y = _lax.dot_general(x, w, _xwt(x))
    return _add_bc(y, b) if y.dtype == b.dtype else y + b  # (the bias broadcast by NumPy when concrete)


def linear(input, weight, bias=None):
    """y = x W^T + b. Eager with a bias of one float dtype (nn.Linear's case), one bind of the linear card
    (its impl straight on the buffers, recorded as one primitive: torch's AddmmBackward0); under transforms
    (tensors holding tracers) and forward AD, _addmm's binds."""
    for name, pos, t in (("input", 1, input), ("weight", 2, weight), ("bias", 3, bias)):
        if not isinstance(t, _fg.Tensor) and (t is not None or pos < 3):
            raise TypeError(f"linear(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    x, w = input._v, weight._v
    if bias is not None and x is not None and w is not None:  # (checked on the buffers: the hot path)
        b, dt = bias._v, x.dtype
        if b is not None and w.ndim == 2 and b.ndim == 1 and x.ndim and w.dtype == dt and b.dtype == dt and \
                dt.itemsize >= 4 and dt.kind in "fc" and x.shape[-1] == w.shape[1] and b.shape[0] == w.shape[0]:
            return _apply_prim("Addmm", _linear_p, _addmm, (input, weight, bias))
    if weight.dim() == 2 and input.dim() >= 1 and input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows if input.dim() > 1 else 1}x"
                           f"{input.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
    if bias is None:
        if input._np_dtype() != weight._np_dtype():
            raise _dtype_error("expected m1 and m2 to have the same dtype, but got: {0:c} != {1:c}", input, weight)
    elif input._np_dtype() != weight._np_dtype() or bias._np_dtype() != weight._np_dtype():  # (torch's addmm)
        _check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", bias, weight)
        raise _dtype_error("mat1 and mat2 must have the same dtype, but got {0} and {1}", input, weight)
    if weight.dim() != 2:
        out = _fg.matmul(input, weight)
        return out if bias is None else out + bias
    # one recorded node (torch's AddmmBackward0 / MmBackward0): x W^T contracted directly, no transpose op
    if bias is None:
        params = {"dimension_numbers": _xwt(input), "preferred_element_type": None}
        return _apply_prim("Mm", _dot_p, lambda x, w: _dot_p.bind(x, w, **params), (input, weight), params)
    bs = bias.shape
    if len(bs) != 1 or bs[0] != weight.shape[0]:  # (a bias of one row of the output fits: nothing to check)
        out_shape = tuple(input.shape[:-1]) + (weight.shape[0],)
        _fg.broadcast_shapes(tuple(bs), out_shape)  # (torch's RuntimeError for a bias that does not fit)
        if _fg.broadcast_shapes(tuple(bs), out_shape) != out_shape:
            raise RuntimeError(f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
                               f"({bs[-1]}) at non-singleton dimension {len(out_shape) - 1}")
    return _apply("Addmm", _addmm, (input, weight, bias))


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T A_o x2 + b_o over the last dimension of both inputs."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    dt = input1._np_dtype()
    if input2._np_dtype() != dt or weight._np_dtype() != dt or (bias is not None and bias._np_dtype() != dt):
        raise _dtype_error("All tensors must have the same dtype, got input1: {0:c}, input2: {1:c}, weight: {2:c}"
                           + (", bias: {3:c}" if bias is not None else ""), input1, input2, weight, bias)
    out = _fg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def identity(input):
    """Returns input unchanged."""
    return input
