"""nn.Parameter: a Tensor subclass that modules register as a parameter (requires_grad=True by default)."""
from .._torch._creation import empty
from .._torch._tensor import Tensor
from .._torch.overrides import _disabled_torch_function_impl


class Parameter(Tensor):
    """A tensor that is a module parameter, as torch.nn.Parameter."""
    # as torch's: torch functions given a Parameter are not dispatched on it (their results are plain Tensors)
    __torch_function__ = classmethod(_disabled_torch_function_impl)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        t = Tensor._make_subclass(cls, data.detach() if data.requires_grad else data, requires_grad)
        t._is_param = True
        return t

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach().clone(), self.requires_grad))


