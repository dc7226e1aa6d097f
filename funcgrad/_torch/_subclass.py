"""Tensor subclasses.

A subclass with `__torch_function__` (its own, or Tensor's default that it inherits) gets torch's dispatch of
Tensor's methods, operators and properties: `s + 1`, `s[0]`, `s.sum(dim=1)`, `s.T`, `s += 1` reach
`type(s).__torch_function__` with the `func`, `types`, `args` and `kwargs` torch 2.13 passes (func is Tensor's
attribute: `torch.Tensor.add` for `s + 1`, `Tensor.T.__get__` for `s.T`). Plain tensors pay nothing: the dispatching
wrappers are set on the subclass when it is defined (`Tensor.__init_subclass__`, below), never on Tensor.

WrapperTensor is the base of subclasses that hold other tensors rather than a buffer of their own (torch.nested's
NestedTensor, torch.masked's MaskedTensor): `isinstance(x, torch.Tensor)` holds as in torch, while the Tensor
machinery never sees them: their own methods, dunders and `__torch_function__` implement what they support, and
every other public Tensor method or property refuses with an error naming the operation (made once, when the class
is defined, so plain tensors' operations pay nothing)."""
from __future__ import annotations

import copy
import inspect
import weakref
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


# --- torch's dispatch of Tensor's methods, operators and properties on a subclass ------------------------------------
# The operators (and aliases) torch hands `__torch_function__` as another Tensor method (as its C++ does: `s + 1` is
# Tensor.add, `s.ndimension()` Tensor.dim).
_OP_FUNC = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
            "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div", "__itruediv__": "div_",
            "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_",
            "__matmul__": "matmul", "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__ne__": "ne",
            "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__rand__": "bitwise_and",
            "__ror__": "bitwise_or", "__rxor__": "bitwise_xor", "ndimension": "dim", "nelement": "numel"}
# Tensor's attributes that torch writes in Python (torch/_tensor.py): their handle_torch_function passes self and the
# operands as given, counts plain Tensors among `types` and names the function torch._tensor's; those listed with a
# spec pass (the parameters given positionally, {those given by keyword: their defaults}) whatever the caller wrote
_PY_OPS = frozenset({"__rsub__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__rmod__", "__pow__", "__rpow__",
                     "__ipow__", "__rlshift__", "__rrshift__", "__rmatmul__", "__len__", "__contains__", "__format__",
                     "__deepcopy__", "__reduce_ex__", "__setstate__", "__dlpack__", "__dlpack_device__"})
_PY_SPECS = {
    "__repr__": ((), {"tensor_contents": None}), "__array__": ((), {"dtype": None}),
    "backward": ((), {"gradient": None, "retain_graph": None, "create_graph": False, "inputs": None}),
    "register_hook": (("hook",), {}), "register_post_accumulate_grad_hook": (("hook",), {}),
    "norm": ((), {"p": "fro", "dim": None, "keepdim": False, "dtype": None}),
    "split": (("split_size",), {"dim": 0}), "lu": ((), {"pivot": True, "get_infos": False}),
    "unique": ((), {"sorted": True, "return_inverse": False, "return_counts": False, "dim": None}),
    "unique_consecutive": ((), {"return_inverse": False, "return_counts": False, "dim": None}),
    "stft": (("n_fft",), {"hop_length": None, "win_length": None, "window": None, "center": True,
                          "pad_mode": "reflect", "normalized": False, "onesided": None, "return_complex": None,
                          "align_to_window": None}),
    "istft": (("n_fft",), {"hop_length": None, "win_length": None, "window": None, "center": True,
                           "normalized": False, "onesided": None, "length": None, "return_complex": False}),
    "unflatten": (("dim", "sizes"), {}), "dim_order": ((), {}), "storage": ((), {}), "storage_type": ((), {}),
    "is_shared": ((), {}), "share_memory_": ((), {}), "resize_as": (("tensor",), {})}
