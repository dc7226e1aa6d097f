"""jit's native tier (compiler/native.py, numba): the registry-wide and random-program jit tests with the
native tier forced on, bitwise equality with the NumPy path where that path is deterministic (elementwise
chains: NumPy's own inner loops are called for exp, tanh, ...), tiering, the disk cache, scan / while
loops, and the fallback of regions around a primitive Numba does not take."""
import contextlib
import glob
import os
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("numba")

import funcgrad as fg  # noqa: E402
import funcgrad.lax as lax  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad._src.interpreters.compiler import native  # noqa: E402
from funcgrad._src.interpreters.compiler._ir import ELEMENTWISE  # noqa: E402
from funcgrad._src.core.primitive import registry  # noqa: E402

import test_jit_random_programs as rp  # noqa: E402
import test_primitive_properties as pp  # noqa: E402


@contextlib.contextmanager
def native_on(threshold=0, background=False, cache_dir=None, min_ops=1):
    c = native.config
    old = (c.enabled, c.threshold, c.background, c.cache_dir, c.min_ops)
    c.enabled, c.threshold, c.background, c.cache_dir, c.min_ops = True, threshold, background, cache_dir, min_ops
    try:
        yield
    finally:
        c.enabled, c.threshold, c.background, c.cache_dir, c.min_ops = old


@contextlib.contextmanager
def native_off():
    old = native.config.enabled
    native.config.enabled = False
    try:
        yield
    finally:
        native.config.enabled = old


def entry_of(jf):
    """The cache entry of jf's last call (the cache is in least-recently-used order; it may hold the
    signatures of earlier jit(f)s of the same function: jit's cache is shared per function)."""
    return next(reversed(jf._cache.values()))


# --- the registry-wide jit test, native ---------------------------------------------------------------

_LOWERED = sorted(n for n in registry if n in ELEMENTWISE or n in (
    "reshape", "squeeze", "expand_dims", "broadcast_in_dim", "transpose", "slice", "concatenate",
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "dot_general"))


@pytest.mark.parametrize("name", pp.cases_for("jit", _LOWERED))
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_jit_matches_eager_native(name, data):
    with native_on():
        pp._jit_matches_eager(name, "random", data)


@pytest.mark.parametrize("name", pp.special_for("jit", _LOWERED))
@settings(max_examples=2, deadline=None)
@given(data=st.data())
def test_jit_matches_eager_at_special_points_native(name, data):
    with native_on():
        pp._jit_matches_eager(name, "special", data)


@settings(max_examples=15, deadline=None)
@given(rp.programs())
def test_random_programs_native(program):
    with native_on():
        rp._check(program)


# --- bitwise equality with the NumPy path ----------------------------------------------------------------

def chain(x):
    for i in range(10):
        x = jnp.exp(jnp.tanh(x * 0.5 + (0.25 - 0.01 * i)))
        x = jnp.maximum(x, 0.9) - jnp.log1p(x) / 3.0 + jnp.sqrt(x) ** 3
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_chain_is_bitwise_the_numpy_path(dtype):
    x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 16)).astype(dtype))
    with native_off():
        want = np.asarray(fg.jit(chain)(x))
    with native_on():
        jf = fg.jit(chain)
        got = np.asarray(jf(x))
        assert entry_of(jf).native is not None
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)
    # and NumPy itself, the same formulas
    a = np.asarray(x)
    for i in range(10):
        a = np.exp(np.tanh(a * dtype(0.5) + dtype(0.25 - 0.01 * i)))
        r = np.sqrt(a)  # (x ** 3 is integer_pow: (x * x) * x, as JAX's lowering multiplies)
        a = np.maximum(a, dtype(0.9)) - np.log1p(a) / dtype(3.0) + (r * r) * r
    np.testing.assert_array_equal(got, a)


