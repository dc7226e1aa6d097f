"""torch-style dtype objects, devices, Size and PyTorch's type-promotion rules.

A `dtype` here is a singleton per NumPy dtype (`funcgrad.float32`, ...). It compares equal to itself
and to the NumPy dtype it stands for, and carries that NumPy dtype as `.dtype`, so NumPy and
funcgrad.numpy accept it wherever they take a dtype (`numpy.zeros(3, funcgrad.float32)`).
"""
from __future__ import annotations

import re

import numpy as np

from .._src.core import dtypes as _cdt
from ..numpy._scalar_types import ScalarType as _ScalarType, register_dtype_like as _register_dtype_like


class dtype:
    """A tensor element type, as torch.dtype."""
    __slots__ = ("name", "dtype", "is_floating_point", "is_complex", "is_signed", "itemsize", "_aliases")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.dtype = np.dtype(np_dtype)
        k = self.dtype.kind
        self.is_floating_point = k == "f" or (_cdt.bfloat16 is not None and self.dtype == _cdt.bfloat16)
        self.is_complex = k == "c"
        self.is_signed = k in "ifc" or self.is_floating_point
        self.itemsize = self.dtype.itemsize

    def __repr__(self) -> str:
        return "torch." + self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        """Equal to itself (and its aliases: torch.float == torch.float32), the NumPy dtype it stands for
        and funcgrad.numpy's scalar type of that dtype; False for anything else, never raising."""
        if other is self:
            return True
        if isinstance(other, dtype):
            return False
        if isinstance(other, np.dtype):
            return other == self.dtype
        if isinstance(other, _ScalarType):
            return other.dtype == self.dtype
        return False

    def __ne__(self, other) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> "dtype":
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> "dtype":
        return {float32: complex64, float64: complex128, float16: complex64}.get(self, self)


_register_dtype_like(dtype)

bool_ = dtype("bool", np.bool_)
uint8 = dtype("uint8", np.uint8)
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)
bfloat16 = dtype("bfloat16", _cdt.bfloat16) if _cdt.bfloat16 is not None else None

ALL = [d for d in (bool_, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, float32,
                   float64, complex64, complex128, bfloat16) if d is not None]
_NP2T = {d.dtype: d for d in ALL}
_NAMES = {d.name: d for d in ALL}
# torch's float8 types, where ml_dtypes (the `safetensors` extra) gives NumPy them: tensors of them load and save
# (weights_only, as torch), print and convert to the other dtypes (.float(), .to(...)); converting *to* float8 is
# refused (the engine's dtypes do not include them). Not in ALL, which the per-dtype op tables enumerate.
FLOAT8_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
FLOAT8 = {}
try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes comes with the bfloat16 and safetensors extras
    _ml_dtypes = None
for _n in FLOAT8_NAMES if _ml_dtypes is not None else ():
    if hasattr(_ml_dtypes, _n):
        _d = FLOAT8[_n] = dtype(_n, getattr(_ml_dtypes, _n))
        _d.is_floating_point, _d.is_signed = True, _n != "float8_e8m0fnu"  # (e8m0 is unsigned, as torch's)
        _NP2T[_d.dtype] = _NAMES[_n] = _d


class _QDtype(dtype):
    """A quantized element type (torch.quint8, qint8, qint32, quint4x2): tensors of it hold integers of `.dtype`
    read through a scale and zero point (funcgrad._torch._quantized). Equal only to itself; not in _NP2T, so
    a NumPy array of its storage type stays an ordinary integer tensor."""
    __slots__ = ()

    def __init__(self, name: str, np_dtype):  # (no is_signed: torch raises for it)
        self.name, self.dtype = name, np.dtype(np_dtype)
        self.is_floating_point = self.is_complex = False
        self.itemsize = self.dtype.itemsize

    @property
    def is_signed(self):
        raise RuntimeError("isSignedType not supported for quantized types")

    def __eq__(self, other) -> bool:
        return other is self

    def __hash__(self) -> int:
        return hash(("quantized", self.name))


quint8, qint8, qint32 = _QDtype("quint8", np.uint8), _QDtype("qint8", np.int8), _QDtype("qint32", np.int32)
quint4x2, quint2x4 = _QDtype("quint4x2", np.uint8), _QDtype("quint2x4", np.uint8)  # (two / four values a byte)
QUANTIZED = {d.name: d for d in (quint8, qint8, qint32, quint4x2, quint2x4)}
_NAMES.update(QUANTIZED)
# torch's aliases
_NAMES.update({"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
               "short": int16, "cfloat": complex64, "cdouble": complex128, "bool": bool_})


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def from_np(dt) -> dtype:
    """The torch dtype of a NumPy dtype."""
    try:
        return _NP2T[dt]
    except KeyError:
        raise TypeError(f"NumPy dtype {dt} has no funcgrad tensor dtype") from None


