"""Elementwise functions at their kinks, bounds and special points, to second order, in both faces.

Each row is (name, point, face): the value, first and second derivative are computed forward
(jvp of jvp) and in reverse (grad of grad) in the JAX face, in reverse (autograd.grad with
create_graph=True) in the torch face, and compared with JAX 0.10 / torch float64 (under importorskip) and,
where the function is smooth at the point, with the exact values written from the mathematics. At a kink
the faces follow their own library's convention (DESIGN.md, "Conventions per face"): the cards take it as
a `kink` parameter, which jit, vmap and the Tensor engine must carry.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._src.prims import elementwise as ew

LN2 = math.log(2.0)
INF, NAN = math.inf, math.nan
SIG = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
DSIG = lambda z: math.exp(-abs(z)) / (1 + math.exp(-abs(z))) ** 2  # noqa: E731  (sigma', symmetric)
PHI0 = 1 / math.sqrt(2 * math.pi)
SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@pytest.fixture(autouse=True)
def _x64():
    prev = fg.config.read("enable_x64")
    fg.config.update("enable_x64", True)
    yield
    fg.config.update("enable_x64", prev)


def _same(a, b, rtol=1e-12):
    if math.isnan(b):
        return math.isnan(a)
    if math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(1.0, abs(b))


# --- the JAX face -----------------------------------------------------------------------------------
# (name, f(lib, numpy module, nn module, x), point, exact (value, d1, d2) or None)

JAX_ROWS = [
    # smooth functions whose naive formula has a kink: the exact derivatives
    ("softplus", lambda L, N, x: L.nn.softplus(x), 0.0, (LN2, 0.5, 0.25)),
    ("softplus", lambda L, N, x: L.nn.softplus(x), 30.0, (30 + math.log1p(math.exp(-30)), SIG(30), DSIG(30))),
    ("softplus", lambda L, N, x: L.nn.softplus(x), -30.0, (math.log1p(math.exp(-30)), SIG(-30), DSIG(-30))),
    ("log_sigmoid", lambda L, N, x: L.nn.log_sigmoid(x), 0.0, (-LN2, 0.5, -0.25)),
    ("log_sigmoid", lambda L, N, x: L.nn.log_sigmoid(x), -30.0, (-30 - math.log1p(math.exp(-30)), SIG(30), -DSIG(30))),
    ("logaddexp(0,x)", lambda L, N, x: N.logaddexp(0.0, x), 0.0, (LN2, 0.5, 0.25)),
    ("logaddexp(x,0)", lambda L, N, x: N.logaddexp(x, 0.0), 2.0, (math.log1p(math.exp(2)), SIG(2), DSIG(2))),
    ("logaddexp(x,x)", lambda L, N, x: N.logaddexp(x, x), 0.0, (LN2, 1.0, 0.0)),
    ("logaddexp(x,-inf)", lambda L, N, x: N.logaddexp(x, -INF), 0.0, (0.0, 1.0, 0.0)),
    ("logaddexp(x,x)", lambda L, N, x: N.logaddexp(x, x), INF, None),
    ("logaddexp(x,x)", lambda L, N, x: N.logaddexp(x, x), -INF, None),
    ("logaddexp(-inf,x)", lambda L, N, x: N.logaddexp(-INF, x), -INF, None),
    ("logaddexp2(0,x)", lambda L, N, x: N.logaddexp2(0.0, x), 0.0, (1.0, 0.5, LN2 / 4)),
    ("logaddexp2(x,x)", lambda L, N, x: N.logaddexp2(x, x), 0.0, (1.0, 1.0, 0.0)),
    ("hypot(x,1)", lambda L, N, x: N.hypot(x, 1.0), 0.0, (1.0, 0.0, 1.0)),
    ("hypot(1,x)", lambda L, N, x: N.hypot(1.0, x), 0.0, (1.0, 0.0, 1.0)),
    ("hypot(x,3)", lambda L, N, x: N.hypot(x, 3.0), 4.0, (5.0, 0.8, 9 / 125)),
    ("hypot(x,0)", lambda L, N, x: N.hypot(x, 0.0), 0.0, None),  # JAX: 1/2 (a tie of max(|x|, |y|))
    ("hypot(x,x)", lambda L, N, x: N.hypot(x, x), 0.0, None),
    ("hypot(x,0)", lambda L, N, x: N.hypot(x, 0.0), -2.0, (2.0, -1.0, 0.0)),
    # kinks: JAX's conventions
    ("abs", lambda L, N, x: N.abs(x), 0.0, None),  # select(x >= 0): 1
    ("abs", lambda L, N, x: N.abs(x), -0.0, None),
    ("abs^2", lambda L, N, x: N.abs(x) ** 2, 0.0, (0.0, 0.0, 2.0)),
    ("lax.abs*x", lambda L, N, x: L.lax.abs(x) * x, 0.0, None),
    ("abs(complex)", lambda L, N, x: N.abs(x * (1 + 1j)), 0.0, None),
    ("abs(complex)", lambda L, N, x: N.abs(x * (3 + 4j)), 1.0, (5.0, 5.0, 0.0)),
    ("copysign(x,1)", lambda L, N, x: N.copysign(x, 1.0), 0.0, None),
    ("copysign(2,x)", lambda L, N, x: N.copysign(2.0, x), 0.0, (2.0, 0.0, 0.0)),
    ("soft_sign", lambda L, N, x: L.nn.soft_sign(x), 0.0, None),
    ("relu", lambda L, N, x: L.nn.relu(x), 0.0, None),
    ("relu6", lambda L, N, x: L.nn.relu6(x), 6.0, None),
    ("leaky_relu", lambda L, N, x: L.nn.leaky_relu(x), 0.0, None),
    ("hard_tanh", lambda L, N, x: L.nn.hard_tanh(x), 1.0, None),
    ("hard_tanh", lambda L, N, x: L.nn.hard_tanh(x), -1.0, None),
    ("hard_sigmoid", lambda L, N, x: L.nn.hard_sigmoid(x), -3.0, None),
    ("hard_swish", lambda L, N, x: L.nn.hard_swish(x), 3.0, None),
    ("elu", lambda L, N, x: L.nn.elu(x), 0.0, None),  # the exponential branch: 1, 1
    ("elu(2)", lambda L, N, x: L.nn.elu(x, 2.0), 0.0, None),
    ("elu", lambda L, N, x: L.nn.elu(x), -1.0, (math.expm1(-1), math.exp(-1), math.exp(-1))),
    ("selu", lambda L, N, x: L.nn.selu(x), 0.0, None),
    ("selu", lambda L, N, x: L.nn.selu(x), 0.5, (SELU_S * 0.5, SELU_S, 0.0)),
    ("celu(2)", lambda L, N, x: L.nn.celu(x, 2.0), 0.0, None),
    ("sparse_plus", lambda L, N, x: L.nn.sparse_plus(x), 1.0, None),
    ("squareplus", lambda L, N, x: L.nn.squareplus(x), 0.0, (1.0, 0.5, 0.25)),
    ("gelu(tanh)", lambda L, N, x: L.nn.gelu(x), 0.0, (0.0, 0.5, math.sqrt(2 / math.pi))),
    ("gelu(erf)", lambda L, N, x: L.nn.gelu(x, approximate=False), 0.0, (0.0, 0.5, 2 * PHI0)),
    ("silu", lambda L, N, x: L.nn.silu(x), 0.0, (0.0, 0.5, 0.5)),
    ("mish", lambda L, N, x: L.nn.mish(x), 0.0, (0.0, 0.6, 0.64)),
    ("maximum(x,0)", lambda L, N, x: N.maximum(x, 0.0), 0.0, None),  # 1/2 each
    ("minimum(x,0)", lambda L, N, x: N.minimum(x, 0.0), 0.0, None),
    ("maximum(x,x)", lambda L, N, x: N.maximum(x, x), 0.0, (0.0, 1.0, 0.0)),
    ("fmax(x,0)", lambda L, N, x: N.fmax(x, 0.0), 0.0, None),  # jax.numpy's select: 0 to x1 at a tie
    ("fmin(0,x)", lambda L, N, x: N.fmin(0.0, x), 0.0, None),
    ("fmax(x,x)", lambda L, N, x: N.fmax(x, x), 1.0, (1.0, 1.0, 0.0)),
    ("clip", lambda L, N, x: N.clip(x, -1.0, 1.0), 1.0, None),
    ("clip", lambda L, N, x: N.clip(x, -1.0, 1.0), -1.0, None),
    ("clip^2", lambda L, N, x: N.clip(x, 0.0, 1.0) ** 2, 0.0, None),
    ("where", lambda L, N, x: N.where(x > 0, x * x, -x), 0.0, None),
    ("sign*x", lambda L, N, x: N.sign(x) * x, 0.0, None),
    ("floor", lambda L, N, x: N.floor(x), 1.0, (1.0, 0.0, 0.0)),
    ("round", lambda L, N, x: N.round(x), 0.5, (0.0, 0.0, 0.0)),
    ("sqrt", lambda L, N, x: N.sqrt(x), 0.0, None),
    ("cbrt", lambda L, N, x: N.cbrt(x), 0.0, None),
    ("heaviside", lambda L, N, x: N.heaviside(x, 0.5), 0.0, (0.5, 0.0, 0.0)),
    ("sinc", lambda L, N, x: N.sinc(x), 0.0, (1.0, 0.0, -math.pi ** 2 / 3)),
    ("x**0.", lambda L, N, x: N.power(x, N.asarray(0.0)), 0.0, None),  # JAX: y x**(y-1), NaN here
    ("x**1.", lambda L, N, x: N.power(x, N.asarray(1.0)), 0.0, None),
    ("x**2.", lambda L, N, x: N.power(x, N.asarray(2.0)), 0.0, (0.0, 0.0, 2.0)),
    ("x**0.5", lambda L, N, x: N.power(x, N.asarray(0.5)), 0.0, None),
    ("x**2", lambda L, N, x: x ** 2, 0.0, (0.0, 0.0, 2.0)),
    ("0**y", lambda L, N, y: N.power(N.asarray(0.0), y), 2.0, (0.0, 0.0, 0.0)),
    ("2**y", lambda L, N, y: N.power(N.asarray(2.0), y), 0.0, (1.0, LN2, LN2 ** 2)),
    # at the poles: logit' = 1/x + 1/(1-x) -> inf and logit'' = (2x-1)/(x(1-x))^2 -> -inf at 0, +inf at 1
    ("logit", lambda L, N, x: L.scipy.special.logit(x), 0.0, (-INF, INF, -INF)),
    ("logit", lambda L, N, x: L.scipy.special.logit(x), 1.0, (INF, INF, INF)),
    ("logit", lambda L, N, x: L.scipy.special.logit(x), 0.5, (0.0, 4.0, 0.0)),
    ("arcsin", lambda L, N, x: N.arcsin(x), 1.0, None),
    ("arccos", lambda L, N, x: N.arccos(x), -1.0, None),
    ("arcsin", lambda L, N, x: N.arcsin(x), 0.0, (0.0, 1.0, 0.0)),
    ("arctan2(x,0)", lambda L, N, x: N.arctan2(x, 0.0), 0.0, None),  # JAX: 0/0
    ("arctan2(x,1)", lambda L, N, x: N.arctan2(x, 1.0), 0.0, (0.0, 1.0, 0.0)),
    ("log", lambda L, N, x: N.log(x), 1e-300, (math.log(1e-300), 1e300, -INF)),
    ("expm1", lambda L, N, x: N.expm1(x), 0.0, (0.0, 1.0, 1.0)),
    ("log1p", lambda L, N, x: N.log1p(x), 0.0, (0.0, 1.0, -1.0)),
    ("xlogy(x,1)", lambda L, N, x: L.scipy.special.xlogy(x, 1.0), 0.0, (0.0, 0.0, 0.0)),
    ("xlog1py(x,0)", lambda L, N, x: L.scipy.special.xlog1py(x, 0.0), 0.0, (0.0, 0.0, 0.0)),
]


def _jax_face(lib, np_mod, f, x):
    x = np_mod.asarray(x, dtype=np.float64)
    g = lambda x: f(lib, np_mod, x)  # noqa: E731
    d = lambda x: lib.jvp(g, (x,), (np_mod.ones_like(x),))[1]  # noqa: E731
    return (float(g(x)), float(lib.grad(g)(x)), float(lib.grad(lib.grad(g))(x)),
            float(d(x)), float(lib.jvp(d, (x,), (np_mod.ones_like(x),))[1]))


def _check(got, want, labels, row):
    for a, b, what in zip(got, want, labels):
        assert _same(a, b), f"{row}: {what} {a!r}, expected {b!r} (all: {got} vs {want})"


JAX_LABELS = ("value", "d1 reverse", "d2 reverse", "d1 forward", "d2 forward")


_JIDS = [f"{r[0]}@{r[2]}" for r in JAX_ROWS]


@pytest.mark.parametrize("name,f,x,exact", [r for r in JAX_ROWS if r[3] is not None],
                         ids=[i for i, r in zip(_JIDS, JAX_ROWS) if r[3] is not None])
def test_jax_face_exact(name, f, x, exact):
    got = _jax_face(fg, fnp, f, x)
    v, d1, d2 = exact
    _check(got, (v, d1, d2, d1, d2), JAX_LABELS, f"{name} at {x}")


@pytest.mark.parametrize("name,f,x,exact", JAX_ROWS, ids=_JIDS)
def test_jax_face_vs_jax(name, f, x, exact):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp
    import jax.scipy.special  # noqa: F401
    with np.errstate(all="ignore"):
        want = _jax_face(jax, jjnp, f, x)
    got = _jax_face(fg, fnp, f, x)
    if (name, x) in JAX_OWN_NAN:  # JAX's NaN where the limit is known: the exact value is the target
        want = tuple(e if math.isnan(w) else w for w, e in zip(want, (exact[0], exact[1], exact[2], exact[1], exact[2])))
    _check(got, want, JAX_LABELS, f"{name} at {x}")


# JAX 0.10's reverse-mode logit'' at the poles is NaN (its rule 1/(x(1-x)) differentiates to inf * 0 there);
# its forward mode gives the limit, -inf at 0 and +inf at 1, as funcgrad does in both modes.
JAX_OWN_NAN = {("logit", 0.0), ("logit", 1.0)}


def test_jax_face_kinks_values():
    """JAX's conventions written out, so they are checked without jax too."""
    g = fg.grad
    assert float(g(fnp.abs)(0.0)) == 1.0 and float(g(fnp.abs)(-0.0)) == 1.0
    assert float(g(lambda x: fnp.hypot(x, 0.0))(0.0)) == 0.5
    assert float(g(lambda x: fnp.maximum(x, 0.0))(0.0)) == 0.5
    assert float(g(lambda x: fnp.fmax(x, 0.0))(0.0)) == 0.0
    assert float(g(lambda x: fnp.fmax(0.0, x))(0.0)) == 1.0
    assert math.isnan(float(g(lambda x: fnp.arctan2(x, 0.0))(0.0)))
    assert math.isnan(float(g(lambda x: x ** fnp.asarray(0.0))(0.0)))
    assert float(g(g(fg.nn.elu))(0.0)) == 1.0
    assert float(g(fg.scipy.special.logit)(0.0)) == INF


