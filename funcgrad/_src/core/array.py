"""Array: an immutable array over one backend buffer (a read-only numpy.ndarray, or a cupy.ndarray).

Operators, indexing and most methods are attached by `funcgrad._src.prims.operators`, so that the
same methods serve concrete Arrays and tracers alike.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .aval import Shaped, ShapedArray, shaped
from .backend import CPU, device_of, cupy
from .props import fixed_property
from .sharding import Shard, SingleDeviceSharding


class ArrayBase(Shaped):
    """What Arrays and tracers share: shape queries and (attached later) operators and methods."""
    __slots__ = ()
    __array_priority__ = 100

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d array)")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __setitem__(self, idx, value):
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment: funcgrad arrays are "
            "immutable. Use the functional form x = x.at[idx].set(value) (or .add/.mul/.min/.max).")

    __hash__ = None  # arrays are unhashable, as in NumPy


class Array(ArrayBase):
    """An immutable n-dimensional array. Create one with `funcgrad.numpy.asarray` and friends."""
    __slots__ = ("_buf", "weak_type", "_sharding", "__weakref__")   # (_sharding: set by device_put only)

    def __init__(self, buf, weak_type: bool = False):
        self._buf = buf
        self.weak_type = weak_type

    @property
    def shape(self) -> tuple:
        return self._buf.shape

    @property
    def dtype(self) -> np.dtype:
        return self._buf.dtype

    @property
    def ndim(self) -> int:
        return self._buf.ndim

    @property
    def size(self) -> int:
        return self._buf.size

    @property
    def aval(self) -> ShapedArray:
        buf = self._buf
        return shaped(buf.shape, buf.dtype, bool(self.weak_type))

    @property
    def device(self):
        buf = self._buf
        if buf.__class__ is DeletedBuffer:
            raise buf.error()
        return device_of(buf)

    def delete(self) -> None:
        """Free this Array's buffer now (as JAX's Array.delete): any later use of its values raises
        RuntimeError; its shape and dtype stay readable. jit(..., donate_argnums=...) deletes the Arrays
        whose buffers it reused. Deleting twice is allowed."""
        buf = self._buf
        if buf.__class__ is not DeletedBuffer:
            self._buf = DeletedBuffer(buf.shape, buf.dtype)

    def is_deleted(self) -> bool:
        """Whether this Array was deleted (by `delete()`, or donated to a jitted function that reused it)."""
        return self._buf.__class__ is DeletedBuffer

    def devices(self) -> set:
        return {self.device}

    @property
    def sharding(self):
        """The sharding device_put gave this array (a NamedSharding of a one-device mesh), else the
        SingleDeviceSharding of the device holding it (funcgrad.sharding)."""
        s = getattr(self, "_sharding", None)
        return s if s is not None else SingleDeviceSharding(self.device)

    @property
    def addressable_shards(self) -> list:
        """The pieces of this array on this process's devices: one, the whole array (funcgrad.sharding)."""
        return [Shard(self.device, tuple(slice(None) for _ in self.shape), 0, self)]

    global_shards = addressable_shards

    is_fully_addressable = is_fully_replicated = fixed_property(True)

    def block_until_ready(self) -> "Array":
        if type(self._buf) is not np.ndarray:
            self.device.xp.cuda.get_current_stream().synchronize()
        return self

    # --- conversion to host values -------------------------------------------------------------
    def _host(self) -> np.ndarray:
        buf = self._buf
        return buf if type(buf) is np.ndarray else buf.get()

    def __array__(self, dtype=None, copy=None):
        h = self._host()
        if copy:
            return h.astype(dtype or h.dtype, copy=True)
        if dtype is not None and h.dtype != dtype:
            return h.astype(dtype)
        if h.flags.writeable:  # hand out a read-only view: the Array's buffer must never change
            h = h.view()
            h.flags.writeable = False
        return h

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the buffer (read-only: consumers must not write into it)."""
        kwargs = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
                  if v is not None}
        if stream is not None:
            kwargs["stream"] = stream
        return self._buf.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._buf.__dlpack_device__()

    def item(self, *args):
        return self._host().item(*args)

    def tolist(self):
        return self._host().tolist()

    def tobytes(self, order="C") -> bytes:
        """The raw bytes of the elements, as ndarray.tobytes."""
        return self._host().tobytes(order)

    def _scalar(self, kind: str):
        if self.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python {kind} scalars; "
                            f"this one has shape {self.shape}")
        return self._host().reshape(()).item()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"The truth value of an array with shape {self.shape} is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self._scalar("bool"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not dtypes.is_integer(self.dtype) or self.ndim:  # bool is not an index (as in NumPy)
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index; "
                            f"got {self.dtype}{list(self.shape)}")
        return int(self._host())

    def __repr__(self) -> str:
        body = np.array2string(self._host(), separator=", ", prefix="Array(")
        extra = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype}{extra})"

    def __str__(self) -> str:
        return str(self._host())

    def __format__(self, spec: str) -> str:
        return format(self._host().item(), spec) if self.ndim == 0 else format(str(self), spec)

    def __reduce__(self):
        return (_rebuild, (self._host(), self.weak_type))

    def __copy__(self) -> "Array":
        return self

    def __deepcopy__(self, memo) -> "Array":
        return self


class DeletedBuffer(Shaped):
    """What a deleted Array holds in place of its buffer: the shape and dtype (still readable, as in JAX),
    and any other use, by funcgrad or NumPy, raises JAX's RuntimeError "Array has been deleted ..."."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    def error(self) -> RuntimeError:
        return RuntimeError(f"Array has been deleted with shape={self.dtype.name}[{','.join(map(str, self.shape))}].")

    def _raise(self, *args, **kwargs):
        raise self.error()

    def __getattr__(self, name):  # (only reached for names not defined here: every ndarray attribute)
        raise self.error()

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __setitem__ = __len__ = __iter__ = \
        __bool__ = __float__ = __int__ = __index__ = __complex__ = __dlpack__ = __dlpack_device__ = _raise


