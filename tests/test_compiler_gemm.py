"""jit's gemm epilogue (compiler/gemm.py): a matrix product and the update or bias add that consumes it run as
one BLAS gemm with beta = 1, into the update's buffer (a donated parameter's own) when it may be overwritten."""
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.interpreters.compiler import gemm

pytestmark = pytest.mark.skipif(not gemm.available(), reason="NumPy's bundled OpenBLAS (CBLAS ILP64) not found")

RTOL = {np.float32: 2e-5, np.float64: 1e-12}  # the jit-vs-eager tolerances of tests/test_jit_random_programs.py


def _arrays(dtype, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _ref(f, dtype, *hosts):
    """f evaluated by NumPy in a wider type than dtype (float64 for float32, long double for float64)."""
    wide = np.float64 if dtype == np.float32 else np.longdouble
    return f(*[h.astype(wide) for h in hosts]).astype(np.float64)


CASES = {
    # name: (function of funcgrad / NumPy arrays, operand shapes)
    "sgd step, weight gradient x.T @ g": (lambda w, x, g: w - 0.01 * (x.T @ g), [(300, 256), (64, 300), (64, 256)]),
    "update with the rate on the right": (lambda w, x, g: w - (x.T @ g) * 0.5, [(300, 256), (64, 300), (64, 256)]),
    "c + s * a @ b.T": (lambda c, a, b: c + 0.25 * (a @ b.T), [(128, 512), (128, 40), (512, 40)]),
    "c - a @ b": (lambda c, a, b: c - a @ b, [(128, 512), (128, 70), (70, 512)]),
    "bias add x @ w + b": (lambda b, x, w: x @ w + b, [(512,), (128, 784), (784, 512)]),
    "bias add b + x @ w.T (nn.Linear's layout)": (lambda b, x, w: b + x @ w.T, [(512,), (128, 784), (512, 784)]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_fused_product_matches_eager_and_float64(name, dtype):
    f, shapes = CASES[name]
    hosts = _arrays(dtype, *shapes)
    old = fg.config.read("enable_x64")
    fg.config.update("enable_x64", dtype == np.float64)
    try:
        args = [jnp.asarray(h, dtype=dtype) for h in hosts]
        jf = fg.jit(f)
        assert "_gemm_update(" in jf.lower(*args).source()
        got = np.asarray(jf(*args))
        eager = np.asarray(f(*args))
    finally:
        fg.config.update("enable_x64", old)
    assert got.dtype == dtype
    # (absolute tolerance on the scale of the values: a sum's rounding error follows its terms' size, and an
    # output near zero that cancels terms of ~40 differs in its last bits relative to the terms)
    scale = max(1.0, float(np.max(np.abs(eager))))
    np.testing.assert_allclose(got, eager, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
    # as accurate as the unfused arithmetic: its largest error against the float64 result, up to a factor
    want = _ref(f, dtype, *hosts)
    err_got, err_eager = np.max(np.abs(got - want)), np.max(np.abs(eager - want))
    assert err_got <= 2 * err_eager + np.finfo(dtype).eps * np.max(np.abs(want)), (err_got, err_eager)


def test_not_fused_when_the_product_is_read_elsewhere_small_or_scaled_by_an_array():
    w, x, g = (jnp.asarray(h) for h in _arrays(np.float32, (300, 256), (64, 300), (64, 256)))
    both = fg.jit(lambda w, x, g: (w - 0.01 * (x.T @ g), x.T @ g))  # the gradient is an output too
    assert "_gemm_update(" not in both.lower(w, x, g).source()
    r1, r2 = both(w, x, g)
    np.testing.assert_allclose(np.asarray(r1), np.asarray(w) - np.float32(0.01) * np.asarray(r2), rtol=1e-6)
    small = [jnp.asarray(h) for h in _arrays(np.float32, (30, 20), (8, 30), (8, 20))]  # 600 < MIN_SIZE outputs
    assert "_gemm_update(" not in fg.jit(lambda w, x, g: w - 0.01 * (x.T @ g)).lower(*small).source()
    s = jnp.asarray(_arrays(np.float32, (300, 256), seed=1)[0])
    scaled = fg.jit(lambda w, x, g, s: w - s * (x.T @ g))  # a per-element rate is no gemm alpha
    assert "_gemm_update(" not in scaled.lower(w, x, g, s).source()


def test_donated_update_is_written_into_the_parameter_and_allocates_no_gradient():
    host = _arrays(np.float32, (512, 512), (128, 512), (128, 512))
    step = fg.jit(lambda w, x, g: w - 0.01 * (x.T @ g), donate_argnums=0)
    w, x, g = (jnp.asarray(h) for h in host)
    src = step.lower(w, x, g).source()
    first = re.match(r"def compiled\((\w+), ", src).group(1)
    assert re.search(rf"{first} = _gemm_update\([^\n]*, {first}, {first}\)", src), src  # in place
    step(w, x, g)  # (compiled)
    w = jnp.asarray(host[0])
    tracemalloc.start()
    try:
        out = step(w, x, g)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 512 * 512 * 4 // 4, peak  # no 1 MiB weight gradient (nor a copy of the weight)
    assert w.is_deleted()
    want = host[0].astype(np.float64) - 0.01 * (host[1].T.astype(np.float64) @ host[2])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-4)


def test_undonated_update_leaves_its_inputs_alone():
    host = _arrays(np.float32, (512, 512), (128, 512), (128, 512))
    w, x, g = (jnp.asarray(h) for h in host)
    out = fg.jit(lambda w, x, g: w - 0.01 * (x.T @ g))(w, x, g)
    for a, h in zip((w, x, g), host):
        np.testing.assert_array_equal(np.asarray(a), h)
    assert not np.shares_memory(np.asarray(out), np.asarray(w))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "row slice", "column step", "row step"])
def test_runtime_operand_layouts(layout):
    rng = np.random.default_rng(3)
    base_a, base_b = rng.standard_normal((80, 120)), rng.standard_normal((120, 90))
    views = {
        "contiguous": (base_a[:, :60], base_b[:60, :]),  # (row-major with a leading dimension > columns)
        "transposed": (np.asfortranarray(base_a), np.asfortranarray(base_b)),
        "row slice": (base_a[10:70, :60], base_b[:60, 5:85]),
        "column step": (base_a[:, ::2], base_b[::2, ::2][:60]),  # copied: neither layout
        "row step": (base_a[::2, :60], base_b[:60, :]),
    }
    a, b = views[layout]
    c = rng.standard_normal((a.shape[0], b.shape[1]))
    a = a[:, :60] if a.shape[1] > 60 else a
    b = b[:a.shape[1]]
    for ta in (False, True):
        for tb in (False, True):
            sa, sb = (a.T if ta else a), (b.T if tb else b)  # stored transposed: op() undoes it
            got = gemm.gemm_update(-0.5, sa, ta, sb, tb, c)
            np.testing.assert_allclose(got, c - 0.5 * (a @ b), rtol=1e-12, atol=1e-12)
            assert not np.shares_memory(got, c)
    out = c.copy()
    r = gemm.gemm_update(2.0, a, False, b, False, out, out)  # in place, c as out
    assert r is out
    np.testing.assert_allclose(out, c + 2.0 * (a @ b), rtol=1e-12, atol=1e-12)
    fout = np.asfortranarray(c)  # an out of another layout: still written, through a temporary
    assert gemm.gemm_update(2.0, a, False, b, False, fout, fout) is fout
    np.testing.assert_allclose(fout, c + 2.0 * (a @ b), rtol=1e-12, atol=1e-12)
    ro = c.copy()
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):  # as a ufunc's read-only out= does
        gemm.gemm_update(2.0, a, False, b, False, ro, ro)
    bias = rng.standard_normal(b.shape[1])
    np.testing.assert_allclose(gemm.gemm_update(1.0, a, False, b, False, bias), a @ b + bias, rtol=1e-12, atol=1e-12)


