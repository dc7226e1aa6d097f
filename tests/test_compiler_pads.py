"""The `pads` pass (funcgrad/_src/interpreters/compiler/pads.py): sums of zero-padded disjoint blocks become one
concatenation, with values bit for bit those of the additions (signed zeros included)."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler


def names(j):
    return [e.prim.name for e in j.eqns]


def run_with_and_without(f, *args):
    """(jit(f) with every pass, jit(f) without `pads`, eager f)."""
    old = compiler.config.passes
    try:
        got = fg.jit(f)(*args)
        compiler.config.passes = tuple(p for p in old if p != "pads")
        without = fg.jit(lambda *a: f(*a))(*args)
    finally:
        compiler.config.passes = old
    return got, without, f(*args)


def assert_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    for part in ((np.real, np.imag) if a.dtype.kind == "c" else (np.asarray,)):
        np.testing.assert_array_equal(np.signbit(part(a)), np.signbit(part(b)))


def split_loss(x):
    a, b, c = jnp.split(x, [2, 5], axis=1)
    return jnp.sum(jnp.sin(a)) + jnp.sum(jnp.cos(b)) + jnp.sum(c ** 2)


def test_the_backward_of_a_split_becomes_one_concatenation():
    x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32))
    j = fg.make_jaxpr(fg.grad(split_loss))(x)
    assert names(j).count("pad") == 3
    after = compiler.optimize(j, passes=("pads", "dce"))
    assert "pad" not in names(after) and names(after).count("concatenate") == 1
    assert names(after).count("add") == 1  # the one +0.0 that keeps -0.0 elements as the additions make them
    for got in run_with_and_without(fg.grad(split_loss), x)[:2]:
        assert_bits(got, fg.grad(split_loss)(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_signed_zeros_gaps_and_dtypes(dtype):
    """Cotangents holding -0.0 come out +0.0 as from the additions; uncovered columns are zeros."""
    ct = np.array([[-0.0, 1.5, -2.0, 0.0, 7.0, -0.0, 3.0, -1.0]] * 2).astype(dtype)

    def pull(x, g):
        _, vjp = fg.vjp(lambda x: (x[:, 1:3], x[:, 5:7], x[:, 3:4]), x)
        return vjp((g[:, 1:3], g[:, 5:7], g[:, 3:4]))[0]

    x, g = jnp.asarray(np.ones((2, 8), dtype)), jnp.asarray(ct)
    lowered = names(compiler.lower(fg.make_jaxpr(pull)(x, g)))
    assert "pad" not in lowered and "concatenate" in lowered
    got, without, eager = run_with_and_without(pull, x, g)
    for a in (got, without):
        assert_bits(a, eager)
    want = np.zeros((2, 8), dtype)
    want[:, 1:4], want[:, 5:7] = ct[:, 1:4], ct[:, 5:7]
    np.testing.assert_array_equal(np.asarray(got), want)


def test_integer_blocks():
    def f(a, b):
        zero = np.int32(0)
        return lax.pad(a, zero, [(0, 0, 0), (1, 3, 0)]) + lax.pad(b, zero, [(0, 0, 0), (3, 0, 0)])

    a, b = jnp.asarray(np.array([[5, -6]] * 2, np.int32)), jnp.asarray(np.array([[7, 8, 9]] * 2, np.int32))
    assert names(compiler.lower(fg.make_jaxpr(f)(a, b))) == ["concatenate"]
    got, without, eager = run_with_and_without(f, a, b)
    assert_bits(got, eager)
    np.testing.assert_array_equal(np.asarray(got), [[0, 5, -6, 7, 8, 9]] * 2)


def test_a_negative_zero_padding_needs_no_fixup():
    def f(a, b):
        return lax.pad(a, -0.0, [(0, 0, 0), (0, 3, 0)]) + lax.pad(b, -0.0, [(0, 0, 0), (2, 0, 0)])

    a = jnp.asarray(np.array([[-0.0, 1.0]] * 2, np.float32))
    b = jnp.asarray(np.array([[-0.0, 2.0, -0.0]] * 2, np.float32))
    assert names(compiler.lower(fg.make_jaxpr(f)(a, b))) == ["concatenate"]
    got, without, eager = run_with_and_without(f, a, b)
    assert_bits(got, eager)
    assert_bits(without, eager)
    assert np.signbit(np.asarray(got)[0, 0])


# case -> (shape of a, padding of a, shape of b, padding of b, padding values)
_NOT_CONCATENATIONS = {
    "overlap": ((3, 4), [(0, 0, 0), (0, 2, 0)], (3, 4), [(0, 0, 0), (2, 0, 0)], (0.0, 0.0)),
    "two_axes": ((3, 4), [(0, 0, 0), (0, 4, 0)], (1, 8), [(2, 0, 0), (0, 0, 0)], (0.0, 0.0)),
    "nonzero_padding": ((3, 4), [(0, 0, 0), (0, 4, 0)], (3, 4), [(0, 0, 0), (4, 0, 0)], (1.0, 1.0)),
    "mixed_zeros": ((3, 4), [(0, 0, 0), (0, 4, 0)], (3, 4), [(0, 0, 0), (4, 0, 0)], (0.0, -0.0)),
    "interior": ((3, 4), [(0, 0, 0), (0, 3, 1)], (3, 4), [(0, 0, 0), (6, 0, 0)], (0.0, 0.0)),
    "cropping": ((3, 6), [(0, 0, 0), (-2, 4, 0)], (3, 4), [(0, 0, 0), (4, 0, 0)], (0.0, 0.0)),
}


@pytest.mark.parametrize("case", list(_NOT_CONCATENATIONS))
def test_sums_that_are_not_concatenations_stay(case):
    sa, ca, sb, cb, (pa, pb) = _NOT_CONCATENATIONS[case]
    rng = np.random.default_rng(1)
    a = rng.standard_normal(sa).astype(np.float32)
    a[0, 0] = -0.0
    a, b = jnp.asarray(a), jnp.asarray(rng.standard_normal(sb).astype(np.float32))

    def f(a, b):
        return lax.pad(a, pa, ca) + lax.pad(b, pb, cb)

    assert "concatenate" not in names(compiler.lower(fg.make_jaxpr(f)(a, b)))
    got, _, eager = run_with_and_without(f, a, b)
    assert_bits(got, eager)


def test_an_inner_sum_read_elsewhere_is_kept_and_a_qualifying_subtree_is_rewritten():
    """An LSTM's shape: three gates' pads summed, scaled, then the fourth gate's pad added."""
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((5, 16)).astype(np.float64))

    def loss(x):
        s = jax_logistic(x)
        i, f, o = s[:, :4], s[:, 4:8], s[:, 12:]
        g = jnp.tanh(x[:, 8:12])
        return jnp.sum(f * i * g * o) + jnp.sum(g ** 2)

    lowered = names(compiler.lower(fg.make_jaxpr(fg.grad(loss))(x)))
    assert "concatenate" in lowered and lowered.count("pad") <= 1
    got, without, eager = run_with_and_without(fg.grad(loss), x)
    for a in (got, without):
        np.testing.assert_allclose(np.asarray(a), np.asarray(eager), rtol=1e-14, atol=0)

    def shared(a, b):
        z = np.float64(0.0)
        s = lax.pad(a, z, [(0, 0, 0), (0, 4, 0)]) + lax.pad(b, z, [(0, 0, 0), (4, 0, 0)])
        return s + lax.pad(a, z, [(0, 0, 0), (4, 0, 0)]), s * 2.0  # the inner sum is an output too

    a, b = x[:, :4], x[:, 4:8]
    got, without, eager = run_with_and_without(shared, a, b)
    for u, v in zip(got, eager):
        assert_bits(u, v)


def jax_logistic(x):
    return lax.logistic(x)
