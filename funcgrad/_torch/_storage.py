"""torch.UntypedStorage / TypedStorage basics: views of a tensor's storage buffer (the one NumPy buffer
all views of a tensor share). `tensor.untyped_storage()` is bytes, `tensor.storage()` elements of the
tensor's dtype; both alias the tensor (writes through them are seen by it) and report size, nbytes and
data_ptr as torch does."""
from __future__ import annotations

import numpy as np

from . import _dtype as D


def _bytes_of(buf: np.ndarray) -> np.ndarray:
    """The whole buffer that buf lives in, as flat bytes."""
    root = buf
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root.reshape(-1).view(np.uint8) if root.flags.c_contiguous else np.ascontiguousarray(root).view(np.uint8)


class _FlatStorage:
    """What both storages are: a flat NumPy array `_data` (bytes for UntypedStorage) aliasing a tensor's
    buffer, on the CPU, never shared; sizes, dtype, element access and repr follow from it."""

    def size(self) -> int:
        return int(self._data.size)

    __len__ = size

    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def element_size(self) -> int:
        return int(self._data.itemsize)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    @property
    def dtype(self):
        return D.from_np(self._data.dtype)

    @property
    def device(self):
        return D.device("cpu")

    def __setitem__(self, i, v) -> None:
        self._data[i] = v

    def tolist(self) -> list:
        return self._data.tolist()

    def fill_(self, value):
        self._data[...] = value
        return self

    def is_shared(self) -> bool:
        return False

    def cpu(self):
        return self

    def __repr__(self) -> str:
        return " " + "\n ".join(str(v) for v in self._data.tolist()) + \
            f"\n[torch.storage.{self._repr_head()}device=cpu) of size {self.size()}]"


class UntypedStorage(_FlatStorage):
    """A flat byte buffer (torch.UntypedStorage): UntypedStorage(n) is n zero bytes."""

    def __init__(self, size=0, *, device=None):
        self._st = None
        self._data = np.zeros(int(size), np.uint8) if isinstance(size, int) else np.frombuffer(
            bytearray(bytes(size)), np.uint8)

    @classmethod
    def _of(cls, t):
        s = cls.__new__(cls)
        s._st = t._storage()
        s._data = _bytes_of(s._st.buf)
        return s

    def __getitem__(self, i):
        return int(self._data[i]) if isinstance(i, int) else UntypedStorage(self._data[i].tobytes())

    def clone(self):
        return UntypedStorage(self._data.tobytes())

    def _repr_head(self) -> str:
        return "UntypedStorage("


class TypedStorage(_FlatStorage):
    """A flat buffer of elements of one dtype (torch.TypedStorage / torch.Storage); tensor.storage()."""

    def __init__(self, *args, dtype=None, device=None):
        dt = D.to_np(dtype) if dtype is not None else D.default_float()
        if len(args) == 1 and isinstance(args[0], int):
            self._data = np.zeros(args[0], dt)
        elif len(args) == 1:
            self._data = np.array(list(args[0]), dt)
        else:
            self._data = np.zeros(0, dt)

    @classmethod
    def _of(cls, t):
        s = cls.__new__(cls)
        buf = t._storage().buf
        s._data = _bytes_of(buf).view(buf.dtype)
        return s

    def untyped(self) -> UntypedStorage:
        s = UntypedStorage.__new__(UntypedStorage)
        s._st = None
        s._data = self._data.view(np.uint8)
        return s

    _untyped_storage = property(untyped)

    def __getitem__(self, i):
        return self._data[i].item() if isinstance(i, int) else TypedStorage(self._data[i].tolist(), dtype=self.dtype)

    def __iter__(self):
        return iter(self._data.tolist())

    def _repr_head(self) -> str:
        return f"TypedStorage(dtype={self.dtype}, "


Storage = TypedStorage


class _LegacyStorageMeta(type):
    """torch's legacy storage classes (FloatStorage, ...): calling one makes a TypedStorage of its dtype, and
    isinstance(s, FloatStorage) holds for any TypedStorage of that dtype (tensor.storage() included)."""

    def __instancecheck__(cls, inst) -> bool:
        return isinstance(inst, TypedStorage) and inst._data.dtype == D.to_np(cls.dtype)


def _legacy_storage(name: str, dtype) -> type:
    def __new__(cls, *args, device=None):
        return TypedStorage(*args, dtype=dtype)
    return _LegacyStorageMeta(name, (), {"__new__": __new__, "dtype": dtype, "__module__": "funcgrad",
                                         "__doc__": f"torch.{name}: a TypedStorage of {dtype}."})


_LEGACY = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
           "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
           "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool_", "ComplexFloatStorage": "complex64",
           "ComplexDoubleStorage": "complex128"}
LEGACY_STORAGES = {n: _legacy_storage(n, getattr(D, dt)) for n, dt in _LEGACY.items() if getattr(D, dt) is not None}
globals().update(LEGACY_STORAGES)