def to_np(d) -> np.dtype:
    """A NumPy dtype from a torch dtype, a NumPy dtype, a Python type or a name."""
    if isinstance(d, dtype):
        return d.dtype
    if d is float:
        return _DEFAULT[0].dtype
    if d is int:
        return np.dtype(np.int64)
    if d is bool:
        return np.dtype(np.bool_)
    if d is complex:
        return complex64.dtype if _DEFAULT[0] is not float64 else complex128.dtype
    if isinstance(d, str):
        name = d[6:] if d.startswith("torch.") else d
        if name in _NAMES:
            return _NAMES[name].dtype
    try:
        dt = np.dtype(d)
    except TypeError:
        raise TypeError(f"argument 'dtype' must be a torch.dtype (torch.float32, torch.int64, ...), not "
                        f"{type(d).__name__} {d!r}") from None
    if dt not in _NP2T:
        raise TypeError(f"dtype {dt} is not supported")
    return dt


_DEFAULT = [float32]  # the default floating dtype (torch.get_default_dtype)


def get_default_dtype() -> dtype:
    return _DEFAULT[0]


def set_default_dtype(d) -> None:
    d = from_np(to_np(d))
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _DEFAULT[0] = d


def default_float() -> np.dtype:
    return _DEFAULT[0].dtype


def default_complex() -> np.dtype:
    return complex128.dtype if _DEFAULT[0] is float64 else complex64.dtype


# --- PyTorch type promotion --------------------------------------------------------------------------

def _cat(dt: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    k = dt.kind
    if k == "b":
        return 0
    if k in "iu":
        return 1
    if k == "c":
        return 3
    return 2


_BF16 = _cdt.bfloat16


def kind(dt: np.dtype) -> str:
    """dt.kind, with bfloat16 (ml_dtypes reports kind 'V') given the float kind 'f' it has in torch."""
    return "f" if dt is _BF16 else dt.kind


def int_scalar(value, dt: np.dtype, ctype: bool = True):
    """A Python int or float `value` as a scalar of the integer dtype `dt`, with torch's range check (c10's
    checked_convert, as fill_, x[i] = v and torch.tensor use it): an int beyond [-2**63, 2**64) is a ValueError;
    else an out-of-range value is a RuntimeError naming the C type (int8_t, with `ctype`) or the dtype (int8).
    An unsigned dtype also takes an int's negatives down to -max, which wrap (torch.tensor(-1, dtype=uint8)
    is 255)."""
    info = np.iinfo(dt)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = int(value)
        if not -2 ** 63 <= value < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        ok = info.min <= value <= info.max if info.min else -info.max <= value <= info.max
        if ok:
            return np.array(value % (info.max + 1) if value < 0 and not info.min else value).astype(dt)
    else:
        f = float(value)
        if info.min <= f <= info.max:  # (NaN too is an overflow, as torch.tensor, fill_ and x[i] = v say)
            return np.array(f).astype(dt)
    raise RuntimeError(f"value cannot be converted to type {_ctype(dt) if ctype else dt.name} without overflow")


def _ctype(dt: np.dtype) -> str:
    """The C++ type c10's overflow message names for dtype dt."""
    return {"int32": "int", "float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
            "bool": "bool"}.get(dt.name, dt.name + "_t")


def checked_scalar(value, dt: np.dtype):
    """A Python (or NumPy) number as a scalar of dtype dt with c10's checked_convert, as torch.full, fill_ and
    full_like convert their value: a complex with a nonzero imaginary part into a real dtype, a float32 or
    complex64 target's finite value beyond its range, and an integer target's out-of-range value (int_scalar)
    are RuntimeErrors; float16/bfloat16 round to inf; a bool target takes any number's truth."""
    if dt == np.bool_:
        return np.bool_(bool(value))
    if isinstance(value, (complex, np.complexfloating)) and dt.kind != "c":
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type "
                               f"{'double' if dt in (np.float16, _BF16) else _ctype(dt)} without overflow")
        value = value.real
    if dt.kind in "iu":
        return int_scalar(value.item() if isinstance(value, np.generic) else value, dt)
    if dt in (np.float32, np.complex64):
        lim = float(np.finfo(np.float32).max)
        parts = (value.real, value.imag) if isinstance(value, (complex, np.complexfloating)) else (float(value),)
        if any(p == p and abs(p) != float("inf") and abs(p) > lim for p in parts):
            raise RuntimeError(f"value cannot be converted to type {_ctype(dt)} without overflow")
    with np.errstate(over="ignore"):
        return np.array(value).astype(dt)[()]


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on NumPy dtypes."""
    if a == b:
        return a
    ca, cb = _cat(a), _cat(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if max(ca, cb) <= 1:  # bool with integer
            return hi
        if _cat(hi) == 3 and _cat(lo) == 2:  # complex with float: complex of the wider precision
            if lo == np.float64 or hi == np.complex128:
                return np.dtype(np.complex128)
            return np.dtype(np.complex64)
        return hi  # a float or complex type wins over bool and integers, keeping its width
    if ca == 2 and _BF16 is not None and _BF16 in (a, b):
        other = b if a == _BF16 else a
        return np.dtype(np.float32) if other == np.float16 else other
    if ca == 1 and {a.kind, b.kind} == {"i", "u"} and max(a.itemsize, b.itemsize) == 8:
        if np.dtype(np.uint64) in (a, b):
            raise TypeError(f"Promotion for uint64 and {a if b.kind == 'u' else b} types is not supported")
    return np.promote_types(a, b)


def _combine(higher, lower):
    """c10's combine_categories (None stands for Undefined)."""
    if higher is not None and _cat(higher) == 3:
        return higher
    if lower is not None and _cat(lower) == 3:
        if higher is not None and _cat(higher) == 2:
            return np.dtype(np.complex128) if higher == np.float64 else np.dtype(np.complex64)
        return lower
    if higher is not None and _cat(higher) == 2:
        return higher
    if higher is not None and (higher == np.bool_ or (lower is not None and _cat(lower) == 2)):
        return promote_types(higher, lower) if lower is not None else higher
    if higher is None and lower is not None and _cat(lower) == 2:
        return lower
    if higher is not None:
        return higher
    return lower