def test_logaddexp_at_infinities():
    """logaddexp(-inf, -inf) = -inf, (inf, inf) = inf with JAX's gradients (1 each at +inf, through
    _replace_inf; NaN at -inf, as JAX)."""
    gx, gy = fg.grad(fnp.logaddexp, argnums=(0, 1))(INF, INF)
    assert (float(gx), float(gy)) == (1.0, 1.0)
    assert float(fnp.logaddexp(-INF, -INF)) == -INF
    gx, gy = fg.grad(fnp.logaddexp, argnums=(0, 1))(-INF, 1.0)
    assert (float(gx), float(gy)) == (0.0, 1.0)
    assert float(fnp.logaddexp2(-INF, 3.0)) == 3.0


# --- the torch face ---------------------------------------------------------------------------------
# (name, f(torch-like module, x tensor), point, exact (value, d1, d2) or None, orders compared with torch)

def _c(T, v):
    return T.tensor(v, dtype=T.float64)


TORCH_ROWS = [
    ("softplus", lambda T, x: T.nn.functional.softplus(x), 0.0, (LN2, 0.5, 0.25), 2),
    ("softplus(beta=2)", lambda T, x: T.nn.functional.softplus(x, beta=2.0), 0.0, (LN2 / 2, 0.5, 0.5), 2),
    ("softplus", lambda T, x: T.nn.functional.softplus(x), 25.0, (25.0, 1.0, 0.0), 2),
    ("softplus", lambda T, x: T.nn.functional.softplus(x), -30.0, (math.log1p(math.exp(-30)), SIG(-30), DSIG(30)), 2),
    ("logsigmoid", lambda T, x: T.nn.functional.logsigmoid(x), 0.0, (-LN2, 0.5, -0.25), 2),
    ("logsigmoid", lambda T, x: T.nn.functional.logsigmoid(x), -30.0,
     (-30 - math.log1p(math.exp(-30)), SIG(30), -DSIG(30)), 2),
    ("logaddexp(x,0)", lambda T, x: T.logaddexp(x, _c(T, 0.0)), 0.0, (LN2, 0.5, 0.25), 2),
    ("logaddexp(x,x)", lambda T, x: x.logaddexp(x), 0.0, (LN2, 1.0, 0.0), 2),
    ("logaddexp2(x,0)", lambda T, x: T.logaddexp2(x, _c(T, 0.0)), 0.0, (1.0, 0.5, LN2 / 4), 2),
    ("logaddexp2(x,x)", lambda T, x: x.logaddexp2(x), 0.0, (1.0, 1.0, 0.0), 2),
    ("hypot(x,1)", lambda T, x: T.hypot(x, _c(T, 1.0)), 0.0, (1.0, 0.0, 1.0), 2),
    ("hypot(1,x)", lambda T, x: _c(T, 1.0).hypot(x), 0.0, (1.0, 0.0, 1.0), 2),
    ("hypot(x,0)", lambda T, x: T.hypot(x, _c(T, 0.0)), 0.0, None, 2),  # torch: x / ans, NaN
    ("abs", lambda T, x: T.abs(x), 0.0, None, 2),  # sign(x): 0
    ("abs^2", lambda T, x: x.abs() * x.abs(), 0.0, None, 2),
    ("abs(complex)", lambda T, x: T.abs(T.complex(x, x)), 0.0, None, 2),
    ("copysign(x,1)", lambda T, x: T.copysign(x, _c(T, 1.0)), 0.0, None, 1),  # (torch's d2: NaN, of result/x)
    ("softsign", lambda T, x: T.nn.functional.softsign(x), 0.0, None, 2),
    ("elu", lambda T, x: T.nn.functional.elu(x), 0.0, None, 2),  # d1 alpha, d2 0
    ("elu(2)", lambda T, x: T.nn.functional.elu(x, 2.0), 0.0, None, 2),
    ("elu", lambda T, x: T.nn.functional.elu(x), -1.0, (math.expm1(-1), math.exp(-1), math.exp(-1)), 2),
    ("celu(2)", lambda T, x: T.nn.functional.celu(x, 2.0), 0.0, None, 2),
    ("celu(2)", lambda T, x: T.nn.functional.celu(x, 2.0), -2.0,
     (2 * math.expm1(-1), math.exp(-1), math.exp(-1) / 2), 2),
    ("selu", lambda T, x: T.nn.functional.selu(x), 0.0, None, 2),
    ("relu", lambda T, x: T.nn.functional.relu(x), 0.0, None, 2),
    ("relu", lambda T, x: x.relu(), 0.0, None, 2),
    ("relu6", lambda T, x: T.nn.functional.relu6(x), 6.0, None, 2),
    ("leaky_relu", lambda T, x: T.nn.functional.leaky_relu(x), 0.0, None, 2),
    ("hardtanh", lambda T, x: T.nn.functional.hardtanh(x), -1.0, None, 2),
    ("hardsigmoid", lambda T, x: T.nn.functional.hardsigmoid(x), 3.0, None, 1),  # (torch: no double backward)
    ("hardswish", lambda T, x: T.nn.functional.hardswish(x), -3.0, None, 2),
    ("hardshrink", lambda T, x: T.nn.functional.hardshrink(x), 0.5, None, 2),
    ("softshrink", lambda T, x: T.nn.functional.softshrink(x), -0.5, None, 2),
    ("threshold", lambda T, x: T.nn.functional.threshold(x, 0.5, 2.0), 0.5, None, 2),
    ("rrelu(eval)", lambda T, x: T.nn.functional.rrelu(x), 0.0, None, 2),
    ("prelu", lambda T, x: T.nn.functional.prelu(x, T.tensor([0.25], dtype=T.float64)), 0.0, None, 2),
    ("gelu", lambda T, x: T.nn.functional.gelu(x), 0.0, (0.0, 0.5, 2 * PHI0), 2),
    ("gelu(tanh)", lambda T, x: T.nn.functional.gelu(x, approximate="tanh"), 0.0,
     (0.0, 0.5, math.sqrt(2 / math.pi)), 2),
    ("silu", lambda T, x: T.nn.functional.silu(x), 0.0, (0.0, 0.5, 0.5), 2),
    ("mish", lambda T, x: T.nn.functional.mish(x), 0.0, (0.0, 0.6, 0.64), 2),
    ("maximum(x,0)", lambda T, x: T.maximum(x, _c(T, 0.0)), 0.0, None, 2),  # half each
    ("minimum(x,0)", lambda T, x: T.minimum(x, _c(T, 0.0)), 0.0, None, 2),
    ("fmax(x,0)", lambda T, x: T.fmax(x, _c(T, 0.0)), 0.0, None, 2),
    ("clamp", lambda T, x: T.clamp(x, -1.0, 1.0), 1.0, None, 2),  # 1 on the closed interval
    ("clamp(tensors)", lambda T, x: T.clamp(x, _c(T, -1.0), _c(T, 1.0)), -1.0, None, 2),
    ("where", lambda T, x: T.where(x > 0, x * x, -x), 0.0, None, 2),
    ("sqrt", lambda T, x: T.sqrt(x), 0.0, None, 2),
    ("pow(x,0.)", lambda T, x: T.pow(x, 0.0), 0.0, (1.0, 0.0, 0.0), 2),
    ("pow(x,1.)", lambda T, x: T.pow(x, 1.0), 0.0, (0.0, 1.0, 0.0), 2),
    ("pow(x,2.)", lambda T, x: T.pow(x, 2.0), 0.0, (0.0, 0.0, 2.0), 2),
    ("pow(x,t2)", lambda T, x: T.pow(x, _c(T, 2.0)), 0.0, (0.0, 0.0, 2.0), 2),
    # (torch's pow(x, tensor(0.)) has a NaN second derivative at 0, of its where's unused branch: pow is
    # constant there, so that NaN is not a target)
    ("pow(x,t0)", lambda T, x: T.pow(x, _c(T, 0.0)), 0.0, (1.0, 0.0, 0.0), 1),
    ("atan2(x,0)", lambda T, x: T.atan2(x, _c(T, 0.0)), 0.0, None, 1),  # torch: 0 at the origin
    ("atan2(x,x)", lambda T, x: T.atan2(x, x), 0.0, None, 1),
    ("atan2(x,1)", lambda T, x: T.atan2(x, _c(T, 1.0)), 0.0, (0.0, 1.0, 0.0), 2),
    ("logit", lambda T, x: T.logit(x), 0.5, (0.0, 4.0, 0.0), 2),
    ("acos", lambda T, x: T.acos(x), 1.0, None, 2),
    ("asin", lambda T, x: T.asin(x), -1.0, None, 2),
    ("log", lambda T, x: T.log(x), 1e-300, (math.log(1e-300), 1e300, -INF), 2),
    ("expm1", lambda T, x: T.expm1(x), 0.0, (0.0, 1.0, 1.0), 2),
    ("log1p", lambda T, x: T.log1p(x), 0.0, (0.0, 1.0, -1.0), 2),
    # (torch's sinc has a NaN second derivative at 0, a smooth point: not a target)
    ("sinc", lambda T, x: T.sinc(x), 0.0, (1.0, 0.0, -math.pi ** 2 / 3), 1),
    ("smooth_l1", lambda T, x: T.nn.functional.smooth_l1_loss(x, _c(T, 0.0)), 0.0, (0.0, 0.0, 1.0), 2),
    ("smooth_l1(beta=2)", lambda T, x: T.nn.functional.smooth_l1_loss(x, _c(T, 0.0), beta=2.0), 0.0,
     (0.0, 0.0, 0.5), 2),
    ("smooth_l1", lambda T, x: T.nn.functional.smooth_l1_loss(x, _c(T, 0.0)), -1.0, None, 2),
    ("huber", lambda T, x: T.nn.functional.huber_loss(x, _c(T, 0.0)), 0.0, (0.0, 0.0, 1.0), 2),
    ("huber(delta=2)", lambda T, x: T.nn.functional.huber_loss(x, _c(T, 0.0), delta=2.0), 0.0,
     (0.0, 0.0, 1.0), 2),
    ("huber", lambda T, x: T.nn.functional.huber_loss(x, _c(T, 0.0)), 1.0, None, 2),
    ("l1", lambda T, x: T.nn.functional.l1_loss(x, _c(T, 0.0)), 0.0, None, 2),
    ("bce_with_logits", lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(x, _c(T, 1.0)), 0.0,
     (LN2, -0.5, 0.25), 2),
    ("Bernoulli.log_prob", lambda T, x: T.distributions.Bernoulli(logits=x).log_prob(_c(T, 1.0)), 0.0,
     (-LN2, 0.5, -0.25), 2),
    # (torch's Binomial writes softplus as max + log1p(exp(-|x|)): its second derivative at 0 is 0)
    ("Binomial.log_prob", lambda T, x: T.distributions.Binomial(3, logits=x).log_prob(_c(T, 1.0)), 0.0,
     (math.log(3) - 3 * LN2, -0.5, -0.75), 1),
]


