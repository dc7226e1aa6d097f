"""Structured control flow under every transform, against Python loops and finite differences."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import lax
from fd import fd_grad as fd




def branchy(x):
    return lax.cond(jnp.sum(x) > 0, lambda x: jnp.sin(x) * 2.0, lambda x: x ** 3, x)


@pytest.mark.parametrize("x", [np.array([0.3, 0.4]), np.array([-0.7, 0.2])])
def test_cond_values_and_gradients_under_jit_and_vmap(x):
    expected = np.sin(x) * 2 if x.sum() > 0 else x ** 3
    np.testing.assert_allclose(branchy(x), expected, rtol=1e-12)
    np.testing.assert_allclose(fg.jit(branchy)(x), expected, rtol=1e-12)
    loss = lambda x: jnp.sum(branchy(x))
    g_expected = fd(lambda v: loss(jnp.asarray(v)), x)
    np.testing.assert_allclose(fg.jit(fg.grad(loss))(x), g_expected, rtol=1e-6)
    np.testing.assert_allclose(fg.grad(fg.jit(loss))(x), g_expected, rtol=1e-6)


def test_cond_with_batched_predicate_selects_per_example():
    xs = np.array([[0.3, 0.4], [-0.7, 0.2], [1.0, -3.0]])
    out = fg.vmap(branchy)(xs)
    expected = np.stack([branchy(x) for x in xs])
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    grads = fg.vmap(fg.grad(lambda x: jnp.sum(branchy(x))))(xs)
    for x, g in zip(xs, grads):
        np.testing.assert_allclose(g, fd(lambda v: jnp.sum(branchy(jnp.asarray(v))), x), rtol=1e-6)


def test_switch_clamps_index_and_traces_once():
    branches = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: -x]
    f = fg.jit(lambda i, x: lax.switch(i, branches, x))
    assert [float(f(i, 3.0)) for i in (-5, 0, 1, 2, 9)] == [4.0, 4.0, 6.0, -3.0, -3.0]
    assert f._cache_size() == 1
    out = fg.vmap(lambda i, x: lax.switch(i, branches, x))(jnp.array([0, 1, 2]), jnp.array([3.0, 3.0, 3.0]))
    np.testing.assert_allclose(out, [4.0, 6.0, -3.0])


def test_cond_branch_type_mismatch_is_type_error():
    with pytest.raises(TypeError, match=r"f64\[2\].*f64\[3\]|f64\[3\].*f64\[2\]"):
        fg.jit(lambda x: lax.cond(x[0] > 0, lambda x: x, lambda x: jnp.concatenate([x, x[:1]]), x))(jnp.ones(2))


def collatz_steps(n):
    def body(c):
        k, m = c
        return k + 1, jnp.where(m % 2 == 0, m // 2, 3 * m + 1)
    return lax.while_loop(lambda c: c[1] != 1, body, (0, n))[0]


def test_while_loop_eager_jit_and_batched():
    expected = [0, 1, 7, 2, 5, 8, 16]
    assert [int(collatz_steps(n)) for n in range(1, 8)] == expected
    assert [int(fg.jit(collatz_steps)(n)) for n in range(1, 8)] == expected
    np.testing.assert_array_equal(fg.vmap(collatz_steps)(jnp.arange(1, 8)), expected)


def test_while_loop_forward_mode_and_reverse_mode_error():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * 1.5), (0, x))[1]

    x = np.float64(0.4)
    _, t = fg.jvp(fg.jit(f), (x,), (np.float64(1.0),))
    np.testing.assert_allclose(float(t), fd(lambda v: f(jnp.asarray(v)), x), rtol=1e-6)
    with pytest.raises(ValueError, match="fori_loop.*scan|scan.*fori_loop"):
        fg.grad(fg.jit(f))(x)


def test_while_loop_carry_type_change_names_types_and_path():
    with pytest.raises(TypeError, match=r"\['b'\].*f64\[2\].*f64\[3\]|\['b'\].*f64\[3\].*f64\[2\]"):
        fg.jit(lambda x: lax.while_loop(lambda c: c["a"] < 3,
                                        lambda c: {"a": c["a"] + 1, "b": jnp.ones(3)},
                                        {"a": 0, "b": x}))(jnp.ones(2))


def rnn(w, xs):
    def step(h, x):
        h = jnp.tanh(w * h + x)
        return h, h * x
    h, ys = lax.scan(step, jnp.zeros_like(xs[0]), xs)
    return jnp.sum(h) + jnp.sum(ys)


def rnn_loop(w, xs):
    h, total = np.zeros_like(xs[0]), 0.0
    for x in xs:
        h = np.tanh(w * h + x)
        total += np.sum(h * x)
    return np.sum(h) + total


def test_scan_matches_python_loop_and_differentiates():
    rng = np.random.default_rng(0)
    w, xs = rng.normal(size=3), rng.normal(size=(5, 3))
    np.testing.assert_allclose(rnn(w, xs), rnn_loop(w, xs), rtol=1e-12)
    np.testing.assert_allclose(fg.jit(rnn)(w, xs), rnn_loop(w, xs), rtol=1e-12)
    gw, gx = fg.jit(fg.grad(rnn, argnums=(0, 1)))(w, xs)
    np.testing.assert_allclose(gw, fd(lambda v: rnn_loop(v, xs), w), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gx, fd(lambda v: rnn_loop(w, v), xs), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fg.grad(fg.jit(rnn))(w, xs), gw, rtol=1e-10)
    H = fg.jit(fg.hessian(rnn))(w, xs)
    H_fd = np.stack([fd(lambda v: fg.grad(rnn)(jnp.asarray(v), xs)[i], w) for i in range(3)])
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-8)


def test_scan_reverse_and_vmap():
    xs = np.arange(4.0)
    carry, ys = fg.jit(lambda xs: lax.scan(lambda c, x: (c + x, c * 10.0 + x), 0.0, xs, reverse=True))(xs)
    assert float(carry) == 6.0
    np.testing.assert_allclose(ys, [60.0, 51.0, 32.0, 3.0])
    ws = np.random.default_rng(1).normal(size=(4, 3))
    xs = np.random.default_rng(2).normal(size=(5, 3))
    np.testing.assert_allclose(fg.vmap(rnn, in_axes=(0, None))(ws, xs), [rnn_loop(w, xs) for w in ws], rtol=1e-12)
    per_ex = fg.vmap(fg.grad(rnn), in_axes=(0, None))(ws, xs)
    for w, g in zip(ws, per_ex):
        np.testing.assert_allclose(g, fd(lambda v: rnn_loop(v, xs), w), rtol=1e-6, atol=1e-9)


def test_fori_loop_static_bounds_support_reverse_mode():
    f = lambda x: lax.fori_loop(0, 4, lambda i, v: v * x + i, 1.0)
    # v0 = 1; v1 = x; v2 = x^2 + 1; v3 = x^3 + x + 2; v4 = x^4 + x^2 + 2x + 3
    x = np.float64(1.5)
    assert float(fg.jit(f)(x)) == pytest.approx(1.5 ** 4 + 1.5 ** 2 + 3 + 3)
    assert float(fg.jit(fg.grad(f))(x)) == pytest.approx(4 * 1.5 ** 3 + 2 * 1.5 + 2)
    g = fg.jit(lambda n, x: lax.fori_loop(0, n, lambda i, v: v * x, 1.0))
    assert float(g(3, 2.0)) == 8.0 and float(g(5, 2.0)) == 32.0


def test_map_and_checkpointed_scan_body():
    xs = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(lax.map(lambda x: x * 2.0, xs), xs * 2)
    np.testing.assert_allclose(fg.jit(lambda xs: lax.map(jnp.sum, xs))(xs), xs.sum(1))
    body = fg.checkpoint(lambda h, x: (jnp.tanh(h + x), h))
    f = lambda xs: jnp.sum(lax.scan(body, 0.0, xs)[0])
    g = lambda xs: jnp.sum(lax.scan(lambda h, x: (jnp.tanh(h + x), h), 0.0, xs)[0])
    np.testing.assert_allclose(fg.jit(fg.grad(f))(np.arange(4.0) / 4), fg.grad(g)(np.arange(4.0) / 4), rtol=1e-12)


def test_outside_transforms_loops_run_as_python():
    calls = []

    def body(c):
        calls.append(1)
        return c + 1

    assert lax.while_loop(lambda c: c < 5, body, 0) == 5
    assert len(calls) == 5  # run directly, once per iteration, no tracing


# --- Hypothesis over sizes and values: each construct against the unrolled Python code -------------

from hypothesis import given, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

small = st.floats(-1.5, 1.5)


@given(n=st.integers(0, 6), d=st.integers(1, 3), data=st.data())
def test_scan_equals_unrolled_loop_with_gradients(n, d, data):
    w = data.draw(hnp.arrays(np.float64, (d,), elements=small), label="w")
    xs = data.draw(hnp.arrays(np.float64, (n, d), elements=small), label="xs")
    h0 = np.zeros(d)

    def scanned(w, xs):
        h, ys = lax.scan(lambda h, x: (jnp.tanh(w * h + x), h * w), h0, xs, length=n)
        return jnp.sum(h) + (jnp.sum(ys) if n else 0.0)

    def unrolled(w, xs):
        h, total = jnp.asarray(h0), 0.0
        for i in range(n):
            total = total + jnp.sum(h * w)
            h = jnp.tanh(w * h + xs[i])
        return jnp.sum(h) + total

    np.testing.assert_allclose(fg.jit(scanned)(w, xs), unrolled(w, xs), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.grad(scanned))(w, xs), fg.grad(unrolled)(w, xs), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.hessian(scanned))(w, xs), fg.hessian(unrolled)(w, xs),
                               rtol=1e-8, atol=1e-10)


@given(lo=st.integers(-2, 3), hi=st.integers(-2, 6), x=small)
def test_fori_loop_equals_python_loop(lo, hi, x):
    x = np.float64(x)
    expected, v = 1.0, 1.0
    for i in range(lo, hi):
        v = v * np.sin(x + i) + 0.5
    expected = v
    np.testing.assert_allclose(fg.jit(lambda x: lax.fori_loop(lo, hi, lambda i, v: v * jnp.sin(x + i) + 0.5, np.float64(1.0)))(x),
                               expected, rtol=1e-12)
    dyn = fg.jit(lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, v: v * jnp.sin(x + i) + 0.5, np.float64(1.0)))
    np.testing.assert_allclose(dyn(lo, hi, x), expected, rtol=1e-12)


@given(xs=hnp.arrays(np.float64, st.integers(1, 5), elements=small))
def test_cond_vmap_equals_loop(xs):
    f = lambda x: lax.cond(x > 0, lambda x: jnp.exp(x), lambda x: jnp.cos(x) * 3.0, x)
    np.testing.assert_allclose(fg.vmap(f)(xs), [float(f(x)) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(xs), [float(fg.grad(f)(x)) for x in xs], rtol=1e-12)


@given(ns=hnp.arrays(np.int32, st.integers(1, 4), elements=st.integers(0, 5)), x=small)
def test_batched_while_runs_until_every_member_is_done(ns, x):
    x = np.float64(x)
    f = lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 0.25), (0, x))[1]
    expected = []
    for n in ns:
        v = x
        for _ in range(int(n)):
            v = v * 1.5 + 0.25
        expected.append(v)
    np.testing.assert_allclose(fg.vmap(f, in_axes=(0, None))(ns, x), expected, rtol=1e-12)


@given(xs=hnp.arrays(np.float64, st.tuples(st.integers(1, 9), st.integers(1, 3)), elements=small),
       reverse=st.booleans())
def test_associative_scan_equals_sequential_scan(xs, reverse):
    fn = lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1])  # composition of affine maps: associative
    a, b = np.tanh(xs), xs
    got = lax.associative_scan(fn, (a, b), reverse=reverse)
    ea, eb = a.copy(), b.copy()
    order = range(len(a) - 2, -1, -1) if reverse else range(1, len(a))
    for i in order:
        j = i + 1 if reverse else i - 1
        ea[i], eb[i] = (ea[j] * a[i], eb[j] * a[i] + b[i])
    np.testing.assert_allclose(got[0], ea, rtol=1e-12)
    np.testing.assert_allclose(got[1], eb, rtol=1e-12, atol=1e-12)
    g = fg.grad(lambda b: jnp.sum(lax.associative_scan(fn, (a, b), reverse=reverse)[1] ** 2))(b)
    g_seq = fg.grad(lambda b: jnp.sum(fg.jit(lambda b: lax.scan(
        lambda h, ab: ((ab[0] * h + ab[1]),) * 2, jnp.zeros_like(b[0]),
        (jnp.asarray(a[::-1] if reverse else a), b[::-1] if reverse else b))[1])(b) ** 2))(b)
    np.testing.assert_allclose(g, g_seq, rtol=1e-9, atol=1e-12)


# --- scan's vjp keeps the forward pass's residuals (no recomputation in the backward scan) -------------

def _rnn_loss(W, xs, h0, reverse=False):
    def step(h, x):
        h2 = jnp.tanh(h @ W + x)
        return h2, jnp.sum(h2 * h2)
    h, ys = lax.scan(step, h0, xs, reverse=reverse)
    return jnp.sum(ys) + jnp.sum(jnp.sin(h))


def _rnn_loop(W, xs, h0, reverse=False):
    h, tot = h0, 0.0
    order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    for t in order:
        h = jnp.tanh(h @ W + xs[t])
        tot = tot + jnp.sum(h * h)
    return tot + jnp.sum(jnp.sin(h))


def _scan_eqns(jaxpr):
    """Every scan equation in a jaxpr, nested bodies included."""
    out = []
    for e in jaxpr.eqns:
        if e.prim.name == "scan":
            out.append(e)
            out.extend(_scan_eqns(e.params["jaxpr"]))
        for v in e.params.values():
            if hasattr(v, "eqns") and e.prim.name != "scan":
                out.extend(_scan_eqns(v))
    return out


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_backward_reads_saved_residuals_instead_of_recomputing(reverse):
    """The gradient's backward scan must not re-run the step (no tanh, no matmul of h by W), as
    JAX's scan vjp saves residuals; the forward scan of the gradient computes each step once."""
    rng = np.random.default_rng(0)
    W, xs, h0 = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(6, 4)), np.zeros(4)
    jx = fg.make_jaxpr(fg.grad(_rnn_loss, argnums=(0, 1, 2)), static_argnums=3)(W, xs, h0, reverse)
    scans = [e for e in jx.eqns if e.prim.name == "scan"]
    assert len(scans) == 2, jx  # one forward (with residuals), one backward
    fwd, bwd = scans
    assert bwd.params["reverse"] == (not reverse)
    names = [e.prim.name for e in bwd.params["jaxpr"].eqns]
    assert "tanh" not in names, bwd.params["jaxpr"]
    assert sum(e.prim.name == "tanh" for e in fwd.params["jaxpr"].eqns) == 1
    got = fg.grad(_rnn_loss, argnums=(0, 1, 2))(W, xs, h0, reverse)
    want = fg.grad(_rnn_loop, argnums=(0, 1, 2))(W, xs, h0, reverse)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(fg.jit(fg.grad(_rnn_loss, argnums=(0, 1, 2)), static_argnums=3)(W, xs, h0, reverse), want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_scan_vjp_with_residuals_composes_with_higher_orders_vmap_and_partial_needs():
    rng = np.random.default_rng(1)
    W, xs, h0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3)), rng.normal(size=3) * 0.1
    # second order (the backward scan itself differentiated)
    np.testing.assert_allclose(fg.hessian(_rnn_loss)(W, xs, h0), fg.hessian(_rnn_loop)(W, xs, h0),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fg.jacfwd(fg.grad(_rnn_loss, 2), 2)(W, xs, h0),
                               fg.jacfwd(fg.grad(_rnn_loop, 2), 2)(W, xs, h0), rtol=1e-10, atol=1e-12)
    # vmap of grad over the sequence
    xb = np.stack([xs, 2 * xs, -xs])
    got = fg.vmap(fg.grad(_rnn_loss, 1), (None, 0, None))(W, xb, h0)
    for i in range(3):
        np.testing.assert_allclose(got[i], fg.grad(_rnn_loop, 1)(W, xb[i], h0), rtol=1e-12, atol=1e-14)
    # only some consts differentiated: the weight closed over, the input differentiated
    g = fg.grad(lambda xs_: _rnn_loss(jnp.asarray(W), xs_, h0))(xs)
    np.testing.assert_allclose(g, fg.grad(_rnn_loop, 1)(W, xs, h0), rtol=1e-12, atol=1e-14)
    # an integer const and an integer carry beside float ones take no cotangent
    def f(w):
        def step(c, x):
            h, n = c
            return (jnp.tanh(h * w + x), n + 1), h * n
        (h, n), ys = lax.scan(step, (jnp.zeros(2, jnp.float64), jnp.int32(0)), jnp.asarray(xs[:, :2]))
        return jnp.sum(ys) + jnp.sum(h)

    def f_loop(w):
        h, n, tot = jnp.zeros(2, jnp.float64), 0, 0.0
        for t in range(xs.shape[0]):
            tot = tot + jnp.sum(h * n)
            h, n = jnp.tanh(h * w + xs[t, :2]), n + 1
        return tot + jnp.sum(h)
    w = np.float64(0.7)
    np.testing.assert_allclose(fg.grad(f)(w), fg.grad(f_loop)(w), rtol=1e-12)


