"""dot_general: the one contraction primitive behind dot, matmul, tensordot and einsum; linear, x w^T + b,
the affine map of torch's nn.Linear as one card."""
from __future__ import annotations

import math


from ..core import dtypes, threads
from ..core.aval import ShapedArray
from ..core.primitive import Primitive
from ._util import batch_size, check_dtype, type_error
from .elementwise import add_p, convert_element_type
from .shape import broadcast_in_dim, move_axis, reduce_sum, to_front, transpose


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
    fit = threads.fit if xp.__name__ == "numpy" else (lambda mac: None)  # BLAS threads by size (core/threads.py)

    def f(x, y, *, dimension_numbers, preferred_element_type=None):
        (lc, rc), (lb, rb) = dimension_numbers
        if preferred_element_type is not None and x.dtype != preferred_element_type:
            # Accumulate in the preferred type (e.g. float32 operands summed in float64).
            x, y = x.astype(preferred_element_type), y.astype(preferred_element_type)
        if not lb and len(lc) == 1 and 0 < x.ndim <= 2 and 0 < y.ndim <= 2:
            # One contraction of vectors/matrices: a matrix product of transposed views where needed
            # (ndarray.dot: for 1-D and 2-D operands it is matmul, with a third of its call overhead).
            k = x.shape[lc[0]]
            fit(x.size * y.size // k if k else 0)
            out = (x.T if lc[0] == 0 and x.ndim == 2 else x).dot(y.T if rc[0] == 1 else y)
        elif not lb and not lc:  # an outer product
            if x.ndim == 1 and y.ndim == 1 and x.size * y.size <= 4096:  # small: a k=1 product is cheaper
                out = x.reshape(-1, 1).dot(y.reshape(1, -1))
            else:
                out = x.reshape(x.shape + (1,) * y.ndim) * y
        else:
            xf, yf = _free(x.ndim, lc, lb), _free(y.ndim, rc, rb)
            bshape = [x.shape[i] for i in lb]
            m = [x.shape[i] for i in xf]
            n = [y.shape[i] for i in yf]
            k = math.prod(x.shape[i] for i in lc)
            xt = xp.transpose(x, list(lb) + xf + list(lc)).reshape(bshape + [math.prod(m), k])
            yt = xp.transpose(y, list(rb) + list(rc) + yf).reshape(bshape + [k, math.prod(n)])
            # A contraction of size 1 is an outer product: broadcasting beats a k=1 matmul.
            if k != 1:
                fit(math.prod(m) * math.prod(n) * k)  # per product: a stacked matmul threads each alone
            prod = xt * yt if k == 1 else xp.matmul(xt, yt)
            out = prod.reshape(bshape + m + n)
        if preferred_element_type is not None and out.dtype != preferred_element_type:
            out = out.astype(preferred_element_type)
        elif out.dtype != x.dtype and preferred_element_type is None:  # (NumPy's matmul of bfloat16: float32)
            out = out.astype(x.dtype)
        return out

    def plain(x, y):
        k = x.shape[-1]
        fit(x.size * y.size // k if k else 0)
        return x.dot(y)
    # (f for 1-D/2-D operands of one float32/64 or complex dtype contracting x's last axis with y's first, no
    # batch dims, no preferred type: what the torch face's matmul of vectors and matrices binds, called bare)
    f.plain = plain if xp.__name__ == "numpy" else None
    return f


def _ranges(x_ndim, y_ndim, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    nxf = len(_free(x_ndim, lc, lb))
    nyf = len(_free(y_ndim, rc, rb))
    return (tuple(range(nb)), tuple(range(nb, nb + nxf)), tuple(range(nb + nxf, nb + nxf + nyf)))


def _argsort(seq) -> tuple:
    return tuple(sorted(range(len(seq)), key=seq.__getitem__))


_VJP_PLANS: dict = {}
_VJP_PLANS_BY_ID: dict = {}


def _vjp_plan(dimension_numbers, x_ndim, y_ndim, wrt_x: bool):
    """How to compute one operand's cotangent: (swap, dn, perm) meaning
    transpose(dot_general(g, other) or, when swap, dot_general(other, g), with dn), perm)
    (perm None: no transpose). The order that needs no transpose is preferred. Cached per signature."""
    fast = _VJP_PLANS_BY_ID.get((id(dimension_numbers), x_ndim, y_ndim, wrt_x))
    if fast is not None and fast[0] is dimension_numbers:  # (hashing the nested tuple costs more)
        return fast[1]
    key = (dimension_numbers, x_ndim, y_ndim, wrt_x)
    plan = _VJP_PLANS.get(key)
    if plan is None:
        plan = _make_vjp_plan(dimension_numbers, x_ndim, y_ndim, wrt_x)
        if len(_VJP_PLANS) < 4096:
            _VJP_PLANS[key] = plan
    if len(_VJP_PLANS_BY_ID) >= 4096:
        _VJP_PLANS_BY_ID.clear()
    _VJP_PLANS_BY_ID[(id(dimension_numbers), x_ndim, y_ndim, wrt_x)] = (dimension_numbers, plan)  # keeps it alive
    return plan


def _make_vjp_plan(dimension_numbers, x_ndim, y_ndim, wrt_x):
    (lc, rc), (lb, rb) = dimension_numbers
    g_b, g_xf, g_yf = _ranges(x_ndim, y_ndim, dimension_numbers)
    if not wrt_x:  # the cotangent of y is that of x in the mirrored contraction
        (lc, rc), (lb, rb), g_xf, g_yf, x_ndim, y_ndim = (rc, lc), (rb, lb), g_yf, g_xf, y_ndim, x_ndim
    # "x" is now the operand whose cotangent we want, "y" the other one; g's dims are (batch, the
    # other's free dims g_yf, ...) as dot_general orders them.
    y_free = tuple(_free(y_ndim, rc, rb))
    contracted = [lc[j] for j in _argsort(rc)]  # x's dims matching y's contracting dims, in y's order
    x_free = _free(x_ndim, lc, lb)
    order = list(lb) + x_free + contracted
    swapped_order = list(lb) + contracted + x_free
    ident = list(range(x_ndim))
    if order != ident and swapped_order == ident:
        plan = (True, ((y_free, g_yf), (tuple(rb), g_b)), None)
    else:
        perm = None if order == ident else _argsort(order)
        plan = (False, ((g_yf, y_free), (g_b, tuple(rb))), perm)
    return plan


def _dot_vjp(wrt_x: bool):
    def rule(g, ans, x, y, *, dimension_numbers, preferred_element_type=None):
        swap, dn, perm = _vjp_plan(dimension_numbers, x.ndim, y.ndim, wrt_x)
        other, target = (y, x) if wrt_x else (x, y)
        r = dot_general_p.bind(other, g, dimension_numbers=dn, preferred_element_type=None) if swap else \
            dot_general_p.bind(g, other, dimension_numbers=dn, preferred_element_type=None)
        if perm is not None:
            r = transpose(r, perm)
        if r.dtype == target.dtype and not r.weak_type:
            return r
        return convert_element_type(r, target.dtype)
    return rule


_dot_vjp_x, _dot_vjp_y = _dot_vjp(True), _dot_vjp(False)


def _shift(dims, d):
    return tuple(a + (a >= d) for a in dims)


def _dot_batch(args, dims, *, dimension_numbers, preferred_element_type=None):
    x, y = args
    dx, dy = dims
    (lc, rc), (lb, rb) = dimension_numbers
    if dx is not None and dy is not None:
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


_DNS: dict = {}  # dimension_numbers as given -> as ints (a cache: callers repeat a few)


def dot_general(x, y, dimension_numbers, preferred_element_type=None):
    """The generalised tensor contraction of jax.lax.dot_general: dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); the result's dimensions are the batch ones, then lhs's free ones, then rhs's.
    preferred_element_type sets the result dtype; JAX's precision argument is not accepted (NumPy computes at
    full precision)."""
    try:
        dn = _DNS[dimension_numbers]
    except (KeyError, TypeError):  # new, or unhashable (lists)
        (lc, rc), (lb, rb) = dimension_numbers
        dn = ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)),
              (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))
        if isinstance(dimension_numbers, tuple) and len(_DNS) < 4096:
            try:
                _DNS[dimension_numbers] = dn
            except TypeError:
                pass
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    return dot_general_p.bind(x, y, dimension_numbers=dn, preferred_element_type=pet)


