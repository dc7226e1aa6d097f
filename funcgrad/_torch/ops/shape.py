"""Shape and view functions beyond the core (views.py, join_split.py): split_with_sizes, hsplit / vsplit /
dsplit, as_strided, detach, and the *_copy forms of the view ops (a fresh tensor instead of a view)."""
from __future__ import annotations

import builtins

import numpy as np

from .. import _jnp as jnp
from . import join_split
from .._tensor import _dim
from .._dispatch import _apply1
from .._views import _view
from .complex_parts import view_as_complex, view_as_real

_int = builtins.int


def split_with_sizes(input, split_sizes, dim=0):
    return join_split.split(input, list(split_sizes), dim)


def _hvd_split(name, axis_for, min_dim):
    def op(input, indices_or_sections):
        if input.ndim < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = axis_for(input)
        if isinstance(indices_or_sections, _int):
            n = input.shape[d]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {indices_or_sections}!")
        return join_split.tensor_split(input, indices_or_sections, d)
    op.__name__ = op.__qualname__ = name
    return op


hsplit = _hvd_split("hsplit", lambda t: 0 if t.ndim == 1 else 1, 1)
vsplit = _hvd_split("vsplit", lambda t: 0, 2)
dsplit = _hvd_split("dsplit", lambda t: 2, 3)


def as_strided(input, size, stride, storage_offset=None):
    """A view with the given sizes and strides (in elements) over input's storage."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    v = input._v
    if v is None:  # a traced tensor (inside funcgrad.func transforms): read as a contiguous buffer
        off = 0 if storage_offset is None else int(storage_offset)
        want = off + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - k)) * st
                         for k, (n, st) in enumerate(zip(size, stride))) if size else np.array(off)
        flat = np.asarray(want, np.int64).reshape(-1)
        if flat.size and flat.max() >= input.numel():
            raise RuntimeError(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset {off} "
                               f"reach past the {input.numel()} elements of the input")
        return _apply1("AsStrided", lambda a: jnp.ravel(a)[flat].reshape(size), input)
    off = input.storage_offset() if storage_offset is None else int(storage_offset)
    buf = input._storage().buf.reshape(-1)
    need = off + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if need > buf.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
                           f"itemsize {buf.itemsize} requiring a storage size of {need * buf.itemsize} are out of "
                           f"bounds for storage of size {buf.size * buf.itemsize}")
    # where each of input's elements lives in the storage, so the view can be read off input's value
    base_off = input.storage_offset()
    loc = base_off + sum(np.arange(n).reshape((-1,) + (1,) * (input.ndim - 1 - k)) * s
                         for k, (n, s) in enumerate(zip(input.shape, input.stride()))) if input.ndim else \
        np.array(base_off)
    inv = {int(p): i for i, p in enumerate(np.asarray(loc).reshape(-1))}
    want = off + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - k)) * s
                     for k, (n, s) in enumerate(zip(size, stride))) if size else np.array(off)
    try:
        take = np.array([inv[int(p)] for p in np.asarray(want).reshape(-1)], np.int64).reshape(size)
    except KeyError:
        take = None

    def arr_fn(a):
        if take is None:
            raise RuntimeError("as_strided: the view reaches storage outside the input tensor")
        return jnp.ravel(a)[take.reshape(-1)].reshape(size) if take.size else jnp.zeros(size, a.dtype)

    def np_fn(_):
        return np.lib.stride_tricks.as_strided(buf[off:], size, tuple(s * buf.itemsize for s in stride),
                                               writeable=buf.flags.writeable)
    return _view("AsStrided", input, np_fn, arr_fn)


def detach(input):
    return input.detach()


def _copy_of(view_fn, name):
    def fn(input, *args, **kwargs):
        out = view_fn(input, *args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(o.clone() for o in out)
        return out.clone()
    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = f"torch.{name}_copy: the view op {name} returning a new tensor (not a view)."
    return fn


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


def _slice(input, dim=0, start=None, end=None, step=1):
    d = _dim(dim, input.ndim)
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view_fns() -> dict:
    fns = {n: _method(n) for n in ("view", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze", "diagonal",
                                   "select", "narrow", "unbind", "split", "split_with_sizes", "as_strided", "detach",
                                   "unfold")}
    fns.update(alias=lambda input: input.view_as(input), slice=_slice, view_as_real=view_as_real,
               view_as_complex=view_as_complex)
    return fns


_COPIES = {n + "_copy": _copy_of(f, n) for n, f in _view_fns().items()}
globals().update(_COPIES)


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("hsplit", "vsplit", "dsplit", "split_with_sizes", "as_strided")
INPLACE = ()

__all__ = ["split_with_sizes", "hsplit", "vsplit", "dsplit", "as_strided", "detach"] + sorted(_COPIES)
