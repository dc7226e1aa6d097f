"""Cases for the core primitives: elementwise, reductions, shape ops, dot_general, linear and the call primitives.

Each case is `case(draw) -> (args, params)` (see README.md): NumPy operands inside the primitive's
smooth domain (float64 unless the primitive needs another dtype) and the params `prim.bind` takes.
Shapes are small (0-d to 3-d, sides 1..4, so size-1 dimensions are common).
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as jnp
from funcgrad._src.core.aval import ShapedArray
from funcgrad.testing import arrays, shapes
from funcgrad._src.interpreters.batching import trace_to_jaxpr

from ._special import Special

F64, F32, I32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
BOOL = np.dtype(np.bool_)


# --- value helpers --------------------------------------------------------------------------------

def shape(draw, min_dims=0, max_dims=3, max_side=4):
    return tuple(draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side)))


def uniform(draw, shp, lo=-2.0, hi=2.0, dtype=F64):
    return draw(arrays(dtype, shp, elements=st.floats(lo, hi)))


def away_from_zero(draw, shp, lo=0.5, hi=2.0):
    """Entries with lo <= |x| <= hi and a random sign."""
    mag = uniform(draw, shp, lo, hi)
    neg = draw(arrays(BOOL, shp))
    return np.where(neg, -mag, mag)


def distinct(draw, shp, gap=0.5):
    """Entries no two of which are within 0.75 * gap of each other (no ties for max/min/argmax)."""
    n = math.prod(shp)
    perm = np.array(draw(st.permutations(range(n))), dtype=F64)
    noise = uniform(draw, (n,), 0.0, gap / 4)
    return ((perm - (n - 1) / 2) * gap + noise).reshape(shp)


def subset(draw, items, min_size=0):
    """A sorted tuple: a subset of `items` with at least min_size elements."""
    items = list(items)
    chosen = draw(st.lists(st.sampled_from(items), min_size=min_size, max_size=len(items), unique=True)) \
        if items else []
    return tuple(sorted(chosen))


# --- elementwise ----------------------------------------------------------------------------------

def unary(lo, hi):
    def case(draw):
        return [uniform(draw, shape(draw), lo, hi)], {}
    return case


def unary_away_from_zero(lo, hi):
    def case(draw):
        return [away_from_zero(draw, shape(draw), lo, hi)], {}
    return case


def binary(lo, hi):
    def case(draw):
        s = shape(draw)
        return [uniform(draw, s, lo, hi), uniform(draw, s, lo, hi)], {}
    return case


def div_case(draw):
    s = shape(draw)
    return [uniform(draw, s, -3, 3), away_from_zero(draw, s, 0.5, 2.0)], {}


def abs_case(draw):
    """Real or complex x away from 0, with either face's convention at the kink."""
    x = away_from_zero(draw, shape(draw), 0.1, 3)
    if draw(st.booleans()):
        x = x * np.exp(1j * uniform(draw, x.shape, -3, 3))
    return [x], draw(st.sampled_from([{}, {"kink": "torch"}]))


def pow_case(draw):
    s = shape(draw)
    kink = draw(st.sampled_from([{}, {"kink": "torch"}, {"kink": "jax_int"}]))  # (jax_int: lax.pow's integer y)
    return [uniform(draw, s, 0.5, 2.0), uniform(draw, s, -2.0, 2.0)], kink


def no_ties_case(draw):
    """max/min: operands apart by at least 0.1 everywhere (no kinks)."""
    s = shape(draw)
    x = uniform(draw, s, -2, 2)
    return [x, x + away_from_zero(draw, s, 0.1, 1.0)], {}


def compare_case(draw):
    """Comparisons: random operands equal at random positions, so eq/le/ge see ties."""
    s = shape(draw)
    x, y = uniform(draw, s, -2, 2), uniform(draw, s, -2, 2)
    same = draw(arrays(BOOL, s))
    return [x, np.where(same, x, y)], {}


def integer_pow_case(draw):
    y = draw(st.sampled_from([-3, -2, -1, 0, 1, 2, 3, 4]))
    return [away_from_zero(draw, shape(draw), 0.5, 2.0)], {"y": y}


def select_case(draw):
    s = shape(draw)
    return [draw(arrays(BOOL, s)), uniform(draw, s), uniform(draw, s)], {}


# (input dtype, new dtype, weak_type): float -> float conversions are differentiable; the others
# have zero derivative.
_CONVERSIONS = [(F64, F32, False), (F64, F64, True), (F32, F64, False), (F64, I32, False),
                (I32, F64, False), (BOOL, F64, False), (F32, F32, True)]


