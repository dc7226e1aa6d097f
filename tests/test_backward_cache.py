"""Compiled backward walks of repeated tapes (funcgrad/_src/interpreters/backward_cache.py): the compiled walk
gives what the interpreted walk gives, sees each call's own values, and serves only the tapes it may."""
import contextlib

import numpy as np
import pytest
from hypothesis import given

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.prims import elementwise as ew
from funcgrad._src.interpreters import ad
from funcgrad._src.interpreters import backward_cache as bc
from test_jit_random_programs import build, programs


@contextlib.contextmanager
def cache(size=64, first=False):
    old = (bc.config.backward_cache_size, bc.config.compile_on_first)
    bc.clear_cache()
    bc.config.backward_cache_size, bc.config.compile_on_first = size, first
    try:
        yield
    finally:
        bc.config.backward_cache_size, bc.config.compile_on_first = old
        bc.clear_cache()


@pytest.fixture
def walks(monkeypatch):
    """Counts the interpreted backward walks (the compiled path does not walk)."""
    calls = []
    real = ad.walk_backward

    def counting(*a):
        calls.append(1)
        return real(*a)
    monkeypatch.setattr(ad, "walk_backward", counting)
    return calls


def interpreted(f, *args):
    """f(*args) with every backward walk interpreted (the cache left as it is)."""
    old = bc.config.backward_cache_size
    bc.config.backward_cache_size = 0
    try:
        return f(*args)
    finally:
        bc.config.backward_cache_size = old


def assert_same(got, want, rtol=1e-13):
    got, want = fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype and g.weak_type == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol * 1e-3)


def rnn_loss(params, xs):
    W, U, b = params
    h, loss = jnp.zeros(W.shape[0], W.dtype), 0.0
    for t in range(xs.shape[0]):
        h = jnp.tanh(h @ W + xs[t] @ U + b)
        loss = loss + jnp.sum(h * h)
    return loss


def rnn_data(seed, steps=6):
    rng = np.random.default_rng(seed)
    return ((jnp.asarray(rng.standard_normal((5, 5)) / 3), jnp.asarray(rng.standard_normal((3, 5))),
             jnp.asarray(rng.standard_normal(5))), jnp.asarray(rng.standard_normal((steps, 3))))


def test_a_repeated_tape_compiles_on_its_second_walk_and_then_stops_interpreting(walks):
    g = fg.grad(rnn_loss)
    with cache():
        g(*rnn_data(0))
        assert bc.cache_size() == 0 and len(walks) == 1
        g(*rnn_data(1))  # compiles (tracing the walk once on abstract values) and runs the compiled walk
        assert bc.cache_size() == 1
        walks.clear()
        p, xs = rnn_data(2)
        got = g(p, xs)
        assert walks == [] and bc.cache_size() == 1
    assert_same(got, interpreted(g, p, xs))


def test_each_call_uses_its_own_values_constants_included():
    """Nothing of a call is baked into the compiled walk: the inputs, the values on the tape and the
    constants the function closes over are all read per call."""
    rng = np.random.default_rng(0)
    with cache():
        for _ in range(4):
            c = jnp.asarray(rng.standard_normal((4, 3)))
            x = jnp.asarray(rng.standard_normal((4, 3)))

            def f(x):
                return jnp.sum(jnp.sin(x) * c) + jnp.sum((x @ c.T) ** 2)
            assert_same(fg.grad(f)(x), interpreted(fg.grad(f), x))
        assert bc.cache_size() == 1


def test_tapes_that_differ_in_control_flow_params_or_shapes_get_their_own_walks():
    def f(x, axis):
        y = jnp.sum(x * x, axis=axis) ** 3 if jnp.sum(x) > 0 else jnp.sin(x)
        return jnp.sum(y)

    rng = np.random.default_rng(1)
    with cache():
        for k in range(12):
            x = jnp.asarray(rng.standard_normal((3, 3) if k % 3 else (2, 4)))
            axis = k % 2
            want = interpreted(fg.grad(f), x, axis)
            assert_same(fg.grad(f)(x, axis), want)
        assert 2 <= bc.cache_size() <= 8


def test_cotangents_are_read_per_call_and_outputs_that_are_inputs():
    def f(x, y):
        return x, x * y, jnp.sum(y)

    x, y = jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0.5, -1.0, 4.0])
    with cache():
        for k in range(4):
            out, pull = fg.vjp(f, x, y)
            ct = (jnp.full(3, float(k)), jnp.asarray([1.0, k, -k]), jnp.asarray(2.0 * k))
            want = interpreted(pull, ct)
            assert_same(pull(ct), want)
        assert bc.cache_size() == 1


