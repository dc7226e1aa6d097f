"""Reductions over static axes: reduce_max, reduce_min, reduce_prod, argmax, argmin; reduce_sum (the transpose
of broadcast_in_dim) lives with it in shape.py and is re-exported here. Also the normalisations over axes,
softmax and log_softmax (one card each, as torch's kernels and jax.nn's custom_jvp: the rules are the closed
forms in the output, not the derivatives of the formula's max/exp/sum/div)."""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from . import elementwise as ew
from ._util import check_dtype, value_error
from .shape import move_axis, full, reshape, transpose
from .shape import _axes, _expand, _kept, _reduce_batch, _reduce_rule, reduce_sum, reduce_sum_p  # noqa: F401
from .cumulative import cumprod, shift


def _chooser_weights(ans, x, axes):
    """Where x attains the reduced extreme, divided by how many times it does (ties share evenly)."""
    loc = (x == _expand(ans, x, axes)).astype(x.dtype)
    return loc / _expand(reduce_sum(loc, axes), x, axes)


def _chooser(name, np_name):
    p = Primitive(
        name, impl=lambda xp: (lambda x, *, axes: getattr(x, np_name)(axis=axes)),  # (methods: no wrapper)
        abstract_eval=_reduce_rule(name, "bifc"),
        jvp=[lambda t, ans, x, *, axes: reduce_sum(t * _chooser_weights(ans, x, axes), axes)],
        vjp=[lambda g, ans, x, *, axes: _expand(g, x, axes) * _chooser_weights(ans, x, axes)])
    p.batch = _reduce_batch(p)
    return p


reduce_max_p = _chooser("reduce_max", "max")
reduce_min_p = _chooser("reduce_min", "min")


def _prod_impl(xp):
    if xp is np:  # the ufunc's reduce, not the method: NumPy's Python wrapper would be the frame a floating-point
        mul = np.multiply.reduce  # warning (inf * 0) is charged to, which funcgrad's filter does not cover
        return lambda x, *, axes: mul(x, axes, x.dtype)
    return lambda x, *, axes: x.prod(axis=axes, dtype=x.dtype)


def prod_others(x, axes):
    """d prod / d x_i over `axes`: the product of the slice's other entries, as the product of the
    exclusive cumulative products from both ends (JAX's approach). No division, so it is exact with any
    number of zeros, and built from cumprod (whose rules are exact with zeros too), so its own
    derivatives (prod's second derivative: the products of all entries but two) are right at zeros."""
    axes = tuple(axes)
    kept = _kept(x.ndim, axes)
    n = 1
    for a in axes:
        n *= x.shape[a]
    if n <= 1:
        return full(x.shape, 1, x.dtype)
    perm = kept + axes
    xt = transpose(x, perm) if perm != tuple(range(x.ndim)) else x
    flat = reshape(xt, tuple(x.shape[i] for i in kept) + (n,))
    ax = len(kept)
    before = shift(cumprod(flat, ax), ax, 1, 1)
    after = shift(cumprod(flat, ax, reverse=True), ax, 1, 1, reverse=True)
    out = reshape(before * after, xt.shape)
    if perm == tuple(range(x.ndim)):
        return out
    inv = [0] * x.ndim
    for i, pi in enumerate(perm):
        inv[pi] = i
    return transpose(out, tuple(inv))


reduce_prod_p = Primitive(
    "reduce_prod", impl=_prod_impl, abstract_eval=_reduce_rule("reduce_prod", "ifc"),
    jvp=[lambda t, ans, x, *, axes: reduce_sum(t * prod_others(x, axes), axes)],
    vjp=[lambda g, ans, x, *, axes: _expand(g, x, axes) * prod_others(x, axes)])
reduce_prod_p.batch = _reduce_batch(reduce_prod_p)


def _arg_rule(op):
    def rule(x: ShapedArray, *, axis, index_dtype) -> ShapedArray:
        check_dtype(op, x, "bifc")
        if not 0 <= axis < x.ndim:
            value_error(op, f"axis {axis} out of range for operand {x.str_short()}")
        if x.shape[axis] == 0:
            value_error(op, f"attempt to get {op} of an empty sequence ({x.str_short()}, axis {axis})")
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i != axis), index_dtype, False)
    return rule


def _arg(name, np_name):
    def impl(xp):
        return lambda x, *, axis, index_dtype: getattr(xp, np_name)(x, axis=axis).astype(index_dtype)
    p = Primitive(name, impl=impl, abstract_eval=_arg_rule(name), jvp=[None], vjp=[None],
                  differentiable=False, weak_type=lambda w, params: False)
    p.batch = lambda args, dims, *, axis, index_dtype: (
        p.bind(move_axis(args[0], dims[0], 0), axis=axis + 1, index_dtype=index_dtype), 0)
    return p


argmax_p = _arg("argmax", "argmax")
argmin_p = _arg("argmin", "argmin")


