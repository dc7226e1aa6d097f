"""torch.autograd.Variable: since PyTorch 0.4 a Variable is a Tensor; the constructor remains for old code."""
from __future__ import annotations

import warnings


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        from . import graph
        return isinstance(obj, graph._TENSOR.Tensor)

    def __call__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        """Variable(data, requires_grad=False, volatile=False): a tensor sharing data's storage, outside any
        graph, with requires_grad set; `volatile` is gone (use no_grad) and only warns."""
        from . import graph
        T = graph._TENSOR
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            import numpy as np
            return T._make(np.zeros((0,), np.float32))
        if not isinstance(data, T.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            if t._np_dtype().kind not in "fc":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            t._rg = True
        return t


class Variable(metaclass=_VariableMeta):
    """The pre-0.4 wrapper: isinstance(t, Variable) holds for every tensor; Variable(t) returns a tensor."""
    __module__ = "funcgrad.autograd.variable"
