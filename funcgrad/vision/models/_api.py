"""Weights resolution for the model builders: `weights=` is a local file path, or a torchvision-style weights
name/enum resolved to the file of that name in the local hub cache ($TORCH_HOME/hub/checkpoints), read with
funcgrad.load. Nothing is ever downloaded."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Dict, Optional

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._torch.serialization import load as _torch_load


@dataclass(eq=False)
class Weights:
    url: str
    transforms: Optional[Callable] = None
    meta: Dict[str, Any] = field(default_factory=dict)


class WeightsEnum(Enum):
    """Named weights of one architecture; `.url` is torchvision's, whose basename is looked up in the cache."""

    @classmethod
    def verify(cls, obj):
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            try:
                return cls[name]
            except KeyError:
                raise ValueError(f"Failed to find Weights {obj!r} in {cls.__name__}. Valid names: "
                                 f"{', '.join(cls.__members__)}") from None
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{obj.__class__.__name__}.")

    @property
    def url(self):
        return self.value.url

    @property
    def meta(self):
        return self.value.meta

    def get_state_dict(self, progress: bool = True, check_hash: bool = False):
        return load_state_dict_from_cache(self.url)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"


def get_dir() -> str:
    """$TORCH_HOME/hub (TORCH_HOME defaults to $XDG_CACHE_HOME/torch, i.e. ~/.cache/torch)."""
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def _load(path: str):
    try:
        obj = _torch_load(path)
    except Exception as e:
        raise RuntimeError(f"Could not read weights from {path}: {e}. funcgrad reads state_dicts written by "
                           "funcgrad.save or torch.save (tensors and plain containers only).") from None
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    return obj


def load_state_dict_from_cache(url: str):
    path = os.path.join(get_dir(), "checkpoints", os.path.basename(url))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Weights file {path} not found. funcgrad.vision never downloads weights: "
                                f"place the file from {url} there, or pass "
                                "weights=<path to a local file>.")
    return _load(path)


def resolve_state_dict(weights, enum_cls) -> Optional[dict]:
    """None, or the state_dict named by weights (a path, a weights enum member, or its name)."""
    if weights is None:
        return None
    if isinstance(weights, (str, os.PathLike)) and (isinstance(weights, os.PathLike) or os.path.sep in weights
                                                     or os.path.isfile(weights)):
        path = os.fspath(weights)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Weights file {path} not found")
        return _load(path)
    if isinstance(weights, dict):
        return weights
    w = enum_cls.verify(weights)
    return w.get_state_dict()


def _legacy(kwargs, enum_cls, weights):
    """pretrained=True (deprecated torchvision argument) means the DEFAULT weights."""
    if kwargs.pop("pretrained", False):
        return enum_cls.DEFAULT if weights is None else weights
    return weights


def build(model: Callable, weights, enum_cls, kwargs: dict, remap: Optional[Callable[[dict], dict]] = None):
    """A builder's body: the deprecated `pretrained=` read, num_classes fixed by named weights, then
    `model(**kwargs)` with the weights (if any) loaded into it."""
    weights = _legacy(kwargs, enum_cls, weights)
    _num_classes(weights, kwargs)
    return load_weights(model(**kwargs), weights, enum_cls, remap)


def load_weights(model, weights, enum_cls, remap: Optional[Callable[[dict], dict]] = None):
    sd = resolve_state_dict(weights, enum_cls)
    if sd is not None:
        sd = {k: (v if isinstance(v, _fg.Tensor) else _fg.as_tensor(v)) for k, v in sd.items()}
        if remap is not None:
            sd = remap(sd)
        model.load_state_dict(sd)
    return model


def _ovewrite_named_param(kwargs, name, value):
    if name in kwargs and kwargs[name] != value:
        raise ValueError(f"The parameter '{name}' expected value {value} but got {kwargs[name]} instead.")
    kwargs[name] = value


def _num_classes(weights, kwargs):
    """Named weights fix num_classes to their number of categories."""
    if weights is not None and not isinstance(weights, (str, os.PathLike, dict)) or (
            isinstance(weights, str) and os.path.sep not in weights and not os.path.isfile(weights)):
        n = weights.meta.get("num_classes", 1000) if isinstance(weights, WeightsEnum) else 1000
        _ovewrite_named_param(kwargs, "num_classes", n)


def _w(url, **meta):
    return Weights(url=url, meta=dict(num_classes=1000, **meta))
