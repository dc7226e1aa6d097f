"""Tensor subclasses that hold other tensors rather than a buffer of their own (torch.nested's NestedTensor,
torch.masked's MaskedTensor): `isinstance(x, torch.Tensor)` holds as in torch, while the Tensor machinery never
sees them: their own methods, dunders and `__torch_function__` implement what they support, and every other
public Tensor method or property refuses with an error naming the operation (made once, when the class is
defined, so plain tensors' operations pay nothing)."""
from __future__ import annotations

import copy
from typing import Callable

from . import overrides as _overrides
from ._tensor import Tensor

__all__ = ["WrapperTensor"]

_new_obj = object.__new__
_ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
          "rshift", "divmod")
# the dunders of Tensor that read its buffer: refused too unless the subclass defines them
_DUNDERS = frozenset({f"__{p}{op}__" for op in _ARITH for p in ("", "r", "i")} | {
    "__setitem__", "__array__", "__float__", "__int__", "__index__", "__complex__", "__contains__", "__dlpack__",
    "__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
    "__getitem__", "__len__", "__iter__", "__reversed__", "__bool__", "__round__", "__floor__", "__ceil__",
    "__trunc__", "__array_function__", "__array_ufunc__", "__dlpack_device__"})


def _refusal(kind: str, name: str) -> Callable:
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not support {kind} {name}(); operate on its "
                                  f"components instead")
    refuse.__name__ = name
    return refuse


def _fixed(prop: property) -> bool:
    """A property whose value does not depend on the tensor (device, is_cuda...): kept."""
    try:
        prop.fget(None)
        return True
    except Exception:  # noqa: BLE001 (any failure means it reads the tensor)
        return False


class WrapperTensor(Tensor):
    """Base of the Tensor subclasses made of other tensors: no buffer (`_v` and `_a` are None)."""
    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        t = _new_obj(cls)
        t._v = t._a = t._st = t._gfn = None
        t._rg = False
        return t

    def _slots(self) -> dict:
        return {k: getattr(self, k) for c in type(self).__mro__ if c is not WrapperTensor and issubclass(c, WrapperTensor)
                for k in vars(c).get("__slots__", ())}

    def __deepcopy__(self, memo: dict):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for k, v in self._slots().items():
            setattr(new, k, copy.deepcopy(v, memo))
        return new

    def __reduce_ex__(self, protocol):
        return _rebuild, (type(self), self._slots())

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._refuse_unimplemented()

    @classmethod
    def _refuse_unimplemented(cls) -> None:
        """Replace every public Tensor method and tensor-dependent property the subclass does not define by a
        refusal (call again after adding methods to the class with setattr)."""
        own = set()
        for c in cls.__mro__:
            if c is WrapperTensor:
                break
            own.update(k for k, v in vars(c).items() if getattr(v, "__name__", None) != "refuse"
                       and not (isinstance(v, property) and getattr(v.fget, "__name__", None) == "refuse"))
        for name, v in vars(Tensor).items():
            if name.startswith("_") and name not in _DUNDERS or name in own:
                continue
            if isinstance(v, property):
                if not _fixed(v):
                    setattr(cls, name, property(_refusal("the attribute", name)))
            elif callable(v) or isinstance(v, (staticmethod, classmethod)):
                setattr(cls, name, _refusal("the operation", name))


def _rebuild(cls, slots: dict):
    new = cls.__new__(cls)
    for k, v in slots.items():
        setattr(new, k, v)
    return new


def torch_function(cls, func, types, args=(), kwargs=None):
    """The torch functions a WrapperTensor subclass has no rule for: the method of the same name when the class
    defines one (torch.add(nt, 1) is nt.add(1)), else torch's NotImplementedError naming the operator."""
    kwargs = kwargs or {}
    if _overrides._space(func) not in (None, "torch"):  # nn.functional's, linalg's, ...: their code runs, the
        return _overrides._skip_one_hop(func, args, kwargs)  # torch functions it calls come back here
    name = getattr(func, "__name__", "")
    first = args[0] if args else kwargs.get("input")
    m = vars_of(cls).get(name) if isinstance(first, cls) else None
    if callable(m) and not getattr(m, "__qualname__", "").startswith("_refusal."):
        rest = args[1:] if args else ()
        kw = {k: v for k, v in kwargs.items() if k != "input"}
        return m(first, *rest, **kw)
    if isinstance(first, cls) and hasattr(cls, "_no_kernel"):
        raise NotImplementedError(first._no_kernel(name))
    raise NotImplementedError(f"{cls.__name__} does not support torch.{name}(); operate on its components instead")


def vars_of(cls) -> dict:
    """The attributes the WrapperTensor subclass cls (and its WrapperTensor bases) define themselves."""
    out = {}
    for c in reversed(cls.__mro__):
        if c is not WrapperTensor and isinstance(c, type) and issubclass(c, WrapperTensor):
            out.update(vars(c))
    return out