def test_nan_and_inf_semantics():
    def f(x, y):
        return jnp.maximum(x, y), jnp.minimum(x, y), x / y, jnp.exp(x) * y, jnp.where(x > y, x, y)
    x = jnp.asarray(np.array([np.nan, 1.0, -np.inf, 0.0, -0.0, 3.0]))
    y = jnp.asarray(np.array([1.0, np.nan, np.inf, -0.0, 0.0, 0.0]))
    with native_off():
        want = fg.jit(f)(x, y)
    with native_on(), np.errstate(all="ignore"):
        jf = fg.jit(f)
        got = jf(x, y)
        assert entry_of(jf).native is not None
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        np.testing.assert_array_equal(np.signbit(np.asarray(g)), np.signbit(np.asarray(w)))
    np.testing.assert_array_equal(np.asarray(got[0]), [np.nan, np.nan, np.inf, 0.0, -0.0, 3.0])



def test_empty_sum_is_plus_zero_and_a_sum_of_minus_zeros_minus_zero():
    # NumPy: an empty sum is +0.0 (so 0.0 + -0.0 = +0.0 below); a sum of -0.0s is -0.0 (the native loop starts
    # from -0.0 so that a one-term sum is its term: it must not start there over an empty axis)
    def f(x, y):
        return jnp.sum(x[:0] * 2.0) + y, jnp.sum(x[:, :0] * 2.0, axis=1) + y[:2], jnp.sum(-x * 0.0, axis=1)
    x = jnp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    y = jnp.asarray(np.array([-0.0, 1.0]))
    with native_on(), np.errstate(all="ignore"):
        jf = fg.jit(f)
        got = jf(x, y)
        assert entry_of(jf).native is not None
    for g, w in zip(got, [[0.0, 1.0], [0.0, 1.0], [-0.0, -0.0]]):
        np.testing.assert_array_equal(np.asarray(g), w)
        np.testing.assert_array_equal(np.signbit(np.asarray(g)), np.signbit(w))

# --- loops -------------------------------------------------------------------------------------------------

def rnn(params, h0, xs):
    W, U, b = params

    def cell(h, x):
        h = jnp.tanh(h @ W + x @ U + b)
        return h, h
    _, hs = lax.scan(cell, h0, xs)
    return jnp.sum(hs * hs) / xs.shape[0]


def rnn_numpy(params, h0, xs):
    W, U, b = params
    h, hs = h0, []
    for x in xs:
        h = np.tanh(h @ W + x @ U + b)
        hs.append(h)
    hs = np.array(hs)
    return np.sum(hs * hs) / xs.shape[0]


def test_scan_value_and_grad_native():
    rng = np.random.default_rng(1)
    params = tuple(jnp.asarray(a) for a in (rng.standard_normal((6, 6)) / 3, rng.standard_normal((3, 6)),
                                            rng.standard_normal(6) / 10))
    h0, xs = jnp.zeros(6, np.float64), jnp.asarray(rng.standard_normal((12, 3)))
    vg = fg.value_and_grad(rnn)
    with native_off():
        want_v, want_g = fg.jit(vg)(params, h0, xs)
    with native_on():
        jf = fg.jit(vg)
        got_v, got_g = jf(params, h0, xs)
        e = entry_of(jf)
        assert e.native is not None and "range(12)" in e.native.source  # the scan is a native loop
    np.testing.assert_allclose(float(got_v), rnn_numpy([np.asarray(p) for p in params], np.zeros(6),
                                                       np.asarray(xs)), rtol=1e-13)
    np.testing.assert_allclose(float(got_v), float(want_v), rtol=1e-13)
    for g, w in zip(got_g, want_g):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-14)


def test_while_and_fori_loops_native():
    def f(x, n):
        def body(c):
            i, v = c
            return i + 1, jnp.cos(v) * 0.5 + v
        _, v = lax.while_loop(lambda c: c[0] < n, body, (0, x))
        w = lax.fori_loop(0, 5, lambda i, a: a * 1.5 - jnp.sin(a), v)
        return v, w
    x = jnp.asarray(np.linspace(-2, 2, 7))
    n = jnp.asarray(np.int32(9)) if not fg.config.x64_enabled else jnp.asarray(9)
    with native_off():
        want = fg.jit(f)(x, n)
    with native_on():
        jf = fg.jit(f)
        got = jf(x, n)
        assert entry_of(jf).native is not None and "while True:" in entry_of(jf).native.source
    v = np.asarray(x)
    for _ in range(9):
        v = np.cos(v) * np.float32(0.5) + v if v.dtype == np.float32 else np.cos(v) * 0.5 + v
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))  # elementwise only: bitwise
    np.testing.assert_array_equal(np.asarray(got[0]), v)