def _torch_face(T, f, x, orders=2):
    t = T.tensor(x, dtype=T.float64, requires_grad=True)
    y = f(T, t)
    d1, = T.autograd.grad(y, t, create_graph=True)
    d2 = 0.0
    if d1.requires_grad and orders > 1:
        d2, = T.autograd.grad(d1, t, allow_unused=True)
        d2 = 0.0 if d2 is None else float(d2)
    return float(y), float(d1), d2


TORCH_LABELS = ("value", "d1", "d2")
_TIDS = [f"{r[0]}@{r[2]}" for r in TORCH_ROWS]


_EXACT = [r for r in TORCH_ROWS if r[3] is not None]
_EIDS = [i for i, r in zip(_TIDS, TORCH_ROWS) if r[3] is not None]


@pytest.mark.parametrize("name,f,x,exact,orders", _EXACT, ids=_EIDS)
def test_torch_face_exact(name, f, x, exact, orders):
    _check(_torch_face(fg, f, x), exact, TORCH_LABELS, f"{name} at {x}")


@pytest.mark.parametrize("name,f,x,exact,orders", TORCH_ROWS, ids=_TIDS)
def test_torch_face_vs_torch(name, f, x, exact, orders):
    torch = pytest.importorskip("torch")
    want = _torch_face(torch, f, x, orders)
    got = _torch_face(fg, f, x, orders)
    _check(got[:orders + 1], want[:orders + 1], TORCH_LABELS, f"{name} at {x}")


