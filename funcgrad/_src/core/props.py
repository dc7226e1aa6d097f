"""Property helpers shared by the array types of both faces (Array, Sharding, Tensor, the legacy types)."""
from __future__ import annotations

from typing import Any


def fixed_property(value: Any, doc: str | None = None) -> property:
    """A read-only property that is always `value`: the facts every funcgrad array answers the same way
    (one device, dense and strided, fully addressable), which the libraries it mirrors compute per object."""
    return property(lambda self: value, doc=doc)