# --- regions and fallback -----------------------------------------------------------------------------------

def test_unsupported_primitive_splits_regions():
    def f(x):
        y = jnp.tanh(x * 2.0) + 1.0
        z = jnp.sort(y)            # no native lowering: stays a NumPy call between two regions
        return jnp.exp(z) * 3.0 - z
    x = jnp.asarray(np.random.default_rng(2).standard_normal(10))
    with native_off():
        want = np.asarray(fg.jit(f)(x))
    with native_on():
        jf = fg.jit(f)
        got = np.asarray(jf(x))
        nat = entry_of(jf).native
    assert nat is not None and len(nat.native_regions) == 2
    assert "sort" not in "\n".join(r.source for r in nat.native_regions)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.exp(np.sort(np.tanh(np.asarray(x) * 2) + 1)) * 3 -
                                  np.sort(np.tanh(np.asarray(x) * 2) + 1))


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("other", ["zero", "array"])
def test_relu_backward_joins_the_loop_bitwise(op, other):
    """extremum_grad (relu's backward, compiler/patterns.py) is lowered into the region's loop with the bias
    gradient that sums it: eager's values bit for bit at ties (g / 2), NaN and inf in x or g, and -0.0."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    x[::3, ::2] = 0.0
    x[1, :4] = [np.nan, np.inf, -np.inf, -0.0]
    g = rng.standard_normal((16, 32)).astype(np.float32)
    g[0, :3] = [np.inf, -np.inf, np.nan]  # x[0, 0] == 0: inf / NaN cotangents on ties
    g[2, 1], g[4, 5] = -1.5, np.inf
    y = np.float32(0.0) if other == "zero" else np.where(rng.random((16, 32)) < 0.3, x, 0.25).astype(np.float32)
    fn = jnp.maximum if op == "max" else jnp.minimum

    def f(a, b, ct):
        out, vjp = fg.vjp(lambda p: fn(p, b), a)
        (gx,) = vjp(ct)
        return gx, jnp.sum(gx, axis=0)

    x, g, y = jnp.asarray(x), jnp.asarray(g), jnp.asarray(y)
    with np.errstate(all="ignore"):
        want = f(x, y, g)
        with native_off():
            numpy_path = fg.jit(f)(x, y, g)
        with native_on():
            jf = fg.jit(f)
            got = jf(x, y, g)
            nat = entry_of(jf).native
    assert nat is not None
    lowered = [e.prim.name for r in nat.native_regions for e in r.eqns]
    assert "extremum_grad" in lowered and "reduce_sum" in lowered
    for a, b, c in zip(got, want, numpy_path):
        for ref in (b, c):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(ref))
            np.testing.assert_array_equal(np.signbit(np.asarray(a)), np.signbit(np.asarray(ref)))
    w, gn = np.asarray(got[0]), np.asarray(g)
    if other == "zero":  # a tie gets half the cotangent; a NaN x none (NaN loses every comparison)
        assert w[3, 0] == np.float32(0.5) * gn[3, 0] and w[1, 0] == 0


def test_large_arrays_stay_on_numpy():
    x = jnp.asarray(np.ones(native.config.max_size + 1, np.float32))
    with native_on():
        jf = fg.jit(lambda a: jnp.tanh(a) * 2.0 + 1.0)
        jf(x)
        assert entry_of(jf).native is None


# --- tiering and the disk cache ---------------------------------------------------------------------------

def test_tiering_switches_after_threshold_calls():
    x = jnp.asarray(np.linspace(0, 1, 8))
    with native_on(threshold=3):
        jf = fg.jit(lambda a: jnp.exp(a) * 2.0 + a)
        numpy_fn = None
        for k in range(1, 4):
            r = jf(x)
            e = entry_of(jf)
            if k < 3:
                assert e.native is None
                numpy_fn = e.fn
            np.testing.assert_array_equal(np.asarray(r), np.exp(np.asarray(x)) * 2.0 + np.asarray(x))
        assert e.native is not None and e.fn is e.native.fn and e.fn is not numpy_fn
        np.testing.assert_array_equal(np.asarray(jf(x)), np.exp(np.asarray(x)) * 2.0 + np.asarray(x))


def test_tiering_in_the_background():
    x = jnp.asarray(np.linspace(0, 1, 5))
    with native_on(threshold=1, background=True):
        jf = fg.jit(lambda a: jnp.sin(a) * 3.0 - a)
        jf(x)
        e = entry_of(jf)
        deadline = time.time() + 300
        while e.native is None and time.time() < deadline:
            jf(x)  # the NumPy code answers meanwhile
            time.sleep(0.01)
        assert e.native is not None and e.fn is e.native.fn
        np.testing.assert_array_equal(np.asarray(jf(x)), np.sin(np.asarray(x)) * 3.0 - np.asarray(x))


def _native_bodies():
    """The loop bodies (control/_bodies.py) whose native code is in use."""
    import gc
    from funcgrad._src.control._bodies import _Body
    return [b for b in gc.get_objects() if type(b) is _Body and b.native is not None]


def _lstm_loss(xs, w, b):
    """An LSTM over xs (T, B, I) as one lax.scan: a matrix product and the gates (logistic, tanh) per step."""
    H = w.shape[1] // 4

    def step(carry, x):
        h, c = carry
        g = jnp.concatenate([x, h], axis=1) @ w + b
        i, f, o = lax.logistic(g[:, :H]), lax.logistic(g[:, H:2 * H]), lax.logistic(g[:, 3 * H:])
        c = f * c + i * jnp.tanh(g[:, 2 * H:3 * H])
        h = o * jnp.tanh(c)
        return (h, c), h
    z = jnp.zeros((xs.shape[1], H), xs.dtype)
    return jnp.sum(lax.scan(step, (z, z), xs)[1] ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loop_bodies_tier_up_bitwise(dtype):
    """A scan that does not lower as a whole (its step's matrix product is above jit_native_max_dot_flops, so it
    stays on BLAS) runs its body's compiled code once per step: that code tiers up to native code as a jit
    entry's does (the gates' arithmetic one region, logistic included as its impl's four ufunc calls) and gives
    the NumPy code's results bit for bit, forward and backward."""
    from funcgrad.experimental import enable_x64
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((6, 20, 64)).astype(dtype)
    w = (rng.standard_normal((128, 256)) * 0.1).astype(dtype)
    b = rng.standard_normal(256).astype(dtype)
    assert 2 * 20 * 128 * 256 > native.config.max_dot_flops
    with enable_x64(dtype == np.float64):
        args = [jnp.asarray(a) for a in (xs, w, b)]
        with native_off():
            want = fg.jit(fg.value_and_grad(_lstm_loss, argnums=(1, 2)))(*args)
        before = {id(x) for x in _native_bodies()}
        with native_on(threshold=6):
            jf = fg.jit(fg.value_and_grad(_lstm_loss, argnums=(1, 2)))
            for _ in range(3):
                got = jf(*args)
            assert len({id(x) for x in _native_bodies()} - before) >= 2  # the forward's body and the backward's
    for g, v in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
        assert np.asarray(g).dtype == dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(v))


