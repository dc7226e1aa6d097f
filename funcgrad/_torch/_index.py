"""Tensor indexing: reads (basic indices give views) and writes (x[idx] = v, x[mask] = 0, x[:, 1] += 1)."""
from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import state as _gs
from .._src.core.array import Array
from .._src.prims import elementwise as ew
from . import _dtype as D
from . import _dispatch as _DP
from ._tensor import Tensor, _wrap
from ._dispatch import _apply1, _req
from ._views import _inplace, _view
from ._creation import tensor
from .ops._common import _cast
from . import _jnp as jnp
from . import _functional
from ._errors import _legacy, _multi_view_msg
from ._errors import _OVERLAP_MSG
from ._errors import _INF_INPLACE_MSG

_BASIC = (int, slice, type(None), type(Ellipsis))


def _convert_item(i):
    if isinstance(i, Tensor):
        v = i._host()
        if v.dtype.kind == "b":
            return v
        if v.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if v.dtype == np.uint8:
            import warnings
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                          "instead.", UserWarning, stacklevel=4)
            return v.astype(bool)
        return v
    if isinstance(i, (bool, np.bool_)):
        return bool(i)
    if isinstance(i, (np.integer,)):
        return int(i)
    if isinstance(i, slice):
        if i.step is not None:
            step = int(i.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
        if any(isinstance(v, Tensor) for v in (i.start, i.stop, i.step)):
            return slice(*(int(v) if isinstance(v, Tensor) else v for v in (i.start, i.stop, i.step)))
        return i
    if isinstance(i, (list, tuple)):
        arr = np.array([x.item() if isinstance(x, Tensor) else x for x in i]) if any(
            isinstance(x, Tensor) for x in i) else np.array(i)
        if arr.dtype.kind not in "iub" and arr.size:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if arr.size == 0:
            arr = arr.astype(np.int64)
        return arr
    if isinstance(i, np.ndarray):
        return i
    if isinstance(i, range):  # torch reads a range as the sequence of its integers
        return np.arange(i.start, i.stop, i.step, dtype=np.int64)
    if isinstance(i, _BASIC):
        return i
    if hasattr(i, "__index__"):
        return i.__index__()
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                     f"indices (got {type(i).__name__})")


def _convert_index(idx):
    if isinstance(idx, tuple):
        return tuple(_convert_item(i) for i in idx)
    if isinstance(idx, list):
        # torch (like old NumPy) treats a list containing slices/None/Ellipsis as a tuple
        if any(isinstance(i, (slice, type(None), type(Ellipsis))) or isinstance(i, (list, tuple, Tensor))
               for i in idx) and any(isinstance(i, (slice, type(None), type(Ellipsis))) for i in idx):
            return tuple(_convert_item(i) for i in idx)
    return _convert_item(idx)


def _is_basic(key) -> bool:
    if isinstance(key, tuple):
        return all(isinstance(i, _BASIC) and not isinstance(i, bool) for i in key)
    return isinstance(key, _BASIC) and not isinstance(key, bool)


def _mask_width(i) -> int:
    """How many dims an index item consumes: a bool mask its rank (at least 1), anything else 1."""
    return max(i.ndim, 1) if isinstance(i, np.ndarray) and i.dtype == np.bool_ else 1


def _walk(shape, key):
    """(dims consumed, the (item, first dim it indexes) of each item that consumes dims) for an index key
    on a tensor of the given shape; None consumes none and Ellipsis spans the dims the others leave."""
    items = key if isinstance(key, tuple) else (key,)
    consumed = sum(_mask_width(i) for i in items if i is not None and i is not Ellipsis)

    def steps():
        dim = 0
        for i in items:
            if i is Ellipsis:
                dim += len(shape) - consumed
            elif i is not None:
                yield i, dim
                dim += _mask_width(i)
    return consumed, steps()


def _check_bounds(shape, key):
    """torch's IndexError message for an integer index out of range."""
    consumed, steps = _walk(shape, key)
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    for i, dim in steps:
        if isinstance(i, int) and not isinstance(i, bool):
            n = shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")


def _np_key(key):
    """A basic index that makes NumPy return a view even when every axis gets an integer."""
    if isinstance(key, tuple):
        return key if any(i is Ellipsis for i in key) else key + (Ellipsis,)
    return key if key is Ellipsis else (key, Ellipsis)


def _basic_name(key) -> str:
    """torch's grad_fn name for a basic index: that of the last non-trivial step (select, slice, unsqueeze)."""
    items = key if isinstance(key, tuple) else (key,)
    name = "Alias"
    for i in items:
        if isinstance(i, (int, np.integer)):
            name = "Select"
        elif i is None:
            name = "Unsqueeze"
        elif isinstance(i, slice):
            if i != slice(None) or not isinstance(key, tuple):
                name = "Slice"
    return name