def convert_case(draw):
    src, dst, weak = draw(st.sampled_from(_CONVERSIONS))
    s = shape(draw)
    if src.kind == "f":
        x = uniform(draw, s, -3, 3, dtype=src)
    elif src == BOOL:
        x = draw(arrays(BOOL, s))
    else:
        x = draw(arrays(src, s, elements=st.integers(-5, 5)))
    return [x], {"new_dtype": dst, "weak_type": weak}


# --- reductions -----------------------------------------------------------------------------------

def reduce_case(values):
    def case(draw):
        s = shape(draw, min_dims=1)
        return [values(draw, s)], {"axes": subset(draw, range(len(s)), min_size=1)}
    return case


def arg_case(draw):
    s = shape(draw, min_dims=1)
    return [distinct(draw, s)], {"axis": draw(st.integers(0, len(s) - 1)),
                                 "index_dtype": draw(st.sampled_from([I32, I64]))}


# --- shape ops ------------------------------------------------------------------------------------

def broadcast_in_dim_case(draw):
    s = shape(draw)
    out_ndim = draw(st.integers(len(s), min(len(s) + 2, 4)))
    dims = tuple(sorted(draw(st.permutations(range(out_ndim)))[:len(s)])) if s else ()
    out = [draw(st.integers(1, 3)) for _ in range(out_ndim)]
    for i, d in enumerate(dims):
        if s[i] != 1:
            out[d] = s[i]
    return [uniform(draw, s)], {"shape": tuple(out), "broadcast_dimensions": dims}


def _prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def reshape_case(draw):
    s = shape(draw)
    factors = _prime_factors(math.prod(s))
    ndim = draw(st.integers(0 if not factors else 1, 3))
    new = [1] * ndim
    for f in factors:
        new[draw(st.integers(0, ndim - 1))] *= f
    return [uniform(draw, s)], {"new_sizes": tuple(new)}


def transpose_case(draw):
    s = shape(draw)
    return [uniform(draw, s)], {"permutation": tuple(draw(st.permutations(range(len(s)))))}


def squeeze_case(draw):
    s = list(shape(draw, max_dims=2))
    for _ in range(draw(st.integers(1, 2))):
        s.insert(draw(st.integers(0, len(s))), 1)
    ones = [i for i, n in enumerate(s) if n == 1]
    return [uniform(draw, tuple(s))], {"dimensions": subset(draw, ones, min_size=1)}


def expand_dims_case(draw):
    s = shape(draw)
    k = draw(st.integers(1, 2))
    dims = tuple(sorted(draw(st.lists(st.integers(0, len(s) + k - 1), min_size=k, max_size=k, unique=True))))
    return [uniform(draw, s)], {"dimensions": dims}


def concatenate_case(draw):
    s = list(shape(draw, min_dims=1))
    d = draw(st.integers(0, len(s) - 1))
    args = []
    for _ in range(draw(st.integers(2, 3))):
        s[d] = draw(st.integers(1, 3))
        args.append(uniform(draw, tuple(s)))
    return args, {"dimension": d}


def slice_case(draw):
    s = shape(draw, min_dims=1)
    start, limit, strides = [], [], []
    for n in s:
        a = draw(st.integers(0, n - 1))
        start.append(a)
        limit.append(draw(st.integers(a + 1, n)))
        strides.append(draw(st.integers(1, 3)))
    return [uniform(draw, s)], {"start_indices": tuple(start), "limit_indices": tuple(limit),
                                "strides": tuple(strides)}


def pad_case(draw):
    s = shape(draw)
    cfg = []
    for n in s:
        interior = draw(st.integers(0, 2))
        size = n + (n - 1) * interior
        lo = draw(st.integers(max(-1, 1 - size), 2))        # negative edges crop, leaving >= 1 element
        hi = draw(st.integers(max(-1, 1 - size - lo), 2))
        cfg.append((lo, hi, interior))
    return [uniform(draw, s), uniform(draw, ())], {"padding_config": tuple(cfg)}


def rev_case(draw):
    s = shape(draw, min_dims=1)
    return [uniform(draw, s)], {"dimensions": subset(draw, range(len(s)), min_size=1)}


def iota_case(draw):
    s = shape(draw, min_dims=1)
    return [], {"dtype": draw(st.sampled_from([I32, I64, F32, F64])), "shape": s,
                "dimension": draw(st.integers(0, len(s) - 1))}