def test_torch_lstm_tiers_up_bitwise():
    """nn.LSTM's recurrence is one scan (nn/modules/rnn.py): after tiering, forward and backward give the
    NumPy code's values and gradients bit for bit."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 2, 4)).astype(np.float32)

    def run():
        fg.manual_seed(0)
        m = fg.nn.LSTM(4, 6, num_layers=2)
        out = m(fg.tensor(x))[0]
        (out ** 2).sum().backward()
        return [out.detach().numpy()] + [p.grad.numpy() for p in m.parameters()]
    with native_off():
        want = run()
    with native_on(threshold=7):
        for _ in range(3):
            got = run()
        assert _native_bodies()
    for g, v in zip(got, want):
        np.testing.assert_array_equal(g, v)


def test_logistic_joins_a_region_bitwise():
    x = np.random.default_rng(2).standard_normal((6, 7)).astype(np.float32) * 40
    x[0, :5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    with native_on():
        jf = fg.jit(lambda a: lax.logistic(a * 2.0) * a + 1.0)
        got = jf(jnp.asarray(x))
        src = entry_of(jf).native.source
    assert "_logistic" not in src.split("# native regions")[0]  # no call of the NumPy impl left
    with native_off():
        want = fg.jit(lambda a: lax.logistic(a * 2.0) * a + 1.0)(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_native_code_keeps_the_parallel_ops_setting_of_the_first_compile():
    """jit_parallel_ops is read when code is generated: the native tier, regenerating the program later (after
    the setting was put back), keeps the first compile's split of a large product."""
    rng = np.random.default_rng(0)
    a, b = (jnp.asarray(rng.standard_normal((256, 256)).astype(np.float32)) for _ in range(2))
    s = jnp.asarray(np.linspace(0, 1, 16, dtype=np.float32))
    want = (np.asarray(a) @ np.asarray(b), np.tanh(np.asarray(s)) * 2.0 + np.asarray(s))
    with native_on(threshold=2):
        jf = fg.jit(lambda x, y, z: (x @ y, jnp.tanh(z) * 2.0 + z))
        old = fg.config.read("jit_parallel_ops")
        fg.config.update("jit_parallel_ops", True)
        try:
            jf(a, b, s)
        finally:
            fg.config.update("jit_parallel_ops", old)
        assert "_split_matmul(" in entry_of(jf).compiled.source
        for _ in range(2):
            r = jf(a, b, s)
        e = entry_of(jf)
        assert e.native is not None and e.fn is e.native.fn
        assert "_split_matmul(" in e.native.source
    np.testing.assert_allclose(np.asarray(r[0]), want[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(r[1]), want[1], rtol=1e-6)


def test_native_off_changes_nothing():
    x = jnp.asarray(np.linspace(0, 1, 5))
    with native_on(threshold=2):
        native.config.enabled = False
        jf = fg.jit(lambda a: jnp.sin(a) * 3.0 - a)
        for _ in range(5):
            jf(x)
        assert entry_of(jf).native is None


def test_disk_cache_dir_is_used(tmp_path):
    x = jnp.asarray(np.linspace(0, 1, 6))
    with native_on(cache_dir=str(tmp_path)):
        jf = fg.jit(lambda a: jnp.cosh(a) * 0.25 + a * a)
        jf(x)
        assert entry_of(jf).native is not None
    srcs = glob.glob(os.path.join(tmp_path, "funcgrad_native_*.py"))
    assert len(srcs) == 1
    index = glob.glob(os.path.join(tmp_path, "**", "*.nbi"), recursive=True)
    assert index, "numba wrote no cache index beside the generated module"


def test_options_through_config():
    old = native.config.threshold
    try:
        fg.config.update("jit_native_threshold", 7)
        assert native.config.threshold == 7
        with pytest.raises(ValueError, match="jit_native_threshold"):
            fg.config.update("jit_native_threshold", -1)
    finally:
        native.config.threshold = old


def test_a_program_too_large_to_compile_quickly_stays_on_numpy():
    """Numba's compile time grows with the program: above jit_native_max_eqns nothing is compiled (each
    step here has its own constant, so the steps do not repeat and are not rolled into a loop)."""
    def f(x):
        for k in range(30):
            x = jnp.tanh(x) * (1.5 + 0.01 * k) + 0.1
        return x
    x = jnp.ones(8, jnp.float32)
    old = native.config.max_program_eqns
    try:
        fg.config.update("jit_native_max_eqns", 20)
        with native_on():
            jf = fg.jit(f)
            np.testing.assert_array_equal(np.asarray(jf(x)), np.asarray(f(x)))
            assert entry_of(jf).native is None
    finally:
        native.config.max_program_eqns = old


# --- repeated steps rolled into loops ------------------------------------------------------------------------

def test_repeated_steps_roll_into_one_loop():
    """30 identical steps (a Python loop that jit unrolled) compile as one loop of 3 equations: under
    jit_native_max_eqns, and bitwise the NumPy path's results."""
    def f(x):
        for _ in range(30):
            x = jnp.tanh(x) * 1.5 + 0.1
        return x
    x = jnp.asarray(np.linspace(-1, 1, 8).astype(np.float32))
    with native_off():
        want = np.asarray(fg.jit(f)(x))
    old = native.config.max_program_eqns
    try:
        fg.config.update("jit_native_max_eqns", 20)
        with native_on():
            jf = fg.jit(f)
            got = np.asarray(jf(x))
            nat = entry_of(jf).native
    finally:
        native.config.max_program_eqns = old
    assert nat is not None and "in range(30):" in nat.source
    np.testing.assert_array_equal(got, want)
    a = np.asarray(x)
    for _ in range(30):
        a = np.tanh(a) * np.float32(1.5) + np.float32(0.1)
    np.testing.assert_array_equal(got, a)


def loop_rnn_loss(params, h0, xs):
    """A tanh RNN over the rows of xs as a Python loop (unrolled by jit); loss sum_t |h_t|^2."""
    W, U, b = params
    h, loss = h0, 0.0
    for t in range(xs.shape[0]):
        h = jnp.tanh(h @ W + xs[t] @ U + b)
        loss = loss + jnp.sum(h * h)
    return loss


def loop_rnn_numpy(params, h0, xs):
    """loop_rnn_loss and its gradient by hand (forward, then backpropagation through time)."""
    W, U, b = params
    hs, h = [h0], h0
    for x in xs:
        h = np.tanh(h @ W + x @ U + b)
        hs.append(h)
    loss = sum(float(np.sum(h * h)) for h in hs[1:])
    gW, gU, gb, dh = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b), np.zeros_like(h0)
    for t in range(len(xs), 0, -1):
        dz = (dh + 2 * hs[t]) * (1 - hs[t] ** 2)
        gW += np.outer(hs[t - 1], dz)
        gU += np.outer(xs[t - 1], dz)
        gb += dz
        dh = dz @ W.T
    return loss, (gW, gU, gb)


