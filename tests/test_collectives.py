"""Collectives over named axes (psum, pmean, pmax, pmin, all_gather, ppermute, axis_index) under
vmap(axis_name=...), nested vmaps, jit, grad and pmap, against explicit NumPy formulas; derivatives
against finite differences of the whole vmapped function."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.testing import arrays, check_grads

X = np.arange(12.0).reshape(3, 4) - 5.0


def vm(f, **kw):
    return jax.vmap(f, axis_name="i", **kw)


@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 3)), elements=st.floats(-3, 3)))
def test_reductions_match_numpy(x):
    n = x.shape[0]
    np.testing.assert_allclose(vm(lambda v: lax.psum(v, "i"))(x), np.broadcast_to(x.sum(0), x.shape))
    np.testing.assert_allclose(vm(lambda v: lax.pmean(v, "i"))(x), np.broadcast_to(x.mean(0), x.shape))
    np.testing.assert_allclose(vm(lambda v: lax.pmax(v, "i"))(x), np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_allclose(vm(lambda v: lax.pmin(v, "i"))(x), np.broadcast_to(x.min(0), x.shape))
    np.testing.assert_allclose(jax.jit(vm(lambda v: v / lax.psum(jnp.abs(v) + 1, "i")))(x),
                               x / (np.abs(x) + 1).sum(0))
    assert vm(lambda v: lax.psum(1, "i"))(x).tolist() == [n] * n
    assert vm(lambda v: lax.axis_index("i"))(x).tolist() == list(range(n))


def test_unbatched_operand_and_pytrees():
    out = jax.vmap(lambda v, c: lax.psum({"a": c, "b": v}, "i"), in_axes=(0, None), axis_name="i")(X, 2.0)
    np.testing.assert_allclose(out["a"], [6.0, 6.0, 6.0])
    np.testing.assert_allclose(out["b"], np.broadcast_to(X.sum(0), X.shape))
    np.testing.assert_allclose(vm(lambda v: lax.pmean(v, "i"), in_axes=1)(X), np.broadcast_to(X.mean(1), (4, 3)))


def test_all_gather_and_ppermute():
    g = vm(lambda v: lax.all_gather(v, "i"))(X)
    np.testing.assert_allclose(g, np.broadcast_to(X, (3, 3, 4)))
    g1 = vm(lambda v: lax.all_gather(v, "i", axis=1))(X)
    np.testing.assert_allclose(g1, np.broadcast_to(X.T, (3, 4, 3)))
    gt = vm(lambda v: lax.all_gather(v, "i", tiled=True))(X)
    np.testing.assert_allclose(gt, np.broadcast_to(X.reshape(-1), (3, 12)))
    perm = [(0, 1), (1, 2)]  # member 0 receives nothing: zeros
    np.testing.assert_allclose(vm(lambda v: lax.ppermute(v, "i", perm))(X), np.stack([np.zeros(4), X[0], X[1]]))
    np.testing.assert_allclose(vm(lambda v: lax.pshuffle(v, "i", [2, 0, 1]))(X), X[[2, 0, 1]])
    with pytest.raises(ValueError, match="unique"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]))(X)


def test_nested_named_axes():
    f = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i") + 100 * lax.psum(v, "j") + 1000 * lax.psum(v, ("i", "j")),
                          axis_name="j"), axis_name="i")
    expect = X.sum(0)[None, :] + 100 * X.sum(1)[:, None] + 1000 * X.sum()
    np.testing.assert_allclose(f(X), expect)
    idx = jax.vmap(jax.vmap(lambda v: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")(X)
    assert idx.tolist() == np.arange(12).reshape(3, 4).tolist()
    # an unnamed outer vmap: the collective acts within each of its members
    h = jax.vmap(vm(lambda v: lax.psum(v, "i")), in_axes=1, out_axes=1)(X)
    np.testing.assert_allclose(h, np.broadcast_to(X.sum(0), X.shape))


def test_jit_inside_and_outside():
    f = vm(jax.jit(lambda v: v - lax.pmean(v, "i")))
    np.testing.assert_allclose(f(X), X - X.mean(0))
    np.testing.assert_allclose(jax.jit(vm(lambda v: lax.pmax(v, "i")))(X), np.broadcast_to(X.max(0), X.shape))


def test_grad_through_collectives():
    # psum's transpose is psum: d/dx_i of psum(x) summed over members... per member: n
    np.testing.assert_allclose(vm(jax.grad(lambda v: lax.psum(v, "i")))(jnp.arange(3.0)), [3.0, 3.0, 3.0])
    x = np.random.default_rng(0).normal(size=(3, 2))
    for f in [lambda v: jnp.sum(v * lax.pmean(v, "i")),
              lambda v: jnp.sum(jnp.sin(v) * lax.psum(v ** 2, "i")),
              lambda v: jnp.sum(v * lax.pmax(v, "i")),
              lambda v: jnp.sum(v * lax.pmin(v, "i")),
              lambda v: jnp.sum(jnp.cos(lax.all_gather(v, "i")) * v[0]),
              lambda v: jnp.sum(v * lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]) ** 2)]:
        total = lambda z, f=f: jnp.sum(vm(f)(z))
        check_grads(total, (x,), order=2)
    # against an explicit formula: sum_i sum_c x_ic * mean_i(x)_c = sum_c (sum_i x_ic)^2 / n
    g = jax.grad(lambda z: jnp.sum(vm(lambda v: jnp.sum(v * lax.pmean(v, "i")))(z)))(x)
    np.testing.assert_allclose(g, np.broadcast_to(2 * x.mean(0), x.shape))


def test_errors_and_pmap():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.ones(2), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        vm(lambda v: lax.psum(v, "k"))(X)
    n = jax.device_count()
    xs = jnp.arange(float(n))
    np.testing.assert_allclose(jax.pmap(lambda v: v + lax.psum(v, "d"), axis_name="d")(xs), xs + xs.sum())
    with pytest.raises(ValueError, match="requires 2 logical devices"):
        jax.pmap(lambda v: v, axis_name="d", devices=jax.local_devices()[:1])(jnp.ones(2))
    out = jax.pmap(lambda v, k: v * k, static_broadcasted_argnums=1)(xs, 3.0)
    np.testing.assert_allclose(out, xs * 3.0)


def test_collectives_inside_control_flow():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def f(v):
        def body(c, xi):
            return c + lax.psum(xi, "i") * xi, lax.axis_index("i")
        return lax.scan(body, 0.0, v)
    total, idx = vm(f)(x)
    np.testing.assert_allclose(total, (x.sum(0) * x).sum(1))
    assert np.asarray(idx).tolist() == [[0, 0, 0], [1, 1, 1]]
    np.testing.assert_allclose(jax.jit(vm(f))(x)[0], (x.sum(0) * x).sum(1))
    # d/dx of sum_t (sum_i x_it)^2 is 2 sum_i x_it
    g = jax.grad(lambda z: jnp.sum(vm(lambda v: f(v)[0])(z)))(x)
    np.testing.assert_allclose(g, np.broadcast_to(2 * x.sum(0), x.shape))
    loop = vm(lambda v: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(v, "i"), jnp.zeros(3)))(x)
    np.testing.assert_allclose(loop, np.broadcast_to(3 * x.sum(0), x.shape))
    # a batched predicate runs both branches for every member, so pmean sees all of them
    c = vm(lambda v: lax.cond(v.sum() > 3, lambda u: lax.pmean(u, "i"), lambda u: u * 0, v))(x)
    np.testing.assert_allclose(c, [np.zeros(3), x.mean(0)])


def test_psum_scatter_and_lax_zeta():
    out = vm(lambda v: lax.psum_scatter(v[:3], "i"))(X)
    np.testing.assert_allclose(out, X[:, :3].sum(0))
    tiled = vm(lambda v: lax.psum_scatter(jnp.tile(v, 3), "i", tiled=True))(X)
    np.testing.assert_allclose(tiled, np.broadcast_to(X.sum(0), (3, 4)))
    with pytest.raises(ValueError, match="axis has size"):
        vm(lambda v: lax.psum_scatter(v, "i"))(X)
    check_grads(lambda z: jnp.sum(vm(lambda v: lax.psum_scatter(jnp.sin(v[:3]), "i") * v[0])(z)), (X / 10,), order=1)


def test_all_to_all():
    x = np.arange(18.0).reshape(3, 3, 2)  # member i holds x[i]; its axis 0 (size 3) is split
    out = vm(lambda v: lax.all_to_all(v, "i", 0, 0))(x)
    np.testing.assert_array_equal(out, np.swapaxes(x, 0, 1))  # out[j, i] = x[i, j]
    out = vm(lambda v: lax.all_to_all(v, "i", 0, 1))(x)
    np.testing.assert_array_equal(out, np.moveaxis(np.swapaxes(x, 0, 1), 1, 2))
    check_grads(lambda z: jnp.sum(jnp.sin(vm(lambda v: lax.all_to_all(v, "i", 0, 0))(z)) * z), (x / 10,), order=1)
    with pytest.raises(ValueError, match="split_axis"):
        vm(lambda v: lax.all_to_all(v, "i", 1, 0))(x)


def test_constant_operands_and_axis_index_inside_jit_and_control_flow():
    x = jnp.arange(3.0)
    np.testing.assert_allclose(vm(jax.jit(lambda v: v * lax.psum(1.0, "i")))(x), [0.0, 3.0, 6.0])
    np.testing.assert_allclose(vm(jax.jit(lambda v: v * lax.axis_index("i")))(x), [0.0, 1.0, 4.0])
    np.testing.assert_allclose(vm(jax.grad(lambda v: v * lax.psum(1.0, "i")))(x), [3.0, 3.0, 3.0])
    got = vm(lambda v: lax.scan(lambda c, _: (c + lax.axis_index("i"), None), 0, None, length=2)[0])(x)
    assert np.asarray(got).tolist() == [0, 2, 4]
    got = jax.jit(vm(lambda v: lax.cond(v > 0, lambda u: u + lax.psum(1, "i"), lambda u: u * 1.0, v)))(x)
    np.testing.assert_allclose(got, [0.0, 4.0, 5.0])
    got = vm(lambda v: lax.cond(v > 0, lambda u: u + lax.axis_index("i") * 1.0, lambda u: u, 1.0))(x)
    np.testing.assert_allclose(got, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(vm(lambda v: lax.fori_loop(0, 2, lambda i, c: c + lax.psum(1.0, "i"), v))(x),
                               [6.0, 7.0, 8.0])