def _split_int_selects(key):
    """torch applies integer indices as selects before the advanced (array / mask) ones, so x[0, :, [0, 1]]
    has shape (3, 2) for x of shape (4, 3, 5) where NumPy (broadcasting the 0 with the list) gives (2, 3).
    For a key mixing both: (the basic key of the selects, the key of the rest on its result), else None."""
    if not isinstance(key, tuple):
        return None
    if not any(i.__class__ is int for i in key) or not any(isinstance(i, np.ndarray) for i in key):
        return None
    first, rest = [], []
    for i in key:
        if i.__class__ is int:
            first.append(i)
        elif i is None:
            first.append(None)
            rest.append(slice(None))
        elif i is Ellipsis:
            first.append(Ellipsis)
            rest.append(Ellipsis)
        else:
            first.extend([slice(None)] * _mask_width(i))
            rest.append(i)
    return tuple(first), tuple(rest)


def getitem(self, idx):
    key = _convert_index(idx)
    split = _split_int_selects(key)
    if split is not None:
        return getitem(getitem(self, split[0]), split[1])
    shape = self._v.shape if self._v is not None else self._a.shape
    if _is_basic(key):
        _check_bounds(shape, key)
        nkey = _np_key(key)
        return _view(_basic_name(key), self, lambda v: v[nkey], lambda a: a[key])
    _check_adv(shape, key)
    if self._v is not None and not (_gs.enabled and _req(self)) and not _DP._fw_on:
        return _wrap(Array(np.asarray(self._v[key])))
    return _apply1("Index", lambda a: a[key], self)