def full_case(draw):
    dtype = draw(st.sampled_from([F64, F32, I32, BOOL]))
    fill = {"f": draw(st.floats(-3, 3)), "i": draw(st.integers(-5, 5)), "b": draw(st.booleans())}[dtype.kind]
    return [], {"shape": shape(draw), "fill_value": fill, "dtype": dtype, "weak_type": draw(st.booleans())}


def dot_general_case(draw):
    """Random batch, contracting and free dimensions, laid out in random orders in both operands."""
    nb = draw(st.integers(0, 2))
    nc = draw(st.integers(0, 2))
    nxf = draw(st.integers(0, max(0, min(2, 3 - nb - nc))))
    nyf = draw(st.integers(0, max(0, min(2, 3 - nb - nc))))
    b_sizes = [draw(st.integers(1, 3)) for _ in range(nb)]
    c_sizes = [draw(st.integers(1, 3)) for _ in range(nc)]
    x_roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nxf)]
    y_roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nyf)]
    x_roles = [x_roles[i] for i in draw(st.permutations(range(len(x_roles))))]
    y_roles = [y_roles[i] for i in draw(st.permutations(range(len(y_roles))))]

    def layout(roles):
        sizes = {"b": b_sizes, "c": c_sizes}
        return tuple(sizes[r][i] if r in sizes else draw(st.integers(1, 3)) for r, i in roles)

    def where(roles, kind):
        return tuple(roles.index((kind, i)) for i in range(nb if kind == "b" else nc))

    dn = ((where(x_roles, "c"), where(y_roles, "c")), (where(x_roles, "b"), where(y_roles, "b")))
    # mostly float64; sometimes float32 operands accumulated into a float64 result
    dtype, preferred = draw(st.sampled_from([(F64, None), (F64, None), (F64, F64), (F32, F64)]))
    return ([uniform(draw, layout(x_roles), dtype=dtype), uniform(draw, layout(y_roles), dtype=dtype)],
            {"dimension_numbers": dn, "preferred_element_type": preferred})


def linear_case(draw):
    """x (..., K) of rank 1 to 3, w (N, K), b (N,): mostly float64, sometimes float32 (nn.Linear's default)."""
    lead = shape(draw, max_dims=2)
    k, n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    dtype = draw(st.sampled_from([F64, F64, F64, F32]))
    return [uniform(draw, lead + (k,), dtype=dtype), uniform(draw, (n, k), dtype=dtype),
            uniform(draw, (n,), dtype=dtype)], {}


# --- call primitives ------------------------------------------------------------------------------

def _two_operands(draw):
    s = shape(draw)
    return s, uniform(draw, s, -2, 2), uniform(draw, s, 0.5, 2)


def _avals(*xs):
    return [ShapedArray(x.shape, x.dtype) for x in xs]


def pjit_case(draw):
    """A jit-traced function with two outputs and a closed-over constant."""
    s, x, y = _two_operands(draw)
    c = uniform(draw, s, -1, 1)

    def fn(a, b):
        return jnp.sin(a) * b + c, jnp.sum(jnp.exp(a) / b)
    return [x, y], {"jaxpr": funcgrad.make_jaxpr(fn)(x, y), "name": "fn"}


def custom_jvp_call_case(draw):
    """custom_jvp_call with a (correct) hand-written jvp rule: the card must apply the rule."""
    s, x, y = _two_operands(draw)

    def fn(a, b):
        return [jnp.sin(a) * b, a * a]

    def jvp(primals, tangents):
        (a, b), (ta, tb) = primals, tangents
        return fn(a, b), [jnp.cos(a) * b * ta + jnp.sin(a) * tb, 2 * a * ta]
    jaxpr = trace_to_jaxpr(fn, _avals(x, y), "custom_jvp")
    return [x, y], {"jaxpr": jaxpr, "jvp": jvp, "name": "sin_mul"}


def custom_vjp_call_case(draw):
    """custom_vjp_call with (correct) hand-written fwd/bwd rules and residuals."""
    s, x, y = _two_operands(draw)

    def fn(a, b):
        return [jnp.sin(a) * b, jnp.exp(b)]

    def fwd(args):
        a, b = args
        sa, eb = jnp.sin(a), jnp.exp(b)
        return [sa * b, eb], (a, b, sa, eb)

    def bwd(res, cts):
        a, b, sa, eb = res
        g1, g2 = cts
        return [jnp.cos(a) * b * g1, sa * g1 + eb * g2]
    jaxpr = trace_to_jaxpr(fn, _avals(x, y), "custom_vjp")
    return [x, y], {"jaxpr": jaxpr, "fwd": fwd, "bwd": bwd, "name": "sin_mul"}


