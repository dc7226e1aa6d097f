"""Tensor creation (tensor, zeros, arange, ...) and the stateful random generator (torch's CPU Mersenne
Twister, bit for bit: funcgrad/_torch/_mt19937.py)."""
from __future__ import annotations

import builtins
import functools
import math
import os

import numpy as np

from ..random._gamma import gamma_reparam as _gamma_reparam
from . import _jnp
from . import _mt19937 as _mt
from .._src.core import trace as _trace
from .._src.core.array import Array
from . import _dtype as D
from ._tensor import Tensor, _make, _Storage
from ._dispatch import _apply
from ._errors import _legacy, _legacy as L
from .._src.prims import elementwise as ew
from .ops._common import _bid, _bshape, _out, _out_cast
from ._argcheck import DtypeName
from . import cuda
from ..autograd.grad_mode import state


def _into_out(fn):
    """A factory's `out=`: the values made in out's dtype (unless dtype= says otherwise) and written into out,
    resized to the requested shape, which the call returns (as torch's factory .out overloads)."""
    @functools.wraps(fn)
    def make(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype
        return _out_cast(fn(*args, **kwargs), out)
    return make


def _finish(v, requires_grad=False, dtype=None):
    if dtype is not None:
        dt = D.to_np(dtype)
        if v.dtype != dt:
            v = v.astype(dt)
    if not v.flags.writeable or v.base is not None:
        v = v.copy()
    t = _make(v)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data):
    """The tensor dtype of Python data, as torch infers it: Python bool/int/float/complex give bool, int64,
    the default float and the default complex; NumPy scalars and tensors keep their dtype; the items'
    dtypes promote with torch.promote_types."""
    best = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, (np.generic, np.ndarray)):
            dt = x.dtype
            if dt.kind in "OSUV" or isinstance(x, np.ndarray) and x.ndim:
                raise _NotNested(x)
        elif isinstance(x, bool):
            dt = np.dtype(np.bool_)
        elif isinstance(x, int):
            dt = np.dtype(np.int64)
        elif isinstance(x, float):
            dt = D.default_float()
        elif isinstance(x, builtins.complex):
            dt = D.default_complex()
        elif isinstance(x, Tensor):
            dt = x._np_dtype()
        elif isinstance(x, (np.generic, np.ndarray)):
            dt = x.dtype
        else:
            raise _NotNested(x)
        best = dt if best is None else D.promote_types(best, dt)
    return D.default_float() if best is None else best


class _NotNested(TypeError):
    """Raised by _infer_dtype on an item that is not a scalar, list or tuple: tensor() then takes the general
    sequence path (_from_sequence), which decides as torch does."""


_MAX_DIMS = 64


def _tp_name(x) -> str:
    """Py_TYPE(x)->tp_name, which torch's messages print: a class's bare name for Python classes and builtins,
    the module-qualified name for C extension types (decimal.Decimal, numpy.str_)."""
    t = type(x)
    if t.__flags__ & (1 << 9) or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def _is_seq(x) -> bool:
    """PySequence_Check as torch's tensor_new.cpp uses it: anything indexable except dicts, tensors (not
    sequences to torch) and NumPy scalars."""
    return not isinstance(x, (dict, Tensor, np.generic)) and hasattr(type(x), "__getitem__")


def _infer_any(x):
    """torch's infer_scalar_type over any sequence (deque, range, array.array, memoryview, objects with
    __len__/__getitem__): items promote; an empty sequence gives the default float."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_tp_name(x)}'")
    if isinstance(x, (np.generic, np.ndarray)):
        return x.dtype
    if isinstance(x, (bool, int, float, builtins.complex, Tensor)):
        return _infer_dtype(x)
    if isinstance(x, Array):
        return np.dtype(x.dtype)
    if _is_seq(x):
        best = None
        for i in builtins.range(len(x)):
            dt = _infer_any(x[i])
            best = dt if best is None else D.promote_types(best, dt)
        return D.default_float() if best is None else best
    raise RuntimeError(f"Could not infer dtype of {_tp_name(x)}")


def _multi_element_leaf(dt):
    """torch's error for a tensor of several elements where tensor() wants one number of dtype dt."""
    if dt.kind in "biu":
        raise TypeError("only integer tensors of a single element can be converted to an index")
    raise ValueError("only one element tensors can be converted to Python scalars")