def test_nested_scan_and_custom_vjp_inside_a_scan_body_differentiate():
    """Residuals that an inner scan or a custom_vjp keeps for its own vjp travel through the outer
    scan's saved residuals."""
    @fg.custom_vjp
    def sq(x):
        return x * x

    sq.defvjp(lambda x: (x * x, (x, 2.0 * x)), lambda res, g: (g * res[1],))

    def inner(h, x):
        def body(c, z):
            return jnp.sin(c * z), c
        c, ys = lax.scan(body, h, jnp.stack([x, x + 1.0]))
        return sq(c) + jnp.sum(ys), None

    def f(h0, xs):
        h, _ = lax.scan(inner, h0, xs)
        return h

    def f_loop(h0, xs):
        h = h0
        for t in range(xs.shape[0]):
            c, tot = h, 0.0
            for z in (xs[t], xs[t] + 1.0):
                tot = tot + c
                c = jnp.sin(c * z)
            h = c * c + tot
        return h
    xs = jnp.asarray(np.array([0.3, -0.2, 0.5]))
    h0 = np.float64(0.4)
    for argnums in (0, 1):
        got = fg.grad(f, argnums)(h0, xs)
        want = fg.grad(f_loop, argnums)(h0, xs)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(fg.jit(fg.grad(f, argnums))(h0, xs), want, rtol=1e-12)