@pytest.mark.parametrize("name,f,x,exact,orders", _EXACT, ids=_EIDS)
def test_torch_face_forward_exact(name, f, x, exact, orders):
    """Forward mode over the torch face (funcgrad.func.jvp of jvp) at smooth points: the same exact values."""
    T = fg
    one = T.tensor(1.0, dtype=T.float64)
    g = lambda t: f(T, t)  # noqa: E731
    d = lambda t: T.func.jvp(g, (t,), (one,))[1]  # noqa: E731
    x0 = T.tensor(x, dtype=T.float64)
    _check((float(g(x0)), float(d(x0)), float(T.func.jvp(d, (x0,), (one,))[1])), exact, TORCH_LABELS,
           f"{name} at {x} (forward)")


def test_torch_face_kinks_values():
    """torch's conventions written out, so they are checked without torch too."""
    def d(f, x):
        return _torch_face(fg, f, x)
    assert d(lambda T, x: T.abs(x), 0.0)[1:] == (0.0, 0.0)
    assert d(lambda T, x: x.abs() ** 2, 0.0)[2] == 0.0
    assert d(lambda T, x: T.nn.functional.elu(x, 2.0), 0.0)[1:] == (2.0, 0.0)
    assert d(lambda T, x: T.nn.functional.celu(x, 2.0), 0.0)[1:] == (1.0, 0.0)
    assert math.isnan(d(lambda T, x: T.hypot(x, _c(T, 0.0)), 0.0)[1])
    assert d(lambda T, x: T.atan2(x, _c(T, 0.0)), 0.0)[1] == 0.0
    assert d(lambda T, x: T.maximum(x, _c(T, 0.0)), 0.0)[1] == 0.5
    assert d(lambda T, x: T.abs(T.complex(x, x)), 0.0)[1:] == (0.0, 0.0)