def test_python_loop_rnn_gradient_rolls_forward_and_backward():
    """The unrolled forward steps become one loop, the unrolled backward steps another that reads the
    forward values stored per step (in reverse); the row x_t is a slice moving with the loop."""
    rng = np.random.default_rng(3)
    params = (rng.standard_normal((5, 5)) / 3, rng.standard_normal((3, 5)), rng.standard_normal(5) / 10)
    h0, xs = np.zeros(5), rng.standard_normal((20, 3))
    args = (tuple(jnp.asarray(p) for p in params), jnp.asarray(h0), jnp.asarray(xs))
    vg = fg.value_and_grad(loop_rnn_loss)
    with native_off():
        want_v, want_g = fg.jit(vg)(*args)
    with native_on():
        jf = fg.jit(vg)
        got_v, got_g = jf(*args)
        nat = entry_of(jf).native
    assert nat is not None
    src = "\n".join(r.source for r in nat.native_regions)
    assert src.count("for r") >= 2 and "* r" in src  # two rolled loops; a slice start moving with the loop
    ref_v, ref_g = loop_rnn_numpy(params, h0, xs)
    np.testing.assert_allclose(float(got_v), ref_v, rtol=1e-13)
    np.testing.assert_allclose(float(got_v), float(want_v), rtol=1e-13)
    for g, w, r in zip(got_g, want_g, ref_g):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-12, atol=1e-14)