# --- linear: x w^T + b -----------------------------------------------------------------------------------

def _xwt(ndim: int) -> tuple:
    """dot_general's dimension_numbers of x w^T: x's last dimension contracted with w's second."""
    return (((ndim - 1,), (1,)), ((), ()))


def _linear_rule(x: ShapedArray, w: ShapedArray, b: ShapedArray) -> ShapedArray:
    op = "linear"
    check_dtype(op, x, "fc")
    if not (x.dtype == w.dtype == b.dtype):
        type_error(op, f"operands must share one dtype, got {x.str_short()}, {w.str_short()} and {b.str_short()}")
    if x.ndim < 1 or w.ndim != 2 or b.ndim != 1:
        type_error(op, f"expects x of rank >= 1, a matrix w and a vector b, got {x.str_short()}, "
                       f"{w.str_short()} and {b.str_short()}")
    if x.shape[-1] != w.shape[1] or b.shape[0] != w.shape[0]:
        type_error(op, f"shapes do not fit x (..., K), w (N, K), b (N,): got {x.str_short()}, {w.str_short()} "
                       f"and {b.str_short()}")
    return ShapedArray(tuple(x.shape[:-1]) + (w.shape[0],), x.dtype, x.weak_type and w.weak_type and b.weak_type)


def _linear_impl(xp):
    dot = _dot_impl(xp)
    fit = threads.fit if xp.__name__ == "numpy" else (lambda mac: None)

    def f(x, w, b):
        if x.ndim > 2 and x.dtype.itemsize > 2:  # the rows of x as one matrix, into a fresh (..., N) array
            (n, k), m = w.shape, math.prod(x.shape[:-1])
            y = xp.empty(x.shape[:-1] + (n,), x.dtype)
            fit(m * n * k)
            xp.dot(x.reshape(m, k), w.T, out=y.reshape(m, n))
        else:
            y = dot(x, w, dimension_numbers=_xwt(x.ndim))
        return xp.add(y, b, out=y)  # (y is a fresh array: the bias is added in place)
    return f


