"""Shape manipulation with NumPy semantics, built on the shape and indexing primitives (so everything here
works under grad, vmap and jit):

reshape/transpose/moveaxis/rollaxis, joining (concatenate, stack, vstack, hstack, dstack, column_stack,
block, append), splitting (split, array_split, [hvd]split, unstack), repetition (tile, repeat, resize),
reversal (flip, rot90, roll), insert/delete/trim_zeros (positions must be concrete: the output shape
depends on them). Products live in _products, pad in _pad.

Positions computed from concrete arguments (repeat counts, insert/delete positions) are worked out with
NumPy on index arrays, so the semantics and error messages are NumPy's, and the data moves with one slice
or gather.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import Array, ArrayBase, wrap
from .._src.core.errors import ConcretizationError, IncompatibleShapesError, user_location
from .._src.core.trace import Tracer, concrete_value
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.prims.indexing import gather
from .._src.prims.reduction import reduce_sum
from ._promote import (AxisError, _holds_array, asarray_any, axis_error, broadcast_shapes, broadcast_to,
                       is_python_scalar, normalize_index, promote_dtypes)
from ._reductions import normalize_axis
from ._ufuncs import maximum, minimum


def _shape_arg(shape) -> tuple:
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "__index__") and not hasattr(shape, "__len__")):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Array with the same data and a new shape (one entry may be -1), as numpy.reshape."""
    c = a.__class__
    if (c is Array or c is Tracer) and shape.__class__ is tuple and order == "C" and newshape is None:
        old = a.shape  # the hot path: a tuple of non-negative ints with the right product
        if shape == old:
            return a
        n = 1
        for d in shape:
            if d.__class__ is not int or d < 0:
                break
            n *= d
        else:
            if n == math.prod(old):
                return sh.reshape_p.bind(a, new_sizes=shape)
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    shape = newshape if shape is None else shape
    x = asarray_any(a)
    shape = _shape_arg(shape)
    if shape.count(-1) > 1:
        raise IncompatibleShapesError(f"reshape: can only specify one unknown dimension (-1), got {shape} for an "
                                      f"array of shape {tuple(x.shape)}")
    if any(s < -1 for s in shape):
        raise ValueError(f"reshape: negative dimensions other than -1 are not allowed: {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise IncompatibleShapesError(f"cannot reshape array of size {x.size} into shape {shape} "
                                          f"(at {user_location(2)})")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise IncompatibleShapesError(f"cannot reshape array of size {x.size} into shape {shape} "
                                      f"(at {user_location(2)})")
    return sh.reshape(x, shape)


def ravel(a, order="C"):
    """The elements as a 1-D array, as numpy.ravel."""
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """Permute the axes (reverse them by default), as numpy.transpose."""
    if axes is None and (a.__class__ is Array or a.__class__ is Tracer):  # the hot path: a.T
        nd = len(a.shape)
        return sh.transpose_p.bind(a, permutation=tuple(range(nd - 1, -1, -1))) if nd > 1 else a
    x = asarray_any(a)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {axes} don't match array of dimension {x.ndim}")
    perm = tuple(normalize_index(i, x.ndim, "transpose") for i in axes)
    if len(set(perm)) != len(perm):
        raise IncompatibleShapesError(f"transpose: repeated axis in transpose: {axes} for an array of shape "
                                      f"{tuple(x.shape)}; give a permutation of range({x.ndim})")
    return sh.transpose(x, perm)


def permute_dims(a, /, axes):
    """The Array API's name of transpose(a, axes): axes must be a permutation of range(a.ndim)."""
    return transpose(a, axes)