def test_the_compiled_walk_never_writes_into_the_tapes_values():
    x = jnp.asarray(np.linspace(-1, 1, 12).reshape(3, 4))
    before = np.asarray(x).copy()

    def f(x):
        a = jnp.tanh(x)
        b = a * a + x
        return jnp.sum(jnp.exp(b) * a), (a, b)

    with cache(first=True):
        for _ in range(3):
            (v, (a, b)), g = fg.value_and_grad(f, has_aux=True)(x)
            kept = [np.asarray(t).copy() for t in (v, a, b)]
            g2 = fg.grad(lambda x: f(x)[0])(x)
            assert_same(g2, g)
            for t, k in zip((v, a, b), kept):
                np.testing.assert_array_equal(np.asarray(t), k)
    np.testing.assert_array_equal(np.asarray(x), before)
    assert_same(g, interpreted(fg.grad(lambda x: f(x)[0]), x))


def test_weak_types_higher_orders_and_jit_inside_grad_match_the_interpreted_walk():
    def f(x):
        return jnp.sin(x) * x ** 3

    h = fg.jit(lambda x: jnp.sum(jnp.cos(x) * x))
    cases = [(fg.grad(f), 3.0), (fg.grad(fg.grad(f)), 0.7), (fg.grad(fg.grad(fg.grad(f))), -1.3),
             (fg.grad(lambda x: h(x) * 2.0), jnp.asarray([0.1, 0.2, 0.3])),
             (fg.jacrev(lambda x: jnp.tanh(x) * x), jnp.asarray([0.3, -0.4]))]
    with cache(first=True):
        for fn, x in cases:
            want = interpreted(fn, x)
            assert_same(fn(x), want)
            assert_same(fn(x), want)


def test_a_tape_whose_walk_cannot_be_traced_is_interpreted(monkeypatch, walks):
    """A rule that needs concrete values fails while the walk is traced: that tape keeps the interpreted
    walk (and is not traced again)."""
    real = ew.sin_p.vjp[0]

    def concrete_rule(g, ans, x):
        assert float(jnp.sum(x)) == float(jnp.sum(x))  # raises on an abstract value
        return real(g, ans, x)
    monkeypatch.setattr(ew.sin_p, "vjp", [concrete_rule])
    f = fg.grad(lambda x: jnp.sum(jnp.sin(x) * x))
    x = jnp.asarray([0.5, 1.5])
    with cache(first=True):
        for _ in range(3):
            assert_same(f(x), x * jnp.cos(x) + jnp.sin(x))
        assert len(walks) == 4  # the failed trace of the walk, then three interpreted walks


def test_eager_hooks_and_disable_jit_keep_the_interpreted_walk(walks):
    f = fg.grad(lambda x: jnp.sum(jnp.sqrt(x)))
    with cache(first=True):
        try:
            fg.config.update("jax_debug_infs", True)
            with pytest.raises(FloatingPointError, match="div|rsqrt|pow|mul"):
                f(jnp.asarray([0.0, 1.0]))
        finally:
            fg.config.update("jax_debug_infs", False)
        with fg.disable_jit():
            f(jnp.asarray([1.0, 4.0]))
        assert len(walks) == 2 and bc.cache_size() == 0


def test_unhashable_params_and_the_bound():
    tape = ad.record(lambda x: [jnp.sum(jnp.sin(x), axis=0)], [jnp.ones((2, 3))], "vjp")
    eqns = tape.trace.eqns
    s = next(e for e in eqns if e.prim.name == "reduce_sum")
    s.params = {**s.params, "axes": list(s.params["axes"])}  # (an unhashable param)
    with cache(first=True):
        ins, outs = [t.var for t in tape.inputs], [tape.outputs[0].var]
        assert bc.compiled_backward(eqns, ins, outs, [jnp.ones(3)], ad.walk_backward) is None
    with cache(size=2):
        for n in (1, 2, 3, 4, 1, 2, 3, 4):
            x = jnp.arange(float(n))
            assert_same(fg.grad(lambda x: jnp.sum(jnp.exp(x)))(x), jnp.exp(x))
            assert bc.cache_size() <= 2
    with cache(size=0, first=True):
        fg.grad(lambda x: jnp.sum(x * x))(jnp.ones(3))
        assert bc.cache_size() == 0


def test_params_that_compare_equal_across_types_do_not_share_a_walk():
    keys = {bc._params_key({"v": v}) for v in (0.0, -0.0, 0, False, 1, 1.0, True)}
    assert len(keys) == 7