_PY_OTHER = frozenset({"resize"})  # (*sizes: passed on as given)
# the binary operators: torch answers a TypeError (every override declining, say) with NotImplemented, so that
# Python tries the other operand
_BINARY = frozenset({f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                                               "and", "or", "xor", "lshift", "rshift") for p in ("", "r", "i")} |
                    {f"__{op}__" for op in ("eq", "ne", "lt", "le", "gt", "ge")})
# a reflected operator called with a Tensor of a base class (Python tries the subclass's reflected method first):
# torch runs the base tensor's forward operator, so that is what is dispatched, with the operands in their order
_FORWARD = {f"__r{op}__": f"__{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                                                  "and", "or", "xor", "lshift", "rshift")}
# the other dunders that torch dispatches (those it does not: __hash__, __iter__'s own call, __init__, ...)
_DISPATCHED_DUNDERS = frozenset(_OP_FUNC) | _PY_OPS | frozenset(_FORWARD) | frozenset(_FORWARD.values()) | {
    "__repr__", "__array__", "__getitem__", "__setitem__", "__bool__", "__float__", "__int__", "__index__",
    "__complex__", "__invert__", "__eq__", "__iand__", "__ior__", "__ixor__"}
_NOT_DISPATCHED = frozenset({"as_subclass"})  # (torch's ignored functions among Tensor's public methods)
_STATE = _overrides._STATE
_TD = Tensor.__dict__


def _flat(values):
    for a in values:
        if a.__class__ is list or a.__class__ is tuple:
            yield from a
        else:
            yield a


def _method(name: str) -> Callable:
    """The dispatching form of Tensor's method `name` (operators included), for a subclass."""
    func_name = _OP_FUNC.get(name, name)
    spec = _PY_SPECS.get(name)
    py = name in _PY_OPS or name in _PY_SPECS or name in _PY_OTHER
    if spec is not None:  # (only the keywords funcgrad's method takes: its default calls it with them)
        spec = (spec[0], {k: v for k, v in spec[1].items() if _takes(_TD[name], k)})
    shown = (not py, f"torch._tensor.{func_name}" if py else f"torch.Tensor.{func_name}")
    forward = _FORWARD.get(name)
    not_implemented = name in _BINARY

    def method(self, *args, **kwargs):
        if _STATE.disabled:
            return _TD[name](self, *args, **kwargs)
        if forward is not None and args and isinstance(args[0], Tensor) and type(args[0]) is not type(self) \
                and isinstance(self, type(args[0])):
            return _methods[forward](args[0], self)  # (t + s: torch's t.__add__(s))
        func = getattr(Tensor, func_name)
        if spec is not None:
            args, kwargs = _bind(spec, args, kwargs)
        relevant = (self, *args) if py else (self, *_flat(args), *_flat(kwargs.values()))
        if not_implemented:
            try:
                return _overrides._handle(func, relevant, (self, *args), kwargs if py or kwargs else None, shown)
            except TypeError:
                return _declined(name, self, args[0] if args else None)
        return _overrides._handle(func, relevant, (self, *args), kwargs if py or kwargs else None, shown)
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "lt": "<", "le": "<=",
            "gt": ">", "ge": ">="}


def _declined(name: str, a, b):
    """Binary operator `name` on a and b, every override declining: NotImplemented (Python tries b's reflected
    operator), as torch's; where b (or a, for t + s) is a Tensor of a class that does not dispatch, whose operator
    would compute without asking the overrides, Python's own TypeError (or ==/!='s identity answer) at once."""
    if not any(isinstance(x, Tensor) and not any(c in _DISPATCHING for c in type(x).__mro__) for x in (a, b)):
        return NotImplemented
    op = name.strip("_")
    if op in ("eq", "ne"):
        return (a is b) == (op == "eq")
    inplace = op.startswith("i") and op[1:] in _SYMBOLS
    if op not in _SYMBOLS and (op[1:] in _SYMBOLS):
        op, a, b = op[1:], (a if inplace else b), (b if inplace else a)
    sym = _SYMBOLS[op] + ("=" if inplace else "")
    if op in ("lt", "le", "gt", "ge"):
        raise TypeError(f"'{sym}' not supported between instances of '{type(a).__name__}' and '{type(b).__name__}'")
    if op == "pow":
        sym += " or pow()" if not inplace else ""
    raise TypeError(f"unsupported operand type(s) for {sym}: '{type(a).__name__}' and '{type(b).__name__}'")


