"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (torch.nn semantics)."""
from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from ..._torch._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent

__all__ = ['Container', 'Sequential', 'ModuleList', 'ModuleDict', 'ParameterList', 'ParameterDict']


class Container(Module):
    """torch's deprecated nn.Container: a Module whose keyword arguments become its submodules."""

    def __init__(self, **kwargs) -> None:
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class _Indexed(Module):
    """What Sequential, ModuleList and ParameterList share: members stored under the keys "0".."n-1",
    kept contiguous on deletion and insertion."""

    def _store(self) -> dict:
        return self._modules

    def _set(self, key: str, value) -> None:
        self.add_module(key, value)

    def _index(self, idx) -> int:
        n = len(self)
        idx = operator.index(idx)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return idx % n

    def __len__(self) -> int:
        return len(self._store())

    def __iter__(self):
        return iter(self._store().values())

    def _renumber(self, values) -> None:
        store = self._store()
        store.clear()
        for i, v in enumerate(values):
            store[str(i)] = v

    def __getitem__(self, idx):
        """The member at position idx; a slice of them as a new container of the same type."""
        if isinstance(idx, slice):
            return type(self)(list(self._store().values())[idx])
        return self._store()[str(self._index(idx))]

    def __delitem__(self, idx) -> None:
        keys = list(self._store().keys())
        drop = set(keys[idx]) if isinstance(idx, slice) else {keys[self._index(idx)]}
        self._renumber([v for k, v in self._store().items() if k not in drop])

    def append(self, value):
        self._set(str(len(self)), value)
        return self

    def extend(self, values):
        if not isinstance(values, Iterable):
            raise TypeError(f"{type(self).__name__}.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def insert(self, index: int, value) -> None:
        n = len(self)
        index = max(0, min(n, index + n if index < 0 else index))
        values = list(self._store().values())
        self._renumber(values[:index] + [None] + values[index:])
        self._set(str(index), value)

    def pop(self, key=-1):
        v = self[key]
        del self[key]
        return v

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(_Indexed):
    """Modules applied in order; Sequential(OrderedDict(name=module)) names them."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return next(islice(self._modules.values(), self._index(idx), None))

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules.keys())[self._index(idx)]
        setattr(self, key, module)

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*chain(self, other))

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(other)

    def __mul__(self, other: int):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(list(self) * other))

    __rmul__ = __mul__

    def __imul__(self, other: int):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return self.extend(list(self) * (other - 1))

    def forward(self, input):
        for m in self:
            input = m(input)
        return input


class ModuleList(_Indexed):
    """A list of modules, registered (so their parameters are the parent's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __setitem__(self, idx, module) -> None:
        self.add_module(str(self._index(idx)), module)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(chain(self, other))

    def __repr__(self):
        """Runs of identical children are shown once, as "(0-2): 3 x Linear(...)" (as torch prints)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = _addindent(reprs[start], 2)
                if i - start == 1:
                    lines.append(f"({start}): {body}")
                else:
                    lines.append(f"({start}-{i - 1}): {i - start} x {body}")
                start = i
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class _Keyed(Module):
    """What ModuleDict and ParameterDict share: the dict protocol over the members they register, which
    `_store` returns (assignment registers, as each class says), filled from the mapping or the key/value
    pairs they are made with."""

    def __init__(self, members=None):
        super().__init__()
        if members is not None:
            self.update(members)

    def _store(self) -> dict:
        return self._modules

    def __getitem__(self, key):
        return self._store()[key]

    def __delitem__(self, key) -> None:
        del self._store()[key]

    def __len__(self) -> int:
        return len(self._store())

    def __iter__(self):
        return iter(self._store())

    def __contains__(self, key) -> bool:
        return key in self._store()

    def keys(self):
        return self._store().keys()

    def items(self):
        return self._store().items()

    def values(self):
        return self._store().values()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        self._store().clear()


class ModuleDict(_Keyed):
    """An ordered dict of modules, registered."""

    def __init__(self, modules=None):
        super().__init__(modules)

    def __setitem__(self, key, module) -> None:
        self.add_module(key, module)

    def update(self, modules) -> None:
        if not isinstance(modules, (Mapping, Iterable)):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        items = modules.items() if isinstance(modules, Mapping) else modules
        for j, kv in enumerate(items):
            if not isinstance(modules, Mapping) and (not isinstance(kv, Iterable) or len(kv) != 2):
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(kv) if hasattr(kv, '__len__') else 'unknown'}; 2 is required")
            k, m = kv
            self[k] = m


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_line(key, p, type_name) -> str:
    """One extra_repr line of ParameterList (dtype shown) / ParameterDict (legacy type name shown)."""
    if not isinstance(p, Tensor):
        return f"  ({key}): Object of type: {type(p).__name__}"
    size = "x".join(str(s) for s in p.size())
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    device = "" if p.device.type == "cpu" else f" ({p.device})"
    return f"  ({key}): {kind} containing: [{type_name(p)} of size {size}{device}]"


class ParameterList(_Indexed):
    """A list of parameters, registered; plain tensors appended become Parameters, other objects are kept
    as they are (as torch's)."""

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_values"] = {}
        if values is not None:
            self.extend(values)

    def _store(self) -> dict:
        return self._values

    def _set(self, key: str, value) -> None:
        value = _as_parameter(value)
        self._values[key] = value
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)

    def _renumber(self, values) -> None:
        self._values.clear()
        self._parameters.clear()
        for i, v in enumerate(values):
            self._set(str(i), v)

    def __setitem__(self, idx, param) -> None:
        self._set(str(self._index(idx)), param)

    def __iadd__(self, values):
        return self.extend(values)

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, lambda t: t.dtype) for k, p in self._values.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(_Keyed):
    """An ordered dict of parameters, registered; plain tensors stored become Parameters."""

    def __init__(self, parameters=None):
        super().__init__(parameters)

    def _store(self) -> dict:
        return self._parameters

    def __setitem__(self, key, value) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __or__(self, other):
        out = ParameterDict(self.items())
        out.update(other)
        return out

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def popitem(self):
        k = next(reversed(self._parameters))
        return k, self.pop(k)

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def copy(self):
        return ParameterDict(OrderedDict(self.items()))

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters) -> None:
        if not isinstance(parameters, (Mapping, Iterable)):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = parameters
        for k, v in items:
            self[k] = v

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, lambda t: t.type()) for k, p in self._parameters.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