def _atan2_grads_at_origin(T):
    x, y = (T.tensor(0.0, dtype=T.float64, requires_grad=True) for _ in range(2))
    return tuple(float(g) for g in T.autograd.grad(T.atan2(x, y), (x, y)))


def test_atan2_gradient_at_the_origin_per_face():
    """atan2 at (0, 0): torch's reverse mode gives 0 for both inputs, JAX's rule 0/0 = NaN for both (one
    formula on the card, the convention chosen by the face)."""
    assert _atan2_grads_at_origin(fg) == (0.0, 0.0)
    gx, gy = fg.grad(lambda a, b: fnp.arctan2(a, b), argnums=(0, 1))(0.0, 0.0)
    assert math.isnan(float(gx)) and math.isnan(float(gy))
    # away from the origin both faces give y/(x^2+y^2) and -x/(x^2+y^2)
    x, y = fg.tensor(1.0, dtype=fg.float64, requires_grad=True), fg.tensor(2.0, dtype=fg.float64, requires_grad=True)
    assert tuple(float(g) for g in fg.autograd.grad(fg.atan2(x, y), (x, y))) == (0.4, -0.2)


def test_atan2_gradient_at_the_origin_matches_torch():
    torch = pytest.importorskip("torch")
    assert _atan2_grads_at_origin(fg) == _atan2_grads_at_origin(torch)


