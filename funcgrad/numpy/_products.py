"""Products with NumPy semantics on the dot_general primitive: matmul, dot, vdot, outer, inner, tensordot, kron,
cross, diagonal, trace, vecdot (everything here works under grad, vmap and jit)."""
from __future__ import annotations

import operator

from .._src.core import dtypes
from .._src.core.array import Array
from .._src.core.errors import IncompatibleShapesError, user_location
from .._src.core.trace import Tracer
from .._src.prims import elementwise as ew
from .._src.prims import linalg as la
from .._src.prims import shape as sh
from ..lax._types import canonicalize_precision
from ._manipulation import _slice_axis, builtins_max, moveaxis, ravel, reshape
from ._promote import asarray_any, broadcast_shapes, broadcast_to, normalize_index, promote_dtypes, scalar_array
from ._reductions import sum as _sum
from ._ufuncs import multiply, negative, subtract


_MATMUL_DN = {1: (((0,), (0,)), ((), ())), 2: (((1,), (0,)), ((), ()))}


def _small_matmul(x1, x2):
    """x1 @ x2 as one dot_general when both are vectors or matrices of one dtype and weak type whose
    core dimensions agree (the hot path of matmul and dot); None otherwise."""
    ca, cb = x1.__class__, x2.__class__
    if (ca is Array or ca is Tracer) and (cb is Array or cb is Tracer):
        a1 = x1._buf if ca is Array else x1.aval
        a2 = x2._buf if cb is Array else x2.aval
        s1, s2 = a1.shape, a2.shape
        if 0 < len(s1) <= 2 and 0 < len(s2) <= 2 and a1.dtype == a2.dtype and x1.weak_type == x2.weak_type \
                and s1[-1] == s2[0]:
            return la.dot_general_p.bind(x1, x2, dimension_numbers=_MATMUL_DN[len(s1)],
                                         preferred_element_type=None)
    return None


def _product_options(precision, preferred_element_type):
    """Checks JAX's precision= (NumPy computes at full precision whatever it asks) and returns the
    preferred_element_type as a dtype (or None)."""
    if precision is not None:
        canonicalize_precision(precision)
    return None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)


