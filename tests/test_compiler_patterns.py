"""Code-generation rewrites (funcgrad/_src/interpreters/compiler/patterns.py): the pattern is found, the
generated code changes as intended, and the values are exactly eager's (ties, NaN, inf included)."""
import contextlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler


@contextlib.contextmanager
def codegen_settings(**kw):
    cg = compiler.config.codegen
    old = {k: getattr(cg, k) for k in kw}
    try:
        for k, v in kw.items():
            setattr(cg, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(cg, k, v)


def lowered_names(f, *args):
    j = compiler.lower(fg.make_jaxpr(f)(*args))
    return [e.prim.name for e in j.eqns]


def relu_grad(x, g):
    return fg.vjp(lambda a: jnp.maximum(a, 0.0), x)[1](g)[0]


def special_values(dtype, n=64, seed=0):
    """x with exact zeros (ties with relu's 0), NaN, +-inf and -0.0; g with inf, NaN and negatives."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(dtype)
    x[::5] = 0
    x[3], x[7], x[11], x[13] = np.nan, np.inf, -np.inf, -0.0
    g = rng.standard_normal(n).astype(dtype)
    g[1], g[2], g[5], g[9] = np.inf, -np.inf, np.nan, -1.5  # x[5] == 0: an inf/NaN g on a tie
    g[10] = np.inf  # on a tie (x[10] == 0)
    return jnp.asarray(x), jnp.asarray(g)


def assert_same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # NaN == NaN here; values bit-for-bit otherwise
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_relu_backward_becomes_one_operation():
    x, g = special_values(np.float32)
    before = lowered_names(relu_grad, x, g)
    assert before.count("extremum_grad") == 1
    assert not {"eq", "div", "convert_element_type"} & set(before)
    with codegen_settings(patterns=False):
        off = lowered_names(relu_grad, x, g)
    assert "extremum_grad" not in off and off.count("eq") == 2 and "div" in off
    src = fg.jit(relu_grad).lower(x, g).source()
    assert "_equal" not in src and "_divide" not in src


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("patterns", [True, False])
def test_relu_backward_matches_eager_exactly(dtype, patterns):
    x, g = special_values(dtype)
    with np.errstate(all="ignore"):
        want = relu_grad(x, g)
        with codegen_settings(patterns=patterns):
            got = fg.jit(relu_grad)(x, g)
    assert_same(got, want)
    w = np.asarray(want)
    assert w[5] != w[5] and w[10] == np.inf and w[0] == 0.5 * np.asarray(g)[0]  # ties get g / 2


@pytest.mark.parametrize("op", [jnp.maximum, jnp.minimum])
@pytest.mark.parametrize("order", ["xy", "yx"])
def test_both_operands_of_max_and_min(op, order):
    """max/min of two arrays, either operand first: each cotangent is rewritten and exact."""
    rng = np.random.default_rng(1)
    x, g = special_values(np.float32, seed=2)
    y = rng.standard_normal(64).astype(np.float32)
    y[::3] = np.asarray(x)[::3]  # ties between the operands
    y[4] = np.nan
    y = jnp.asarray(y)

    def f(a, b, ct):
        fn = (lambda p, q: op(p, q) * 1.5) if order == "xy" else (lambda p, q: op(q, p) * 1.5)
        return fg.vjp(fn, a, b)[1](ct)

    with np.errstate(all="ignore"):
        want = f(x, y, g)
        got = fg.jit(f)(x, y, g)
        names = lowered_names(f, x, y, g)
    assert names.count("extremum_grad") == 2 and "div" not in names
    for a, b in zip(got, want):
        assert_same(a, b)


def test_mlp_backward_inside_fused_code():
    """The W2 shape of the pattern (relu between matmuls, large enough to fuse) stays exact."""
    rng = np.random.default_rng(3)
    w1 = jnp.asarray(rng.standard_normal((8, 600)).astype(np.float32))
    w2 = jnp.asarray(rng.standard_normal((600, 3)).astype(np.float32))
    xb = rng.standard_normal((512, 8)).astype(np.float32)
    xb[:40] = 0  # rows whose pre-activations are exactly 0: ties
    xb = jnp.asarray(xb)

    def loss(a, b, xx):
        return jnp.sum(jnp.tanh(jnp.maximum(xx @ a, 0.0) @ b))

    gf = fg.grad(loss, argnums=(0, 1))
    want = gf(w1, w2, xb)
    # (traced under jit, the tie test's zero is an eagerly converted copy of max's broadcast zero, a
    # materialised 512 x 600 constant: still recognised, and max's own scalar zero is what is compared)
    assert lowered_names(gf, w1, w2, xb).count("extremum_grad") == 1
    src = fg.jit(gf).lower(w1, w2, xb).source()
    assert "_equal" not in src and "_divide" not in src
    with codegen_settings(fusion_min_size=1):
        got = fg.jit(gf)(w1, w2, xb)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)


def test_a_mask_read_elsewhere_is_still_computed():
    """The weight is rewritten; an intermediate that something else reads stays in the program."""
    x, g = special_values(np.float32)

    def f(a, ct):
        z = jnp.maximum(a, 0.0)
        m = (a == z).astype(jnp.float32)
        return ct * (m / (1 + (0.0 == z).astype(jnp.float32))), m

    names = lowered_names(f, x, g)
    assert names.count("extremum_grad") == 1 and names.count("eq") == 1 and "div" not in names
    with np.errstate(all="ignore"):
        got, want = fg.jit(f)(x, g), f(x, g)
    for a, b in zip(got, want):
        assert_same(a, b)


@pytest.mark.parametrize("value", [0.0, 1.0, -1.0, np.nan])
def test_scalar_operands(value):
    """0-d operands (NumPy returns scalars for them) take the same rewrite and give eager's values."""
    def f(x, g):
        return fg.vjp(lambda a: jnp.maximum(a, 0.0), x)[1](g)[0]

    x, g = jnp.asarray(np.float32(value)), jnp.asarray(np.float32(3.0))
    assert lowered_names(f, x, g).count("extremum_grad") == 1
    got = fg.jit(f)(x, g)
    assert_same(got, f(x, g))
    assert np.asarray(got).shape == ()


@pytest.mark.parametrize("shape", [(64,), (16, 33)])
def test_uniform_cotangent_broadcasts_exactly(shape):
    """grad(3 * sum(relu)): the cotangent is a uniform constant, passed to extremum_grad as a 0-d operand;
    the result still has x's shape and eager's values (3 past 0, 3/2 at 0, 0 below it and at NaN)."""
    x, _ = special_values(np.float32, n=int(np.prod(shape)))
    x = jnp.asarray(np.asarray(x).reshape(shape))
    f = fg.grad(lambda a: jnp.sum(jnp.maximum(a, 0.0)) * 3.0)
    assert lowered_names(f, x).count("extremum_grad") == 1
    with np.errstate(all="ignore"):
        got, want = fg.jit(f)(x), f(x)
    assert_same(got, want)
    xa = np.asarray(x)
    np.testing.assert_array_equal(np.asarray(got), np.where(xa > 0, 3.0, np.where(xa == 0, 1.5, 0.0)))
