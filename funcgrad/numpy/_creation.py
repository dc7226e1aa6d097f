"""Array creation with NumPy's signatures and JAX's dtypes: 32-bit defaults with x64 off (the default),
64-bit with it on; foreign values (NumPy arrays, lists) take their canonical dtype (see funcgrad.config)."""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import Array, ArrayBase, canonical_array, to_array, wrap
from .._src.core.backend import CPU
from .._src.core.errors import ConcretizationError, IncompatibleShapesError
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from ..lax._elementwise import convert_element_type as _xla_convert
from ..lax._fused import fma_any
from .._src.prims.shape import (broadcast_in_dim, broadcasted_iota, concatenate, full as _full, pad, reshape)
from ._device import put, resolve
from ._manipulation import broadcast_arrays, moveaxis, ravel, stack
from ._products import diagonal
from ._promote import (_holds_array, asarray_any, broadcast_all, broadcast_to,
                       is_python_scalar, normalize_index, result_dtype, scalar_array)
from ._ufuncs import log10, multiply, power, sign, true_divide


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)) or getattr(shape, "ndim", None) == 0:
        shape = (shape,)  # (a 0-d array or tracer: one dimension; a traced one fails in operator.index)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape):
        raise IncompatibleShapesError(f"negative dimensions are not allowed: {shape}")  # JAX: TypeError
    return shape


def _dtype(dtype, default=None):
    return dtypes.canonicalize(dtype) if dtype is not None else (default or dtypes.defaults.float_)


def array(object, dtype=None, copy=True, ndmin: int = 0):
    """Create an Array from a list, NumPy array, scalar or Array, as jnp.array.

    As in JAX, Python scalars (alone or in lists) take the default dtypes of the x64 mode, and a Python
    scalar alone stays weakly typed; NumPy arrays and scalars take their canonical dtype (with x64 off
    float64 -> float32, int64 -> int32, ...); an explicitly requested dtype is honoured.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> jnp.array([1, 2, 3])
        Array([1, 2, 3], dtype=int32)
        >>> jnp.array(2.5)
        Array(2.5, dtype=float32, weak_type=True)
    """
    if isinstance(object, ArrayBase):
        x = object if dtype is None else _xla_convert(object, dtypes.canonicalize(dtype))
        if copy and x is object and x.__class__ is Array:  # its own buffer, as in JAX: the copy outlives
            x = Array(x._buf.copy(), x.weak_type)          # a delete() or a jit donation of the original
    elif isinstance(object, (list, tuple)) and _holds_array(object):
        x = stack([array(v, copy=False) for v in object]) if len(object) else to_array(object)
        if dtype is not None:
            x = _xla_convert(x, dtypes.canonicalize(dtype))
    elif object is None:  # JAX's error (a pytree node rebuilt from None placeholders meets it)
        raise ValueError("None is not a valid value for jnp.array")
    else:
        x = canonical_array(object, dtype=dtype, copy=True)
        if dtype is not None and x.weak_type:
            x = ew.convert_element_type(x, x.dtype, False)  # a requested dtype is a strong one
    if x.ndim < ndmin:
        x = reshape(x, (1,) * (ndmin - x.ndim) + tuple(x.shape))
    return x


def asarray(a, dtype=None, copy=None, *, device=None):
    """Convert to an Array without copying an Array that already matches, as numpy.asarray.

    copy=False never copies, as in NumPy and the Array API: it raises ValueError where a copy is
    needed (lists, scalars, a dtype change), and shares a NumPy array's buffer (read-only through the
    Array; writes the caller makes to the NumPy array show through)."""
    if isinstance(a, ArrayBase) and (dtype is None or dtypes.canonicalize(dtype) == a.dtype):
        return a if device is None else put(a, device, "asarray")
    if copy is False:
        return _no_copy(a, dtype, device)
    x = array(a, dtype=dtype, copy=bool(copy))
    return x if device is None else put(x, device, "asarray")