def _from_sequence(data, dtype):
    """torch.tensor(data) for any (nested) sequence, step by step as torch's internal_new_from_data: the
    shape from the first items (compute_sizes), the dtype over all items, then every item checked against
    the shape, with torch's errors. The result is nested lists whose leaves are scalars, 0-d arrays or
    tensors, or whole ndarrays of the expected shape, for np.array to convert."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_tp_name(data)}'")
    sizes = []
    seq = data
    while _is_seq(seq):
        n = len(seq)
        sizes.append(n)
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{_tp_name(seq)}'")
        if n == 0:
            break
        try:
            seq = seq[0]
        except Exception:
            raise ValueError(f"could not determine the shape of object type '{_tp_name(seq)}'") from None
    dt = D.to_np(dtype) if dtype is not None else _infer_any(data)

    def store(x, dim):
        if dim == len(sizes):
            if isinstance(x, Tensor):
                if x.numel() != 1:
                    _multi_element_leaf(dt)
                return x._host().reshape(())
            if isinstance(x, np.ndarray) and x.ndim:
                raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
            if _is_seq(x):
                if dt.kind in "biu":
                    raise TypeError(f"'{_tp_name(x)}' object cannot be interpreted as an integer")
                raise TypeError(f"must be real number, not {_tp_name(x)}")
            return x
        if isinstance(x, np.ndarray) and x.shape == tuple(sizes[dim:]):
            return x
        try:
            items = x if isinstance(x, (list, tuple)) else list(x)
        except TypeError:
            raise TypeError("not a sequence") from None
        if len(items) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(items)})")
        return [store(y, dim + 1) for y in items]

    nested = store(data, 0)
    if not sizes:
        return np.array(nested, dtype=dt)
    v = np.empty(tuple(sizes), dtype=dt)
    if v.size:
        v[...] = nested
    return v


def _to_host(data):
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, (Tensor, list, tuple)) for x in data):
            return [_to_host(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of data (nested lists, scalars, NumPy arrays, tensors).

    The dtype is inferred as torch infers it (Python floats: the default dtype, float32; ints: int64; bools:
    bool) unless dtype is given; device accepts only the CPU.

    Examples:
        >>> import funcgrad as torch
        >>> torch.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> torch.tensor([0.5, 1.5], requires_grad=True)
        tensor([0.5000, 1.5000], requires_grad=True)
    """
    _dev(device)
    if isinstance(data, Tensor):
        v = np.array(data._host(), dtype=None if dtype is None else D.to_np(dtype))
    elif isinstance(data, np.ndarray):
        v = np.array(data, dtype=None if dtype is None else D.to_np(dtype))
    elif isinstance(data, Array):
        v = np.array(data, dtype=None if dtype is None else D.to_np(dtype))
    else:
        try:
            dt = D.to_np(dtype) if dtype is not None else _infer_dtype(data)
        except _NotNested:
            dt = None
        if dt is None:
            v = _from_sequence(data, dtype)
        else:
            host = _to_host(data)
            if isinstance(data, list) and any(isinstance(x, Tensor) and x.ndim for x in data):
                _multi_element_leaf(dt)
            try:
                v = np.array(host, dtype=dt)
            except (OverflowError, ValueError) as e:
                if isinstance(e, OverflowError) and dt.kind in "iu":  # (torch's messages; a uint8 takes -1)
                    flat = np.array(host, object).ravel()
                    if any(isinstance(x, int) and not -2 ** 63 <= x < 2 ** 63 for x in flat):
                        raise ValueError("Overflow when unpacking long long") from None
                    v = np.array([D.int_scalar(x, dt, ctype=False) for x in flat], dt).reshape(np.shape(host))
                    return _finish(v, requires_grad)
                if "sequence" in str(e) or "inhomogeneous" in str(e):
                    v = _from_sequence(data, dtype)  # raises torch's message naming the ragged dimension
                else:
                    v = np.array(host).astype(dt)
    if v.dtype not in D._NP2T:
        raise TypeError(f"can't convert np.ndarray of type numpy.{v.dtype.type.__name__}. The only supported types "
                        "are: float64, "
                        "float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    return _finish(v, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with a NumPy array (or tensor) when no conversion is needed."""
    _dev(device)
    if isinstance(data, Tensor):
        if dtype is None or D.to_np(dtype) == data._np_dtype():
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or D.to_np(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray`: writes through either are seen by both."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype not in D._NP2T:
        raise TypeError(f"can't convert np.ndarray of type {ndarray.dtype}.")
    t = _make(ndarray)
    t._st = _Storage(ndarray)
    return t


def _dev(device) -> None:
    if device is not None:
        D.check_device(device)


def _size_kw(name, args, size):
    """The shape of zeros/ones/empty/rand/randn: positional sizes, or torch's `size=` keyword."""
    if size is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return _size((size,))
    return _size(args)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple, D.Size)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _fill(size, value, dtype, requires_grad, default=None):
    dt = D.to_np(dtype) if dtype is not None else (default if default is not None else D.default_float())
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return _finish(np.full(size, value, dt), requires_grad)


@_into_out
def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A tensor of zeros of the given shape (sizes as arguments or one sequence), of the default dtype.

    Examples:
        >>> import funcgrad as torch
        >>> torch.zeros(2, 3)
        tensor([[0., 0., 0.],
                [0., 0., 0.]])
        >>> torch.zeros((2,), dtype=torch.int64)
        tensor([0, 0])
    """
    _dev(device)
    return _fill(_size_kw("zeros", args, size), 0, dtype, requires_grad)


@_into_out
def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    _dev(device)
    return _fill(_size_kw("ones", args, size), 1, dtype, requires_grad)


@_into_out
def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    _dev(device)
    return _fill(_size_kw("empty", args, size), 0, dtype, requires_grad)


@_into_out
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _fill_dtype(fill_value) if dtype is None else D.to_np(dtype)
    fill_value = D.checked_scalar(fill_value, dt)
    return _fill(_size((size,)) if not isinstance(size, int) else (size,), fill_value, dtype, requires_grad, dt)


def _fill_dtype(value) -> np.dtype:
    """torch.full's dtype for a fill value read as a Scalar: bool for a Python bool, int64 for any integer, the
    default float for a float (and for a NumPy bool, which torch reads as a float), the default complex for a
    complex."""
    if value.__class__ is builtins.bool:
        return np.dtype(np.bool_)
    if isinstance(value, (builtins.int, np.integer)):
        return np.dtype(np.int64)
    if isinstance(value, (builtins.complex, np.complexfloating)):
        return D.default_complex()
    if isinstance(value, (builtins.float, np.floating, np.bool_)):
        return D.default_float()
    return _infer_dtype(value)


def _like(input, dtype):
    return input._np_dtype() if dtype is None else D.to_np(dtype)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.ones(input.shape, _like(input, dtype)), requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    _dev(device)
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    _dev(device)
    dt = _like(input, dtype)
    value = D.checked_scalar(fill_value.item() if isinstance(fill_value, Tensor) else fill_value, dt)
    return _finish(np.full(input.shape, value, dt), requires_grad)


@_into_out
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    m = n if m is None else m
    for name, k in (("n", n), ("m", m)):
        if k < 0:
            raise RuntimeError(f"eye(): {name} must be greater or equal to 0, got {k}")
    return _finish(np.eye(n, m, dtype=dt), requires_grad)


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


@_into_out
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is None:  # (the dtype is checked first: torch dispatches on it before its range checks)
        isf = any(isinstance(v, float) or (isinstance(v, np.floating)) for v in (start, end, step))
        dt = D.default_float() if isf else np.dtype(np.int64)
    else:
        dt = D.to_np(dtype)
        if dt.kind in "bc":
            raise NotImplementedError(f"\"arange_cpu\" not implemented for '{DtypeName(dt)}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange(): unsupported range: {start} -> {end} (step {step}); start, end and step "
                           f"must be finite")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.ceil((end - start) / step))
    if dt.kind in "iu":
        # torch's integer kernel: start and step truncated to int64 (so a fractional step may become 0), the
        # values start + i * step wrapping into dt; int64's length is also counted in integers
        xs, xe, xt = (builtins.int(v) for v in (start, end, step))
        if dt == np.int64:
            if xt == 0:
                raise ValueError("step must be nonzero")
            if not (xt > 0 and xe >= xs or xt < 0 and xe <= xs):
                raise RuntimeError("upper bound and lower bound inconsistent with step sign")
            num = xe - xs + xt - (1 if xt > 0 else -1)
            n = abs(num) // abs(xt) * (1 if (num >= 0) == (xt > 0) else -1)  # (C's division, toward zero)
        v = (xs + np.arange(n, dtype=np.int64) * xt).astype(dt)
    else:
        v = (start + np.arange(n, dtype=np.float64) * step).astype(dt)
    return _finish(v, requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):  # noqa: A001
    _dev(device)
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    return _finish((start + np.arange(n, dtype=np.float64) * step).astype(dt), requires_grad)


@_into_out
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    _dev(device)
    start, end = _num(start), _num(end)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    if dt.kind == "b":
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if steps <= 1:  # (torch fills start)
        return _finish(np.array([D.checked_scalar(start, dt)] if steps else [], dt), requires_grad)
    # torch's kernel: start + i*step for the first half, end - (steps-1-i)*step for the second; an integer dtype
    # takes start and end converted to it (truncated, range-checked) and a double step, each value a fused
    # multiply-add (its compiled loop's: one rounding) truncated
    wdt = np.dtype(np.float64) if dt.kind in "iu" else dt
    i = np.arange(steps)
    a, b = (np.asarray(D.checked_scalar(v, dt) if dt.kind in "iu" else v, wdt) for v in (start, end))
    step = (b - a) / np.asarray(max(steps - 1, 1), wdt)
    half = steps // 2
    if dt.kind in "iu":
        first = i < half
        v = _fma(np.where(first, step, -step), np.where(first, i, steps - 1 - i).astype(wdt), np.where(first, a, b))
        return _finish(np.trunc(v).astype(np.int64).astype(dt), requires_grad)
    v = np.where(i < half, a + step * i.astype(wdt), b - step * (steps - 1 - i).astype(wdt))
    return _finish(v.astype(dt), requires_grad)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c in double with (nearly always) one rounding: the product's error by Dekker's split, the sum's by
    Knuth's two-sum, both added to the rounded sum (NumPy has no fused multiply-add)."""
    split = 134217729.0  # 2 ** 27 + 1
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        ta, tb = a * split, b * split
        ah, bh = ta - (ta - a), tb - (tb - b)
        al, bl = a - ah, b - bh
        perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        serr = (p - (s - bb)) + (c - bb)
        r = s + (serr + perr)
    return np.where(np.isfinite(r), r, p + c)


@_into_out
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    start, end = _num(start), _num(end)
    if steps <= 1:  # (torch fills pow(base, start), computed in double)
        with np.errstate(invalid="ignore", over="ignore"):
            value = builtins.float(np.power(builtins.float(base), builtins.float(start)))
        return _finish(np.array([D.checked_scalar(value, dt)] if steps else [], dt), requires_grad)
    # torch's kernel: base ** (start + i*step) for the first half, base ** (end - (steps-1-i)*step) for the
    # second, in the dtype (half types in float32; an integer dtype truncates start and end, then works in double)
    wdt = np.dtype(np.float64) if dt.kind in "iu" else np.dtype(np.float32) if dt.itemsize == 2 else dt
    a, b = (np.asarray(D.checked_scalar(v, dt) if dt.kind in "iu" else np.asarray(v, dt), wdt) for v in (start, end))
    step = (b - a) / np.asarray(max(steps - 1, 1), wdt)
    i = np.arange(steps)
    half = steps // 2
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.power(np.asarray(base, dt if dt.kind not in "iu" else wdt).astype(wdt),
                     np.where(i < half, a + step * i.astype(wdt), b - step * (steps - 1 - i).astype(wdt)))
        return _finish(v.astype(dt), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    _dev(device)
    return tensor(float(s) if dtype is None else s, dtype=dtype, requires_grad=requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    _dev(device)
    r, c = np.tril_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype(D.to_np(dtype) if dtype else np.int64))


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    _dev(device)
    r, c = np.triu_indices(row, offset, col)
    return _finish(np.stack([r, c]).astype(D.to_np(dtype) if dtype else np.int64))


def complex(real, imag, *, out=None):  # noqa: A001
    """real + i imag, by the complex card (so an infinite or NaN part stays in its own part, as torch)."""
    dr, di = real._np_dtype(), imag._np_dtype()
    if dr.kind != "f" or di.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_legacy(dr)} and "
                           f"{_legacy(di)}")
    if dr != di:
        raise RuntimeError(f"Expected object of scalar type {_legacy(dr)} but got scalar type {_legacy(di)} for "
                           "second argument")
    if dr == np.float16:  # (torch gives complex32, which funcgrad does not have: complex64 instead)
        real, imag = real.float(), imag.float()
    shape = _bshape(tuple(real.shape), tuple(imag.shape))

    def f(a, b):
        if a.shape != shape:
            a = _bid(a, shape)
        if b.shape != shape:
            b = _bid(b, shape)
        return ew.complex(a, b)
    return _out(_apply("Complex", f, (real, imag)), out)


# --- the stateful generator --------------------------------------------------------------------------------

# the randomness modes of the torch.func.vmap calls running now, innermost last (funcgrad.func pushes them)
_vmap_randomness: list = []


class Generator:
    """A stateful random number generator (torch.Generator): torch's CPU Mersenne Twister, bit for bit, so a
    seed gives the numbers torch gives and get_state()/set_state() exchange torch's 5056-byte state (see
    funcgrad/_torch/_mt19937.py)."""

    def __init__(self, device="cpu"):
        self.device = D.device(device)
        if self.device.type == "cuda" and not D._accelerator_type():
            raise RuntimeError("Cannot get CUDA generator: Torch not compiled with CUDA enabled")
        self._eng = _mt.Engine()

    def __repr__(self) -> str:
        return f"<funcgrad.Generator object at {id(self):#x}>"

    def manual_seed(self, seed) -> "Generator":
        """Reset to the stream of `seed` (any int in [-2**63, 2**64)); returns self."""
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise ValueError("Overflow when unpacking long long")
        self._eng.manual_seed(seed)
        return self

    def seed(self) -> int:
        """Reseed from the OS's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little") & 0x7FFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._eng.seed

    def get_state(self):
        """torch's CPUGeneratorImplState as a 5056-element uint8 tensor."""
        return _finish(self._eng.get_state())

    def set_state(self, new_state) -> "Generator":
        """Restore a state from get_state() here or in torch."""
        if not isinstance(new_state, Tensor) or new_state._np_dtype() != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        self._eng.set_state(np.ascontiguousarray(new_state._host()).tobytes())
        return self

    def engine(self) -> "_mt.Engine":
        """The mt19937 state draws come from (refused inside vmap(randomness='error'), and while a program is
        staged: a draw there would become a constant of the program, repeated on every call)."""
        if _vmap_randomness:  # torch.func.vmap batches the draws itself ('same'/'different')
            if _vmap_randomness[-1] == "error":
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                                   "use the 'same' or 'different' randomness flags on vmap or perform the "
                                   "randomness operation out of vmap")
        elif _trace._state.stack and any(not t.carries_values for t in _trace._state.stack):
            raise TracedDrawError("a function being traced into a program (jit, make_jaxpr, eval_shape, "
                                  "onnx.export) draws random numbers from torch's generator (dropout in training "
                                  "mode, torch.rand/randn, ...): the program would repeat the same draws on every "
                                  "call. Draw outside it and pass the values in, use funcgrad.random keys, "
                                  "export/compile in eval mode, or call it eagerly (torch.compile falls back to "
                                  "eager by itself)")
        return self._eng

    def next_key(self):
        """A funcgrad.random key made of the next random64() (for samplers that draw through keys)."""
        r = int(self.engine().words64(1)[0])
        return Array(np.array([r >> 32, r & 0xFFFFFFFF], np.uint32))


class TracedDrawError(RuntimeError):
    """A draw from torch's generator while a program is being staged (see Generator.engine)."""


default_generator = Generator()


def manual_seed(seed):
    """Seed every default generator (the CPU one; CUDA's is a no-op here); returns the CPU one."""
    g = default_generator.manual_seed(seed)
    cuda.manual_seed_all(seed)
    return g


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


def _gen(generator):
    return default_generator if generator is None else generator


def _eng(generator) -> "_mt.Engine":
    return (default_generator if generator is None else generator).engine()


def _float_dt(dtype, kernel="check_uniform_bounds"):
    dt = D.to_np(dtype) if dtype is not None else D.default_float()
    if dt.kind not in "fc" and dt.name != "bfloat16":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(dt)}'")
    return dt


def _legacy(dt) -> str:
    return L(dt)


def _real_view(dt, n):
    """A complex dtype is drawn as its real view (2n reals), as ATen's view_as_real."""
    if dt.kind == "c":
        return np.dtype(np.float64 if dt == np.complex128 else np.float32), 2 * n
    return dt, n


def draw_uniform(eng, shape, dt, a=0.0, b=1.0, contiguous=True) -> np.ndarray:
    """uniform_(a, b) values for a tensor of this shape and dtype (complex: its real view)."""
    n = math.prod(shape)
    rdt, m = _real_view(dt, n)
    v = _mt.uniform(eng, m, rdt, a, b)
    return (v.view(dt) if dt.kind == "c" else v).reshape(shape)


def draw_normal(eng, shape, dt, mean=0.0, std=1.0, contiguous=True) -> np.ndarray:
    """normal_(mean, std) values for a tensor of this shape and dtype (complex: its real view, std / sqrt 2)."""
    n = math.prod(shape)
    rdt, m = _real_view(dt, n)
    if dt.kind == "c":
        std = std / math.sqrt(2)
    v = _mt.normal(eng, m, rdt, mean, std, contiguous)
    return (v.view(dt) if dt.kind == "c" else v).reshape(shape)


@_into_out
def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Uniform numbers in [0, 1), torch's for the same seed."""
    _dev(device)
    shape = _size_kw("rand", args, size)
    dt = _float_dt(dtype)
    return _finish(draw_uniform(_eng(generator), shape, dt), requires_grad)


@_into_out
def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    """Standard normal numbers of the given shape: torch's numbers for the same seed (CPU generator).

    Examples:
        >>> import funcgrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.randn(3)
        tensor([ 1.5410, -0.2934, -2.1788])
    """
    _dev(device)
    shape = _size_kw("randn", args, size)
    dt = _float_dt(dtype, "normal_kernel_cpu")
    return _finish(draw_normal(_eng(generator), shape, dt), requires_grad)


@_into_out
def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """Integers uniform in [low, high), torch's for the same seed."""
    _dev(device)
    if size is None:
        if high is None or not isinstance(high, (tuple, list, D.Size)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    dt = D.to_np(dtype) if dtype is not None else np.dtype(np.int64)
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    _check_int_range(low, high, dt)
    shape = _size((size,)) if isinstance(size, int) else tuple(size)
    v = _mt.random_from_to(_eng(generator), math.prod(shape), dt, low, high).reshape(shape)
    return _finish(v, requires_grad)


def _check_int_range(low, high, dt) -> None:
    """torch's bounds check of random_/randint's [low, high) against an integer or bool dtype."""
    if dt.kind in "iub":
        info = np.iinfo(dt) if dt.kind != "b" else None
        lo, hi = (0, 1) if info is None else (int(info.min), int(info.max))
        name = {"b": "bool", "u": "unsigned char"}.get(dt.kind, "") if dt.itemsize == 1 or dt.kind == "b" else \
            {2: "short", 4: "int", 8: "long int"}[dt.itemsize]
        if dt.kind == "i" and dt.itemsize == 1:
            name = "signed char"
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")


@_into_out
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1, torch's for the same seed."""
    _dev(device)
    dt = D.to_np(dtype) if dtype is not None else np.dtype(np.int64)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    v = _mt.randperm(_eng(generator), n)
    return _finish(_mt.to_dtype(v, dt) if dt.kind == "f" or dt.name == "bfloat16" else v.astype(dt),
                   requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    _dev(device)
    return rand(input.shape, generator=generator, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    _dev(device)
    return randn(input.shape, generator=generator, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    _dev(device)
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """normal(mean, std): tensor mean and/or std (broadcast; the result does not require grad), or
    normal(mean, std, size) with float mean and std. As torch: standard normals (scaled by a float std when the
    mean is a tensor), then times a tensor std, plus the mean."""
    _dev(device)
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if tm or ts:
        if size is not None:
            raise TypeError("normal() received an invalid combination of arguments: size= is only accepted with "
                            "float mean and std")
        ref = mean if tm else std
        dt = ref._np_dtype()
        if tm and ts:
            dt = D.promote_types(mean._np_dtype(), std._np_dtype())
        if dt.kind not in "fc" and dt.name != "bfloat16":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_legacy(dt)}'")
        m = mean._host() if tm else np.asarray(mean, dt)
        sd = std._host() if ts else np.asarray(std, dt)
        if ts:
            if not np.all(sd >= 0):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        elif not std >= 0:  # (NaN too)
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        shape = np.broadcast_shapes(np.shape(m), np.shape(sd))
        if ts:
            out = draw_normal(_eng(generator), shape, dt) * sd.astype(dt) + m.astype(dt)
        else:
            out = draw_normal(_eng(generator), shape, dt, 0.0, float(std)) + m.astype(dt)
        out = np.asarray(out, dt)
        ins = [t for t in (mean, std) if isinstance(t, Tensor)]
        if state.enabled and any(t.requires_grad for t in ins):
            # torch's normal is recorded but not reparameterised: zero gradients for mean and std
            const = Array(out)
            return _apply("Normal", lambda *xs: _zero_grad_const(const, xs), ins)
        return _finish(out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float): size is "
                        "required when mean and std are floats")
    if not std >= 0:  # (NaN too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    shape = _size((size,)) if isinstance(size, int) else tuple(size)
    dt = _float_dt(dtype, "normal_kernel_cpu")
    return _finish(draw_normal(_eng(generator), shape, dt, float(mean), float(std)), requires_grad)


def _zero_grad_const(const, xs):
    for x in xs:
        const = const + x * 0
    return const


def _c_order(a) -> np.ndarray:
    """a as a C-contiguous array of its own shape (np.ascontiguousarray makes a 0-d array 1-d: a sampler's
    draw from a 0-d tensor would come back with shape (1,), where torch's is 0-d)."""
    return np.asarray(a, order="C")


def _check_probs(p: np.ndarray, what: str = "p_in") -> None:
    if not np.all((p >= 0) & (p <= 1)):
        raise RuntimeError(f"Expected {what} >= 0 && {what} <= 1 to be true, but got false.")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 with probabilities `input` (a float tensor), or with the float `p` in input's shape and dtype."""
    dt = input._np_dtype()
    shape = tuple(input.shape)
    if p is None:
        if dt.kind != "f" and dt.name != "bfloat16":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_legacy(dt)}'")
        probs = input._host()
        _check_probs(probs)
        v = _mt.bernoulli_tensor(_eng(generator), _c_order(probs))
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        v = _mt.bernoulli_scalar(_eng(generator), math.prod(shape), float(p)).reshape(shape)
    return _finish(v.astype(dt))


def _serial_float(input, kernel: str, half: bool = False) -> np.dtype:
    """The dtype of a serial sampler's input: float32/float64 (and half/bfloat16 where `half`), else torch's
    NotImplementedError naming the kernel."""
    dt = input._np_dtype()
    if not (dt in (np.dtype(np.float32), np.dtype(np.float64)) or half and (dt == np.float16 or dt.name == "bfloat16")):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy(dt)}'")
    return dt


def poisson(input, generator=None):
    """Poisson counts with rates `input` (a float tensor), in input's dtype: torch's numbers for the same seed
    (ATen's sample_poisson element by element; no gradient)."""
    _serial_float(input, "poisson_cpu", half=True)
    lam = _c_order(input._host())
    if np.any(lam < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _finish(_mt.poisson(_eng(generator), lam))


def _standard_gamma(input, generator=None):
    """Gamma(input, 1) samples (torch._standard_gamma): torch's numbers for the same seed, differentiable in
    input by the implicit reparameterisation gradient."""
    _serial_float(input, "gamma_cpu")
    x = _mt.standard_gamma(_eng(generator), _c_order(input._host()))
    if state.enabled and input.requires_grad:
        const = Array(x)

        def f(a):
            return _gamma_reparam(a, const)
        f.records_on_a_tape = True  # (traced, so that the custom rule is recorded: eagerly it is the identity)
        return _apply("StandardGamma", f, [input])
    return _finish(x)


def dirichlet_rsample(input, generator=None):
    """Dirichlet(input) samples over the last dim, torch._sample_dirichlet's numbers, differentiable in input
    through the gamma samples they are ratios of (the reparameterised sample of distributions.Dirichlet)."""
    _serial_float(input, "dirichlet")
    x, g = _mt.dirichlet(_eng(generator), np.ascontiguousarray(input._host()), with_gammas=True)
    if state.enabled and input.requires_grad:
        value, gam = Array(x), Array(g)

        def ratio(r):
            return ew.div(r, _jnp.broadcast_to(_jnp.sum(r, -1, keepdims=True), r.shape))
        # value + (ratio - its own value): torch's numbers, the ratio's derivative (its value computed by the
        # same ops on the constant gammas, so the difference is exactly zero)
        r0 = ratio(gam)

        def f(a):
            return ew.add(value, ew.sub(ratio(_gamma_reparam(a, gam)), r0))
        f.records_on_a_tape = True  # (see _standard_gamma)
        return _apply("DirichletRsample", f, [input])
    return _finish(x)


def _sample_dirichlet(input, generator=None):
    """Dirichlet(input) samples over the last dim (torch._sample_dirichlet): torch's numbers for the same seed;
    no gradient, as torch's (distributions.Dirichlet.rsample differentiates)."""
    _serial_float(input, "dirichlet")
    return _finish(_mt.dirichlet(_eng(generator), np.ascontiguousarray(input._host())))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn with probabilities proportional to input's rows (1-d or 2-d), torch's for the same
    seed: with replacement by a binary search of the cumulative sums, without (or for one sample) as the top
    of p / q with q exponential."""
    dt = input._np_dtype()
    if dt.kind != "f" and dt.name != "bfloat16":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_legacy(dt)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    p = input._host()
    two = p.ndim == 2
    r = _multinomial_rows(p if two else p[None], num_samples, replacement, generator)
    return _finish(np.ascontiguousarray(r if two else r[0]))


def _multinomial_rows(p, num_samples: int, replacement: bool, generator=None) -> np.ndarray:
    """multinomial's draws for the rows of the 2-d NumPy array p (float): its value checks, then torch's
    numbers, as an int64 array (rows, num_samples). (Categorical's sample calls it on its buffer.)"""
    p2 = np.ascontiguousarray(p)
    if not replacement and num_samples > p2.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    s = p2.sum(-1, dtype=np.float64)
    if not (p2.size and p2.min() >= 0 and s.min() > 0 and s.max() < np.inf):  # (one pass each when valid)
        if np.any(p2 < 0) or not np.all(np.isfinite(p2)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(s <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return _mt.multinomial(_eng(generator), p2, num_samples, replacement)


def binomial(count, prob, generator=None):
    """Binomial(count, prob) counts (float, no gradient): torch's numbers for the same seed (ATen's
    sample_binomial element by element: BTRS or inversion)."""
    dt = _serial_float(count, "binomial_cpu")
    if prob._np_dtype() != dt:
        raise RuntimeError(f"Found dtype {_legacy(prob._np_dtype())} but expected {_legacy(dt)}")
    n, p = np.broadcast_arrays(count._host(), prob._host())
    return _finish(_mt.binomial(_eng(generator), _c_order(n), _c_order(p)))