def test_steps_that_differ_do_not_roll_wrongly():
    """Steps that look alike but read different earlier values (x_{t-2}) or alternate are not a loop
    of one period; whatever is rolled, results stay the NumPy path's bitwise."""
    def f(x, y):
        a, b = x, y
        for k in range(12):
            a, b = b, jnp.tanh(a) * 0.5 + b      # reads two steps back
        c = x
        for k in range(9):
            c = jnp.sin(c) if k % 2 else jnp.cos(c) + 1.0
        return a, b, c
    x = jnp.asarray(np.linspace(-1, 1, 6))
    y = jnp.asarray(np.linspace(0, 2, 6))
    with native_off():
        want = fg.jit(f)(x, y)
    with native_on():
        jf = fg.jit(f)
        got = jf(x, y)
        assert entry_of(jf).native is not None
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    a, b = np.asarray(x), np.asarray(y)
    for k in range(12):
        a, b = b, np.tanh(a) * 0.5 + b
    np.testing.assert_array_equal(np.asarray(got[1]), b)


# --- loop bodies: hoisted buffers, carries, products -------------------------------------------------------

def test_scan_carries_that_swap_pass_through_and_reshape():
    """A loop's buffers are allocated once and rewritten each iteration; a carry taking a value that
    such a buffer holds (here: another carry, a reshaped value, a value passed through) must not see it
    change at the next iteration."""
    def f(a, b, xs):
        def body(c, x):
            p, q, r = c
            n = jnp.tanh(p * x + q)
            m = (n * 2.0).reshape(2, 3).T.reshape(6)
            return (q, m, r), n - p

        def outer(c, x):
            c2, ys = lax.scan(body, c, xs + x)
            return c2, ys[-1]
        return lax.scan(outer, (a, b, a), xs[:3])
    rng = np.random.default_rng(4)
    a, b = jnp.asarray(rng.standard_normal(6)), jnp.asarray(rng.standard_normal(6))
    xs = jnp.asarray(rng.standard_normal((5, 6)))
    with native_off():
        want = fg.jit(f)(a, b, xs)
    with native_on():
        jf = fg.jit(f)
        got = jf(a, b, xs)
        assert entry_of(jf).native is not None
    from funcgrad.tree_util import tree_leaves
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))

    def body_np(c, x):
        p, q, r = c
        n = np.tanh(p * x + q)
        return (q, (n * 2.0).reshape(2, 3).T.reshape(6), r), n - p
    c, last = (np.asarray(a), np.asarray(b), np.asarray(a)), []
    for x in np.asarray(xs)[:3]:
        ys = []
        for xi in np.asarray(xs) + x:
            c, y = body_np(c, xi)
            ys.append(y)
        last.append(ys[-1])
    for g, w in zip(tree_leaves(got), list(c) + [np.array(last)]):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_outer_products_fuse_bitwise():
    """A dot_general without contraction is one rounded product per element (as NumPy's): fused into
    the elementwise loop that adds it, bitwise the NumPy path's."""
    def f(a, b, c):
        return c + jnp.outer(a, b) * 2.0, jnp.tensordot(a, c, axes=0) - 1.0
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(7).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    c = rng.standard_normal((7, 5)).astype(np.float32)
    with native_off():
        want = fg.jit(f)(a, b, c)
    with native_on():
        jf = fg.jit(f)
        got = jf(a, b, c)
        assert entry_of(jf).native is not None
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    np.testing.assert_array_equal(np.asarray(got[0]), c + np.multiply.outer(a, b) * np.float32(2.0))
    np.testing.assert_array_equal(np.asarray(got[1]), np.multiply.outer(a, c) - np.float32(1.0))


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ij,kj->ik", "ji,jk->ik", "ji,kj->ik", "bij,bjk->bik",
                                  "bij,bkj->bik", "i,ij->j", "i,ji->j", "ij,j->i"])