def _no_copy(a, dtype, device):
    if dtype is None and isinstance(a, np.ndarray) and not dtypes.is_canonical(a.dtype):
        x = canonical_array(a)  # narrowed for the x64 mode (a copy, as JAX makes)
        return x if device is None else put(x, device, "asarray")
    same = isinstance(a, np.ndarray) and (dtype is None or np.dtype(dtypes.canonicalize(dtype)) == a.dtype)
    if same and resolve(device, "asarray") in (None, CPU):
        dtypes.canonicalize(a.dtype)  # a supported dtype
        view = a.view()
        view.flags.writeable = False
        return wrap(view)
    what = f"dtype {a.dtype} to {np.dtype(dtype)}" if dtype is not None and hasattr(a, "dtype") \
        else f"a {type(a).__name__}"
    raise ValueError(f"asarray: copy=False, but converting {what} needs a copy "
                     "(pass copy=None to copy only when needed)")


def zeros(shape, dtype=None, *, device=None):
    """An array of zeros (default dtype: the default float), as numpy.zeros."""
    x = _full(_shape(shape), 0, _dtype(dtype))
    return x if device is None else put(x, device, "zeros")


def ones(shape, dtype=None, *, device=None):
    """An array of ones (default dtype: the default float), as numpy.ones."""
    x = _full(_shape(shape), 1, _dtype(dtype))
    return x if device is None else put(x, device, "ones")


def empty(shape, dtype=None, *, device=None):
    """As numpy.empty; funcgrad arrays are immutable, so the contents are zeros."""
    return zeros(shape, dtype, device=device)


def _fill_value(v, dt):
    """A scalar fill value cast to dtype dt as lax.full casts it: a Python int wraps around into an
    integer dtype too narrow for it (full((2,), -1, uint8) is 255, as in JAX; NumPy 2 raises)."""
    with np.errstate(invalid="ignore", over="ignore"):  # (NaN or out of range into an int: no NumPy warning)
        return np.asarray(v).astype(dt).item()


def full(shape, fill_value, dtype=None, *, device=None):
    """An array of `shape` filled with `fill_value` (a scalar or an array broadcast to `shape`)."""
    x = _fill(_shape(shape), fill_value, dtype)
    return x if device is None else put(x, device, "full")


def _fill(shape, fill_value, dtype):
    if isinstance(fill_value, ArrayBase) or np.ndim(fill_value) > 0:
        fv = asarray_any(fill_value)
        if dtype is not None:
            fv = ew.convert_element_type(fv, dtypes.canonicalize(dtype))
        return broadcast_to(ew.convert_element_type(fv, fv.dtype, False), shape)
    if dtype is not None:
        dt = dtypes.canonicalize(dtype)
    elif is_python_scalar(fill_value):  # weakly typed, as in JAX
        dt = dtypes.python_scalar_dtype(fill_value)
        out = _full(shape, _fill_value(fill_value, dt), dt)
        return out if isinstance(fill_value, bool) else ew.convert_element_type(out, dt, True)
    else:
        dt = dtypes.canonicalize_dtype(np.asarray(fill_value).dtype)
    return _full(shape, _fill_value(fill_value, dt), dt)


def _keep_weak(out, x, dtype):
    """out weakly typed when x is and no dtype was asked for (JAX's *_like keep a's weak type)."""
    if dtype is None and getattr(x, "weak_type", False):
        return ew.convert_element_type(out, out.dtype, True)
    return out