def reduce_max(x, axes):
    """The maximum of x over the dimensions `axes` (which are removed), as jax.lax.reduce_max."""
    axes = _axes(x, axes)
    return reduce_max_p.bind(x, axes=axes) if axes else x


def reduce_min(x, axes):
    """The minimum of x over the dimensions `axes` (which are removed), as jax.lax.reduce_min."""
    axes = _axes(x, axes)
    return reduce_min_p.bind(x, axes=axes) if axes else x


def reduce_prod(x, axes):
    """The product of x over the dimensions `axes` (which are removed), as jax.lax.reduce_prod."""
    axes = _axes(x, axes)
    return reduce_prod_p.bind(x, axes=axes) if axes else x


def argmax(x, axis: int, index_dtype=dtypes.int64):
    """The index of the maximum of x along `axis` (the first on ties), of dtype `index_dtype`, as jax.lax.argmax
    (where index_dtype has no default)."""
    return argmax_p.bind(x, axis=int(axis) % x.ndim, index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x, axis: int, index_dtype=dtypes.int64):
    """The index of the minimum of x along `axis` (the first on ties), of dtype `index_dtype`, as jax.lax.argmin
    (where index_dtype has no default)."""
    return argmin_p.bind(x, axis=int(axis) % x.ndim, index_dtype=dtypes.canonicalize(index_dtype))


# --- softmax and log_softmax over static axes --------------------------------------------------------
# The formula of jax.nn (numpy/_softmax.py's, which every face calls): x - max(x) shifted, exp, divided by its
# sum. One card each, so that a recorded Tensor op is one node and its backward torch's formula:
# softmax: g_x = y * (g - sum(g * y)); log_softmax: g_x = g - exp(y) * sum(g) (the jvps are their transposes,
# as jax.nn.softmax's custom_jvp). The rules read only the output, as torch's backward does.

def _normalise_rule(op):
    def rule(x: ShapedArray, *, axes) -> ShapedArray:
        check_dtype(op, x, "f")
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            value_error(op, f"axes {axes} out of range or repeated for operand {x.str_short()}")
        return x
    return rule


def _softmax_impl(xp):
    if xp is np:  # (the ufuncs' reduce without the methods' wrappers, and in place on the fresh temporary)
        def softmax(x, *, axes):
            e = np.subtract(x, _max_reduce(x, axes, None, None, True))
            np.exp(e, out=e)
            return np.divide(e, _add_reduce(e, axes, e.dtype, None, True), out=e)
        return softmax

    def softmax(x, *, axes):
        e = xp.exp(x - x.max(axis=axes, keepdims=True))
        return e / e.sum(axis=axes, dtype=e.dtype, keepdims=True)
    return softmax


def _log_softmax_impl(xp):
    if xp is np:
        def log_softmax(x, *, axes):
            s = np.subtract(x, _max_reduce(x, axes, None, None, True))
            t = _add_reduce(np.exp(s), axes, s.dtype, None, True)
            return np.subtract(s, np.log(t, out=t), out=s)
        return log_softmax

    def log_softmax(x, *, axes):
        s = x - x.max(axis=axes, keepdims=True)
        return s - xp.log(xp.exp(s).sum(axis=axes, dtype=s.dtype, keepdims=True))
    return log_softmax


_max_reduce, _add_reduce = np.maximum.reduce, np.add.reduce


def _sum_back(v, axes):
    """sum(v) over axes, broadcast back to v's shape."""
    return _expand(reduce_sum(v, axes), v, axes)


softmax_p = Primitive(
    "softmax", impl=_softmax_impl, abstract_eval=_normalise_rule("softmax"),
    jvp=[lambda t, ans, x, *, axes: ew.mul(ans, ew.sub(t, _sum_back(ew.mul(ans, t), axes)))],
    vjp=[lambda g, ans, x, *, axes: ew.mul(ans, ew.sub(g, _sum_back(ew.mul(g, ans), axes)))])
log_softmax_p = Primitive(
    "log_softmax", impl=_log_softmax_impl, abstract_eval=_normalise_rule("log_softmax"),
    jvp=[lambda t, ans, x, *, axes: ew.sub(t, _sum_back(ew.mul(ew.exp(ans), t), axes))],
    vjp=[lambda g, ans, x, *, axes: ew.sub(g, ew.mul(ew.exp(ans), _sum_back(g, axes)))])
softmax_p.batch = _reduce_batch(softmax_p)
log_softmax_p.batch = _reduce_batch(log_softmax_p)


def softmax(x, axes):
    """exp(x - max) / sum(exp(x - max)) over `axes` (sorted non-negative ints) of a floating x."""
    return softmax_p.bind(x, axes=axes)


def log_softmax(x, axes):
    """x - max - log(sum(exp(x - max))) over `axes` (sorted non-negative ints) of a floating x."""
    return log_softmax_p.bind(x, axes=axes)