def test_dot_general_layouts_in_a_loop(spec):
    """Each operand layout of a matrix product inside a loop body (an invariant operand read along a
    strided dimension is transposed once, before the loop) against the NumPy path and np.einsum."""
    rng = np.random.default_rng(6)
    shapes = {"i": 4, "j": 3, "k": 5, "b": 2}
    ins = spec.split("->")[0].split(",")
    a = rng.standard_normal([shapes[c] for c in ins[0]])
    w = rng.standard_normal([shapes[c] for c in ins[1]])

    def f(a, w):  # each product reads a carried operand and an invariant one
        def body(i, c):
            x, v = c
            y = jnp.einsum(spec, x, w) * 0.1 + jnp.sum(jnp.einsum(spec, a, v)) * 0.01
            return x * 0.5 + jnp.sum(y * y) * 0.01, v * 0.9 + jnp.sum(y) * 0.01
        return lax.fori_loop(0, 3, body, (a, w))
    with native_off():
        want = fg.jit(f)(a, w)
    with native_on():
        jf = fg.jit(f)
        got = jf(a, w)
        assert entry_of(jf).native is not None and "range(3)" in entry_of(jf).native.source  # a loop
    x, v = a, w
    for _ in range(3):
        y = np.einsum(spec, x, w) * 0.1 + np.sum(np.einsum(spec, a, v)) * 0.01
        x, v = x * 0.5 + np.sum(y * y) * 0.01, v * 0.9 + np.sum(y) * 0.01
    for g, wa, r in zip(got, want, (x, v)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(wa), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-13)


