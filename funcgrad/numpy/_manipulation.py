"""Shape manipulation and products with NumPy semantics: reshape, transpose, stack, clip, dot, matmul."""
from __future__ import annotations

import math
import operator

import numpy as np

from ..core import dtypes
from ..core.errors import user_location
from ..primitives import elementwise as ew
from ..primitives import linalg as la
from ..primitives import shape as sh
from ._promote import (asarray_any, broadcast_shapes, broadcast_to, is_python_scalar, normalize_index,
                       promote_dtypes)
from ._reductions import normalize_axis


def _shape_arg(shape) -> tuple:
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "__index__") and not hasattr(shape, "__len__")):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Array with the same data and a new shape (one entry may be -1), as numpy.reshape."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    shape = newshape if shape is None else shape
    x = asarray_any(a)
    shape = _shape_arg(shape)
    if shape.count(-1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (-1)")
    if any(s < -1 for s in shape):
        raise ValueError(f"reshape: negative dimensions other than -1 are not allowed: {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape array of size {x.size} into shape {shape} (at {user_location(2)})")
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {shape} (at {user_location(2)})")
    return sh.reshape(x, shape)


def ravel(a, order="C"):
    """The elements as a 1-D array, as numpy.ravel."""
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """Permute the axes (reverse them by default), as numpy.transpose."""
    x = asarray_any(a)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {axes} don't match array of dimension {x.ndim}")
    perm = tuple(normalize_index(i, x.ndim, "transpose") for i in axes)
    if len(set(perm)) != len(perm):
        raise ValueError(f"transpose: repeated axis in transpose: {axes}")
    return sh.transpose(x, perm)


def permute_dims(a, /, axes):
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


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis, as numpy.concatenate (axis=None flattens first)."""
    xs = [asarray_any(a) for a in arrays]
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(x.ndim == 0 for x in xs):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if dtype is not None:  # each input is cast straight to dtype (casting="same_kind"), as in NumPy
        dtype = dtypes.canonicalize(dtype)
        for x in xs:
            if not np.can_cast(x.dtype, dtype, casting="same_kind"):
                raise TypeError(f"concatenate: Cannot cast array data from {x.dtype} to {dtype} according "
                                "to the rule 'same_kind'")
        xs = [ew.convert_element_type(x, dtype) for x in xs]
    else:
        xs = promote_dtypes(*xs)
    nd = xs[0].ndim
    if any(x.ndim != nd for x in xs):
        raise ValueError("concatenate: all the input arrays must have the same number of dimensions, got "
                         + ", ".join(str(x.shape) for x in xs))
    ax = normalize_index(axis, nd, "concatenate")
    for x in xs:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != ax):
            raise ValueError("concatenate: all the input array dimensions except for the concatenation axis "
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
    return concatenate([sh.expand_dims(x, (ax,)) for x in xs], ax, dtype)


def _clip_bound(x, v, is_lower: bool):
    """NumPy 2's clip ignores a Python int bound beyond the integer dtype's range on the harmless side
    (a lower bound below the minimum, an upper bound above the maximum)."""
    if isinstance(v, int) and not isinstance(v, bool) and is_python_scalar(v) and dtypes.is_integer(x.dtype):
        info = np.iinfo(x.dtype)
        if (is_lower and v < info.min) or (not is_lower and v > info.max):
            return None
    return v


def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 - NumPy names
    """Limit values to [a_min, a_max] (minimum(maximum(a, a_min), a_max)), as numpy.clip."""
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    from ._ufuncs import maximum, minimum
    x = asarray_any(a)
    lo, hi = _clip_bound(x, lo, True), _clip_bound(x, hi, False)
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


def matmul(x1, x2, /):
    """Matrix product with NumPy's matmul broadcasting of leading (batch) dimensions."""
    a, b = asarray_any(x1), asarray_any(x2)
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
                         f"(operands must not be scalars; got shapes {shape_a} and {shape_b}) "
                         f"(at {user_location(2)})")
    a, b = promote_dtypes(a, b)
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = sh.expand_dims(a, (0,))
    if vb:
        b = sh.expand_dims(b, (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size "
                         f"{b.shape[-2]} is different from {a.shape[-1]}): shapes {shape_a} and "
                         f"{shape_b} cannot be multiplied (at {user_location(2)})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    nb = len(batch)
    if a.ndim > 2 or b.ndim > 2:
        a = broadcast_to(a, batch + a.shape[-2:])
        b = broadcast_to(b, batch + b.shape[-2:])
    bd = tuple(range(nb))
    out = la.dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)))
    if va:
        out = sh.squeeze(out, (out.ndim - 2,))
    if vb:
        out = sh.squeeze(out, (out.ndim - 1,))
    return out


def dot(a, b):
    """numpy.dot: scalars multiply; otherwise contract the last axis of a with the second-last of b."""
    x, y = asarray_any(a), asarray_any(b)
    if x.ndim == 0 or y.ndim == 0:
        from ._ufuncs import multiply
        return multiply(x, y)
    x, y = promote_dtypes(x, y)
    yc = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[yc]:
        raise ValueError(f"dot: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} (dim {x.ndim - 1}) "
                         f"!= {y.shape[yc]} (dim {yc})")
    return la.dot_general(x, y, (((x.ndim - 1,), (yc,)), ((), ())))


def _conj(x):
    """Complex conjugate, from real-part conversions (there is no conj primitive yet)."""
    if not dtypes.is_complex(x.dtype):
        return x
    real_dt = dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64
    from ._promote import scalar_array
    mj = broadcast_to(scalar_array(-1j, x.dtype, False), x.shape)
    re = ew.convert_element_type(x, real_dt)
    im = ew.convert_element_type(ew.mul(x, mj), real_dt)  # Re(-i z) = Im(z)
    return ew.add(ew.convert_element_type(re, x.dtype), ew.mul(ew.convert_element_type(im, x.dtype), mj))


def vdot(a, b):
    """Dot product of the flattened arrays, conjugating the first (complex) one, as numpy.vdot."""
    x, y = ravel(a), ravel(b)
    if x.size != y.size:
        raise ValueError(f"vdot: vectors have different lengths: {x.size} and {y.size}")
    return dot(_conj(x), y)


def outer(a, b):
    """Outer product of the flattened arrays, as numpy.outer."""
    from ._ufuncs import multiply
    x, y = ravel(a), ravel(b)
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


def broadcast_arrays(*args):
    """The arguments broadcast against each other (a tuple, as NumPy 2 returns)."""
    xs = [asarray_any(a) for a in args]
    shape = broadcast_shapes(*[x.shape for x in xs], op="broadcast_arrays")
    return tuple(broadcast_to(x, shape) for x in xs)


def atleast_1d(*arys):
    out = [reshape(asarray_any(a), (1,)) if asarray_any(a).ndim == 0 else asarray_any(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        x = asarray_any(a)
        out.append(reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)) if x.ndim < 2 else x)
    return out[0] if len(out) == 1 else out


def nonzero(a):
    """Indices of the non-zero elements (concrete input only: the output size depends on the data)."""
    import numpy as np
    from ..core.array import to_array
    x = asarray_any(a)
    try:
        host = np.asarray(x)
    except TypeError as e:
        from ..core.errors import ConcretizationError
        raise ConcretizationError("nonzero: the number of non-zero elements must be known, so the input "
                                  "must be concrete (not traced under jit or vmap)") from e
    return tuple(to_array(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(host)))