def _like(name, value):
    def f(a, dtype=None, shape=None, *, device=None):
        x = asarray_any(a)
        dt = dtypes.canonicalize(dtype) if dtype is not None else x.dtype
        out = _keep_weak(_full(_shape(x.shape if shape is None else shape), value, dt), x, dtype)
        return out if device is None else put(out, device, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"As numpy.{name}: an array with a's shape and dtype (or the given ones)."
    return f


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    """As numpy.full_like: a's shape and dtype (or the given ones), filled with fill_value."""
    x = asarray_any(a)
    out = full(x.shape if shape is None else shape, fill_value, x.dtype if dtype is None else dtype,
               device=device)
    return _keep_weak(out, x, dtype)


def _concrete_scalar(v, what):
    if isinstance(v, ArrayBase):
        if isinstance(v, Tracer) and v.val is None:
            raise ConcretizationError(f"{what}: bounds must be concrete (not traced); "
                                      "pass them as static arguments")
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in [start, stop), as numpy.arange (concrete bounds only).

    Without dtype: the default int dtype for integer bounds, the default float dtype if any is a
    float (as JAX: int32 / float32 with x64 off, int64 / float64 with it on)."""
    x = _arange(start, stop, step, dtype)
    return x if device is None else put(x, device, "arange")


def _arange(start, stop, step, dtype):
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    start, stop, step = (_concrete_scalar(v, "arange") for v in (start, stop, step))
    if dtype is None:
        if any(isinstance(v, complex) for v in (start, stop, step)):
            dt = dtypes.defaults.complex_
        elif any(isinstance(v, float) for v in (start, stop, step)):
            dt = dtypes.defaults.float_
        else:
            dt = dtypes.defaults.int_
    else:
        dt = dtypes.canonicalize(dtype)
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    if start == 0 and step == 1 and isinstance(stop, int) and dt != dtypes.bool_:
        n = max(0, stop)
        return ew.convert_element_type(broadcasted_iota(dt if dtypes.is_integer(dt) else dtypes.int64, (n,), 0), dt)
    # NumPy's own algorithm (first value and delta in the output dtype), for identical values.
    return to_array(np.arange(start, stop, step, dtype=dt))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis: int = 0,
             *, device=None):
    """num evenly spaced samples over [start, stop], as jax.numpy.linspace computes them (start/stop may be
    arrays).

    JAX's arithmetic, as XLA compiles it: in the inexact dtype of `dtype` (or of start and stop), with
    t_i = i * fl(1/div) (div = num - 1, or num without the endpoint), each sample is
    start * (1 - t_i) + stop * t_i -- stop * t_i taken as i * (stop * fl(1/div)) where stop is a single
    real value -- with the fused multiply-adds XLA's CPU code makes of that sum (float32/float64), and the
    endpoint, if any, is stop itself. An integer dtype takes the floor."""
    num = operator.index(num)
    axis = operator.index(axis)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e, dt, calc = _space_dtypes(start, stop, dtype)
    s, e = broadcast_all("linspace", [s, e])
    bounds = tuple(s.shape)
    axis = normalize_index(axis, len(bounds) + 1, "linspace")
    shape = bounds[:axis] + (num,) + bounds[axis:]
    bdims = tuple(d for d in range(len(shape)) if d != axis)
    div = (num - 1) if endpoint else num
    if num > 1:
        real = (np.dtype(np.float32) if calc == np.complex64 else np.dtype(np.float64)) if dtypes.is_complex(calc) \
            else calc
        # XLA divides by the constant div as a product with fl(1/div); in bfloat16 that reciprocal and the
        # products with it stay float32 (XLA's bfloat16 normalisation), each result rounded to bfloat16
        wide = np.dtype(np.float32) if calc == dtypes.bfloat16 else real
        c = scalar_array(np.array(1, wide) / np.array(div, wide), wide, False)
        cc = ew.convert_element_type(c, calc) if dtypes.is_complex(calc) else c
        delta = ew.convert_element_type(multiply(ew.convert_element_type(ew.sub(e, s), cc.dtype), cc), calc)
        rows = bounds[:axis] + (div,) + bounds[axis:]
        i = broadcasted_iota(real, (div,), 0)
        t = ew.convert_element_type(ew.mul(ew.convert_element_type(i, wide), broadcast_to(c, (div,))), calc)
        one_minus = ew.sub(broadcast_to(scalar_array(1, calc, False), (div,)), t)
        if math.prod(bounds) == 1 and c.dtype == calc:
            ec = multiply(reshape(e, ()), c)     # XLA's reassociation: stop * (i * c) -> i * (stop * c)
            y = broadcast_in_dim(_linspace_row(reshape(s, ()), ec, c, i, one_minus, div), rows, (axis,))
        else:   # XLA's CPU code fuses the sum (fma_any: float32/float64): fma(stop, t, start * (1 - t))
            # where the samples run along the innermost dimension, else fma(start, 1 - t, stop * t)
            sb, eb = broadcast_in_dim(s, rows, bdims), broadcast_in_dim(e, rows, bdims)
            om, tb = broadcast_in_dim(one_minus, rows, (axis,)), broadcast_in_dim(t, rows, (axis,))
            if math.prod(rows[axis + 1:]) == 1:
                y = fma_any(eb, tb, ew.mul(sb, om))
            else:
                y = fma_any(sb, om, ew.mul(eb, tb))
        if endpoint:
            last = bounds[:axis] + (1,) + bounds[axis:]
            y = concatenate([y, broadcast_in_dim(e, last, bdims)], axis)
    elif num == 1:
        delta = scalar_array(np.nan, calc, False) if endpoint else ew.sub(e, s)
        y = broadcast_in_dim(s, shape, bdims)
    else:
        delta = scalar_array(np.nan, calc, False)
        y = _full(shape, 0, calc)
    if dtypes.is_integer(dt) and not dtypes.is_integer(y.dtype):
        y = ew.floor(y)
    y = _xla_convert(y, dt)
    if device is not None:
        y = put(y, device, "linspace")
    if retstep:
        return y, delta
    return y


def _linspace_row(s, ec, c, i, one_minus, div: int):
    """The samples s * (1 - i*c) + i * ec of a linspace between single real values, with the fused
    multiply-adds XLA's CPU code makes of them (float32/float64; other dtypes take the plain formula):
    fma(i, ec, s * (1 - i*c)); for a row of at most 33 samples (unrolled, its constants folded) the
    sample i = 1 is fma(s, 1 - c, ec); for a row of 1408 bytes or more (a vectorised loop) each full
    block of 128 bytes takes 1 - i*c as fma(-i, c, 1) too, the remainder as above."""
    S, EC = broadcast_to(s, (div,)), broadcast_to(ec, (div,))
    dt = np.dtype(s.dtype)
    if dt not in (np.float32, np.float64):
        return ew.add(ew.mul(S, one_minus), ew.mul(i, EC))
    y = fma_any(i, EC, ew.mul(S, one_minus))
    idx = np.arange(div)
    if div <= 33:
        if div > 1:
            y = ew.select(to_array(idx == 1), fma_any(S, one_minus, EC), y)
    elif div * dt.itemsize >= 1408:
        head = div - div % (128 // dt.itemsize)
        fused_one_minus = fma_any(ew.neg(i), broadcast_to(c, (div,)), broadcast_to(scalar_array(1, dt, False), (div,)))
        y = ew.select(to_array(idx < head), fma_any(i, EC, ew.mul(S, fused_one_minus)), y)
    return y


def _diagonal_offset(k, N: int, M: int) -> int:
    """Diagonal offset k of an N x M matrix clamped to [-N, M], which keeps the iota arithmetic in int64
    for any Python int k (NumPy accepts them): past either corner no element is on the k-th diagonal
    and every element (k >= M) or none (k <= -N) is at or below it, as at the clamped offset."""
    return min(max(operator.index(k), -N), M)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, *, device=None):
    """A 2-D array with ones on the k-th diagonal, as numpy.eye (default dtype: the default float)."""
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = _diagonal_offset(k, N, M)
    r = broadcasted_iota(dtypes.int64, _shape((N, M)), 0)
    c = broadcasted_iota(dtypes.int64, (N, M), 1)
    x = ew.convert_element_type(ew.eq(ew.add(r, _full((N, M), k, dtypes.int64)), c), _dtype(dtype))
    return x if device is None else put(x, device, "eye")


def identity(n: int, dtype=None):
    """The n x n identity matrix, as numpy.identity."""
    return eye(n, dtype=dtype)



def _space_dtypes(start, stop, dtype):
    """(start, stop as arrays of the computation dtype, result dtype, computation dtype), as JAX's
    linspace/logspace/geomspace take them: the result dtype is `dtype` or the inexact dtype start and stop
    promote to; the computation runs in that dtype's inexact kin (an integer dtype's float)."""
    start, stop = (asarray_any(v) for v in (start, stop))
    dt = dtypes.to_inexact(*result_dtype(start, stop)) if dtype is None else dtypes.canonicalize(dtype)
    calc = dtypes.to_inexact(dt)
    return ew.convert_element_type(start, calc), ew.convert_element_type(stop, calc), dt, calc


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    """base ** linspace(start, stop, num), as jax.numpy.logspace computes it: the linspace in the
    computation dtype (see linspace), raised by power (base broadcasts against it as any operand
    would), then converted to `dtype`."""
    num, axis = operator.index(num), operator.index(axis)
    s, e, dt, _ = _space_dtypes(start, stop, dtype)
    lin = linspace(s, e, num, endpoint=endpoint, axis=axis)
    return _xla_convert(power(base, lin), dt)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers spaced evenly on a log scale from start to stop (a geometric progression), as
    jax.numpy.geomspace computes them: sign(start) * logspace(log10(start / sign(start)),
    log10(stop / sign(start)), num) in the computation dtype (see linspace), converted to `dtype`.
    As in JAX, the endpoints are not pinned to start and stop, and a zero gives NaN or infinity."""
    num, axis = operator.index(num), operator.index(axis)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e, dt, calc = _space_dtypes(start, stop, dtype)
    sign_ = sign(s)
    r = multiply(sign_, logspace(log10(true_divide(s, sign_)), log10(true_divide(e, sign_)), num,
                                 endpoint=endpoint, base=10.0, dtype=calc, axis=0))
    if axis != 0 and r.ndim:
        r = moveaxis(r, 0, normalize_index(axis, r.ndim, "geomspace"))
    return _xla_convert(r, dt)