def test_atan2_gradient_at_the_origin_matches_jax():
    jax = pytest.importorskip("jax")
    want = jax.grad(lambda a, b: jax.numpy.arctan2(a, b), argnums=(0, 1))(0.0, 0.0)
    got = fg.grad(lambda a, b: fnp.arctan2(a, b), argnums=(0, 1))(0.0, 0.0)
    assert all(math.isnan(float(w)) for w in want) and all(math.isnan(float(g)) for g in got)


# --- the kink parameter through the transformations ----------------------------------------------

@pytest.mark.parametrize("kink,d1,d2", [("jax", 1.0, 0.0), ("torch", 0.0, 0.0)])
def test_abs_kink_survives_jit_vmap(kink, d1, d2):
    f = lambda x: ew.abs(x, kink) * 1.0  # noqa: E731
    xs = fnp.asarray([0.0, -0.0, 2.0, -2.0])
    want1 = [d1, d1, 1.0, -1.0]
    got = fg.jit(fg.vmap(fg.grad(f)))(xs)
    np.testing.assert_array_equal(np.asarray(got), want1)
    sq = lambda x: ew.abs(x, kink) ** 2  # noqa: E731
    got2 = fg.jit(fg.vmap(fg.grad(fg.grad(sq))))(xs)
    np.testing.assert_array_equal(np.asarray(got2), [2.0 * d1 * d1, 2.0 * d1 * d1, 2.0, 2.0])


def test_kink_params_in_jaxpr_and_jit_cache():
    x = fnp.asarray(0.0)
    text = str(fg.make_jaxpr(lambda x: ew.abs(x, "torch") + ew.abs(x))(x))
    assert "abs[kink=" in text and "torch" in text
    assert text.count("abs[") == 1  # JAX's convention is the default: printed as plain `abs`, as JAX
    elu_t = fg.jit(fg.grad(fg.grad(lambda x: ew.elu(x, 2.0, kink="torch"))))
    elu_j = fg.jit(fg.grad(fg.grad(lambda x: ew.elu(x, 2.0))))
    assert float(elu_t(x)) == 0.0 and float(elu_j(x)) == 2.0
    vm = fg.vmap(fg.grad(lambda x: ew.hypot(x, fnp.zeros_like(x), "torch")))(fnp.asarray([0.0, 3.0]))
    assert math.isnan(float(vm[0])) and float(vm[1]) == 1.0


def test_kink_param_rejects_unknown():
    with pytest.raises(TypeError, match="abs: kink must be 'jax' or 'torch'"):
        ew.abs(fnp.asarray(1.0), kink="numpy")
    with pytest.raises(TypeError, match="hypot: kink must be"):
        fg.make_jaxpr(lambda x: ew.hypot_p.bind(x, x, kink="numpy"))(fnp.asarray(1.0))


def test_tensor_engine_records_kink():
    """The Tensor engine's recorded node carries the torch convention (its backward gives 0 at 0), and a
    functional transform over the torch face too."""
    x = fg.tensor([0.0, 3.0, -0.0], dtype=fg.float64, requires_grad=True)
    (x.abs() ** 2).sum().backward(create_graph=True)
    np.testing.assert_array_equal(x.grad.detach().numpy(), [0.0, 6.0, 0.0])
    g = fg.func.grad(lambda t: fg.abs(t).sum())(fg.tensor([0.0, -1.0], dtype=fg.float64))
    np.testing.assert_array_equal(g.numpy(), [0.0, -1.0])


# --- ties of max / min / clamp ---------------------------------------------------------------------
# torch's clamp with Tensor bounds, clamp_min / clamp_max and fmax have forward formulas (derivatives.yaml's
# `result:` lines, clamp_jvp) that give a tie to another operand than their backward formulas do; the torch
# face reproduces both (the cards' kink="torch" rules). The grid holds every tie, NaN and -0.0 pattern.

_TIE_PTS = (-1.0, 0.0, -0.0, 1.0, NAN)
_TIE_FNS = {
    "clamp(min=)": (lambda T: (lambda x, y: T.clamp(x, min=y)), 2),
    "clamp(max=)": (lambda T: (lambda x, y: T.clamp(x, max=y)), 2),
    "clip(x, lo, hi)": (lambda T: (lambda x, y, z: T.clip(x, y, z)), 3),
    "Tensor.clamp(lo, hi)": (lambda T: (lambda x, y, z: x.clamp(y, z)), 3),
    "clamp_min": (lambda T: T.clamp_min, 2), "clamp_max": (lambda T: T.clamp_max, 2),
    "Tensor.clamp_min": (lambda T: (lambda x, y: x.clamp_min(y)), 2),
    "fmax": (lambda T: T.fmax, 2), "fmin": (lambda T: T.fmin, 2),
    "maximum": (lambda T: T.maximum, 2), "minimum": (lambda T: T.minimum, 2),
}


def _tie_grid(n):
    import itertools
    return [np.array(c) for c in zip(*itertools.product(_TIE_PTS, repeat=n))]


def _tie_derivatives(T, fn, arrs):
    """value, forward derivative in each operand (ones along it) and reverse gradient of the sum."""
    xs = [T.tensor(a, dtype=T.float64) for a in arrs]
    out = {"value": fn(*xs).detach().numpy()}
    for i in range(len(xs)):
        v = tuple(T.ones_like(x) if j == i else T.zeros_like(x) for j, x in enumerate(xs))
        out[f"fwd{i}"] = T.func.jvp(fn, tuple(xs), v)[1].detach().numpy()
    leaves = [x.clone().requires_grad_(True) for x in xs]
    fn(*leaves).sum().backward()
    for i, x in enumerate(leaves):
        out[f"rev{i}"] = np.zeros(arrs[0].shape) if x.grad is None else x.grad.numpy()
    return out


