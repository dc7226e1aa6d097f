"""dot_general: the one contraction primitive behind dot, matmul, tensordot and einsum."""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import check_dtype, type_error
from .elementwise import convert_element_type
from .shape import transpose


def _free(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_rule(x: ShapedArray, y: ShapedArray, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    op = "dot_general"
    check_dtype(op, x, "bifc")
    if x.dtype != y.dtype:
        type_error(op, f"operands must share one dtype, got {x.str_short()} and {y.str_short()}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        type_error(op, f"dimension_numbers {dimension_numbers} pair unequal numbers of dimensions")
    for dims, a in ((lc, x), (lb, x), (rc, y), (rb, y)):
        if any(not 0 <= d < a.ndim for d in dims):
            type_error(op, f"dimension_numbers {dimension_numbers} out of range for {x.str_short()} "
                           f"and {y.str_short()}")
    if len(set(lc) | set(lb)) != len(lc) + len(lb) or len(set(rc) | set(rb)) != len(rc) + len(rb):
        type_error(op, f"dimension_numbers {dimension_numbers} repeat a dimension")
    for a, b in zip(lc, rc):
        if x.shape[a] != y.shape[b]:
            type_error(op, f"contracting dimensions differ in size: {x.str_short()} dimension {a} and "
                           f"{y.str_short()} dimension {b} (shapes {x.shape} and {y.shape} cannot be "
                           "multiplied)")
    for a, b in zip(lb, rb):
        if x.shape[a] != y.shape[b]:
            type_error(op, f"batch dimensions differ in size: {x.str_short()} dimension {a} and "
                           f"{y.str_short()} dimension {b}")
    shape = ([x.shape[i] for i in lb] + [x.shape[i] for i in _free(x.ndim, lc, lb)]
             + [y.shape[i] for i in _free(y.ndim, rc, rb)])
    out_dtype = x.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, out_dtype, x.weak_type and y.weak_type)


def _dot_impl(xp):
    def f(x, y, *, dimension_numbers, preferred_element_type=None):
        (lc, rc), (lb, rb) = dimension_numbers
        if preferred_element_type is not None and x.dtype != preferred_element_type:
            # Accumulate in the preferred type (e.g. float32 operands summed in float64).
            x, y = x.astype(preferred_element_type), y.astype(preferred_element_type)
        if not lb and lc == (x.ndim - 1,) and rc == (0,) and y.ndim <= 2 and x.ndim <= 2:
            out = xp.matmul(x, y) if x.ndim and y.ndim else x * y
        else:
            xf, yf = _free(x.ndim, lc, lb), _free(y.ndim, rc, rb)
            bshape = [x.shape[i] for i in lb]
            m = [x.shape[i] for i in xf]
            n = [y.shape[i] for i in yf]
            k = math.prod(x.shape[i] for i in lc)
            xt = xp.transpose(x, list(lb) + xf + list(lc)).reshape(bshape + [math.prod(m), k])
            yt = xp.transpose(y, list(rb) + list(rc) + yf).reshape(bshape + [k, math.prod(n)])
            # A contraction of size 1 is an outer product: broadcasting beats a k=1 matmul.
            prod = xt * yt if k == 1 else xp.matmul(xt, yt)
            out = prod.reshape(bshape + m + n)
        if preferred_element_type is not None and out.dtype != preferred_element_type:
            out = out.astype(preferred_element_type)
        return out
    return f


def _ranges(x_ndim, y_ndim, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    nxf = len(_free(x_ndim, lc, lb))
    nyf = len(_free(y_ndim, rc, rb))
    return (tuple(range(nb)), tuple(range(nb, nb + nxf)), tuple(range(nb + nxf, nb + nxf + nyf)))


def _dot_vjp_x(g, ans, x, y, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    g_b, g_xf, g_yf = _ranges(x.ndim, y.ndim, dimension_numbers)
    r = dot_general(g, y, ((g_yf, tuple(_free(y.ndim, rc, rb))), (g_b, tuple(rb))))
    order = list(lb) + _free(x.ndim, lc, lb) + [lc[j] for j in np.argsort(rc)]
    return convert_element_type(transpose(r, tuple(int(i) for i in np.argsort(order))), x.dtype)


def _dot_vjp_y(g, ans, x, y, *, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    g_b, g_xf, g_yf = _ranges(x.ndim, y.ndim, dimension_numbers)
    r = dot_general(g, x, ((g_xf, tuple(_free(x.ndim, lc, lb))), (g_b, tuple(lb))))
    order = list(rb) + _free(y.ndim, rc, rb) + [rc[j] for j in np.argsort(lc)]
    return convert_element_type(transpose(r, tuple(int(i) for i in np.argsort(order))), y.dtype)


def _shift(dims, d):
    return tuple(a + (a >= d) for a in dims)


def _dot_batch(args, dims, *, dimension_numbers, preferred_element_type=None):
    x, y = args
    dx, dy = dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dx is not None and dy is not None:
        from ._util import move_axis
        x, y = move_axis(x, dx, 0), move_axis(y, dy, 0)
        dn = ((_shift(lc, 0), _shift(rc, 0)), ((0,) + _shift(lb, 0), (0,) + _shift(rb, 0)))
        return dot_general(x, y, dn, preferred_element_type), 0
    if dx is not None:
        lc2, lb2 = _shift(lc, dx), _shift(lb, dx)
        out = dot_general(x, y, ((lc2, rc), (lb2, rb)), preferred_element_type)
        xf = _free(x.ndim, lc2, lb2)
        return out, len(lb) + xf.index(dx)
    rc2, rb2 = _shift(rc, dy), _shift(rb, dy)
    out = dot_general(x, y, ((lc, rc2), (lb, rb2)), preferred_element_type)
    yf = _free(y.ndim, rc2, rb2)
    return out, len(lb) + len(_free(x.ndim, lc, lb)) + yf.index(dy)


dot_general_p = Primitive(
    "dot_general", impl=_dot_impl, abstract_eval=_dot_rule,
    jvp=[lambda t, ans, x, y, **p: dot_general_p.bind(t, y, **p),
         lambda t, ans, x, y, **p: dot_general_p.bind(x, t, **p)],
    vjp=[_dot_vjp_x, _dot_vjp_y], batch=_dot_batch)


def dot_general(x, y, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)),
          (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    return dot_general_p.bind(x, y, dimension_numbers=dn, preferred_element_type=pet)
