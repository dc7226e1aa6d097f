"""Fused elementwise groups under each evaluator: the blocked NumPy kernels and the optional numexpr
programs (skipped only when numexpr is not importable). Both must give eager's values and dtypes."""
import contextlib

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import numexpr_eval

EVALUATORS = [
    "numpy",
    pytest.param("numexpr", marks=pytest.mark.skipif(not numexpr_eval.available(),
                                                     reason="numexpr is not installed")),
]


@contextlib.contextmanager
def evaluator(name, **kw):
    cg = compiler.config.codegen
    settings = dict(fusion_evaluator=name, fusion_min_size=1, **kw)
    old = {k: getattr(cg, k) for k in settings}
    try:
        for k, v in settings.items():
            setattr(cg, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(cg, k, v)


def chain(x):
    """The benchmark's W1 chain, shortened: multiply, add, tanh, exp."""
    for i in range(6):
        x = jnp.exp(jnp.tanh(x * 0.5 + (0.25 - 0.01 * i)))
    return x


def check(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("ev", EVALUATORS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chain_keeps_its_dtype_and_values(ev, dtype):
    x = jnp.asarray(np.random.default_rng(0).standard_normal(5000).astype(dtype))
    want = chain(x)
    with evaluator(ev):
        f = fg.jit(chain)
        got = f(x)
        src = f.lower(x).source()
    assert ("_ne_run" in src) == (ev == "numexpr") and ("_run_fused" in src) == (ev == "numpy")
    # numexpr's float32 exp/tanh may differ from NumPy's SIMD loops in the last bit
    check(got, want, 1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("ev", EVALUATORS)
def test_masks_selects_nan_inf_and_broadcasts(ev):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((40, 30)).astype(np.float32)
    a[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    b = rng.standard_normal(30).astype(np.float32)
    A, B = jnp.asarray(a), jnp.asarray(b)

    def f(x, r):
        y = x + r                       # a broadcast operand read directly by the group
        m = (y > 0.25) | (x != x)       # bool logic over comparisons; NaN test
        z = jnp.where(m, y * 3.0, jnp.maximum(x, -r) - 1.0)
        return z, m, jnp.abs(z) / (1.0 + z * z), jnp.minimum(z, 2.0)

    with np.errstate(all="ignore"):
        want = f(A, B)
        with evaluator(ev):
            got = fg.jit(f)(A, B)
    for g, w in zip(got, want):
        check(g, w, 1e-7)


@pytest.mark.parametrize("ev", EVALUATORS)
def test_outputs_read_later_and_inputs_left_alone(ev):
    """A group with several outputs, one read by a later group; jit's inputs are never written."""
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32)
    X = jnp.asarray(x)

    def f(v):
        h = v * 2.0 - 1.0
        s = jnp.sum(h, axis=0)          # breaks the chain: h is an output of the first group
        return h * h + s, h

    want = f(X)
    with evaluator(ev):
        got = fg.jit(f)(X)
    for g, w in zip(got, want):
        check(g, w, 1e-6)
    np.testing.assert_array_equal(np.asarray(X), x)


def test_numpy_is_the_default_evaluator():
    x = jnp.asarray(np.ones(1000, np.float32))
    cg = compiler.config.codegen
    old = cg.fusion_min_size
    try:
        cg.fusion_min_size = 1
        assert cg.fusion_evaluator == "numpy"
        src = fg.jit(lambda v: (v * 0.5 + 1.0) * v).lower(x).source()
    finally:
        cg.fusion_min_size = old
    assert "_run_fused" in src and "_ne_run" not in src


@pytest.mark.skipif(not numexpr_eval.available(), reason="numexpr is not installed")
def test_ineligible_groups_fall_back_to_numpy():
    """Integer arithmetic and converts stay with the blocked NumPy kernel, even when numexpr is asked."""
    i = jnp.asarray(np.arange(1000, dtype=np.int32))
    with evaluator("numexpr"):
        f = fg.jit(lambda v: (v * 3 + 1) % 7)
        src = f.lower(i).source()
        got = f(i)
    assert "_ne_run" not in src and "_run_fused" in src
    np.testing.assert_array_equal(np.asarray(got), (np.arange(1000) * 3 + 1) % 7)


def test_config_names_the_evaluator():
    old = fg.config.read("jit_fusion_evaluator")
    try:
        fg.config.update("jit_fusion_evaluator", "numpy")
        assert compiler.config.codegen.fusion_evaluator == "numpy"
        with pytest.raises(ValueError, match="jit_fusion_evaluator"):
            fg.config.update("jit_fusion_evaluator", "numba")
    finally:
        fg.config.update("jit_fusion_evaluator", old)