def tri(N, M=None, k: int = 0, dtype=None, *, like=None):
    """A 2-D array with ones at and below the k-th diagonal, as jax.numpy.tri (default dtype:
    float32, as in JAX, whatever the x64 setting)."""
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = _diagonal_offset(k, N, M)
    shape = _shape((N, M))
    r = broadcasted_iota(dtypes.int64, shape, 0)
    c = broadcasted_iota(dtypes.int64, shape, 1)
    mask = ew.ge(ew.add(r, _full(shape, k, dtypes.int64)), c)
    return ew.convert_element_type(mask, dtypes.float32 if dtype is None else _dtype(dtype))


def _tri_mask_select(m, k, lower: bool, op: str):
    x = asarray_any(m)
    if x.ndim == 0:
        raise ValueError(f"{op}: input must have at least one dimension")
    shape2 = tuple(x.shape[-2:]) if x.ndim >= 2 else (x.shape[0], x.shape[0])
    mask = tri(*shape2, k=k if lower else operator.index(k) - 1, dtype=dtypes.bool_)
    out_shape = tuple(x.shape[:-2]) + shape2 if x.ndim >= 2 else shape2
    xb = broadcast_to(x, out_shape)
    mb = broadcast_to(mask, out_shape)
    z = _full(out_shape, 0, x.dtype, x.weak_type)
    return ew.select(mb, xb, z) if lower else ew.select(mb, z, xb)


