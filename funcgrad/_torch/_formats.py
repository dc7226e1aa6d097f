"""torch.memory_format and torch.layout: singleton tags that print and pickle as torch's do.

funcgrad tensors are strided and dense: a tensor reports `strided`, or `sparse_coo` when it is a sparse COO
tensor (held densely, see _sparse.py); memory formats are accepted wherever torch takes them (`to`,
`contiguous`, `clone`, `*_like`, `Module.to`)."""
from __future__ import annotations


class _Tag:
    __slots__ = ("name",)
    _instances: dict

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_lookup, (type(self).__name__, self.name))

    def __eq__(self, other) -> bool:  # singletons (unpickling returns the same object): identity, never raising
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    __hash__ = object.__hash__


class memory_format(_Tag):
    """A tensor memory format tag (torch.contiguous_format, torch.channels_last, ...)."""
    __slots__ = ()
    _instances = {}


class layout(_Tag):
    """A tensor layout tag (torch.strided, torch.sparse_coo, ...)."""
    __slots__ = ()
    _instances = {}


def _make(cls, name):
    cls._instances[name] = obj = cls(name)
    return obj


def _lookup(kind: str, name: str):
    return {"memory_format": memory_format, "layout": layout}[kind]._instances[name]


contiguous_format = _make(memory_format, "contiguous_format")
channels_last = _make(memory_format, "channels_last")
channels_last_3d = _make(memory_format, "channels_last_3d")
preserve_format = _make(memory_format, "preserve_format")
legacy_contiguous_format = _make(memory_format, "legacy_contiguous_format")
strided = _make(layout, "strided")
sparse_coo = _make(layout, "sparse_coo")
sparse_csr = _make(layout, "sparse_csr")
sparse_csc = _make(layout, "sparse_csc")
sparse_bsr = _make(layout, "sparse_bsr")
sparse_bsc = _make(layout, "sparse_bsc")
_mkldnn = _make(layout, "_mkldnn")
jagged = _make(layout, "jagged")