def test_config_option():
    old = fg.config.read("backward_cache_size")
    try:
        fg.config.update("backward_cache_size", 0)
        assert bc.config.backward_cache_size == 0
        with pytest.raises(ValueError, match="backward_cache_size"):
            fg.config.update("backward_cache_size", -1)
    finally:
        fg.config.update("backward_cache_size", old)


@given(programs())
def test_compiled_walks_match_the_interpreted_walk_on_random_programs(program):
    f, inputs = build(program)

    def loss(*xs):
        return sum(jnp.sum(jnp.tanh(o)) for o in f(*xs))

    vg = fg.value_and_grad(loss, argnums=tuple(range(len(inputs))))
    with np.errstate(all="ignore"):
        want = interpreted(vg, *inputs)
        with cache(first=True):
            got = vg(*inputs)
            again = vg(*inputs)
    rtol = 1e-5 if program[1] == np.float32 else 1e-12
    for g in (got, again):
        assert_same(g, want, rtol)


def test_an_input_and_a_constant_of_the_same_type_are_told_apart():
    """f(x, y) differentiated in both and f(x) closing over y record the same equations over the same
    abstract values; only the number of inputs tells the tapes apart."""
    a, b = jnp.asarray([1.0, 2.0]), jnp.asarray([3.0, -4.0])
    with cache(first=True):
        for _ in range(2):
            assert_same(fg.grad(lambda x, y: jnp.sum(x * y), argnums=(0, 1))(a, b), (b, a))
            assert_same(fg.grad(lambda x: jnp.sum(x * b))(a), b)
        assert bc.cache_size() == 2


def test_the_garbage_collector_is_paused_while_a_gradient_records_and_walks_and_then_restored():
    import gc
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return jnp.sum(x * x)

    def bad(x):
        seen.append(gc.isenabled())
        raise KeyError("inside")

    assert gc.isenabled()
    fg.grad(f)(jnp.ones(2))
    with pytest.raises(KeyError):
        fg.grad(bad)(jnp.ones(2))
    assert seen == [False, False] and gc.isenabled()
    gc.disable()  # a user's own pause is left alone
    try:
        fg.grad(f)(jnp.ones(2))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_threads_share_compiled_walks_safely():
    import threading
    g = fg.grad(rnn_loss)
    data = [rnn_data(s) for s in range(4)]
    want = [interpreted(g, *d) for d in data]
    errors = []

    def work(k):
        try:
            for i in range(30):
                j = (i + k) % 4
                assert_same(g(*data[j]), want[j])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    with cache():
        threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert bc.cache_size() == 1
    assert errors == []
    import gc
    assert gc.isenabled()


# --- torch-face graph nodes: one compiled backward per node signature (backward_cache.node_backward) ------

def _torch_face_loss(lib, x, w1, b1, w2, rng_actions):
    """A float64 loss over the torch face's common nodes: linear (a multi-bind node), relu, softmax, a
    Categorical log_prob, smooth_l1, a max over a dim (its indices get no cotangent), a split of which one
    piece is used, x * x (one input twice), a broadcast add, where, abs and exp."""
    F = lib.nn.functional
    h = F.relu(F.linear(x, w1, b1))
    probs = F.softmax(h @ w2, dim=-1)
    m = lib.distributions.Categorical(probs)
    lp = m.log_prob(lib.tensor(rng_actions))
    vals, _ = lib.max(h, dim=1)
    a, _ = lib.split(h, [2, h.shape[1] - 2], dim=1)
    sq = (a * a).sum() + (h + b1[:1]).exp().mean()
    w = lib.where(h > 0.1, h, -h).abs().sum()
    sl = F.smooth_l1_loss(vals, lib.ones_like(vals))
    return -lp.sum() + sq + w + sl


def _grads(lib, arrays, actions, steps=3, **kw):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    for _ in range(steps):  # (several backward passes: the signatures are met again, the grads accumulate)
        _torch_face_loss(lib, *ts, actions).backward(**kw)
    return [t.grad.numpy().copy() for t in ts]


def _arrays():
    rng = np.random.default_rng(0)
    return [rng.normal(size=(5, 4)), rng.normal(size=(6, 4)) * 0.5, rng.normal(size=6) * 0.1,
            rng.normal(size=(6, 3))], rng.integers(0, 3, 5)


