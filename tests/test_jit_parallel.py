"""jit's opt-in parallelism (compiler/parallel.py): large matrix products are split between two threads,
other independent heavy operations are paired, the generated code starts one on a worker, and the values
are the sequential ones."""
import contextlib
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import parallel


@contextlib.contextmanager
def settings(**kw):
    cg = compiler.config.codegen
    old = {k: getattr(cg, k) for k in kw}
    try:
        for k, v in kw.items():
            setattr(cg, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(cg, k, v)


def mlp_grads(w1, w2, x):
    def loss(a, b):
        return jnp.sum(jnp.tanh(jnp.maximum(x @ a, 0.0) @ b))
    return fg.grad(loss, argnums=(0, 1))(w1, w2)


def data(seed=0):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal((64, 96)).astype(np.float32)),
            jnp.asarray(rng.standard_normal((96, 32)).astype(np.float32)),
            jnp.asarray(rng.standard_normal((48, 64)).astype(np.float32)))


def test_large_products_are_split_between_two_threads():
    args = data()
    with settings(parallel_ops=False):
        want = fg.jit(mlp_grads)(*args)
    with settings(parallel_ops=True, parallel_min_flops=0):
        f = fg.jit(mlp_grads)
        src = f.lower(*args).source()
        got = f(*args)
    # the products with a result dimension of at least 64 are split; the 48x32 one is not, and nothing
    # is left to pair it with
    assert src.count("_split_matmul(") == 4 and src.count("_matmul(") == 5 and "_spawn(" not in src
    # float32 products split differently round differently: both results must be as close to the
    # float64 gradients as float32 allows
    exact = mlp_grads(*[jnp.asarray(np.asarray(a, np.float64)) for a in args])
    for g, w, x in zip(got, want, exact):
        err_split = np.abs(np.asarray(g, np.float64) - np.asarray(x)).max()
        err_seq = np.abs(np.asarray(w, np.float64) - np.asarray(x)).max()
        assert err_split <= 4 * err_seq + 1e-6 and err_split < 1e-4 * np.abs(np.asarray(x)).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(129, 33, 70), (64, 64, 64), (3, 50, 200), (200, 7, 1), (1, 9, 65)])
def test_split_matmul_equals_matmul(m, k, n, dtype):
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    want = a @ b
    got = parallel.split_matmul(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # transposed views (the layouts backward passes produce) and a given output buffer
    out = np.full((m, n), np.nan, dtype)
    got = parallel.split_matmul(np.ascontiguousarray(a.T).T, np.asfortranarray(b), out)
    assert got is out
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)


def test_products_below_the_thresholds_are_not_split():
    args = data()
    with settings(parallel_ops=True):  # default flop threshold: these products are far below it
        assert "_split_matmul" not in fg.jit(mlp_grads).lower(*args).source()
    x = jnp.asarray(np.ones((40, 40), np.float32))  # big enough by flops, but no dimension reaches 64
    with settings(parallel_ops=True, parallel_min_flops=0):
        assert "_split_matmul" not in fg.jit(lambda a: a @ a).lower(x).source()


def test_off_by_default_and_small_products_are_not_paired():
    args = data()
    assert compiler.config.codegen.parallel_ops is False
    src = fg.jit(mlp_grads).lower(*args).source()
    assert "_spawn" not in src and "_split_matmul" not in src
    with settings(parallel_ops=True):  # default threshold: these products are far below it
        assert "_spawn" not in fg.jit(mlp_grads).lower(*args).source()


def test_pairs_only_operations_whose_operands_exist_already():
    """B moves up next to A only when nothing between them produces one of B's operands."""
    x = jnp.asarray(np.random.default_rng(1).standard_normal((40, 40)).astype(np.float32))

    def chain(a):
        b = a @ a           # A
        c = jnp.tanh(b)     # between: reads A
        d = c @ a           # needs c: cannot pair with A
        e = a @ a.T         # independent of A: pairs with A
        return d + e

    with settings(parallel_ops=True, parallel_min_flops=0):
        j = compiler.lower(fg.make_jaxpr(chain)(x))
        items, pairs = parallel.pair_up(list(j.eqns), 0)
        got = fg.jit(chain)(x)
    names = [e.prim.name for e in items]
    assert len(pairs) == 1
    (a_id, b), = pairs.items()
    k = [id(e) for e in items].index(a_id)
    assert items[k + 1] is b and b.invars == [j.invars[0], j.invars[0]]  # e = a @ a.T
    np.testing.assert_allclose(np.asarray(got), np.asarray(chain(x)), rtol=1e-6)
    assert names.count("dot_general") == 3


def test_an_error_in_the_worker_reaches_the_caller():
    boom = RuntimeError("worker failed")

    def fail():
        raise boom

    d = parallel.spawn(fail)
    with pytest.raises(RuntimeError, match="worker failed"):
        d.wait()


def test_a_deferred_call_not_yet_started_runs_in_the_caller():
    ran_in = []
    d = parallel.Deferred(lambda: ran_in.append(threading.current_thread()) or 7, ())
    assert d.wait() == 7 and ran_in == [threading.current_thread()]
    d.run()  # a worker arriving late does nothing
    assert len(ran_in) == 1


def test_convolution_gradients_pair():
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((4, 3, 10, 10)).astype(np.float32))
    k = jnp.asarray(rng.standard_normal((5, 3, 3, 3)).astype(np.float32))
    k2 = jnp.asarray(rng.standard_normal((2, 5, 3, 3)).astype(np.float32))

    def loss(a, b, c):
        h = jnp.tanh(lax.conv_general_dilated(a, b, (1, 1), "SAME"))
        return jnp.sum(lax.conv_general_dilated(h, c, (1, 1), "SAME") ** 2)

    g = fg.grad(loss, argnums=(1, 2))
    want = g(x, k, k2)
    with settings(parallel_ops=True, parallel_min_flops=0):
        f = fg.jit(g)
        assert "_spawn(" in f.lower(x, k, k2).source()
        got = f(x, k, k2)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