def _axes_list(axes, ndim, op, what):
    axes = (axes,) if not isinstance(axes, (tuple, list)) else axes
    out = [normalize_index(a, ndim, f"{op} {what}") for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in `{what}` argument: {axes}")
    return out


def moveaxis(a, source, destination):
    """Move axes to new positions, the others keeping their order, as numpy.moveaxis."""
    x = asarray_any(a)
    src = _axes_list(source, x.ndim, "moveaxis", "source")
    dst = _axes_list(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return sh.transpose(x, order)


def swapaxes(a, axis1, axis2):
    """Interchange two axes, as numpy.swapaxes."""
    x = asarray_any(a)
    perm = list(range(x.ndim))
    i, j = normalize_index(axis1, x.ndim, "swapaxes"), normalize_index(axis2, x.ndim, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return sh.transpose(x, perm)


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or the given ones, which must have size 1), as numpy.squeeze."""
    x = asarray_any(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        axes = normalize_axis(axis, x.ndim, "squeeze")
        for ax in axes:
            if x.shape[ax] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {ax} of shape {x.shape})")
    return sh.squeeze(x, axes)


def expand_dims(a, axis):
    """Insert size-1 axes at the given positions of the result, as numpy.expand_dims."""
    x = asarray_any(a)
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    n = x.ndim + len(axes)
    norm = [normalize_index(ax, n, "expand_dims") for ax in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    return sh.expand_dims(x, norm)


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis, as numpy.concatenate (axis=None flattens first)."""
    if out is not None:
        raise TypeError("concatenate: out= is not supported: funcgrad arrays are immutable; use the return value")
    xs = [asarray_any(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' "
                         f"(got {casting!r})")
    if dtype is not None:  # each input is cast straight to dtype (checked with `casting`), as in NumPy
        dtype = dtypes.canonicalize(dtype)
        for x in xs:
            if not np.can_cast(x.dtype, dtype, casting=casting):
                raise TypeError(f"concatenate: Cannot cast array data from {x.dtype} to {dtype} according "
                                f"to the rule '{casting}'")
        xs = [ew.convert_element_type(x, dtype) for x in xs]
    else:
        xs = promote_dtypes(*xs)
    nd = xs[0].ndim
    if any(x.ndim != nd for x in xs):
        raise IncompatibleShapesError("concatenate: all the input arrays must have the same number of "
                                      "dimensions, got "
                         + ", ".join(str(x.shape) for x in xs))
    ax = normalize_index(axis, nd, "concatenate")
    for x in xs:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != ax):
            raise IncompatibleShapesError("concatenate: all the input array dimensions except for the "
                                          "concatenation axis "
                             "must match exactly, got " + ", ".join(str(x.shape) for x in xs))
    return sh.concatenate(xs, ax)


def stack(arrays, axis=0, dtype=None):
    """Join arrays along a new axis, as numpy.stack."""
    xs = [asarray_any(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to stack")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError("stack: all input arrays must have the same shape, got "
                         + ", ".join(str(x.shape) for x in xs))
    ax = normalize_index(axis, xs[0].ndim + 1, "stack")
    return concatenate([sh.expand_dims(x, (ax,)) for x in xs], ax, dtype=dtype)


def clip(x=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None, out=None):  # noqa: A002
    """Limit values to [min, max] (minimum(maximum(x, min), max)), as numpy.clip; the bounds are
    positional or `min=`/`max=` (the Array API's names) or NumPy's older `a_min=`/`a_max=`, and the
    array may be passed as NumPy's `a=`. A Python int bound converts as in jax.numpy (wrapping around
    into a narrower integer dtype: clip(uint8, -1) is 255 everywhere, where NumPy 2 ignores the bound)."""
    if out is not None:
        raise TypeError("clip: out= is not supported: funcgrad arrays are immutable; use the return value")
    if (x is None) == (a is None):
        raise TypeError("clip: pass the array once, positionally or as a=")
    if (min is not None and a_min is not None) or (max is not None and a_max is not None):
        raise TypeError("clip: pass each bound once (min= or a_min=, max= or a_max=)")
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    a = x if a is None else a
    x = asarray_any(a)
    if dtypes.is_complex(x.dtype) or any(b is not None and dtypes.is_complex(asarray_any(b).dtype) for b in (lo, hi)):
        raise ValueError("clip: complex values have no ordering (as in jax.numpy)")
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


def broadcast_arrays(*args):
    """The arguments broadcast against each other: a list, as jnp.broadcast_arrays and the Array API
    standard (NumPy 2 returns a tuple)."""
    xs = [asarray_any(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs], op="broadcast_arrays")
    return [broadcast_to(x, shape) for x in xs]


def atleast_1d(*arys):
    """Arrays with at least one dimension (a tuple for several inputs), as numpy.atleast_1d."""
    out = [reshape(asarray_any(a), (1,)) if asarray_any(a).ndim == 0 else asarray_any(a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*arys):
    """Arrays with at least two dimensions (a tuple for several inputs), as numpy.atleast_2d."""
    out = []
    for a in arys:
        x = asarray_any(a)
        out.append(reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)) if x.ndim < 2 else x)
    return out[0] if len(out) == 1 else tuple(out)


# --- helpers shared by the functions below --------------------------------------------------------

def _host_value(v):
    """v as a NumPy value when it is concrete (a Python/NumPy value, an Array, or a tracer carrying a
    value), else None (a traced value under jit or vmap)."""
    if isinstance(v, ArrayBase):
        c = concrete_value(v)
        return None if c is None else np.asarray(c)
    if isinstance(v, (list, tuple)) and _holds_array(v):
        parts = [_host_value(e) if isinstance(e, (ArrayBase, list, tuple)) else e for e in v]
        if any(p is None for p in parts):
            return None
        return np.array(parts)
    return v


def _need_concrete(v, op: str, what: str):
    h = _host_value(v)
    if h is None:
        raise ConcretizationError(f"{op}: {what} must be concrete (not traced under jit or vmap); pass it as "
                                  f"a static argument (at {user_location(3)})")
    return h


def _move_front_to(x, axis: int):
    """x with its axis 0 moved to position `axis`."""
    perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, x.ndim))
    return sh.transpose(x, perm)