def tril(m, k: int = 0):
    """Zero the elements above the k-th diagonal of the last two axes, as numpy.tril (1-D input is
    broadcast to a square matrix first)."""
    return _tri_mask_select(m, k, True, "tril")


def triu(m, k: int = 0):
    """Zero the elements below the k-th diagonal of the last two axes, as numpy.triu."""
    return _tri_mask_select(m, k, False, "triu")


def diag(v, k: int = 0):
    """The k-th diagonal of a 2-D array, or a 2-D array with the 1-D v on its k-th diagonal, as
    numpy.diag. Building is one pad (v spread out with interior padding); extracting is a slice."""
    x = asarray_any(v)
    k = operator.index(k)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = x.shape[0]
    size = n + abs(k)
    if n == 0:
        return _full((size, size), 0, x.dtype)
    start = k if k >= 0 else -k * size
    used = n + (n - 1) * size
    flat = pad(x, _full((), 0, x.dtype), [(start, size * size - start - used, size)])
    return reshape(flat, (size, size))


def diagflat(v, k: int = 0):
    """A 2-D array with the flattened input on its k-th diagonal, as numpy.diagflat."""
    return diag(ravel(asarray_any(v)), k)


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from coordinate vectors, as numpy.meshgrid ('xy' swaps the first two axes;
    sparse=True leaves them unbroadcast), returned as a list, as the Array API standard (2024.12) and
    jax.numpy return them (NumPy 2 returns a tuple)."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    s0 = (1,) * nd
    out = []
    for i, x in enumerate(xi):
        x = asarray_any(x)
        out.append(reshape(x, s0[:i] + (x.size,) + s0[i + 1:]))
    if indexing == "xy" and nd > 1:
        out[0] = reshape(out[0], (1, out[0].size) + s0[2:])
        out[1] = reshape(out[1], (out[1].size, 1) + s0[2:])
    if not sparse:
        out = list(broadcast_arrays(*out))
    return list(out)


