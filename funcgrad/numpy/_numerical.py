"""More of NumPy's numerical functions: trapezoid, gradient, vander, polyval, the window functions,
matvec/vecmat, apply_along_axis, the Bessel function i0 (kaiser's), and the layout-only conversions (asanyarray, ascontiguousarray).

All are written with funcgrad's functions, so they differentiate, trace and batch."""
from __future__ import annotations

import operator

import numpy as np

from .._src.core import dtypes
from .._src.core.array import to_array
from .._src.core.errors import ConcretizationError
from .._src.core.trace import Tracer, concrete_value
from .._src.prims import elementwise as ew
from .._src.interpreters import vmap
from . import _ufuncs as u
from ._creation import arange, asarray, ones
from ._floating import _float_input
from ._manipulation import concatenate, expand_dims, moveaxis
from ._products import matmul
from ._promote import asarray_any, broadcast_shapes, broadcast_to, normalize_index
from ._reductions import sum as _sum
from ._signal import convolve
from ._sorting import nonzero


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None):
    """asarray (funcgrad has no array subclasses)."""
    return asarray(a, dtype, copy, device=device)


def ascontiguousarray(a, dtype=None, *, like=None):
    """a as an array of at least one dimension, as numpy.ascontiguousarray (C order: the layout is the
    backend's concern; jax.numpy has no such function)."""
    x = asarray(a, dtype)
    return x if x.ndim else x.reshape(1)