def _slice_axis(x, axis: int, start: int, stop: int, step: int = 1):
    lo = [0] * x.ndim
    hi = list(x.shape)
    st = [1] * x.ndim
    lo[axis], hi[axis], st[axis] = start, stop, step
    return sh.slice(x, lo, hi, st)


def _take_axis(x, idx, axis: int):
    """x[..., idx, ...] along `axis` for a concrete 1-D integer index array (in range): a slice when
    idx is a contiguous run, else one gather."""
    idx = np.asarray(idx, dtype=np.int64).reshape(-1)
    if idx.size == 0:
        return _slice_axis(x, axis, 0, 0)
    if idx.size == 1 or np.all(np.diff(idx) == 1):
        return _slice_axis(x, axis, int(idx[0]), int(idx[0]) + idx.size)
    return _move_front_to(gather(x, idx[:, None], (axis,)), axis)


def _take_flat(x, labels):
    """ravel(x)[labels] for a concrete integer array `labels` (any shape): one gather."""
    labels = np.asarray(labels, dtype=np.int64)
    flat = sh.reshape(x, (x.size,))
    if labels.size == 0:
        return sh.full(labels.shape, 0, x.dtype)
    if labels.ndim == 1 and np.all(np.diff(labels) == 1):
        return sh.slice(flat, (int(labels[0]),), (int(labels[0]) + labels.size,))
    return gather(flat, labels[..., None], (0,))


def _zeros(shape, dtype):
    return sh.full(tuple(shape), 0, dtype)


# --- axes ------------------------------------------------------------------------------------------

def rollaxis(a, axis, start=0):
    """Roll `axis` backwards until it lies before position `start`, as numpy.rollaxis."""
    x = asarray_any(a)
    n = x.ndim
    axis = normalize_index(axis, n, "rollaxis")
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return x
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return sh.transpose(x, axes)