def remat_case(draw):
    s, x, y = _two_operands(draw)
    c = uniform(draw, s, -1, 1)

    def fn(a, b):
        h = jnp.tanh(a * b + c)
        return [h * a, jnp.sum(h * h)]
    return [x, y], {"jaxpr": trace_to_jaxpr(fn, _avals(x, y), "checkpoint"), "name": "fn"}


def clamp_bounds_case(draw):
    """Values away from the bounds -1 and 1 (the derivative jumps there); one bound may be absent."""
    x = away_from_zero(draw, shape(draw), 0.1, 3.0)
    x = np.where(np.abs(np.abs(x) - 1.0) < 0.1, x * 1.3, x)
    lo, hi = draw(st.sampled_from([(-1.0, 1.0), (-1.0, None), (None, 1.0)]))
    return [x], {"lo": lo, "hi": hi}


CASES = {
    # unary elementwise
    "neg": unary(-3, 3), "exp": unary(-3, 3), "log": unary(0.1, 5), "log1p": unary(-0.9, 5),
    "expm1": unary(-3, 3), "tanh": unary(-3, 3), "logistic": unary(-5, 5), "sin": unary(-3, 3),
    "cos": unary(-3, 3), "sqrt": unary(0.1, 5), "rsqrt": unary(0.1, 5),
    "abs": abs_case, "sign": unary_away_from_zero(0.1, 3), "relu": unary_away_from_zero(0.1, 3),
    "clamp_bounds": clamp_bounds_case,
    "stop_gradient": unary(-3, 3),
    # binary elementwise
    "add": binary(-3, 3), "sub": binary(-3, 3), "mul": binary(-3, 3), "div": div_case, "pow": pow_case,
    "max": no_ties_case, "min": no_ties_case, "integer_pow": integer_pow_case,
    "eq": compare_case, "ne": compare_case, "lt": compare_case, "le": compare_case, "gt": compare_case,
    "ge": compare_case, "select": select_case, "convert_element_type": convert_case,
    # reductions
    "reduce_sum": reduce_case(lambda d, s: uniform(d, s)), "reduce_max": reduce_case(distinct),
    "reduce_min": reduce_case(distinct),
    "reduce_prod": reduce_case(lambda d, s: away_from_zero(d, s, 0.5, 1.5)),
    "softmax": reduce_case(lambda d, s: uniform(d, s)), "log_softmax": reduce_case(lambda d, s: uniform(d, s)),
    "argmax": arg_case, "argmin": arg_case,
    # shape ops and creation
    "broadcast_in_dim": broadcast_in_dim_case, "reshape": reshape_case, "transpose": transpose_case,
    "squeeze": squeeze_case, "expand_dims": expand_dims_case, "concatenate": concatenate_case,
    "slice": slice_case, "pad": pad_case, "rev": rev_case, "iota": iota_case, "full": full_case,
    # contraction
    "dot_general": dot_general_case, "linear": linear_case,
    # call primitives
    "pjit": pjit_case, "custom_jvp_call": custom_jvp_call_case, "custom_vjp_call": custom_vjp_call_case,
    "remat": remat_case,
}


# --- special points (see _special.py) -------------------------------------------------------------

_TIES_FD = "a tie of two operands (or entries) is a kink, and independently drawn special values tie often"
SPECIAL = {
    "abs": Special(kinks=(0.0,)), "relu": Special(kinks=(0.0,)), "clamp_bounds": Special(kinks=(-1.0, 1.0)),
    "log": Special("nonnegative"), "sqrt": Special("nonnegative"), "rsqrt": Special("nonnegative"),
    "log1p": Special("unit"), "div": Special(("real", "nonzero")), "pow": Special(("nonnegative", "real")),
    "integer_pow": Special(kinks=(0.0,)),  # a pole at 0 for negative powers
    "max": Special(ties=((0, 1),), fd=False, why=_TIES_FD), "min": Special(ties=((0, 1),), fd=False, why=_TIES_FD),
    "reduce_max": Special(fd=False, why=_TIES_FD), "reduce_min": Special(fd=False, why=_TIES_FD),
    "pjit": Special(("real", "nonzero"), tiny=False),  # sums exp(a) / b: 1 / tiny overflows
}
