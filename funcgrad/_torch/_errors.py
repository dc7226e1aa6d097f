"""torch's errors for in-place writes, and the legacy scalar-type names (Float, Long, ...) torch's messages
use: shared by the eager Tensor (_tensor.py, _dispatch.py, _views.py) and the functionalised traced one (_functional.py), below both."""
from __future__ import annotations

import numpy as np

from . import _dtype as D

_INF_INPLACE_MSG = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                    "for more details.")
_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_MSG = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation.")


def _multi_view_msg(name, k, indirect: bool = False, no_grad: bool = False) -> str:
    """torch's error for writing in place into an output of a multi-view op (split, chunk, unbind) or a view of
    one, under grad mode; `name` is the view's grad_fn without its "Backward0" (None: the view has no grad_fn,
    its base not requiring grad when it was made); `indirect` when the write was to its base or another view;
    `no_grad` when the multi-view op ran under no_grad (torch's explanation is then that of no_grad views)."""
    what = "its base or another view of its base has been modified inplace" if indirect else \
        "is being modified inplace"
    head = f"Output {k} of {name} is a view and {what}." if name is not None else \
        f"A view was created in no_grad mode and {what} with grad mode enabled."
    if no_grad:
        if name is not None:  # (a view made with grad of one made under no_grad)
            head = (f"Output {k} of {name} is a view of a view which was created in no_grad mode and {what} with "
                    "grad mode enabled.")
        return head + (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                       "your code by moving both the view and the inplace either both inside the no_grad block (if "
                       "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
                       "tracked).")
    return head + (" This view is the output of a function that returns multiple views. Such functions do not "
                   "allow the output views to be modified inplace. You should replace the inplace operation by an "
                   "out-of-place one.")


def _check_cast(res_dt, t_dt, name):
    if not D.can_cast(res_dt, t_dt):
        raise RuntimeError(f"result type {_legacy(res_dt)} can't be cast to the desired output type "
                           f"{_legacy(t_dt)}")


def _legacy(dt) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(np.dtype(dt).name, str(dt))


def _shape_mismatch(out, got):
    raise RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape {list(got)}")