def matrix_transpose(x, /):
    """Swap the last two axes (Array API), as numpy.matrix_transpose."""
    x = asarray_any(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return swapaxes(x, -1, -2)


def atleast_3d(*arys):
    """Views with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1), as numpy.atleast_3d."""
    out = []
    for a in arys:
        x = asarray_any(a)
        if x.ndim == 0:
            x = sh.reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = sh.reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = sh.reshape(x, tuple(x.shape) + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else tuple(out)


# --- joining and splitting -------------------------------------------------------------------------

def concat(arrays, /, axis=0, out=None, *, dtype=None):
    """The Array API's (and NumPy 2's) name of concatenate."""
    return concatenate(arrays, axis, out, dtype)


def _as_tuple(r):
    return r if isinstance(r, (tuple, list)) else (r,)


def _check_seq(tup, op):
    if not isinstance(tup, (list, tuple)):
        if isinstance(tup, ArrayBase) or isinstance(tup, np.ndarray):
            return list(tup)
        raise TypeError(f"{op}: arrays to stack must be passed as a sequence type such as list or tuple")
    return tup


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays vertically (row-wise), 1-D inputs becoming rows, as numpy.vstack."""
    arrs = _as_tuple(atleast_2d(*_check_seq(tup, "vstack")))
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


row_stack = vstack


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Stack arrays horizontally (column-wise), as numpy.hstack (1-D inputs join along axis 0)."""
    arrs = _as_tuple(atleast_1d(*_check_seq(tup, "hstack")))
    if arrs and arrs[0].ndim == 1:
        return concatenate(arrs, 0, dtype=dtype, casting=casting)
    return concatenate(arrs, 1, dtype=dtype, casting=casting)


def dstack(tup):
    """Stack arrays along the third axis, as numpy.dstack."""
    arrs = _as_tuple(atleast_3d(*_check_seq(tup, "dstack")))
    return concatenate(arrs, 2)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (others as they are), as numpy.column_stack."""
    arrays = []
    for v in _check_seq(tup, "column_stack"):
        x = asarray_any(v)
        if x.ndim < 2:
            x = sh.reshape(x, (x.size, 1))
        arrays.append(x)
    return concatenate(arrays, 1)


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays (sections need not divide the axis equally), as numpy.array_split."""
    x = asarray_any(ary)
    if x.ndim == 0:
        raise IndexError("array_split: tuple index out of range (a 0-d array cannot be split)")
    ax = normalize_index(axis, x.ndim, "array_split")
    n = x.shape[ax]
    ios = indices_or_sections
    ios = _host_value(ios) if not isinstance(ios, (int, np.integer)) else ios
    if np.ndim(ios) > 0 or isinstance(ios, (list, tuple)):
        div_points = [0] + [operator.index(i) for i in np.asarray(ios).reshape(-1).tolist()] + [n]
        nsec = len(div_points) - 1
    else:
        nsec = operator.index(ios) if not isinstance(ios, float) else int(ios)
        if nsec <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extras = divmod(n, nsec)
        sizes = [0] + extras * [each + 1] + (nsec - extras) * [each]
        div_points = np.cumsum(sizes).tolist()
    out = []
    for i in range(nsec):
        start, stop, _ = slice(div_points[i], div_points[i + 1]).indices(n)
        out.append(_slice_axis(x, ax, start, max(start, stop)))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (or at the given indices), as numpy.split."""
    ios = indices_or_sections
    if isinstance(ios, (int, np.integer)) or (np.ndim(_host_value(ios)) == 0
                                              and not isinstance(ios, (list, tuple))):
        x = asarray_any(ary)
        if x.ndim == 0:
            raise IndexError("split: tuple index out of range (a 0-d array cannot be split)")
        n = x.shape[normalize_index(axis, x.ndim, "split")]
        sections = operator.index(_host_value(ios) if not isinstance(ios, int) else ios)
        if sections > 0 and n % sections:
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, ios, axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D input), as numpy.hsplit."""
    x = asarray_any(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along axis 0 (at least 2-D input), as numpy.vsplit."""
    x = asarray_any(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along axis 2 (at least 3-D input), as numpy.dsplit."""
    x = asarray_any(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def unstack(x, /, *, axis=0):
    """The sub-arrays along `axis`, as a tuple (Array API / numpy.unstack)."""
    x = asarray_any(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = normalize_index(axis, x.ndim, "unstack")
    return tuple(sh.squeeze(_slice_axis(x, ax, i, i + 1), (ax,)) for i in range(x.shape[ax]))


def append(arr, values, axis=None):
    """arr with values appended (both flattened when axis is None), as numpy.append."""
    x, v = asarray_any(arr), asarray_any(values)
    if axis is None:
        if x.ndim != 1:
            x = ravel(x)
        v = ravel(v)
        axis = x.ndim - 1
    return concatenate((x, v), axis=axis)


def _block_check(arrays, parent_index):
    if isinstance(arrays, tuple):
        raise TypeError(f"{_block_index(parent_index)} is a tuple. Only lists can be used to arrange blocks, "
                        "and np.block does not allow implicit conversion from tuple to ndarray.")
    if isinstance(arrays, list) and len(arrays) > 0:
        results = [_block_check(a, parent_index + [i]) for i, a in enumerate(arrays)]
        first_index, max_ndim = results[0]
        for index, nd in results[1:]:
            max_ndim = builtins_max(max_ndim, nd)
            if len(index) != len(first_index):
                raise ValueError(f"List depths are mismatched. First element was at depth {len(first_index)}, "
                                 f"but there is an element at depth {len(index)} ({_block_index(index)})")
            if index[-1] is None:
                first_index = index
        return first_index, max_ndim
    if isinstance(arrays, list):
        return parent_index + [None], 0
    return parent_index, (arrays.ndim if isinstance(arrays, ArrayBase) else np.ndim(arrays))


def builtins_max(a, b):
    return a if a >= b else b


def _block_index(index):
    return "arrays" + "".join(f"[{i}]" for i in index)


def block(arrays):
    """Assemble an array from nested lists of blocks, as numpy.block."""
    bottom, arr_ndim = _block_check(arrays, [])
    list_ndim = len(bottom)
    if bottom and bottom[-1] is None:
        raise ValueError(f"List at {_block_index(bottom)} cannot be empty")
    result_ndim = builtins_max(arr_ndim, list_ndim)

    def rec(arrs, depth):
        if depth < list_ndim:
            parts = [rec(a, depth + 1) for a in arrs]
            ax = result_ndim - (list_ndim - depth)
            shapes = [p.shape for p in parts]
            for s in shapes:
                if s[:ax] != shapes[0][:ax] or s[ax + 1:] != shapes[0][ax + 1:]:
                    raise ValueError(f"Mismatched array shapes in block along axis {ax - result_ndim}.")
            return concatenate(parts, ax)
        from ._creation import array as _array  # (cycle: _creation imports this module)
        x = asarray_any(arrs) if not isinstance(arrs, (list, tuple)) else _array(arrs)
        if is_python_scalar(arrs):
            x = _array(arrs)
        if x.ndim < result_ndim:
            x = sh.reshape(x, (1,) * (result_ndim - x.ndim) + tuple(x.shape))
        return x

    return rec(arrays, 0)


# --- repetition ------------------------------------------------------------------------------------

def tile(A, reps):
    """A repeated `reps` times along each axis, as numpy.tile."""
    x = asarray_any(A)
    try:
        tup = tuple(operator.index(r) for r in reps)
    except TypeError:
        tup = (operator.index(reps),)
    if any(r < 0 for r in tup):
        raise ValueError("negative dimensions are not allowed")
    d = len(tup)
    if x.ndim < d:
        x = sh.reshape(x, (1,) * (d - x.ndim) + tuple(x.shape))
    tup = (1,) * (x.ndim - d) + tup
    if all(r == 1 for r in tup):
        return x
    inter = []
    for r, s in zip(tup, x.shape):
        inter += [r, s]
    y = sh.broadcast_in_dim(x, inter, tuple(range(1, 2 * x.ndim, 2)))
    return sh.reshape(y, tuple(r * s for r, s in zip(tup, x.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element `repeats` times (a scalar or one count per element), as numpy.repeat.

    With traced (non-static) repeats the output size is unknown, so `total_repeat_length` must give
    it, as in JAX: extra values are dropped, and a short result is filled with the last value."""
    x = asarray_any(a)
    if axis is None:
        x = ravel(x)
        ax = 0
    else:
        ax = normalize_index(axis, x.ndim, "repeat")
    n = x.shape[ax]
    r = _host_value(repeats)
    L = None if total_repeat_length is None else operator.index(total_repeat_length)
    if r is not None:
        if np.any(np.asarray(r) < 0):  # (JAX: TypeError, NumPy: ValueError)
            raise IncompatibleShapesError(f"repeat: repeats must be non-negative, got {np.asarray(r).tolist()} "
                                          f"for an array of shape {tuple(x.shape)}")
        idx = np.repeat(np.arange(n, dtype=np.int64), r)  # NumPy's own checks and errors
        r = np.asarray(r)
        if L is None and r.size == 1:
            k = int(r.reshape(()))
            if k == 1:
                return x
            shape = tuple(x.shape)
            y = sh.broadcast_in_dim(x, shape[:ax + 1] + (k,) + shape[ax + 1:],
                                    tuple(range(ax + 1)) + tuple(range(ax + 2, x.ndim + 1)))
            return sh.reshape(y, shape[:ax] + (n * k,) + shape[ax + 1:])
        if L is not None:
            if L < 0:
                raise ValueError(f"repeat: total_repeat_length must be non-negative, got {L}")
            if idx.size >= L:
                idx = idx[:L]
            elif idx.size:
                idx = np.concatenate([idx, np.full(L - idx.size, idx[-1])])
            elif L:
                raise ValueError("repeat: cannot fill total_repeat_length from an empty result")
        return _take_axis(x, idx, ax)
    if L is None:
        raise ConcretizationError("repeat: with traced `repeats` the output size is unknown; pass "
                                  "total_repeat_length=... (or make repeats static) "
                                  f"(at {user_location(2)})")
    rep = asarray_any(repeats)
    if not dtypes.is_integer(rep.dtype):
        raise TypeError(f"repeat: repeats must be integers, got {rep.dtype}")
    rep = broadcast_to(ew.convert_element_type(rep, dtypes.int64), (n,))
    if n == 0 or L == 0:
        return _slice_axis(x, ax, 0, 0) if L == 0 else broadcast_to(x, x.shape)  # pragma: no cover
    # cumulative counts cs[i] = sum(rep[:i+1]); output position j reads element #{i: cs[i] <= j}
    tri_mask = ew.ge(sh.broadcasted_iota(dtypes.int64, (n, n), 0), sh.broadcasted_iota(dtypes.int64, (n, n), 1))
    cs = red_sum(ew.select(tri_mask, sh.broadcast_in_dim(rep, (n, n), (1,)), _zeros((n, n), dtypes.int64)), (1,))
    j = sh.broadcasted_iota(dtypes.int64, (L, n), 0)
    cnt = red_sum(ew.convert_element_type(ew.le(sh.broadcast_in_dim(cs, (L, n), (1,)), j), dtypes.int64), (1,))
    idx = ew.min(cnt, sh.full((L,), n - 1, dtypes.int64))
    return _move_front_to(gather(x, sh.reshape(idx, (L, 1)), (ax,)), ax)


def red_sum(x, axes):
    return reduce_sum(x, axes)


def resize(a, new_shape):
    """A new array of `new_shape` filled with repeated copies of a (flattened), as numpy.resize."""
    if isinstance(new_shape, (int, np.integer)):
        new_shape = (new_shape,)
    new_shape = tuple(operator.index(d) for d in new_shape)
    x = ravel(asarray_any(a))
    new_size = 1
    for d in new_shape:
        new_size *= d
        if d < 0:
            raise ValueError("all elements of `new_shape` must be non-negative")
    if x.size == 0 or new_size == 0:
        return _zeros(new_shape, x.dtype)
    reps = -(-new_size // x.size)
    y = tile(x, reps) if reps > 1 else x
    return sh.reshape(_slice_axis(y, 0, 0, new_size), new_shape)


# --- reversal and rotation -------------------------------------------------------------------------

def flip(m, axis=None):
    """Reverse the order of elements along the given axes (all by default), as numpy.flip."""
    x = asarray_any(m)
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = normalize_axis(axis, x.ndim, "flip") if x.ndim else _flip_0d(axis)
    return sh.rev(x, axes) if axes else x


def _flip_0d(axis):
    a = axis if not isinstance(axis, (tuple, list)) else (axis[0] if axis else None)
    if a is None:
        return ()
    raise axis_error("flip", a, 0)


def fliplr(m):
    """Reverse the order along axis 1, as numpy.fliplr."""
    x = asarray_any(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return sh.rev(x, (1,))


def flipud(m):
    """Reverse the order along axis 0, as numpy.flipud."""
    x = asarray_any(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return sh.rev(x, (0,))


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of `axes`, as numpy.rot90."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    x = asarray_any(m)
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == x.ndim:
        raise ValueError("Axes must be different.")
    if axes[0] >= x.ndim or axes[0] < -x.ndim or axes[1] >= x.ndim or axes[1] < -x.ndim:
        raise ValueError(f"Axes={axes} out of range for array of ndim={x.ndim}.")
    k = operator.index(k) % 4
    a0, a1 = axes[0] % x.ndim, axes[1] % x.ndim
    if k == 0:
        return x
    if k == 2:
        return sh.rev(x, (a0, a1))
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return sh.transpose(sh.rev(x, (a1,)), perm)
    return sh.rev(sh.transpose(x, perm), (a1,))


def _int_mod(s, n: int):
    """s mod n (result in [0, n)) for a traced integer scalar s and a positive Python int n."""
    s = ew.convert_element_type(s, dtypes.int64)
    nn = sh.full(s.shape, n, dtypes.int64)
    r = ew.sub(s, ew.mul(ew.div(s, nn), nn))  # div truncates toward zero
    return ew.select(ew.lt(r, _zeros(s.shape, dtypes.int64)), ew.add(r, nn), r)


def roll(a, shift, axis=None):
    """Roll elements along the given axes (the flattened array when axis is None), as numpy.roll.

    shift and axis may be tuples (broadcast together; shifts on one axis add up). A traced shift
    lowers to a gather."""
    x = asarray_any(a)
    if axis is None:
        return sh.reshape(roll(ravel(x), shift, 0), x.shape)
    axes_in = axis if isinstance(axis, (tuple, list)) else (axis,)
    norm = [normalize_index(ax, x.ndim, "roll") for ax in axes_in]
    axis = norm if isinstance(axis, (tuple, list)) else norm[0]
    hs = _host_value(shift)
    if hs is None:  # traced shift: one gather per axis
        from ._creation import array as _array  # (cycle: _creation imports this module)
        s_arr = _array(shift) if isinstance(shift, (list, tuple)) else asarray_any(shift)
        axes_np = np.asarray(axis)
        if s_arr.ndim > 1 or axes_np.ndim > 1:
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
        n_pairs = builtins_max(s_arr.size, axes_np.size)
        s_b = broadcast_to(s_arr, (n_pairs,))
        axes_b = np.broadcast_to(axes_np, (n_pairs,))
        for i, ax in enumerate(axes_b.tolist()):
            ax = normalize_index(ax, x.ndim, "roll")
            n = x.shape[ax]
            if n == 0:
                continue
            s = sh.reshape(sh.slice(s_b, (i,), (i + 1,)), ())
            r = sh.broadcast_in_dim(_int_mod(s, n), (n,), ())
            idx = ew.sub(sh.broadcasted_iota(dtypes.int64, (n,), 0), r)
            idx = ew.select(ew.lt(idx, _zeros((n,), dtypes.int64)),
                            ew.add(idx, sh.full((n,), n, dtypes.int64)), idx)
            x = _move_front_to(gather(x, sh.reshape(idx, (n, 1)), (ax,)), ax)
        return x
    s_np, a_np = np.broadcast_arrays(np.asarray(hs), np.asarray(axis))
    if s_np.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = {}
    for s, ax in zip(s_np.reshape(-1).tolist(), a_np.reshape(-1).tolist()):
        ax = normalize_index(ax, x.ndim, "roll")
        shifts[ax] = shifts.get(ax, 0) + operator.index(s)
    for ax, s in shifts.items():
        n = x.shape[ax]
        if n == 0:
            continue
        s %= n
        if s:
            x = sh.concatenate([_slice_axis(x, ax, n - s, n), _slice_axis(x, ax, 0, n - s)], ax)
    return x


# --- pad -------------------------------------------------------------------------------------------


# --- element insertion and removal (concrete positions) --------------------------------------------

def _labels(shape):
    return np.arange(math.prod(shape), dtype=np.int64).reshape(shape)


def _obj_host(obj, op):
    if isinstance(obj, slice):
        return obj
    return _need_concrete(obj, op, "the index argument `obj`")


def delete(arr, obj, axis=None):
    """arr without the sub-arrays at `obj` (an int, slice, integer array or boolean mask) along
    `axis` (flattened when None), as numpy.delete. obj must be concrete."""
    x = asarray_any(arr)
    lab = np.delete(_labels(x.shape), _obj_host(obj, "delete"), axis=axis)  # NumPy's rules and errors
    return _take_flat(x, lab)


def insert(arr, obj, values, axis=None):
    """arr with `values` inserted before the positions `obj` along `axis` (flattened when None), as
    numpy.insert. obj must be concrete; values may be traced (they are cast to arr's dtype)."""
    x = asarray_any(arr)
    if isinstance(values, ArrayBase) or (isinstance(values, (list, tuple)) and _holds_array(values)):
        from ._creation import array as _array  # (cycle: _creation imports this module)
        v = ew.convert_element_type(values if isinstance(values, ArrayBase) else _array(values), x.dtype)
    else:
        v = wrap(np.array(values, dtype=x.dtype))
    vlab = x.size + _labels(tuple(v.shape))
    lab = np.insert(_labels(x.shape), _obj_host(obj, "insert"), vlab, axis=axis)
    both = sh.concatenate([sh.reshape(x, (x.size,)), sh.reshape(v, (v.size,))], 0)
    return _take_flat(both, lab)


def trim_zeros(filt, trim="fb", axis=None):
    """Trim leading and/or trailing zeros (the smallest bounding box over `axis`), as
    numpy.trim_zeros. The values must be concrete (the output shape depends on them)."""
    x = asarray_any(filt)
    host = np.asarray(_need_concrete(x, "trim_zeros", "the input"))
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis(axis, x.ndim, "trim_zeros")
    if not axes:
        return x
    nz = np.argwhere(host)
    if nz.size == 0:
        start = stop = [0] * x.ndim
    else:
        start, stop = nz.min(0).tolist(), (nz.max(0) + 1).tolist()
        if "f" not in trim:
            start = [0] * x.ndim
        if "b" not in trim:
            stop = list(x.shape)
    lo = [start[i] if i in axes else 0 for i in range(x.ndim)]
    hi = [stop[i] if i in axes else x.shape[i] for i in range(x.ndim)]
    return sh.slice(x, lo, hi)


# --- products ---------------------------------------------------------------------------------------


