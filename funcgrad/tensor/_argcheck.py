"""torch's TypeError for a non-tensor where a function wants a tensor:
"addcmul(): argument 'input' (position 1) must be Tensor, not int"."""
from __future__ import annotations

import functools
import inspect

from ._tensor import Tensor

# parameter names that always take a tensor in the functions wrapped here
_TENSOR_PARAMS = frozenset({"input", "tensor1", "tensor2", "batch1", "batch2", "vec1", "vec2", "A", "y", "LU_data",
                            "LU_pivots", "mask", "source", "src", "log_probs", "theta", "grid"})


def require_tensors(fn, prefix: str = ""):
    """fn with its tensor parameters (by name, among the first few) checked to be Tensors."""
    if getattr(fn, "_numbers_ok", False):  # torch accepts a Number for either operand (xlogy, zeta)
        return fn
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    checked = [(i, p.name) for i, p in enumerate(params[:4])
               if p.name in _TENSOR_PARAMS and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is inspect.Parameter.empty]
    if not checked:
        return fn
    label = prefix + fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        for i, name in checked:
            v = args[i] if i < len(args) else kwargs.get(name, None)
            if not isinstance(v, Tensor) and (i < len(args) or name in kwargs):
                raise TypeError(f"{label}(): argument '{name}' (position {i + 1}) must be Tensor, not "
                                f"{type(v).__name__}")
        return fn(*args, **kwargs)
    return wrapper


def wrap_module(mod, names, prefix: str = "") -> None:
    """Replace mod's functions `names` by their checked versions."""
    for n in names:
        f = getattr(mod, n, None)
        if inspect.isfunction(f):
            setattr(mod, n, require_tensors(f, prefix))