def _takes(f, name: str) -> bool:
    """Whether function f takes an argument called `name`."""
    code = getattr(f, "__code__", None)
    return code is None or bool(code.co_flags & inspect.CO_VARKEYWORDS) or \
        name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _bind(spec: tuple, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs as torch's Python method of `spec` passes them on: spec's positional parameters, then its
    keyword ones (their defaults where the caller gave none); the call as given where it does not fit spec."""
    pos, kw = spec
    names = pos + tuple(kw)
    if len(args) > len(names) or any(k not in names or k in names[:len(args)] for k in kwargs):
        return args, kwargs
    vals = {**kw, **dict(zip(names, args)), **kwargs}
    if any(n not in vals for n in pos):
        return args, kwargs
    return tuple(vals[n] for n in pos), {k: vals[k] for k in kw}


def _iter(self):
    """Tensor.__iter__ as torch's: not dispatched itself, its dim() and unbind(0) are."""
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def _prop(name: str, prop: property) -> property:
    """The dispatching form of Tensor's property `name`: func is `Tensor.<name>.__get__` (`__set__`, `__delete__`)."""
    shown = {acc: (True, f"torch.Tensor.{name}.{acc}") for acc in ("__get__", "__set__", "__delete__")}

    def get(self):
        if _STATE.disabled:
            return prop.__get__(self)
        return _overrides._handle(_TD[name].__get__, (self,), (self,), None, shown["__get__"])

    def set_(self, value):
        if _STATE.disabled:
            return prop.__set__(self, value)
        _overrides._handle(_TD[name].__set__, (self,), (self, value), None, shown["__set__"])

    def delete(self):
        if _STATE.disabled:
            return prop.__delete__(self)
        _overrides._handle(_TD[name].__delete__, (self,), (self,), None, shown["__delete__"])
    return property(get, set_ if prop.fset is not None else None, delete if prop.fdel is not None else None,
                    prop.__doc__)


_DISPATCHING: weakref.WeakSet = weakref.WeakSet()  # the subclasses given the dispatching forms
_methods: dict = {}  # name -> the dispatching form of Tensor's attribute `name` (made on the first subclass)


def _dispatching() -> dict:
    if not _methods:
        for name, v in _TD.items():
            if name.startswith("_") and name not in _DISPATCHED_DUNDERS or name in _NOT_DISPATCHED:
                continue
            if isinstance(v, property):
                _methods[name] = _prop(name, v)
            elif type(v).__name__ == "function":
                _methods[name] = _method(name)
        _methods["__iter__"] = _iter
    return _methods


def _init_subclass(cls, **kwargs) -> None:
    """Tensor.__init_subclass__: a subclass that overrides (see overrides._overrides_type) gets the dispatching form
    of each of Tensor's methods and properties it does not define itself (funcgrad's own subclasses, quantized and
    wrapper tensors, define the behaviour of theirs)."""
    super(Tensor, cls).__init_subclass__(**kwargs)
    if not _overrides._overrides_type(cls) or cls.__module__.startswith("funcgrad.") or \
            issubclass(cls, WrapperTensor):
        return
    _DISPATCHING.add(cls)
    for name, m in _dispatching().items():
        owner = next(c for c in cls.__mro__ if name in c.__dict__)
        if owner is Tensor:
            setattr(cls, name, m)


Tensor.__init_subclass__ = classmethod(_init_subclass)