def test_torch_nodes_compiled_backward_matches_interpreted_and_torch(monkeypatch):
    compiles = []
    real = bc._compile_node
    monkeypatch.setattr(bc, "_compile_node", lambda *a: compiles.append(1) or real(*a))
    arrays, actions = _arrays()
    want = interpreted(_grads, fg, arrays, actions)
    assert not compiles
    with cache(first=True):
        got = _grads(fg, arrays, actions)
    assert len(compiles) >= 10  # (every node signature of the loss, compiled at its first meeting)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    torch = pytest.importorskip("torch")
    ref = _grads(torch, arrays, actions)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_torch_nodes_compile_after_repeated_meetings(monkeypatch):
    compiles = []
    real = bc._compile_node
    monkeypatch.setattr(bc, "_compile_node", lambda *a: compiles.append(1) or real(*a))
    x = fg.tensor(np.array([[1.0, -2.0, 3.0]]), requires_grad=True)
    w = fg.tensor(np.array([[0.5], [0.25], [2.0]]), requires_grad=True)
    old = bc.config.node_compile_after
    bc.config.node_compile_after = 3
    try:
        with cache():
            for k in range(4):
                (x @ w).tanh().sum().backward()
                assert bool(compiles) == (k >= 2), k  # compiled at the third meeting, then reused
            n = len(compiles)
            (x @ w).tanh().sum().backward()
            assert len(compiles) == n
    finally:
        bc.config.node_compile_after = old
    t = np.tanh(np.array([[1.0, -2.0, 3.0]]) @ np.array([[0.5], [0.25], [2.0]]))
    np.testing.assert_allclose(x.grad.numpy(), 5 * (1 - t ** 2) * np.array([[0.5, 0.25, 2.0]]), rtol=1e-14)
    np.testing.assert_allclose(w.grad.numpy(), 5 * (1 - t ** 2) * np.array([[1.0], [-2.0], [3.0]]), rtol=1e-14)


def test_torch_nodes_compiled_keep_hooks_retain_graph_and_higher_orders(monkeypatch):
    compiles = []
    real = bc._compile_node
    monkeypatch.setattr(bc, "_compile_node", lambda *a: compiles.append(1) or real(*a))
    with cache(first=True):
        x = fg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        y = x * 3.0
        seen = []
        y.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2)
        z = (y.sin() * x).sum()
        z.backward(retain_graph=True)
        z.backward()  # (the same graph again: retained, gradients accumulated)
        xv = np.array([0.5, -1.0, 2.0])
        dz_dy = np.cos(3 * xv) * xv
        np.testing.assert_allclose(seen[0], dz_dy, rtol=1e-14)
        np.testing.assert_allclose(x.grad.numpy(), 2 * (2 * dz_dy * 3 + np.sin(3 * xv)), rtol=1e-14)
        assert compiles
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            z.backward()
        x.grad = None
        (gx,) = fg.autograd.grad((x.exp() * x).sum(), x, create_graph=True)  # (a graph of the gradient)
        (ggx,) = fg.autograd.grad(gx.sum(), x)
        np.testing.assert_allclose(ggx.numpy(), np.exp(xv) * (xv + 2), rtol=1e-14)


def test_torch_nodes_compiled_raw_path_complex_inplace_and_buffers(monkeypatch):
    """Node.apply's compiled path on raw buffers (graph._compiled_apply): a real cotangent into a complex input
    (torch's conjugate convention), torch's in-place error, fresh gradient buffers, and the memoised lookup
    forgotten by clear_cache."""
    from funcgrad.autograd import graph
    runs = []
    real_apply = graph._compiled_apply
    monkeypatch.setattr(graph, "_compiled_apply", lambda *a: runs.append(r := real_apply(*a)) or r)
    zv = np.array([3 + 4j, 1 - 1j, -2 + 0.5j])
    with cache(first=True):
        z = fg.tensor(zv, requires_grad=True)
        for _ in range(2):
            z.abs().sum().backward()
        assert any(r is not None for r in runs)  # (the compiled raw path ran)
        np.testing.assert_allclose(z.grad.numpy(), 2 * zv / np.abs(zv), rtol=1e-14)  # d|z| = z / |z|, torch's
        x = fg.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        w = fg.tensor(np.array([2.0, 3.0, 4.0]))
        for _ in range(2):
            (x * w).sum().backward()
        g = x.grad
        np.testing.assert_array_equal(g.numpy(), [4.0, 6.0, 8.0])
        assert not np.shares_memory(g.numpy(), w.numpy())
        y = x * w
        w.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation.*expected version 0"):
            y.sum().backward()
        runs.clear()
        bc.clear_cache()  # (a compiled node backward forgotten: the next meeting compiles again)
        compiles = []
        real = bc._compile_node
        monkeypatch.setattr(bc, "_compile_node", lambda *a: compiles.append(1) or real(*a))
        x.grad = None
        (x * w).sum().backward()
        assert compiles
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0, 8.0])
    torch = pytest.importorskip("torch")
    zt = torch.tensor(zv, requires_grad=True)
    zt.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * zt.grad.numpy(), rtol=1e-14)