def _slice_axis(x, axis, start, stop):
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def _inexact(x):
    return x if dtypes.is_inexact(x.dtype) else ew.convert_element_type(x, dtypes.to_inexact(x.dtype))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y along `axis` by the trapezoidal rule (sample points x, or spacing dx); integer
    and bool y compute in JAX's to_inexact dtype (float32 up to 32 bits)."""
    y = u._to_inexact(asarray_any(y))
    ax = normalize_index(axis, y.ndim, "trapezoid")
    n = y.shape[ax]
    if x is None:
        d = dx
    else:
        xa = asarray_any(x)
        if xa.ndim == 1:
            d = u.subtract(xa[1:], xa[:-1])
            d = d.reshape((-1,) + (1,) * (y.ndim - 1 - ax)) if y.ndim > 1 else d
        else:
            d = u.subtract(_slice_axis(xa, ax, 1, None), _slice_axis(xa, ax, None, -1))
    mid = u.divide(u.add(_slice_axis(y, ax, 1, n), _slice_axis(y, ax, 0, max(n - 1, 0))), 2.0)
    return _sum(u.multiply(d, mid), axis=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of sampled f by second-order central differences inside and first- or second-order
    one-sided differences at the edges, as numpy.gradient. Spacings: one scalar for all axes, one per
    axis, or 1-d coordinate arrays. Returns one array, or a tuple with one per axis (as NumPy 2)."""
    f = _inexact(asarray_any(f))
    axes = tuple(range(f.ndim)) if axis is None else \
        tuple(normalize_index(a, f.ndim, "gradient") for a in ((axis,) if isinstance(axis, int) else axis))
    if edge_order not in (1, 2):
        raise ValueError("gradient: 'edge_order' greater than 2 not supported")
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: expected 0, 1 or {len(axes)} spacing arguments, got {len(varargs)}")
    outs = [_gradient_1d(f, ax, h, edge_order) for ax, h in zip(axes, spacing)]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _bcast(v, ndim, ax):
    return v.reshape((-1,) + (1,) * (ndim - 1 - ax))


def _gradient_1d(f, ax, h, edge_order):
    n = f.shape[ax]
    if n < edge_order + 1:
        raise ValueError("gradient: shape of the array is too small to calculate a numerical gradient, "
                         "at least (edge_order + 1) elements are required")
    s = lambda a, b: _slice_axis(f, ax, a, b)  # noqa: E731
    if np.ndim(h) == 0:
        h = float(h) if not hasattr(h, "dtype") else h
        interior = u.divide(u.subtract(s(2, None), s(None, -2)), u.multiply(2.0, h))
        if edge_order == 1:
            first = u.divide(u.subtract(s(1, 2), s(0, 1)), h)
            last = u.divide(u.subtract(s(-1, None), s(-2, -1)), h)
        else:
            first = u.divide(u.add(u.add(u.multiply(-1.5, s(0, 1)), u.multiply(2.0, s(1, 2))),
                                   u.multiply(-0.5, s(2, 3))), h)
            last = u.divide(u.add(u.add(u.multiply(0.5, s(-3, -2)), u.multiply(-2.0, s(-2, -1))),
                                  u.multiply(1.5, s(-1, None))), h)
        return concatenate([first, interior, last], ax) if n > 2 else concatenate([first, last], ax)
    x = _inexact(asarray_any(h))
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError(f"gradient: coordinate array for axis {ax} must be 1-d of length {n}")
    d = u.subtract(x[1:], x[:-1])
    b = lambda v: _bcast(v, f.ndim, ax)  # noqa: E731
    # Interior: the second-order formula for uneven spacing h1 = d[i-1], h2 = d[i].
    h1, h2 = b(d[:-1]), b(d[1:])
    den = u.multiply(u.multiply(h1, h2), u.add(h1, h2))
    a = u.divide(u.negative(u.multiply(h2, h2)), den)
    c = u.divide(u.multiply(h1, h1), den)
    mid = u.negative(u.add(a, c))
    interior = u.add(u.add(u.multiply(a, s(None, -2)), u.multiply(mid, s(1, -1))), u.multiply(c, s(2, None)))
    if edge_order == 1:
        first = u.divide(u.subtract(s(1, 2), s(0, 1)), b(d[:1]))
        last = u.divide(u.subtract(s(-1, None), s(-2, -1)), b(d[-1:]))
    else:
        p, q = b(d[:1]), b(d[1:2])  # one-sided second-order weights at the start
        w0 = u.divide(u.negative(u.add(u.multiply(2.0, p), q)), u.multiply(p, u.add(p, q)))
        w1 = u.divide(u.add(p, q), u.multiply(p, q))
        w2 = u.divide(u.negative(p), u.multiply(q, u.add(p, q)))
        first = u.add(u.add(u.multiply(w0, s(0, 1)), u.multiply(w1, s(1, 2))), u.multiply(w2, s(2, 3)))
        p, q = b(d[-2:-1]), b(d[-1:])  # and at the end
        w0 = u.divide(q, u.multiply(p, u.add(p, q)))
        w1 = u.negative(u.divide(u.add(p, q), u.multiply(p, q)))
        w2 = u.divide(u.add(u.multiply(2.0, q), p), u.multiply(q, u.add(p, q)))
        last = u.add(u.add(u.multiply(w0, s(-3, -2)), u.multiply(w1, s(-2, -1))), u.multiply(w2, s(-1, None)))
    out = concatenate([first, interior, last], ax) if n > 2 else concatenate([first, last], ax)
    return ew.convert_element_type(out, f.dtype)  # in f's dtype, as NumPy


def vander(x, N=None, increasing=False):  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of 1-d x: columns x**(N-1), ..., x, 1 (reversed if increasing)."""
    v = asarray_any(x)
    if v.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence, got shape {tuple(v.shape)}")
    n = v.shape[0] if N is None else operator.index(N)
    powers = arange(n) if increasing else arange(n - 1, -1, -1)
    # the powers in x's own dtype (integers, floats, complex), so the result keeps it as in jax.numpy
    # (an int64 exponent promoted a float32 x to float64); bool x computes in int64
    return u.power(expand_dims(v, 1), ew.convert_element_type(powers, v.dtype if v.dtype != dtypes.bool_
                                                               else dtypes.int64))


def polyval(p, x):
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule."""
    p, x = asarray_any(p), asarray_any(x)
    y = u.multiply(ew.zeros_like(x), p[0] if p.shape[0] else 0)
    for i in range(p.shape[0]):
        y = u.add(u.multiply(y, x), p[i])
    return y


def _window(name, fn):
    def window(M):
        m = operator.index(M)
        w = np.ones(m) if m == 1 else fn(np.arange(m, dtype=np.float64), m) if m > 1 else np.zeros(0)
        return to_array(w.astype(dtypes.defaults.float_))
    window.__name__ = window.__qualname__ = name
    window.__doc__ = f"The {name} window of M points, as numpy.{name} (in the default float dtype)."
    return window


_TAU = 2.0 * np.pi
bartlett = _window("bartlett", lambda n, m: 1.0 - np.abs(2.0 * n / (m - 1) - 1.0))
blackman = _window("blackman", lambda n, m: 0.42 - 0.5 * np.cos(_TAU * n / (m - 1))
                   + 0.08 * np.cos(2 * _TAU * n / (m - 1)))
hamming = _window("hamming", lambda n, m: 0.54 - 0.46 * np.cos(_TAU * n / (m - 1)))
hanning = _window("hanning", lambda n, m: 0.5 - 0.5 * np.cos(_TAU * n / (m - 1)))


def matvec(x1, x2, /):
    """Matrix-vector products over the last axes (broadcasting the rest), as numpy.matvec."""
    a, v = asarray_any(x1), asarray_any(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError(f"matvec: needs a matrix and a vector, got shapes {tuple(a.shape)} and {tuple(v.shape)}")
    return matmul(a, expand_dims(v, -1))[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products conj(x1) @ x2 over the last axes, as numpy.vecmat."""
    v, a = asarray_any(x1), asarray_any(x2)
    if a.ndim < 2 or v.ndim < 1:
        raise ValueError(f"vecmat: needs a vector and a matrix, got shapes {tuple(v.shape)} and {tuple(a.shape)}")
    return matmul(expand_dims(u.conjugate(v), -2), a)[..., 0, :]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-d slice of arr along `axis` (by vmap over the other axes), as
    numpy.apply_along_axis: the function's output dimensions replace `axis`."""
    x = asarray_any(arr)
    ax = normalize_index(axis, x.ndim, "apply_along_axis")
    x = moveaxis(x, ax, -1)
    f = lambda v: asarray_any(func1d(v, *args, **kwargs))  # noqa: E731
    for _ in range(x.ndim - 1):
        f = vmap(f)
    out = f(x)
    k = out.ndim - (x.ndim - 1)  # the function's output dims, now last
    for i in range(k):
        out = moveaxis(out, x.ndim - 1 + i, ax + i)
    return out


__all__ = ["i0", "asanyarray", "ascontiguousarray", "trapezoid", "gradient", "vander", "polyval", "bartlett",
           "blackman", "hamming", "hanning", "matvec", "vecmat", "apply_along_axis", "vectorize",
           "asfortranarray", "asarray_chkfinite", "real_if_close", "apply_over_axes", "mask_indices", "poly",
           "kaiser"]


def _parse_signature(signature: str):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    import re
    def dims(part):
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([^()]*)\)", part)]
    if "->" not in signature:
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.replace(" ", "").split("->")
    return dims(ins), dims(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped over its arguments' broadcast (loop) dimensions with vmap, as numpy.vectorize but
    traced (as jax.numpy.vectorize): pyfunc must be written with funcgrad operations. `excluded`
    names positions or keywords passed through unmapped; `signature` (e.g. '(n),(n)->()') gives
    each argument's core dimensions, which pyfunc sees whole."""
    import functools


    core_in, core_out = _parse_signature(signature) if signature else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        mapped = [i for i in range(len(args)) if i not in excluded]
        arrays = [asarray_any(args[i]) for i in mapped]
        cores = core_in if core_in is not None else [()] * len(arrays)
        if len(cores) != len(arrays):
            raise TypeError(f"vectorize: signature {signature!r} expects {len(cores)} array arguments, "
                            f"got {len(arrays)}")
        sizes = {}
        for a, c in zip(arrays, cores):
            if a.ndim < len(c):
                raise ValueError(f"vectorize: an argument of shape {tuple(a.shape)} has fewer dimensions than "
                                 f"its core dimensions {c}")
            for name, n in zip(c, a.shape[a.ndim - len(c):]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: {sizes[name]} "
                                     f"and {n}")
        loop = broadcast_shapes(*[tuple(a.shape[:a.ndim - len(c)]) for a, c in zip(arrays, cores)])
        arrays = [broadcast_to(a, loop + tuple(a.shape[a.ndim - len(c):])) for a, c in zip(arrays, cores)]

        def call(*xs):
            full = list(args)
            for i, x in zip(mapped, xs):
                full[i] = x
            return pyfunc(*full, **kwargs)

        f = call
        for _ in loop:
            f = vmap(f)
        return f(*arrays)

    return wrapped


def asfortranarray(a, dtype=None, *, like=None):
    """a as an array of at least one dimension, as numpy.asfortranarray; the result is not in Fortran
    order (funcgrad arrays have no layout to choose; jax.numpy has no such function)."""
    return ascontiguousarray(a, dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    """asarray, raising ValueError if a (concrete) array holds infinities or NaNs."""
    x = asarray(a, dtype)
    if dtypes.is_inexact(x.dtype) and not isinstance(x, Tracer) and not bool(np.isfinite(np.asarray(x)).all()):
        raise ValueError("array must not contain infs or NaNs")
    return x


def real_if_close(a, tol=100):
    """The real part if every imaginary part is within tol machine epsilons of zero (tol > 1) or within
    tol (tol <= 1), else a itself, as numpy.real_if_close (decided on concrete values)."""
    x = asarray_any(a)
    if not dtypes.is_complex(x.dtype):
        return x
    eps = float(np.finfo(x.real.dtype).eps)
    limit = tol * eps if tol > 1 else tol
    v = concrete_value(x)  # the choice reads the values (known under grad/vjp/jvp, not under jit)
    if v is None:
        raise ConcretizationError(
            f"real_if_close: whether the result is real depends on the values of the traced array "
            f"{x.aval.str_short()}, which are not known under jit; take funcgrad.numpy.real(x) when the "
            "imaginary parts are known to vanish, or call real_if_close outside jit")
    return x.real if bool(np.all(np.abs(np.asarray(v).imag) < limit)) else x


def apply_over_axes(func, a, axes):
    """func(a, axis) applied repeatedly over `axes`, keeping each reduced axis (as size 1), as
    numpy.apply_over_axes."""
    x = asarray_any(a)
    for ax in (axes,) if isinstance(axes, int) else axes:
        ax = normalize_index(ax, x.ndim, "apply_over_axes")
        res = asarray_any(func(x, ax))
        if res.ndim == x.ndim:
            x = res
        elif res.ndim == x.ndim - 1:
            x = expand_dims(res, ax)
        else:
            raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
    return x


def mask_indices(n, mask_func, k=0):
    """The (row, column) indices where mask_func(ones((n, n)), k) is nonzero, e.g. triu or tril."""
    return nonzero(asarray_any(mask_func(ones((operator.index(n), operator.index(n)), dtypes.int64), k)))


def poly(seq_of_zeros):
    """The coefficients (highest power first) of the monic polynomial with the given roots, as
    numpy.poly for a 1-d sequence of roots (complex roots give complex coefficients)."""
    z = asarray_any(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        raise NotImplementedError("poly: the characteristic polynomial of a matrix needs eigvals, "
                                  "which funcgrad does not have yet")
    if z.ndim != 1:
        raise ValueError("poly: input must be 1d or non-empty square 2d array.")
    z = _inexact(z)
    c = ones(1, z.dtype)
    for i in range(z.shape[0]):
        c = convolve(c, concatenate([ones(1, z.dtype), u.negative(z[i:i + 1])]))
    return c


def kaiser(M, beta):  # noqa: N803 - NumPy's name
    """The Kaiser window of M points with shape parameter beta, as numpy.kaiser (default float dtype)."""
    m = operator.index(M)
    if m <= 1:
        return ones(max(m, 0), dtypes.defaults.float_)
    alpha = (m - 1) / 2.0
    n = to_array(np.arange(m, dtype=np.float64))
    r = u.divide(u.subtract(n, alpha), alpha)
    w = u.divide(i0(u.multiply(beta, u.sqrt(u.subtract(1.0, u.multiply(r, r))))), i0(to_array(np.float64(beta))))
    return ew.convert_element_type(w, dtypes.defaults.float_)


def i0(x):
    """The modified Bessel function of the first kind, order 0, as numpy.i0: its power series
    sum_k ((x/2)^k / k!)^2 for |x| <= 30 and the asymptotic expansion e^|x| / sqrt(2 pi |x|) *
    sum_k ((2k-1)!!)^2 / (k! (8|x|)^k) beyond (both accurate to a few ulp in float64)."""
    x = _float_input(x, "i0")
    a = u.absolute(x)
    small = u.less_equal(a, 30.0)
    s = u.where(small, x, ew.zeros_like(x))  # x, not |x|: the series in x^2 is smooth at 0 to every order
    q = u.multiply(u.multiply(s, s), 0.25)
    term, total = ew.ones_like(a), ew.ones_like(a)
    for k in range(1, 90):
        term = u.divide(u.multiply(term, q), float(k * k))
        total = u.add(total, term)
    b = u.where(small, ew.ones_like(a) * 31.0, a)
    inv = u.divide(1.0, u.multiply(b, 8.0))
    term2, tail = ew.ones_like(a), ew.ones_like(a)
    for k in range(1, 30):
        term2 = u.multiply(term2, u.multiply(inv, float((2 * k - 1) ** 2) / k))
        tail = u.add(tail, term2)
    big = u.divide(u.multiply(u.exp(b), tail), u.sqrt(u.multiply(b, 2 * 3.141592653589793)))
    return u.where(small, total, big)
