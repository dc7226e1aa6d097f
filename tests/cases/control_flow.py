"""Cases for the control-flow primitives (cond, while, scan): operands plus traced body jaxprs."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import funcgrad.numpy as jnp
from funcgrad._src.core.aval import ShapedArray
from funcgrad._src.control._bodies import trace_flat
from funcgrad.testing import arrays, shapes

from ._special import Special

F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)


def _uniform(draw, shp, lo, hi):
    return draw(arrays(F64, shp, elements=st.floats(lo, hi)))


def _avals(*xs):
    return [ShapedArray(np.shape(x), np.asarray(x).dtype) for x in xs]


def _open(fun, avals, name):
    jaxpr = trace_flat(fun, avals, name)
    assert not jaxpr.constvars, f"{name} case bodies must not close over constants"
    return jaxpr


def cond_case(draw):
    s = tuple(draw(shapes(max_dims=2, max_side=3)))
    x, y = _uniform(draw, s, -1.5, 1.5), _uniform(draw, s, 0.5, 1.5)
    index = np.int32(draw(st.integers(0, 1)))
    branches = (
        _open(lambda a, b: [jnp.sin(a) * b, jnp.exp(b)], _avals(x, y), "cond"),
        _open(lambda a, b: [a * a / b, jnp.tanh(a + b)], _avals(x, y), "cond"),
    )
    return [index, x, y], {"branches": branches}


def while_case(draw):
    """Carry (i, x); cond: i < n (n a cond constant); body: (i + one, x * c + sin x) (c, one body consts)."""
    s = tuple(draw(shapes(max_dims=2, max_side=3)))
    n = np.int32(draw(st.integers(0, 3)))
    c = _uniform(draw, s, 0.5, 1.2)
    one = np.int32(1)
    x = _uniform(draw, s, -1.0, 1.0)
    i0 = np.int32(0)
    cond_j = _open(lambda n_, i, x_: [i < n_], _avals(n, i0, x), "while cond")
    body_j = _open(lambda c_, one_, i, x_: [i + one_, x_ * c_ + jnp.sin(x_)], _avals(c, one, i0, x), "while body")
    return [n, c, one, i0, x], {"cond_jaxpr": cond_j, "body_jaxpr": body_j, "n_cond_consts": 1,
                                "n_body_consts": 2}


def scan_case(draw):
    """consts (w,), carry (h,), xs (x,): h' = tanh(w * h + x), y = h * x."""
    s = tuple(draw(shapes(max_dims=2, max_side=3)))
    length = draw(st.integers(1, 4))
    w, h = _uniform(draw, s, -1.0, 1.0), _uniform(draw, s, -1.0, 1.0)
    xs = _uniform(draw, (length,) + s, -1.0, 1.0)
    jaxpr = _open(lambda w_, h_, x_: [jnp.tanh(w_ * h_ + x_), h_ * x_], _avals(w, h, xs[0]), "scan")
    return [w, h, xs], {"jaxpr": jaxpr, "n_consts": 1, "n_carry": 1, "length": length,
                        "reverse": draw(st.booleans())}


CASES = {"cond": cond_case, "while": while_case, "scan": scan_case}


SPECIAL = {"cond": Special((None, "real", "nonzero"))}  # a branch divides by its second operand