def _check_adv(shape, key):
    for i, dim in _walk(shape, key)[1]:
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            for k in range(i.ndim):
                if dim + k >= len(shape) or i.shape[k] != shape[dim + k]:
                    raise IndexError(f"The shape of the mask {list(i.shape)} at index {k} does not match the shape "
                                     f"of the indexed tensor {list(shape)} at index {dim + k}")
        elif isinstance(i, np.ndarray):
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            n = shape[dim]
            if i.size and (i.max() >= n or i.min() < -n):
                bad = int(i.max()) if i.max() >= n else int(i.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
        elif isinstance(i, int) and not isinstance(i, bool):
            if dim < len(shape) and not -shape[dim] <= i < shape[dim]:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")


def _casts_value(key, value) -> bool:
    """Whether torch's x[key] = value casts a Tensor value to x's dtype rather than requiring it: a lone Python
    True (a copy into x.unsqueeze(0)), or an index_put_ that torch runs as a masked_fill_ (a one-element value,
    and one boolean mask of rank >= 1 as the only index array: a 0-d or Python bool in a tuple is an integer
    index)."""
    if key is True:
        return True
    if value.numel() != 1:
        return False
    arrays = [i for i in (key if isinstance(key, tuple) else (key,)) if isinstance(i, (np.ndarray, bool))]
    return len(arrays) == 1 and isinstance(arrays[0], np.ndarray) and arrays[0].dtype == np.bool_ and \
        arrays[0].ndim >= 1


def _basic_first(key):
    """(basic part, advanced part) of an index mixing both, as torch applies it: the ints, slices and Nones
    select a view first, the index arrays (kept at their dims, others as full slices) then index it. None when
    there is no basic part to take (or a Python bool, which torch reads as an index array, is in the key)."""
    basic, rest = [], []
    for i in key:
        if isinstance(i, bool):
            return None
        if isinstance(i, np.ndarray):
            basic.extend([slice(None)] * _mask_width(i))
            rest.append(i)
        elif i is Ellipsis:
            basic.append(i)
            rest.append(i)
        else:
            basic.append(i)
            if not isinstance(i, int):
                rest.append(slice(None))
    if all(isinstance(i, slice) and i == slice(None) or i is Ellipsis for i in basic):
        return None
    return tuple(basic), tuple(rest)


def _zero_d_ints_as_ints(idx):
    """torch's x[idx] = v applies a 0-d integer Tensor index (not uint8, not bool) as a select, like the Python
    int it holds: x[torch.tensor(1)] = float_value then casts into x as x[1] = ... does, with no index_put_."""
    def conv(i):
        if i.__class__ is Tensor and i._v is not None and i._v.ndim == 0 and i._v.dtype.kind in "iu" and \
                i._v.dtype != np.uint8:
            return int(i._v)
        return i
    return tuple(conv(i) for i in idx) if isinstance(idx, tuple) else conv(idx)


def setitem(self, idx, value):
    if idx is False:  # torch writes nothing, and checks nothing
        return
    idx = _zero_d_ints_as_ints(idx)
    if idx.__class__ is Tensor and idx._v is None and idx._np_dtype() == np.bool_ and (
            not isinstance(value, Tensor) or value.ndim == 0):
        # x[traced mask] = scalar: a masked fill (the mask's values are unknown while tracing)
        nd = self.ndim - idx.ndim
        self.masked_fill_(idx.reshape(tuple(idx.shape) + (1,) * nd) if nd > 0 else idx, value)
        return
    key = orig = _convert_index(idx)
    shape = self._v.shape if self._v is not None else self._a.shape
    split = _split_int_selects(key)
    if split is not None:  # the same elements, as full index arrays laid out as torch's indexing result
        _check_bounds(shape, split[0])
        _check_adv(shape, key)
        key = np.unravel_index(np.arange(int(np.prod(shape))).reshape(shape)[split[0]][split[1]], shape)
    dt = self._np_dtype()
    if dt.kind in "iu" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = D.int_scalar(value, dt)  # (torch's range check of a number written into an integer tensor)
    if isinstance(value, Tensor):
        vt = value
    else:
        if isinstance(value, (list, tuple, np.ndarray)):
            vt = tensor(value, dtype=D.from_np(dt))
        else:
            vt = None
    if self._v is None:  # a traced tensor: a functional update of its root (see _functional)
        val = vt._arr() if vt is not None else Array(np.array(value, dt))
        tgt = np.empty(shape, np.bool_)[key].shape
        if self._sh is not None and _is_basic(key) and _functional.overlaps(self._sh[_np_key(key)]):
            raise RuntimeError(_OVERLAP_MSG)
        _functional.write(self, jnp.broadcast_to(_cast(val, dt), tgt), "index_put_", key)
        return
    if _is_basic(key):
        _check_bounds(shape, key)
        prev = _gs.enabled
        _gs.enabled = False
        try:
            nkey = _np_key(key)
            target = _view("Index", self, lambda v: v[nkey], lambda a: a[key])
        finally:
            _gs.enabled = prev
        mv = target._mv
        ng = mv is not None and len(mv) > 2 and bool(mv[2])
        if mv is not None and _gs.enabled and (_req(self) or (vt is not None and _req(vt)) or (
                ng and self._base is not None and self._base._rg)):
            # (the view made above records nothing; torch names the one it makes)
            raise RuntimeError(_multi_view_msg(_basic_name(key) if ng or self._grad_fn_now() is not None else None,
                                               0, no_grad=ng))
        if vt is None:  # (torch's fill_ of a 0-d tensor of the number: an entry for it in the graph)
            target.fill_(tensor(value, dtype=D.from_np(dt)) if _gs.enabled and _req(self) else value)
        else:
            target.copy_(vt)
        return
    _check_adv(shape, key)
    if isinstance(value, Tensor) and value._np_dtype() != dt and not _casts_value(orig, value):
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {_legacy(dt)} for the "
                           f"destination and {_legacy(value._np_dtype())} for the source.")
    grad = (_gs.enabled and (self._rg or (self._base is not None and self._base._rg) or
                             (vt is not None and _req(vt)))) or (vt is not None and vt._v is None) or _DP._fw_on
    if self._v is not None and not grad and self._v.flags.writeable:
        if self._inf and not _gs.inference:
            raise RuntimeError(_INF_INPLACE_MSG)
        val = value if vt is None else vt._host()
        try:
            self._v[key] = val
        except ValueError as e:
            raise RuntimeError(f"shape mismatch: {e}") from None
        self._bump()
        return
    if not self._v.flags.writeable and isinstance(orig, tuple):
        split = _basic_first(orig)
        if split is not None:  # as torch: the basic indices select a view first, then the index_put_ writes into it
            nk = _np_key(split[0])
            target = _view(_basic_name(split[0]), self, lambda v: v[nk], lambda a: a[split[0]])
            return setitem(target, split[1], value)
    if vt is None:
        vt = tensor(value, dtype=D.from_np(dt))
    tgt_shape = np.empty(shape, np.bool_)[key].shape
    vs = tuple(vt.shape)
    if vs != tgt_shape and (len(vs) > len(tgt_shape) or any(
            s != 1 and s != t for s, t in zip(vs[::-1], tgt_shape[::-1]))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vs)} cannot be broadcast to indexing "
                           f"result of shape {list(tgt_shape)}")
    if not self._v.flags.writeable and self._v.size == 0:
        return  # an empty view of an expanded tensor (its basic indices selected nothing): nothing to write

    def fn(a, v):
        v = ew.convert_element_type(v, a.dtype) if v.dtype != a.dtype else v
        if v.shape != tgt_shape:
            v = jnp.broadcast_to(v, tgt_shape)
        return a.at[key].set(v)
    _inplace("IndexPut", self, fn, (vt,), reads_self=False)

