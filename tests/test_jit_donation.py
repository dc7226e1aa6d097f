"""jit(..., donate_argnums=...): donated buffers are reused for results and the donated Arrays deleted, as in
JAX; buffers funcgrad does not own alone (shared with NumPy, a view, another argument, a constant) are left
intact with JAX's warning; Array.delete / is_deleted."""
import gc
import re
import tracemalloc
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import schedule

JAX_X64 = False  # (the default mode: float32 defaults; the JAX comparison turns x64 on for itself)
NOT_USABLE = "Some donated buffers were not usable"


def _sgd(p, g):
    return p - 0.1 * g


def _mlp_step(params, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)
    val, grads = fg.value_and_grad(loss)(params)
    return val, {k: params[k] - 0.05 * grads[k] for k in params}


def _mlp_data(n_in=6, n_hidden=5, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    host = {"w1": rng.standard_normal((n_in, n_hidden)), "b1": rng.standard_normal(n_hidden),
            "w2": rng.standard_normal((n_hidden, 1))}
    return host, rng.standard_normal((batch, n_in)), rng.standard_normal((batch, 1))


def _fresh(host):
    return {k: jnp.array(v, dtype=jnp.float32) for k, v in host.items()}


# --- results and deletion ------------------------------------------------------------------------

def test_donated_input_is_reused_and_deleted_and_the_result_is_exact():
    f = fg.jit(_sgd, donate_argnums=0)
    p, g = jnp.array([1.0, 2.0, 3.0]), jnp.array([10.0, 20.0, 30.0])
    src = f.lower(jnp.array([0.0, 0.0, 0.0]), g).source()
    first = re.match(r"def compiled\((\w+), ", src).group(1)
    assert re.search(rf"_subtract\({first}, \w+, {first}\)", src), src  # written into p's buffer
    out = f(p, g)
    np.testing.assert_array_equal(out, np.array([1.0, 2.0, 3.0], np.float32) - np.float32(0.1) *
                                  np.array([10.0, 20.0, 30.0], np.float32))
    assert p.is_deleted() and not g.is_deleted() and not out.is_deleted()
    np.testing.assert_array_equal(g, [10.0, 20.0, 30.0])


def test_training_loop_matches_the_undonated_step_bit_for_bit():
    host, x, y = _mlp_data()
    x, y = jnp.asarray(x, dtype=jnp.float32), jnp.asarray(y, dtype=jnp.float32)
    plain, donating = fg.jit(_mlp_step), fg.jit(_mlp_step, donate_argnums=0)
    pa, pb = _fresh(host), _fresh(host)
    for _ in range(4):
        old = pb
        la, pa = plain(pa, x, y)
        lb, pb = donating(pb, x, y)
        assert all(v.is_deleted() for v in old.values())  # every parameter was taken by its update
        assert float(la) == float(lb)
        for k in pa:
            np.testing.assert_array_equal(np.asarray(pa[k]), np.asarray(pb[k]))
    # the exact loss of the first step, from NumPy in float64 (float32 arithmetic: relative 1e-5)
    w1, b1, w2 = host["w1"], host["b1"], host["w2"]
    xs, ys = _mlp_data()[1:]
    want = np.mean((np.tanh(xs @ w1 + b1) @ w2 - ys) ** 2)
    l0, _ = fg.jit(_mlp_step, donate_argnums=0)(_fresh(host), x, y)
    assert float(l0) == pytest.approx(want, rel=1e-5)


def test_large_arrays_donate_through_the_fused_kernel():
    n = 4 * max(int(compiler.codegen.config.fusion_min_size), 1024)
    f = fg.jit(lambda p, g: p - 0.5 * g * g + 1.0, donate_argnums=0)
    pv, gv = np.linspace(-1, 1, n, dtype=np.float32), np.linspace(0, 2, n, dtype=np.float32)
    src = f.lower(jnp.array(pv), jnp.array(gv)).source()
    assert "into dying input buffer" in src
    p = jnp.array(pv)
    out = f(p, jnp.array(gv))
    assert p.is_deleted()
    np.testing.assert_array_equal(out, pv - np.float32(0.5) * gv * gv + np.float32(1.0))


def test_deleted_array_raises_jax_error_but_keeps_shape_and_dtype():
    x = jnp.arange(3.0)
    x.delete()
    x.delete()  # twice is fine, as in JAX
    assert x.is_deleted() and x.shape == (3,) and x.dtype == np.float32 and x.ndim == 1 and x.size == 3
    msg = re.escape("Array has been deleted with shape=float32[3].")
    uses = [lambda: x + 1, lambda: 1.0 + x, lambda: jnp.sin(x), lambda: np.asarray(x), lambda: repr(x),
            lambda: x[0], lambda: x.sum(), lambda: fg.jit(lambda a: a * 2)(x), lambda: fg.grad(jnp.sum)(x),
            lambda: x.block_until_ready(), lambda: x.tolist()]
    for use in uses:
        with pytest.raises(RuntimeError, match=msg):
            use()


def test_donated_array_cannot_be_used_again():
    f = fg.jit(_sgd, donate_argnums=0)
    p, g = jnp.ones((2, 2)), jnp.ones((2, 2))
    f(p, g)
    with pytest.raises(RuntimeError, match=re.escape("Array has been deleted with shape=float32[2,2].")):
        f(p, g)


def test_returned_donated_input_is_deleted_and_its_value_returned():
    x = jnp.arange(4.0)
    y = fg.jit(lambda a: a, donate_argnums=0)(x)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(y, [0.0, 1.0, 2.0, 3.0])


def test_unusable_donation_warns_once_per_signature_and_keeps_the_array():
    f = fg.jit(lambda p: p.sum(), donate_argnums=0)  # no result of p's shape: nothing can take it
    x = jnp.ones(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            assert float(f(x)) == 3.0
    assert [str(m.message).split("\n")[0] for m in w] == [f"{NOT_USABLE}: float32[3]."]
    assert w[0].filename == __file__ and not x.is_deleted()


def test_donate_argnames_and_keywords_resolve_through_the_signature():
    def f(p, g):
        return p - g
    by_name = fg.jit(f, donate_argnames="p")
    for call in (lambda p: by_name(p, jnp.ones(3)), lambda p: by_name(p=p, g=jnp.ones(3))):
        p = jnp.full(3, 5.0)
        np.testing.assert_array_equal(call(p), [4.0, 4.0, 4.0])
        assert p.is_deleted()
    p = jnp.full(3, 5.0)
    fg.jit(f, donate_argnums=0)(p=p, g=jnp.ones(3))
    assert p.is_deleted()
    p, g = jnp.full(3, 5.0), jnp.ones(3)
    fg.jit(f, donate_argnums=-1)(p, g)
    assert g.is_deleted() and not p.is_deleted()


def test_donate_argument_errors():
    with pytest.raises(ValueError, match="donate_argnums 3 is out of range"):
        fg.jit(lambda p: p, donate_argnums=3)
    with pytest.raises(ValueError, match="static_argnames and donate_argnames cannot intersect"):
        fg.jit(lambda p, n: p * n, static_argnums=1, donate_argnums=1)


def test_numpy_arrays_and_scalars_in_donated_positions_are_not_the_callers_to_give():
    f = fg.jit(_sgd, donate_argnums=(0, 1))
    a = np.ones(3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (JAX copies these to the device: nothing to warn about)
        np.testing.assert_allclose(f(a, 2.0), np.full(3, 0.8, np.float32), rtol=1e-6)
    np.testing.assert_array_equal(a, [1.0, 1.0, 1.0])


# --- buffers funcgrad does not own alone are never written ----------------------------------------

def test_array_sharing_a_numpy_buffer_is_left_intact():
    host = np.array([1.0, 2.0, 3.0], np.float32)
    x = jnp.asarray(host, copy=False)
    assert np.shares_memory(np.asarray(x), host)
    with pytest.warns(UserWarning, match=NOT_USABLE):
        out = fg.jit(_sgd, donate_argnums=0)(x, jnp.ones(3))
    np.testing.assert_array_equal(host, [1.0, 2.0, 3.0])
    assert not x.is_deleted()
    np.testing.assert_allclose(out, [0.9, 1.9, 2.9], rtol=1e-6)


def test_array_with_a_live_view_is_left_intact():
    x = jnp.arange(6.0)
    view = x.reshape(2, 3)
    with pytest.warns(UserWarning, match=NOT_USABLE):
        fg.jit(_sgd, donate_argnums=0)(x, jnp.ones(6))
    assert not x.is_deleted()
    np.testing.assert_array_equal(view, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x, np.arange(6.0))


def test_same_array_twice_is_left_intact():
    f = fg.jit(_sgd, donate_argnums=0)
    x = jnp.array([1.0, 2.0])
    with pytest.warns(UserWarning, match=NOT_USABLE):
        out = f(x, x)
    assert not x.is_deleted()
    np.testing.assert_allclose(out, [0.9, 1.8], rtol=1e-6)
    t = fg.jit(lambda ps: [q * 2 for q in ps], donate_argnums=0)
    with pytest.warns(UserWarning, match=NOT_USABLE):
        out = t([x, x])
    assert not x.is_deleted()
    np.testing.assert_array_equal(out[1], [2.0, 4.0])


def test_closed_over_constant_is_left_intact():
    c = jnp.array([1.0, 2.0, 3.0])
    f = fg.jit(lambda p: p * 2 + c, donate_argnums=0)
    np.testing.assert_array_equal(f(jnp.zeros(3)), [1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match=NOT_USABLE):
        np.testing.assert_array_equal(f(c), [3.0, 6.0, 9.0])  # c is also the compiled code's constant
    assert not c.is_deleted()
    np.testing.assert_array_equal(c, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(jnp.zeros(3)), [1.0, 2.0, 3.0])


# --- under transforms, donation does not apply -----------------------------------------------------

def test_grad_and_vmap_of_a_donating_jit():
    f = fg.jit(lambda p: jnp.sum(jnp.sin(p) * p), donate_argnums=0)
    x = jnp.array([0.5, 1.0, 2.0])
    g = fg.grad(f)(x)
    xv = np.array([0.5, 1.0, 2.0], np.float32)
    np.testing.assert_allclose(g, np.cos(xv) * xv + np.sin(xv), rtol=1e-6)
    assert not x.is_deleted()
    v = fg.jit(lambda p: p * 2.0 + 1.0, donate_argnums=0)
    xs = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(fg.vmap(v)(xs), np.arange(6.0).reshape(2, 3) * 2 + 1)
    assert not xs.is_deleted()  # (JAX deletes it: a batched call donates there; see the jit docstring)


# --- memory ---------------------------------------------------------------------------------------

def _peak(fn) -> int:
    """tracemalloc's peak of one call (NumPy's buffers and Python objects)."""
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_donation_and_update_scheduling_lower_the_peak_to_one_gradient():
    rng = np.random.default_rng(0)
    n = 384
    host = {"w1": rng.standard_normal((n, n)) / n, "w2": rng.standard_normal((n, n)) / n}
    x = jnp.asarray(rng.standard_normal((4, n)))

    def step(p, x):
        def loss(p):
            return jnp.sum(jnp.tanh(jnp.tanh(x @ p["w1"]) @ p["w2"]) ** 2)
        g = fg.grad(loss)(p)
        return {k: p[k] - 0.1 * g[k] for k in p}

    grad_bytes = n * n * 4
    peaks = {}
    for donate in (False, True):
        f = fg.jit(step, donate_argnums=0 if donate else ())
        box = [_fresh(host)]
        box[0] = f(box[0], x)  # compile

        def run():
            box[0] = f(box[0], x)
        peaks[donate] = _peak(run)
    # without donation both gradients (the new parameters) are alive at the end: 2 x grad_bytes; with it,
    # each update is written into its parameter right after its gradient: one gradient at a time
    assert peaks[False] >= 2 * grad_bytes
    assert peaks[True] < 1.3 * grad_bytes, peaks


def test_hoist_output_chains_places_each_update_after_its_gradient():
    def step(p, x):
        g = fg.grad(lambda p: jnp.sum(jnp.tanh(x @ p[0]) @ p[1]))(p)
        return [p[0] - 0.1 * g[0], p[1] - 0.1 * g[1]]
    p = [jnp.ones((3, 3)), jnp.ones((3, 2))]
    jaxpr = compiler.lower(fg.make_jaxpr(step)(p, jnp.ones((2, 3))))
    moved = schedule.hoist_output_chains(jaxpr)
    assert sorted(map(id, moved.eqns)) == sorted(map(id, jaxpr.eqns))
    made = {v: k for k, e in enumerate(moved.eqns) for v in e.outvars}
    for out in moved.outvars:  # each update (a sub) follows the product it reads within two equations
        sub = moved.eqns[made[out]]
        assert sub.prim.name == "sub"
        src = [made[v] for v in sub.invars if v in made]
        assert made[out] - max(made[w] for k in src for w in moved.eqns[k].invars if w in made) <= 2
    a, b = np.asarray(fg.jit(step)(p, jnp.ones((2, 3)))[0]), np.asarray(fg.jit(step, donate_argnums=0)(
        [jnp.ones((3, 3)), jnp.ones((3, 2))], jnp.ones((2, 3)))[0])
    np.testing.assert_array_equal(a, b)


# --- against JAX ------------------------------------------------------------------------------------

def test_matches_jax_deletion_errors_and_warnings():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    jax.config.update("jax_enable_x64", True)
    fg.config.update("jax_enable_x64", True)
    try:
        # (not compared: programs where XLA aliases a donated buffer with any result of its size, such as
        # `(p.sum() * g)`, `(p > 1, g)`: funcgrad reuses it only for a result made at its last use)
        cases = [lambda p, g: p - 0.1 * g, lambda p, g: p.sum() + g.sum(), lambda p, g: (p, g * 2),
                 lambda p, g: (g, p * p)]
        for fun in cases:
            got = []
            for lib, np_ in ((jax, jjnp), (fg, jnp)):
                p, g = np_.arange(6.0), np_.ones(6)
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    out = lib.jit(fun, donate_argnums=0)(p, g)
                msgs = [str(m.message).split("\n")[0] for m in w if NOT_USABLE in str(m.message)]
                err = None
                if p.is_deleted():
                    with pytest.raises(RuntimeError) as e:
                        np.asarray(p)
                    err = str(e.value)
                outs = [np.asarray(o).tolist() for o in (out if isinstance(out, tuple) else (out,))]
                got.append((p.is_deleted(), g.is_deleted(), msgs, err, outs))
            assert got[1] == got[0], (cases.index(fun), got)
    finally:
        fg.config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)


def test_copies_have_their_own_buffer_and_survive_the_donation_of_the_original():
    x = jnp.array([1.0, 2.0, 3.0])
    copies = [x.copy(), jnp.array(x), jnp.array(x, copy=True)]
    fg.jit(_sgd, donate_argnums=0)(x, jnp.ones(3))
    assert x.is_deleted()
    for c in copies:
        assert not c.is_deleted()
        np.testing.assert_array_equal(c, [1.0, 2.0, 3.0])
    y = jnp.array([1.0, 2.0])
    assert jnp.asarray(y) is y  # asarray does not copy (as in JAX): the same Array, deleted with it


def test_view_of_memory_only_it_refers_to_is_donated_but_not_a_view_of_the_callers():
    from funcgrad._src.core.array import Array
    f = fg.jit(lambda p: p * 2.0, donate_argnums=0)
    x = Array(np.arange(6.0, dtype=np.float32).reshape(2, 3))  # (a reshaped result: its base is its own)
    np.testing.assert_array_equal(f(x), np.arange(6.0).reshape(2, 3) * 2)
    assert x.is_deleted()
    host = np.arange(6.0, dtype=np.float32)
    y = Array(host.reshape(2, 3))
    with pytest.warns(UserWarning, match=NOT_USABLE):
        np.testing.assert_array_equal(f(y), np.arange(6.0).reshape(2, 3) * 2)
    assert not y.is_deleted()
    np.testing.assert_array_equal(host, np.arange(6.0))