def _scaled(x, y, pet):
    """x * y (a scalar operand's product) in the preferred element type."""
    out = multiply(x, y)
    return out if pet is None or out.dtype == pet else out.astype(pet)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's matmul broadcasting of leading (batch) dimensions; preferred_element_type
    sets the result dtype (JAX's keywords)."""
    pet = preferred_element_type
    if pet is None and precision is None:
        out = _small_matmul(x1, x2)
        if out is not None:
            return out
    pet = _product_options(precision, pet)
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
        raise IncompatibleShapesError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size "
                         f"{b.shape[-2]} is different from {a.shape[-1]}): shapes {shape_a} and "
                         f"{shape_b} cannot be multiplied (at {user_location(2)})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    nb = len(batch)
    if b.ndim == 2 and a.ndim > 2:
        # a matrix shared by every batch entry: its batch dimensions are free dimensions of one product
        # (one GEMM, and a gradient for b that is one GEMM too, not a stack of per-entry products summed)
        out = la.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), pet)
    elif a.ndim == 2 and b.ndim > 2:
        out = la.dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())), pet)  # (M, *batch, N)
        out = sh.transpose(out, tuple(range(1, nb + 1)) + (0, nb + 1))
    else:
        if a.ndim > 2 or b.ndim > 2:
            a = broadcast_to(a, batch + a.shape[-2:])
            b = broadcast_to(b, batch + b.shape[-2:])
        bd = tuple(range(nb))
        out = la.dot_general(a, b, (((nb + 1,), (nb,)), (bd, bd)), pet)
    if va:
        out = sh.squeeze(out, (out.ndim - 2,))
    if vb:
        out = sh.squeeze(out, (out.ndim - 1,))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    """numpy.dot: scalars multiply; otherwise contract the last axis of a with the second-last of b;
    preferred_element_type sets the result dtype (JAX's keywords)."""
    if preferred_element_type is None and precision is None:
        out = _small_matmul(a, b)  # (for vectors and matrices dot is matmul)
        if out is not None:
            return out
    pet = _product_options(precision, preferred_element_type)
    x, y = asarray_any(a), asarray_any(b)
    if x.ndim == 0 or y.ndim == 0:
        return _scaled(x, y, pet)
    x, y = promote_dtypes(x, y)
    yc = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[yc]:
        raise IncompatibleShapesError(f"dot: shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                                      f"(dim {x.ndim - 1}) != {y.shape[yc]} (dim {yc})")
    return la.dot_general(x, y, (((x.ndim - 1,), (yc,)), ((), ())), pet)


def _conj(x):
    """Complex conjugate, from real-part conversions (there is no conj primitive yet)."""
    if not dtypes.is_complex(x.dtype):
        return x
    real_dt = dtypes.float32 if x.dtype == dtypes.complex64 else dtypes.float64
    mj = broadcast_to(scalar_array(-1j, x.dtype, False), x.shape)
    re = ew.convert_element_type(x, real_dt)
    im = ew.convert_element_type(ew.mul(x, mj), real_dt)  # Re(-i z) = Im(z)
    return ew.add(ew.convert_element_type(re, x.dtype), ew.mul(ew.convert_element_type(im, x.dtype), mj))


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating the first (complex) one, as numpy.vdot."""
    x, y = ravel(a), ravel(b)
    if x.size != y.size:
        raise IncompatibleShapesError(f"vdot: vectors have different lengths: {x.size} and {y.size}")
    return dot(_conj(x), y, precision=precision, preferred_element_type=preferred_element_type)


def outer(a, b):
    """Outer product of the flattened arrays, as numpy.outer."""
    x, y = ravel(a), ravel(b)
    return multiply(reshape(x, (-1, 1)), reshape(y, (1, -1)))


def inner(a, b, /, *, precision=None, preferred_element_type=None):
    """Inner product over the last axes (a scalar operand multiplies), as numpy.inner."""
    pet = _product_options(precision, preferred_element_type)
    x, y = asarray_any(a), asarray_any(b)
    if x.ndim == 0 or y.ndim == 0:
        return _scaled(x, y, pet)
    if x.shape[-1] != y.shape[-1]:
        raise IncompatibleShapesError(f"inner: shapes {tuple(x.shape)} and {tuple(y.shape)} not aligned: "
                                      f"{x.shape[-1]} (dim {x.ndim - 1}) != {y.shape[-1]} (dim {y.ndim - 1})")
    x, y = promote_dtypes(x, y)
    return la.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 1,)), ((), ())), pet)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum products over the given axes (an int N: a's last N with b's first N; or a pair of axis
    sequences), as numpy.tensordot. One dot_general."""
    pet = _product_options(precision, preferred_element_type)
    x, y = asarray_any(a), asarray_any(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        if n > x.ndim or n > y.ndim:
            raise IncompatibleShapesError(f"tensordot: axes={n} exceeds the ranks of the shapes {tuple(x.shape)} and "
                                          f"{tuple(y.shape)} (TypeError in JAX)")
        axes_a, axes_b = list(range(-n, 0)), list(range(n))
    else:
        axes_a, axes_b = axes
    axes_a = list(axes_a) if isinstance(axes_a, (list, tuple)) else [axes_a]
    axes_b = list(axes_b) if isinstance(axes_b, (list, tuple)) else [axes_b]
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError("duplicate axes are not allowed in tensordot")
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    ca = [normalize_index(i, x.ndim, "tensordot") for i in axes_a]
    cb = [normalize_index(i, y.ndim, "tensordot") for i in axes_b]
    if len(set(ca)) != len(ca) or len(set(cb)) != len(cb):
        raise ValueError("shape-mismatch for sum")
    if any(x.shape[i] != y.shape[j] for i, j in zip(ca, cb)):  # (NumPy's ValueError, JAX's TypeError)
        raise IncompatibleShapesError(f"tensordot: shape-mismatch for sum: the contracted axes {ca} of "
                                      f"{tuple(x.shape)} and {cb} of {tuple(y.shape)} differ in size")
    x, y = promote_dtypes(x, y)
    return la.dot_general(x, y, ((tuple(ca), tuple(cb)), ((), ())), pet)


def kron(a, b):
    """Kronecker product, as numpy.kron."""
    y = asarray_any(b)
    x = asarray_any(a)
    if x.ndim < y.ndim:
        x = sh.reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    nd = builtins_max(x.ndim, y.ndim)
    xs = (1,) * (nd - x.ndim) + tuple(x.shape)
    ys = (1,) * (nd - y.ndim) + tuple(y.shape)
    xa = sh.reshape(x, sum(((s, 1) for s in xs), ()))
    ya = sh.reshape(y, sum(((1, s) for s in ys), ()))
    return sh.reshape(multiply(xa, ya), tuple(p * q for p, q in zip(xs, ys)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, whose cross product is a scalar z component) along
    the given axes, broadcasting the others, as numpy.cross."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = asarray_any(a), asarray_any(b)
    if x.ndim < 1 or y.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    x = moveaxis(x, normalize_index(axisa, x.ndim, "cross (axisa)"), -1)
    y = moveaxis(y, normalize_index(axisb, y.ndim, "cross (axisb)"), -1)
    na, nb = x.shape[-1], y.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        import warnings
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
                      "vectors instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
    shape = broadcast_shapes(x.shape[:-1], y.shape[:-1], op="cross")
    if na == 3 or nb == 3:
        axc = normalize_index(axisc, len(shape) + 1, "cross (axisc)")
    dt = dtypes.promote_types(x.dtype, y.dtype)
    x, y = ew.convert_element_type(x, dt), ew.convert_element_type(y, dt)

    def comp(v, i):
        return broadcast_to(sh.squeeze(_slice_axis(v, v.ndim - 1, i, i + 1), (v.ndim - 1,)), shape)

    a0, a1 = comp(x, 0), comp(x, 1)
    b0, b1 = comp(y, 0), comp(y, 1)
    c2 = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return c2
    if na == 2:
        b2 = comp(y, 2)
        c0, c1 = multiply(a1, b2), negative(multiply(a0, b2))
    elif nb == 2:
        a2 = comp(x, 2)
        c0, c1 = negative(multiply(a2, b1)), multiply(a2, b0)
    else:
        a2, b2 = comp(x, 2), comp(y, 2)
        c0 = subtract(multiply(a1, b2), multiply(a2, b1))
        c1 = subtract(multiply(a2, b0), multiply(a0, b2))
    out = sh.concatenate([sh.expand_dims(c, (len(shape),)) for c in (c0, c1, c2)], len(shape))
    return moveaxis(out, -1, axc)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal at `offset` of the (axis1, axis2) planes, appended as the last axis, as
    numpy.diagonal. One strided slice of the flattened planes."""
    x = asarray_any(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1 = normalize_index(axis1, x.ndim, "diagonal")
    a2 = normalize_index(axis2, x.ndim, "diagonal")
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    k = operator.index(offset)
    perm = [i for i in range(x.ndim) if i not in (a1, a2)] + [a1, a2]
    y = sh.transpose(x, perm)
    n, m = y.shape[-2:]
    lead = tuple(y.shape[:-2])
    if k >= 0:
        count, start = builtins_max(0, min(n, m - k)), k
    else:
        count, start = builtins_max(0, min(n + k, m)), -k * m
    flat = sh.reshape(y, lead + (n * m,))
    if count == 0:
        return sh.slice(flat, (0,) * flat.ndim, lead + (0,))
    return sh.slice(flat, (0,) * len(lead) + (start,), lead + (start + (count - 1) * (m + 1) + 1,),
                    (1,) * len(lead) + (m + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal, as numpy.trace (small integers and bools sum in int64)."""
    if out is not None:
        raise TypeError("trace: out= is not supported: funcgrad arrays are immutable")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product conj(x1) . x2 along `axis`, broadcasting the other axes (numpy.vecdot)."""
    pet = _product_options(precision, preferred_element_type)
    x, y = asarray_any(x1), asarray_any(x2)
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("vecdot: Input operand does not have enough dimensions (it must have at least 1)")
    x = moveaxis(x, normalize_index(axis, x.ndim, "vecdot"), -1)
    y = moveaxis(y, normalize_index(axis, y.ndim, "vecdot"), -1)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"vecdot: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n),(n)->() (size {y.shape[-1]} is different from {x.shape[-1]})")
    x, y = promote_dtypes(x, y)
    batch = broadcast_shapes(x.shape[:-1], y.shape[:-1], op="vecdot")
    nb = len(batch)
    x = broadcast_to(_conj(x), batch + x.shape[-1:])
    y = broadcast_to(y, batch + y.shape[-1:])
    bd = tuple(range(nb))
    return la.dot_general(x, y, (((nb,), (nb,)), (bd, bd)), pet)