def _linear_batch(args, dims):
    x, w, b = args
    dx, dw, db = dims
    if dw is None and db is None:  # the common case (vmap over examples): the batch is one more row dim of x
        x = move_axis(x, dx, 0)
        return linear_p.bind(x, w, b), 0
    n = batch_size(args, dims)
    x, w, b = to_front(x, dx, n), to_front(w, dw, n), to_front(b, db, n)
    y = dot_general(x, w, (((x.ndim - 1,), (2,)), ((0,), (0,))))  # (n, ..., N)
    return add_p.bind(y, broadcast_in_dim(b, y.shape, (0, y.ndim - 1))), 0


def _linear_vjp_x(g, ans, x, w, b):
    return dot_general_p.bind(g, w, dimension_numbers=(((g.ndim - 1,), (0,)), ((), ())),
                              preferred_element_type=None)


def _linear_vjp_w(g, ans, x, w, b):
    lead = tuple(range(g.ndim - 1))  # every dimension but the last: rows of g against rows of x
    return dot_general_p.bind(g, x, dimension_numbers=((lead, lead), ((), ())), preferred_element_type=None)


def _linear_vjp_b(g, ans, x, w, b):
    return reduce_sum(g, tuple(range(g.ndim - 1)))


linear_p = Primitive(
    "linear", impl=_linear_impl, abstract_eval=_linear_rule,
    jvp=[lambda t, ans, x, w, b: dot_general_p.bind(t, w, dimension_numbers=_xwt(t.ndim), preferred_element_type=None),
         lambda t, ans, x, w, b: dot_general_p.bind(x, t, dimension_numbers=_xwt(x.ndim), preferred_element_type=None),
         lambda t, ans, x, w, b: broadcast_in_dim(t, ans.shape, (ans.ndim - 1,))],
    vjp=[_linear_vjp_x, _linear_vjp_w, _linear_vjp_b], batch=_linear_batch)


def linear(x, w, b):
    """x w^T + b over the last dimension of x (x (..., K), w (N, K), b (N,) -> (..., N)): torch's linear with a
    bias as one primitive, so that an eager nn.Linear is one recorded node (torch's AddmmBackward0) whose
    backward runs this card's rules. Its values are dot_general's x w^T plus b."""
    return linear_p.bind(x, w, b)
