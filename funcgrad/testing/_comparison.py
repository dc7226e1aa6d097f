"""torch.testing.assert_close for funcgrad tensors: tolerances by dtype, and torch's mismatch report."""
from __future__ import annotations

import collections.abc
import math

import numpy as np
from .._torch import _tensor, _creation as C, _dtype as D
from .._torch._creation import as_tensor

# (rtol, atol) per dtype name, as torch.testing's defaults; integer and bool dtypes compare exactly
_TOLS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
         "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _T():
    return _tensor


def _tols(dts, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLS.get(np.dtype(d).name, (0.0, 0.0)) for d in dts]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(message, msg):
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise AssertionError(message)


def _argmax_nan(a: np.ndarray) -> int:
    nan = np.isnan(a)
    if nan.any():
        return int(np.flatnonzero(nan)[0])
    return int(np.argmax(a))


def _num(x):
    """A difference as torch prints it: ints stay ints, floats as Python floats."""
    return int(x) if isinstance(x, (np.integer, int)) and not isinstance(x, bool) else float(x)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_device, msg):
    T = _T()
    if tuple(actual.shape) != tuple(expected.shape):
        _fail(f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.", msg)
    if check_dtype and actual.dtype != expected.dtype:
        _fail(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.", msg)
    if check_device and actual.device != expected.device:
        _fail(f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.", msg)
    a, e = np.asarray(actual._host()), np.asarray(expected._host())
    rtol, atol = _tols((a.dtype, e.dtype), rtol, atol)
    dt = np.promote_types(a.dtype, e.dtype)
    if dt.kind == "b":
        dt = np.dtype(np.int64)
    elif dt.kind == "u":
        dt = np.dtype(np.int64)
    a, e = a.astype(dt), e.astype(dt)
    if a.size == 0:
        return
    with np.errstate(all="ignore"):
        same = a == e
        if dt.kind in "fc":
            abs_diff = np.abs(a - e)
            fin = np.isfinite(a) & np.isfinite(e)
            close = same | (fin & (abs_diff <= atol + rtol * np.abs(e)))
            if equal_nan:
                close |= np.isnan(a) & np.isnan(e)
        else:
            abs_diff = np.abs(a - e)
            close = same | (abs_diff <= atol + rtol * np.abs(e))
    if close.all():
        return
    n_bad, n = int((~close).sum()), close.size
    with np.errstate(all="ignore"):
        absd = abs_diff.astype(np.float64 if dt.kind in "iu" else abs_diff.dtype)
        rel = (abs_diff / np.abs(e)).astype(np.float64) if dt.kind in "iu" else abs_diff / np.abs(e)
    bad = np.flatnonzero(~close.ravel())  # the greatest differences are reported among the mismatches
    ia = int(bad[_argmax_nan(absd.ravel()[bad])])
    ir = int(bad[_argmax_nan(np.asarray(rel, np.float64).ravel()[bad])])
    where_a = tuple(int(i) for i in np.unravel_index(ia, a.shape))
    where_r = tuple(int(i) for i in np.unravel_index(ir, a.shape))
    exact = rtol == 0 and atol == 0
    abs_val = abs_diff.ravel()[ia]
    abs_val = int(abs_val) if dt.kind in "iu" else float(abs_val)
    rel_val = float(np.asarray(rel).ravel()[ir])
    if a.ndim == 0:
        head = "Scalars are not equal!" if exact else "Scalars are not close!"
        lines = [head, "", f"Expected {e.item()} but got {a.item()}.",
                 f"Absolute difference: {abs_val}" + ("" if exact else f" (up to {atol} allowed)"),
                 f"Relative difference: {rel_val}" + ("" if exact else f" (up to {rtol} allowed)")]
    else:
        head = "Tensor-likes are not equal!" if exact else "Tensor-likes are not close!"
        lines = [head, "", f"Mismatched elements: {n_bad} / {n} ({100.0 * n_bad / n:.1f}%)",
                 f"Greatest absolute difference: {abs_val} at index {where_a}" +
                 ("" if exact else f" (up to {atol} allowed)"),
                 f"Greatest relative difference: {rel_val} at index {where_r}" +
                 ("" if exact else f" (up to {rtol} allowed)")]
    _fail("\n".join(lines), msg)


def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg):
    if check_dtype and type(actual) is not type(expected):
        _fail(f"The values for attribute 'type' do not match: {type(actual)} != {type(expected)}.", msg)
    kind = complex if isinstance(actual, complex) or isinstance(expected, complex) else (
        float if isinstance(actual, float) or isinstance(expected, float) else int)
    if rtol is None and atol is None:
        rtol, atol = (1e-7, 1e-7) if kind is not int else (0.0, 0.0)
    rtol, atol = _tols((), rtol, atol) if (rtol is None) != (atol is None) else (rtol, atol)
    if actual == expected:
        return
    if equal_nan and kind is not int and cmath_isnan(actual) and cmath_isnan(expected):
        return
    d = abs(actual - expected)
    if d <= atol + rtol * abs(expected):
        return
    exact = rtol == 0 and atol == 0
    rel = d / abs(expected) if expected != 0 else math.inf
    head = "Scalars are not equal!" if exact else "Scalars are not close!"
    _fail("\n".join([head, "", f"Expected {expected} but got {actual}.",
                     f"Absolute difference: {d}" + ("" if exact else f" (up to {atol} allowed)"),
                     f"Relative difference: {rel}" + ("" if exact else f" (up to {rtol} allowed)")]), msg)


def cmath_isnan(x) -> bool:
    return x != x


def _pairs(actual, expected, path):
    """Yield (path, actual, expected) leaves of matching sequences/mappings."""
    T = _T()
    if isinstance(actual, T.Tensor) or isinstance(expected, T.Tensor):
        if not (isinstance(actual, T.Tensor) and isinstance(expected, T.Tensor)):
            raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                            f"{type(expected)}.")
        yield path, actual, expected
        return
    if isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray):
        yield path, as_tensor(np.asarray(actual)), as_tensor(np.asarray(expected))
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ka, ke = set(actual), set(expected)
        if ka != ke:
            raise AssertionError(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                                 f"{sorted(ke - ka, key=str)}\nAdditional keys in the actual mapping: "
                                 f"{sorted(ka - ke, key=str)}")
        for k in actual:
            yield from _pairs(actual[k], expected[k], path + [k])
        return
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (x, y) in enumerate(zip(actual, expected)):
            yield from _pairs(x, y, path + [i])
        return
    num = (int, float, complex, bool, np.number, np.bool_)
    if isinstance(actual, num) and isinstance(expected, num):
        yield path, actual, expected
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg=None) -> None:
    """Raise AssertionError unless actual and expected (tensors, numbers, or matching sequences and
    mappings of them) are close: |actual - expected| <= atol + rtol * |expected| elementwise, with per-dtype
    default tolerances (the looser of the two dtypes), NaNs equal only with equal_nan."""
    if (rtol is None) != (atol is None):
        _tols((), rtol, atol)
    T = _T()
    for path, a, e in _pairs(actual, expected, []):
        try:
            if isinstance(a, T.Tensor):
                _compare_tensors(a, e, rtol, atol, equal_nan, check_dtype, check_device, msg)
            else:
                _compare_scalars(a, e, rtol, atol, equal_nan, check_dtype, msg)
        except AssertionError as err:
            if path and msg is None:
                raise AssertionError(f"{err}\n\nThe failure occurred for item {''.join(f'[{k!r}]' for k in path)}") \
                    from None
            raise


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format=None):
    """A tensor of random values in [low, high) (defaults by dtype, as torch.testing.make_tensor)."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    dt = D.to_np(dtype)
    if dt.kind == "b":
        t = C.randint(0, 2, shape).to(dtype)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo = max(-9 if low is None else math.ceil(low), int(info.min))
        hi = min(10 if high is None else math.ceil(high), int(info.max))
        t = C.randint(lo, max(hi, lo + 1), shape, dtype=dtype)
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = np.float64 if dt.kind == "c" and dt.itemsize == 16 else (np.float32 if dt.kind == "c" else dt)
        u = C.rand(shape, dtype=D.from_np(np.dtype(real)))
        t = u * (hi - lo) + lo
        if dt.kind == "c":
            t = C.complex(t, C.rand(shape, dtype=D.from_np(np.dtype(real))) * (hi - lo) + lo)
        t = t.to(dtype)
    if exclude_zero:
        t = t.masked_fill(t == 0, 1 if dt.kind in "iub" else float(np.finfo(dt).tiny if dt.kind == "f" else 1))
    if requires_grad:
        t.requires_grad_(True)
    return t


__all__ = ["assert_close", "make_tensor"]