def _rebuild(host, weak_type):
    return wrap(np.array(host), weak_type)


def wrap(buf, weak_type: bool = False) -> Array:
    """Wrap a freshly computed backend buffer (no copy). funcgrad never writes into an Array's buffer,
    and hands NumPy only read-only views of it (`__array__`), so Arrays stay immutable."""
    if buf.__class__ is not np.ndarray and (isinstance(buf, np.generic)
                                            or not hasattr(buf, "__cuda_array_interface__")):
        buf = np.asarray(buf)
    return Array(buf, weak_type)


def _list_dtype(x) -> np.dtype | None:
    """The dtype Python scalars in a (nested) list take: the highest kind's default dtype."""
    best = None
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (bool, int, float, complex)) and not isinstance(v, np.generic):
            dt = dtypes.python_scalar_dtype(v)
            if best is None or dtypes.kind_rank(dt) > dtypes.kind_rank(best):
                best = dt
        else:
            return None  # contains arrays or NumPy scalars: let NumPy's rules decide
    return dtypes.defaults.float_ if best is None else best  # an empty list is float, as in NumPy


def to_array(x, dtype=None, copy: bool = True) -> Array:
    """Convert a concrete value (Array, NumPy/CuPy array, Python scalar, nested list) to an Array.
    Objects of a higher layer that hold an Array (the torch face's Tensor) hand it over through a
    `__funcgrad_array__()` method; under a transform that may be a tracer, which is returned as it is."""
    conv = getattr(type(x), "__funcgrad_array__", None)
    if conv is not None:
        held = conv(x)
        if isinstance(held, Array) or dtype is None:
            x = held
            if not isinstance(x, Array):
                return x
    if isinstance(x, Array):
        if dtype is None or dtypes.canonicalize(dtype) == x.dtype:
            return x
        return wrap(x._buf.astype(dtypes.canonicalize(dtype)), False)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        dt = dtypes.canonicalize(dtype) if dtype is not None else dtypes.python_scalar_dtype(x)
        if isinstance(x, int) and not isinstance(x, bool) and dtypes.is_integer(dt):
            info = np.iinfo(dt)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python int {x} is out of bounds for {dt}")
        # as in JAX, Python int/float/complex are weakly typed; a Python bool is not (bool is the
        # bottom of the lattice, so it never needs to be)
        return wrap(np.array(x, dtype=dt), weak_type=dtype is None and not isinstance(x, bool))
    cp = cupy() if not isinstance(x, (np.ndarray, np.generic, list, tuple)) else None
    if cp is not None and isinstance(x, cp.ndarray):
        buf = x.astype(dtypes.canonicalize(dtype or x.dtype), copy=copy)
        return Array(buf, False)
    if isinstance(x, (list, tuple)):
        if dtype is None:
            dtype = _list_dtype(x)
        if any(isinstance(v, ArrayBase) for v in x):
            x = [np.asarray(v) for v in x]
    elif hasattr(x, "__array__") or isinstance(x, np.generic):
        pass
    elif not isinstance(x, np.ndarray):
        raise TypeError(f"cannot convert {type(x).__name__} to a funcgrad Array")
    buf = np.array(x, dtype=None if dtype is None else dtypes.canonicalize(dtype), copy=copy or None)
    if buf.dtype.kind not in "biufc" and not (dtypes.bfloat16 is not None and buf.dtype == dtypes.bfloat16):
        raise TypeError(f"cannot convert data of dtype {buf.dtype} to a funcgrad Array: "
                        "only bool, integer, float and complex data are supported")
    dtypes.canonicalize(buf.dtype)
    return wrap(buf, False)


def canonical_array(x, dtype=None, copy: bool = False):
    """The JAX face's conversion of a value into it (jnp.asarray's and JAX's argument handling): an Array or
    tracer is returned as it is (an Array made 64-bit by the torch face keeps its dtype), as is the Array
    a torch-face Tensor holds; a foreign value (NumPy array or scalar, nested list, CuPy array) without a
    requested `dtype` takes its canonical dtype for the x64 mode, so with x64 off (the default) float64 ->
    float32, int64 -> int32, uint64 -> uint32, complex128 -> complex64. Python scalars become weakly typed
    values of the mode's default dtypes."""
    if isinstance(x, ArrayBase):
        return x if dtype is None else to_array(x, dtype, copy)
    out = to_array(x, dtype, copy)
    if dtype is None and out.__class__ is Array:
        narrow = dtypes._narrow.get(out.dtype)
        if narrow is not None and getattr(type(x), "__funcgrad_array__", None) is None:
            return Array(out._buf.astype(narrow), False)
    return out


def get_aval(x) -> ShapedArray:
    """The abstract value of an Array, tracer, or Python scalar."""
    try:
        return x.aval
    except AttributeError:
        pass
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return ShapedArray((), dtypes.python_scalar_dtype(x), True)
    return to_array(x, copy=False).aval


__all__ = ["Array", "ArrayBase", "DeletedBuffer", "wrap", "to_array", "canonical_array", "get_aval", "CPU"]