_STEP_OPS = [
    lambda a, b: a + b, lambda a, b: a * b - 0.5, lambda a, b: jnp.maximum(a, b), lambda a, b: a / (1.0 + b * b),
    lambda a, b: jnp.tanh(a) + b, lambda a, b: jnp.where(a > b, a, b * 0.25), lambda a, b: jnp.exp(-a * a) * b,
]
_STEP_OPS_NP = [
    lambda a, b: a + b, lambda a, b: a * b - 0.5, lambda a, b: np.maximum(a, b), lambda a, b: a / (1.0 + b * b),
    lambda a, b: np.tanh(a) + b, lambda a, b: np.where(a > b, a, b * 0.25), lambda a, b: np.exp(-a * a) * b,
]


@st.composite
def step_programs(draw):
    """A step over a state of 1-3 arrays (ops reading the state, earlier ops of the step, an outside
    array and the step's row of xs), its new state drawn from the results and the old state
    (passed through or swapped), repeated 3-9 times as a Python loop."""
    nstate = draw(st.integers(1, 3))
    nops = draw(st.integers(1, 5))
    ops = []
    for k in range(nops):
        pool = nstate + 2 + k  # state, outside array, row, earlier results
        ops.append((draw(st.integers(0, len(_STEP_OPS) - 1)), draw(st.integers(0, pool - 1)),
                    draw(st.integers(0, pool - 1))))
    ops[0] = (ops[0][0], 0, ops[0][2])  # (the step reads the state, and its last result is the new state 0:
    new = [nstate + 2 + nops - 1] + [draw(st.integers(0, nstate + 2 + nops - 1)) for _ in range(nstate - 1)]
    return nstate, ops, new, draw(st.integers(3, 9))  # a chain through the steps)


def _run_steps(prog, ops_table, state, outside, xs):
    nstate, ops, new, steps = prog
    for t in range(steps):
        vals = list(state) + [outside, xs[t]]
        for k, a, b in ops:
            vals.append(ops_table[k](vals[a], vals[b]))
        state = [vals[i] for i in new]
    return state


@settings(max_examples=25, deadline=None)
@given(step_programs())
def test_rolled_random_step_programs_bitwise(prog):
    """Random repeated steps: whatever rolls, the native results are the NumPy path's bit for bit, and
    NumPy's own (elementwise operations only)."""
    rng = np.random.default_rng(7)
    dt = np.asarray(jnp.zeros(1)).dtype  # (float32 unless x64)
    state = [rng.standard_normal(5).astype(dt) for _ in range(prog[0])]
    outside, xs = rng.standard_normal(5).astype(dt), rng.standard_normal((prog[3], 5)).astype(dt)

    def f(state, outside, xs):
        return _run_steps(prog, _STEP_OPS, state, outside, xs)
    args = ([jnp.asarray(s) for s in state], jnp.asarray(outside), jnp.asarray(xs))
    with np.errstate(all="ignore"):
        with native_off():
            want = fg.jit(f)(*args)
        with native_on():
            got = fg.jit(f)(*args)
        ref = _run_steps(prog, _STEP_OPS_NP, state, outside, xs)
    for g, w, r in zip(got, want, ref):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        np.testing.assert_array_equal(np.asarray(g), r)