def test_scan_residuals_skip_views_of_saved_values():
    """Slices of a saved value (gates cut out of one stacked product) are taken again in the backward
    scan rather than saved per step: the forward scan's residual outputs hold no (length, 2) slices."""
    W = jnp.asarray(np.array([0.5, -0.3, 0.8, 0.1]))

    def f(W, xs):
        def step(h, x):
            s = fg.nn.sigmoid(h * W + x)
            a, b = s[:2], s[2:]
            return jnp.concatenate([a * b, a + b * b]), jnp.sum(a)
        h, ys = lax.scan(step, jnp.zeros(4, jnp.float64), xs)
        return jnp.sum(h) + jnp.sum(ys)

    def f_loop(W, xs):
        h, tot = jnp.zeros(4, jnp.float64), 0.0
        for t in range(xs.shape[0]):
            s = fg.nn.sigmoid(h * W + xs[t])
            a, b = s[:2], s[2:]
            h, tot = jnp.concatenate([a * b, a + b * b]), tot + jnp.sum(a)
        return jnp.sum(h) + jnp.sum(tot)
    xs = jnp.asarray(np.random.default_rng(2).normal(size=(5, 4)))
    jx = fg.make_jaxpr(fg.grad(f, argnums=(0, 1)))(W, xs)
    fwd = [e for e in jx.eqns if e.prim.name == "scan"][0]
    n_plain = 1 + 1  # the carry and the per-step sum
    res_shapes = [tuple(v.aval.shape) for v in fwd.outvars[n_plain:]]
    assert res_shapes and (5, 2) not in res_shapes, res_shapes
    for a, b in zip(fg.grad(f, argnums=(0, 1))(W, xs), fg.grad(f_loop, argnums=(0, 1))(W, xs)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