@given(m=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 40), ta=st.booleans(), tb=st.booleans(),
       alpha=st.sampled_from([1.0, -1.0, 0.5, -0.01, 3.0]), dtype=st.sampled_from([np.float32, np.float64]),
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_runtime_matches_numpy(m, n, k, ta, tb, alpha, dtype, bias, seed):
    """gemm_update(alpha, a, ta, b, tb, c) == c + alpha * op(a) @ op(b) (c a full matrix or a broadcast row)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    c = rng.standard_normal((n,) if bias else (m, n)).astype(dtype)
    got = gemm.gemm_update(alpha, a, ta, b, tb, c)
    opa, opb = (a.T if ta else a), (b.T if tb else b)
    want = c.astype(np.float64) + alpha * (opa.astype(np.float64) @ opb.astype(np.float64))
    assert got.shape == (m, n) and got.dtype == dtype
    tol = (1e-5 if dtype == np.float32 else 1e-13) * (1 + k)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 4)


def test_mlp_training_step_matches_eager():
    """The SGD step of a 2-layer relu MLP (bias adds and weight updates fused): jit against eager."""
    rng = np.random.default_rng(0)
    host = [(rng.standard_normal((784, 512)).astype(np.float32) * 0.05, np.zeros(512, np.float32)),
            (rng.standard_normal((512, 10)).astype(np.float32) * 0.05, np.zeros(10, np.float32))]
    params = [tuple(jnp.asarray(a) for a in wb) for wb in host]
    x = jnp.asarray(rng.standard_normal((128, 784)).astype(np.float32))

    def step(params, x):
        def loss(p):
            h = jnp.maximum(x @ p[0][0] + p[0][1], 0.0)
            return jnp.mean((h @ p[1][0] + p[1][1]) ** 2)
        g = fg.grad(loss)(params)
        return [tuple(a - 0.1 * da for a, da in zip(wb, gwb)) for wb, gwb in zip(params, g)]
    jf = fg.jit(step)
    assert jf.lower(params, x).source().count("_gemm_update(") == 2  # layer 1's bias add and weight update
    got, want = jf(params, x), step(params, x)
    for gw, ww in zip(got, want):
        for a, b in zip(gw, ww):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-5)