@pytest.mark.parametrize("name", list(_TIE_FNS))
def test_torch_face_ties_vs_torch(name):
    torch = pytest.importorskip("torch")
    mk, n = _TIE_FNS[name]
    arrs = _tie_grid(n)
    want, got = _tie_derivatives(torch, mk(torch), arrs), _tie_derivatives(fg, mk(fg), arrs)
    value = want["value"]
    for key in want:
        w, g = want[key], got[key]
        if key.startswith("fwd") and name in ("maximum", "minimum"):
            # (torch's forward formula of maximum gives a NaN result's tangent to `other` alone, its backward
            # to both: a NaN's derivative is not a target)
            w, g = w[~np.isnan(value)], g[~np.isnan(value)]
        np.testing.assert_array_equal(g, w, err_msg=f"{name} {key} at {[a.tolist() for a in arrs]}")


def test_torch_face_ties_written_out():
    """torch's tie rules (derivatives.yaml / FunctionsManual clamp_jvp, clamp_backward_min_max), checked
    without torch: away from ties each derivative is the exact 0 or 1."""
    T = fg
    x = np.array([1.0, 0.0, 2.0, 0.0, NAN])  # ties (1 and -0.0 / 0.0), above, below, NaN
    y = np.array([1.0, -0.0, 1.0, 1.0, 1.0])
    cases = {  # name: (fwd in x, fwd in y, rev in x, rev in y); the NaN column last
        "clamp(min=)": (T.clamp, {"min": True}, [0, 0, 1, 0, 0], [1, 1, 0, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 1, 0]),
        "clamp(max=)": (T.clamp, {"max": True}, [0, 0, 0, 1, 0], [1, 1, 1, 0, 1], [1, 1, 0, 1, 0], [0, 0, 1, 0, 0]),
        "clamp_min": (T.clamp_min, {}, [1, 1, 1, 0, 0], [0, 0, 0, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 1, 0]),
        "clamp_max": (T.clamp_max, {}, [1, 1, 0, 1, 0], [0, 0, 1, 0, 1], [1, 1, 0, 1, 0], [0, 0, 1, 0, 0]),
        "fmax": (T.fmax, {}, [0, 0, 1, 0, 0], [1, 1, 0, 1, 1], [1, 1, 1, 0, 0], [0, 0, 0, 1, 1]),
        "fmin": (T.fmin, {}, [1, 1, 0, 1, 0], [0, 0, 1, 0, 1], [1, 1, 0, 1, 0], [0, 0, 1, 0, 1]),
        "maximum": (T.maximum, {}, [0.5, 0.5, 1, 0], [0.5, 0.5, 0, 1], [0.5, 0.5, 1, 0], [0.5, 0.5, 0, 1]),
    }
    for name, (f, kw, *want) in cases.items():
        fn = (lambda a, b, f=f, kw=kw: f(a, **{k: b for k in kw})) if kw else f
        got = _tie_derivatives(T, fn, [x, y])
        for key, w in zip(("fwd0", "fwd1", "rev0", "rev1"), want):
            np.testing.assert_array_equal(got[key][:len(w)], w, err_msg=f"{name} {key}")
    # two Tensor bounds: lo > hi gives hi everything; x < lo == hi: forward lo, backward nothing
    lo, xx, hi = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.5, -1.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0, 1.0])
    got = _tie_derivatives(T, lambda a, b, c: T.clamp(a, b, c), [xx, lo, hi])
    np.testing.assert_array_equal(got["value"], [0.0, 0.0, 0.0, 1.0])
    for key, w in {"fwd0": [0, 0, 1, 1], "fwd1": [0, 1, 0, 0], "fwd2": [1, 0, 0, 0],
                   "rev0": [0, 0, 1, 1], "rev1": [0, 0, 0, 0], "rev2": [1, 0, 0, 0]}.items():
        np.testing.assert_array_equal(got[key], w, err_msg=key)
    assert np.isnan(T.clamp(T.tensor([1.0]), min=T.tensor([NAN])).item())  # a NaN bound gives NaN, as torch
    assert np.signbit(T.fmax(T.tensor([-0.0]), T.tensor([0.0])).item())  # fmax keeps the first at a tie