def scalar_dtype(v) -> np.dtype:
    """The dtype a Python scalar takes in tensor arithmetic (a 'wrapped number')."""
    if isinstance(v, bool):
        return np.dtype(np.bool_)
    if isinstance(v, int):
        return np.dtype(np.int64)
    if isinstance(v, float):
        return _DEFAULT[0].dtype
    if isinstance(v, complex):
        return default_complex()
    if isinstance(v, np.generic):
        return v.dtype
    raise TypeError(f"{type(v).__name__} is not a number")


def result_type(dim_dts, zero_dts, scalar_dts) -> np.dtype:
    """torch.result_type: dimensioned tensors, then zero-dim tensors, then Python scalars."""
    def red(ds):
        r = None
        for d in ds:
            r = d if r is None else promote_types(r, d)
        return r
    return _combine(red(dim_dts), _combine(red(zero_dts), red(scalar_dts)))


def can_cast(frm: np.dtype, to: np.dtype) -> bool:
    """torch.can_cast: no category demotion (float -> int, complex -> float, non-bool -> bool)."""
    return _cat(frm) <= _cat(to)


# --- Size and device ---------------------------------------------------------------------------------

class Size(tuple):
    """A tensor's shape, as torch.Size: a tuple of ints."""
    __slots__ = ()

    def __new__(cls, seq=()):
        return super().__new__(cls, [_size_item(d, i) for i, d in enumerate(seq)])

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

    def __eq__(self, other) -> bool:
        """As a tuple's, with tuples (torch.Size([2, 3]) == (2, 3)); False for anything else, never raising."""
        return tuple.__eq__(self, other) if isinstance(other, tuple) else False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__


def _size_item(d, i: int) -> int:
    if isinstance(d, (int, np.integer, np.bool_)):
        return int(d)
    if not isinstance(d, (float, np.floating, complex)) and hasattr(d, "__index__"):
        return d.__index__()
    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(d).__name__}')")


_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                 "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")
_NO_ACCEL = "Cannot access accelerator device when none is available."


def _accelerator_type():
    """'cuda' when CuPy sees a GPU, else None (funcgrad's only accelerator backend)."""
    from .._src.core.backend import cupy
    return "cuda" if cupy() is not None else None


class device:
    """Where a tensor lives, as torch.device: device('cpu'), device('cuda:0'), device('cuda', 0), device(0)
    (the current accelerator). Compares equal to devices only (device('cpu') != 'cpu', as in torch)."""
    __slots__ = ("type", "index")

    def __init__(self, type=None, index=None):  # noqa: A002 - torch's parameter names
        if isinstance(type, device) and index is None:
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            acc = _accelerator_type()
            if acc is None:
                raise RuntimeError(_NO_ACCEL)
            type, index = acc, type
        if not isinstance(type, str):
            if index is not None:
                raise TypeError(f"device(): argument 'type' (position 1) must be str, not "
                                f"{_type_name(type)}")
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({_type_name(type)}), but expected one of: (torch.device device), "
                            f"(str type, int index = -1)")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_type_name(index)}")
        m = _DEVICE_RE.fullmatch(type)
        if m is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        if m.group(1) not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
                               f"string: {m.group(1)}")
        if m.group(2) is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed "
                                   f"explicitly: {type}")
            index = int(m.group(2))
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = m.group(1), index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return False
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type,) if self.index is None else (self.type, self.index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _type_name(x) -> str:
    t = x.__class__
    return "torch.device" if t is device else t.__name__


CPU = device("cpu")


def check_device(dev) -> device:
    """`dev` as a device a tensor may be placed on. Tensors live on the CPU ('meta' is accepted and ignored);
    other devices raise the error a CPU-only PyTorch build raises."""
    d = dev if isinstance(dev, device) else device(dev)
    t = d.type
    if t in ("cpu", "meta"):
        return d
    if t == "cuda":
        if _accelerator_type() is None:
            raise AssertionError("Torch not compiled with CUDA enabled")
        raise NotImplementedError(f"funcgrad tensors live on the CPU (device {d} was asked for); the GPU is "
                                  f"reached through the functional core (funcgrad.numpy on CuPy arrays)")
    if t == "xpu":
        raise AssertionError("Torch not compiled with XPU enabled")
    raise RuntimeError(f"PyTorch is not linked with support for {t} devices")
