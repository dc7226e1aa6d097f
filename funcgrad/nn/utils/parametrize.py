"""torch.nn.utils.parametrize: a module's tensor computed on every access from an unconstrained original.

register_parametrization(module, "weight", P) moves the parameter to module.parametrizations.weight.original
(or original0, original1, ... when P.right_inverse returns several tensors) and makes `module.weight` a
property returning P(original); assigning to it goes through right_inverse. As in torch, the module's class
is swapped for a subclass holding the properties, and state_dict keys read
`parametrizations.weight.original`."""
from __future__ import annotations

import contextlib

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ...autograd import no_grad as _no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations", "transfer_parametrizations_and_params"]


_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside this context each parametrized tensor is computed once, on its first access, and that value is
    reused (as torch's parametrize.cached); the cache is dropped when the outermost context exits."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _check_output(value, like, what="parametrization") -> None:
    """torch's checks (skipped with unsafe=True) that a parametrization keeps the tensor's dtype and shape."""
    if not isinstance(value, _fg.Tensor):
        raise ValueError(f"A {what} must return a tensor. Got {type(value).__name__}.")
    if value.dtype != like.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized dtype: {like.dtype}\nparametrized dtype: {value.dtype}")
    if value.shape != like.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized shape: {like.shape}\nparametrized shape: {value.shape}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s) they start from."""

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with _no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:  # (torch: taken as the identity at registration)
                        pass
        self.is_tensor = isinstance(new, _fg.Tensor)
        if self.is_tensor:
            self.original = Parameter(new.detach().clone(), original.requires_grad)
        else:
            self.ntensors = len(new)
            for i, t in enumerate(new):
                setattr(self, f"original{i}", Parameter(t.detach().clone(), original.requires_grad))
        if not unsafe:  # as torch: run the parametrization once and check what it returns
            with _no_grad():
                _check_output(self(), original)

    def right_inverse(self, value) -> None:
        """Set the original(s) so that the parametrized tensor becomes value."""
        with _no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
                elif not self.unsafe and m is not self[0]:
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        x = self[0](self.original) if self.is_tensor else self[0](*(getattr(self, f"original{i}")
                                                                    for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _inject(module) -> None:
    """Swap module's class for a subclass that can hold the parametrized properties."""
    cls = module.__class__
    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"_fg_parametrized_from": cls})
    module.__class__ = param_cls
    module.parametrizations = ModuleDict()


def _add_property(module, name) -> None:
    def get(self):
        if _cache_depth:
            key = (id(self), name)
            value = _cache.get(key)
            if value is None:
                value = _cache[key] = self.parametrizations[name]()
            return value
        return self.parametrizations[name]()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(module.__class__, name, property(get, set_))


def is_parametrized(module, tensor_name=None) -> bool:
    """Whether module has a parametrization (on tensor_name, or on any tensor if None)."""
    p = module.__dict__.get("_modules", {}).get("parametrizations")
    if p is None or not isinstance(p, ModuleDict):
        return False
    return len(p) > 0 if tensor_name is None else tensor_name in p


def type_before_parametrizations(module):
    """The module's class before register_parametrization replaced it (its own class if none)."""
    return getattr(type(module), "_fg_parametrized_from", type(module))


def register_parametrization(module, tensor_name: str, parametrization, *, unsafe: bool = False):
    """Make module.<tensor_name> = parametrization(original) (see the module docstring)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            _check_output(parametrization(current), current)
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject(module)
    module.parametrizations[tensor_name] = plist
    _add_property(module, tensor_name)
    return module


def remove_parametrizations(module, tensor_name: str, leave_parametrized: bool = True):
    """Undo register_parametrization: the tensor becomes a plain parameter again (its current parametrized
    value, or the original when leave_parametrized=False)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        with _no_grad():
            value = getattr(module, tensor_name)
        requires = plist.original.requires_grad if plist.is_tensor else plist.original0.requires_grad
    else:
        if not plist.is_tensor:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        value, requires = plist.original, plist.original.requires_grad
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach().clone(), requires))
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type_before_parametrizations(module)
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register from_module's parametrizations (with their originals) on to_module."""
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations.keys())
    for name in names:
        plist = from_module.parametrizations[name]
        if not is_parametrized(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach().clone()))
            for p in plist:
                register_parametrization(to_module, name, p)
        with _no_grad():
            if plist.is_tensor:
                to_module.parametrizations[name].original.copy_(plist.original)
            else:
                for i in range(plist.ntensors):
                    getattr(to_module.parametrizations[name], f"original{i}").copy_(getattr(plist, f"original{i}"))
    return to_module