def test_tie_kinks_through_jit_vmap():
    """The kink="torch" rules of max / min / clamp in a jaxpr, under jit and vmap (forward and reverse)."""
    f = lambda a, b: ew.max_p.bind(a, b, kink="torch")  # noqa: E731
    a, b = fnp.asarray([1.0, 2.0, 3.0]), fnp.asarray([1.0, 3.0, 2.0])
    assert "max[kink='torch']" in str(fg.make_jaxpr(f)(a, b)).replace('"', "'")
    ga, gb = fg.jit(fg.vmap(fg.grad(f, argnums=(0, 1))))(a, b)
    np.testing.assert_array_equal(np.asarray(ga), [1.0, 0.0, 1.0])  # backward: the tie to x
    np.testing.assert_array_equal(np.asarray(gb), [0.0, 1.0, 0.0])
    tb = fg.jit(lambda a, b: fg.jvp(f, (a, b), (fnp.zeros(3), fnp.ones(3)))[1])(a, b)
    np.testing.assert_array_equal(np.asarray(tb), [1.0, 1.0, 0.0])  # forward: the tie to y
    c = lambda lo, x, hi: ew.clamp_p.bind(lo, x, hi, kink="torch")  # noqa: E731
    grads = fg.jit(fg.grad(lambda *v: c(*v).sum(), argnums=(0, 1, 2)))(
        fnp.asarray([0.0, 0.0, 1.0]), fnp.asarray([-1.0, 0.0, 0.5]), fnp.asarray([0.0, 1.0, 0.0]))
    np.testing.assert_array_equal(np.asarray(grads), [[0, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(TypeError, match="max: kink must be"):
        fg.make_jaxpr(lambda x: ew.max_p.bind(x, x, kink="numpy"))(fnp.asarray(1.0))


_JAX_TIE_FNS = {
    "maximum": (lambda L, N: N.maximum, 2), "minimum": (lambda L, N: N.minimum, 2),
    "fmax": (lambda L, N: N.fmax, 2), "fmin": (lambda L, N: N.fmin, 2),
    "clip(x, lo, hi)": (lambda L, N: (lambda x, y, z: N.clip(x, y, z)), 3),
    "clip(min=)": (lambda L, N: (lambda x, y: N.clip(x, min=y)), 2),
    "clip(max=)": (lambda L, N: (lambda x, y: N.clip(x, max=y)), 2),
    "lax.clamp": (lambda L, N: (lambda x, y, z: L.lax.clamp(y, x, z)), 3),
}


@pytest.mark.parametrize("name", list(_JAX_TIE_FNS))
def test_jax_face_ties_vs_jax(name):
    """The JAX face keeps JAX's tie rules (x64): split ties for maximum / minimum / clip, none for lax.clamp."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    mk, n = _JAX_TIE_FNS[name]
    arrs = _tie_grid(n)

    def run(lib, N):
        fn, xs = mk(lib, N), [N.asarray(a) for a in arrs]
        out = [fn(*xs)] + [lib.jvp(fn, tuple(xs), tuple(N.ones_like(a) if j == i else N.zeros_like(a)
                                                       for j, a in enumerate(xs)))[1] for i in range(n)]
        return [np.asarray(o) for o in out + list(lib.grad(lambda *a: N.sum(fn(*a)), argnums=tuple(range(n)))(*xs))]
    prev = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        want = run(jax, jnp)
    finally:
        jax.config.update("jax_enable_x64", prev)
    for k, (g, w) in enumerate(zip(run(fg, fnp), want)):
        np.testing.assert_array_equal(g, w, err_msg=f"{name} output {k}")


def _pow_hessian(T, x, y):
    """pow's gradient and Hessian at (x, y) in the torch face (reverse over reverse)."""
    X, Y = (T.tensor([v], dtype=T.float64, requires_grad=True) for v in (x, y))
    gx, gy = T.autograd.grad(T.pow(X, Y).sum(), (X, Y), create_graph=True)
    rows = [[float(h) for h in T.autograd.grad(g.sum(), (X, Y), retain_graph=True)] for g in (gx, gy)]
    return float(gx), float(gy), rows


def test_torch_pow_masks_take_the_cotangent():
    """torch's pow backward is where(y == 0, 0, g * y x^(y-1)) and where(x == 0 and y >= 0, 0, g x^y log x): a
    NaN cotangent (log of a negative base) is masked too, so d/dx (d/dy x^y) = x^y / x at x < 0, y = 0
    (the exact d/dx of x^y log x with x^y = 1), and d/dy x^y at x = 0, y < 0 is inf * log 0 = -inf."""
    for x in (-1.0, -2.0):
        gx, gy, ((hxx, hxy), (hyx, hyy)) = _pow_hessian(fg, x, 0.0)
        assert gx == 0.0 and math.isnan(gy) and hxx == 0.0 and hyx == 1 / x and math.isnan(hyy)
        assert math.isnan(hxy)  # (d/dy of y x^(y-1): x^(y-1) log x, undefined for x < 0, as torch's NaN)
    gx, gy, _ = _pow_hessian(fg, 0.0, -1.0)
    assert gy == -INF
    # the JAX face keeps JAX's rules: log(1) at x == 0, NaN through log of a negative base
    g = fg.grad(lambda a, b: fnp.power(a, b), argnums=1)
    assert float(g(fnp.asarray(0.0), fnp.asarray(-1.0))) != -INF


def test_torch_pow_at_minus_inf_and_its_gradient_as_c_pow():
    """C's pow (torch's): (-inf) ** y is +inf for a non-integer y > 0, +0 for y < 0; the derivative
    y * x ** (y - 1) takes the same values (+inf for y = 2.5, -0.0 for y = -0.5), not NaN."""
    torch = pytest.importorskip("torch")
    ys = [2.5, -1.5, 1.5, 0.3, -0.5, 3.0, -2.0, 0.0]
    for dt in ("float32", "float64"):
        got, want = [], []
        for m, res in ((fg, got), (torch, want)):
            x = m.full((len(ys),), -INF, dtype=getattr(m, dt), requires_grad=True)
            y = m.tensor(ys, dtype=getattr(m, dt), requires_grad=True)
            out = x ** y
            out.sum().backward()
            res += [out.detach().numpy(), x.grad.numpy(), y.grad.numpy()]
            x2 = m.full((3,), -INF, dtype=getattr(m, dt), requires_grad=True)
            (x2 ** 2.5).sum().backward()
            res.append(x2.grad.numpy())
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("x,y", [(-1.0, 0.0), (-2.0, 0.0), (0.0, -1.0), (2.0, 0.0), (-2.0, 2.0), (0.5, -2.0)])
def test_torch_pow_edges_vs_torch(x, y):
    torch = pytest.importorskip("torch")
    got, want = _pow_hessian(fg, x, y), _pow_hessian(torch, x, y)
    np.testing.assert_array_equal(np.array([got[0], got[1], *got[2][0], *got[2][1]]),
                                  np.array([want[0], want[1], *want[2][0], *want[2][1]]))


@pytest.mark.parametrize("e", [1.5, -0.5, 0.5, 2.5, -1.5, 0.25])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_torch_pow_by_a_number_is_torchs_scalar_kernel(e, dt):
    """x.pow(number) is torch's pow(Tensor, Scalar) kernel, sqrt at 0.5 and rsqrt at -0.5, in its value and
    in its derivative's x.pow(e - 1): at -inf d/dx x**1.5 is 1.5 * sqrt(-inf) = NaN, d/dx x**-0.5 is
    -0.5 * (-inf) ** -1.5 = -0.0 (C's pow), and the second derivatives follow."""
    torch = pytest.importorskip("torch")
    vals = [-INF, INF, -0.0, 0.0, -2.0, 0.7, 3.0, 1e-30]
    res = []
    for m in (fg, torch):
        x = m.tensor(vals, dtype=getattr(m, dt), requires_grad=True)
        y = x.pow(e)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res.append([t.detach().numpy() for t in (y, g, gg)])
    for got, want in zip(*res):
        np.testing.assert_allclose(got, want, rtol=2e-6 if dt == "float32" else 1e-14, atol=0)
        np.testing.assert_array_equal(np.signbit(got) | np.isnan(got), np.signbit(want) | np.isnan(want))
