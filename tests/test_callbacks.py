"""debug.print / debug.callback / pure_callback: run-time (not trace-time) effects, one per call, under
jit, vmap, grad and their compositions; pure_callback's vmap methods and errors."""
import numpy as np
import pytest

import funcgrad as jax
import funcgrad.numpy as jnp


def _f(x):
    jax.debug.print("x={} s={s}", x, s=x.sum())
    return x * 2


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


def test_print_eager_and_jit_prints_each_call(capsys):
    _f(jnp.arange(3.0))
    assert _lines(capsys) == ["x=[0. 1. 2.] s=3.0"]
    jf = jax.jit(_f)
    jf(jnp.arange(3.0))
    jf(jnp.arange(3.0) + 1)  # cached: must still print, with the new values
    assert _lines(capsys) == ["x=[0. 1. 2.] s=3.0", "x=[1. 2. 3.] s=6.0"]
    assert jf._cache_size() == 1
    assert "debug_callback" in jf.lower(jnp.arange(3.0)).as_text()  # kept although nothing reads it


def test_print_under_vmap_once_per_element(capsys):
    xs = jnp.arange(4.0).reshape(2, 2)
    jax.vmap(_f)(xs)
    assert _lines(capsys) == ["x=[0. 1.] s=1.0", "x=[2. 3.] s=5.0"]
    jax.jit(jax.vmap(_f))(xs)
    assert _lines(capsys) == ["x=[0. 1.] s=1.0", "x=[2. 3.] s=5.0"]
    jax.vmap(lambda x: _f(x), in_axes=1)(xs)
    assert _lines(capsys) == ["x=[0. 2.] s=2.0", "x=[1. 3.] s=4.0"]


@pytest.mark.parametrize("wrap", [
    lambda f: jax.grad(lambda x: f(x).sum()),
    lambda f: jax.grad(lambda x: jax.jit(f)(x).sum()),
    lambda f: jax.jit(jax.grad(lambda x: f(x).sum())),
    lambda f: jax.jit(jax.grad(lambda x: jax.jit(f)(x).sum())),
    lambda f: (lambda x: jax.jvp(jax.jit(f), (x,), (jnp.ones_like(x),))),
])
def test_print_under_grad_prints_primal_once(capsys, wrap):
    g = wrap(_f)(jnp.arange(2.0))
    assert _lines(capsys) == ["x=[0. 1.] s=1.0"]
    if not isinstance(g, tuple):
        np.testing.assert_allclose(g, [2.0, 2.0])


def test_print_inside_scan_under_jit(capsys):
    def body(c, x):
        jax.debug.print("step {}", x)
        return c + x, None
    out = jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])(jnp.arange(3.0))
    assert float(out) == 3.0
    assert _lines(capsys) == ["step 0.0", "step 1.0", "step 2.0"]


def test_callback_receives_numpy_and_static_leaves(capsys):
    seen = []
    jax.jit(lambda x: jax.debug.callback(lambda a, tag, d: seen.append((type(a), a.tolist(), tag, d["k"])),
                                         x, "tag", {"k": x + 1}))(jnp.arange(2.0))
    assert seen == [(np.ndarray, [0.0, 1.0], "tag", seen[0][3])]
    assert seen[0][3].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="must return None"):
        jax.debug.callback(lambda a: 1, jnp.ones(2))
    with pytest.raises(NotImplementedError):
        jax.debug.breakpoint()


