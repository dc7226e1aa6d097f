"""jit's opt-in inter-operation parallelism (compiler/parallel.py): independent heavy operations are
paired, the generated code starts one on a worker, and the values are exactly the sequential ones."""
import contextlib
import threading

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad.transforms import compiler
from funcgrad.transforms.compiler import parallel


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


def test_backward_products_run_in_pairs_with_identical_values():
    args = data()
    with settings(parallel_ops=False):
        want = fg.jit(mlp_grads)(*args)
    with settings(parallel_ops=True, parallel_min_flops=0):
        f = fg.jit(mlp_grads)
        src = f.lower(*args).source()
        got = f(*args)
    assert src.count("_spawn(") >= 1 and src.count(".wait()") == src.count("_spawn(")
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_off_by_default_and_small_products_are_not_paired():
    args = data()
    assert compiler.config.codegen.parallel_ops is False
    assert "_spawn" not in fg.jit(mlp_grads).lower(*args).source()
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