def indices(dimensions, dtype=int, sparse: bool = False):
    """An array (or with sparse=True a tuple of arrays) of the grid indices, as numpy.indices."""
    dims = tuple(operator.index(d) for d in dimensions)
    dt = dtypes.canonicalize(dtype)
    n = len(dims)
    if sparse:
        res = []
        for i, d in enumerate(dims):
            shape = (1,) * i + (d,) + (1,) * (n - i - 1)
            res.append(ew.convert_element_type(broadcasted_iota(dtypes.int64, shape, i), dt))
        return tuple(res)
    shape = (n,) + _shape(dims)
    if n == 0:
        return _full(shape, 0, dt)
    parts = [reshape(broadcasted_iota(dtypes.int64, dims, i), (1,) + dims) for i in range(n)]
    return ew.convert_element_type(concatenate(parts, 0), dt)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """function(*indices(shape, dtype), **kwargs), as numpy.fromfunction (dtype=float is the default
    float dtype)."""
    return function(*indices(shape, dtype=dtype), **kwargs)


def copy(a, order="K", subok=False):
    """An array copy of a (Arrays are immutable, so an Array comes back strongly typed, unchanged)."""
    return array(a, copy=True)


def frombuffer(buffer, dtype=np.float64, count=-1, offset=0, *, like=None):
    """A 1-D array from the bytes of `buffer`, as numpy.frombuffer (dtype is read as NumPy reads it:
    float means float64 here, since it describes the bytes)."""
    return to_array(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count, offset=offset))


def fromiter(iter, dtype, count=-1, *, like=None):  # noqa: A002 - NumPy name
    """A 1-D array from an iterable, as numpy.fromiter."""
    return to_array(np.fromiter(iter, dtype=dtypes.canonicalize(dtype), count=count))


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
    """An array from the numbers in a text string separated by `sep` (numpy.fromstring's text mode; the
    binary mode, sep='', is deprecated in NumPy and not offered, as in JAX)."""
    if sep == "":
        raise ValueError("fromstring: sep='' (binary mode) is not supported; use frombuffer instead")
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(file, dtype=float, count: int = -1, sep: str = "", offset: int = 0, *, like=None):
    """Not offered, as in JAX: reading a file is not a pure function (so unsafe under jit and the other
    transforms). Use funcgrad.numpy.asarray(numpy.fromfile(...))."""
    raise NotImplementedError("funcgrad.numpy.fromfile is not implemented because reading a file is not pure "
                              "(unsafe under jit and other transforms); use "
                              "funcgrad.numpy.asarray(numpy.fromfile(...)) instead")