def test_pure_callback_jit_and_vmap_methods():
    sds = jax.ShapeDtypeStruct
    calls = []

    def host_sin(a):
        calls.append(a.shape)
        return np.sin(a)
    f = jax.jit(lambda x: jax.pure_callback(host_sin, sds(x.shape, x.dtype), x))
    x = jnp.arange(3.0)
    np.testing.assert_allclose(f(x), np.sin(np.arange(3.0)), rtol=1e-6)
    assert calls == [(3,)]  # not called at trace time
    xs = jnp.arange(6.0).reshape(2, 3)
    calls.clear()
    g = jax.vmap(lambda r: jax.pure_callback(host_sin, sds(r.shape, r.dtype), r, vmap_method="sequential"))
    np.testing.assert_allclose(g(xs), np.sin(np.arange(6.0)).reshape(2, 3), rtol=1e-6)
    assert calls == [(3,), (3,)]
    calls.clear()
    h = jax.vmap(lambda r, s: jax.pure_callback(lambda a, b: host_sin(a) + b, sds(r.shape, r.dtype), r, s,
                                                vmap_method="expand_dims"), in_axes=(0, None))
    out = h(xs, jnp.ones(3))
    np.testing.assert_allclose(out, np.sin(np.arange(6.0)).reshape(2, 3) + 1, rtol=1e-6)
    assert calls == [(2, 3)]
    bc = jax.vmap(lambda r, s: jax.pure_callback(lambda a, b: (a.shape, b.shape) and a + b, sds((3,), r.dtype),
                                                 r, s, vmap_method="broadcast_all"), in_axes=(0, None))
    np.testing.assert_allclose(bc(xs, jnp.ones(3)), np.arange(6.0).reshape(2, 3) + 1)
    calls.clear()
    su = jax.vmap(lambda r: jax.pure_callback(host_sin, sds(r.shape, r.dtype), r, vmap_method="sequential_unrolled"))
    np.testing.assert_allclose(su(xs), np.sin(np.arange(6.0)).reshape(2, 3), rtol=1e-6)
    assert calls == [(3,), (3,)]
    with pytest.raises(ValueError, match="unknown vmap_method"):
        jax.vmap(lambda r: jax.pure_callback(np.sin, sds((3,), r.dtype), r, vmap_method="parallel"))(xs)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(lambda r: jax.pure_callback(np.sin, sds((3,), r.dtype), r))(xs)


def test_pure_callback_pytrees_and_errors():
    sds = jax.ShapeDtypeStruct
    out = jax.pure_callback(lambda d: {"s": d["a"].sum(), "t": d["a"] * 2},
                            {"s": sds((), np.float32), "t": sds((2,), np.float32)}, {"a": jnp.ones(2)})
    assert float(out["s"]) == 2.0 and out["t"].tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="declares"):
        jax.pure_callback(lambda a: a.astype(np.float64), sds((2,), np.float32), jnp.ones(2))
    with pytest.raises(ValueError, match="JVP"):
        jax.grad(lambda x: jax.pure_callback(np.sin, sds((), x.dtype), x))(1.0)


def test_print_formats_like_jax(capsys):
    # 0-d values format as NumPy scalars do (JAX's Array.__format__ defers to them)
    jax.jit(lambda x: jax.debug.print("x={x:.2f} s={} {{literal}}", x.sum(), x=x[0]))(jnp.array([1.23456, 2.0]))
    jax.debug.print("{} {}", jnp.array(0.5, jnp.float32), jnp.array([0.1, 0.2]))
    s = np.float32(1.23456) + np.float32(2.0)
    assert _lines(capsys) == [f"x=1.23 s={format(s, '')} {{literal}}", "0.5 [0.1 0.2]"]


def test_io_callback_runs_for_its_effect():
    from funcgrad.experimental import io_callback
    log = []

    def record(v):
        log.append(v.tolist())
        return np.float32(v.sum())
    sds = jax.ShapeDtypeStruct((), np.float32)

    @jax.jit
    def f(x):
        io_callback(record, sds, x)  # result unused: still runs, at call time
        return x * 2
    f(jnp.arange(3.0))
    f(jnp.ones(3))
    assert log == [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]
    log.clear()
    out = jax.vmap(lambda r: io_callback(record, sds, r))(jnp.arange(4.0).reshape(2, 2))
    assert log == [[0.0, 1.0], [2.0, 3.0]] and np.asarray(out).tolist() == [1.0, 5.0]
    with pytest.raises(ValueError, match="not differentiable"):
        jax.grad(lambda x: io_callback(record, sds, x))(1.0)
