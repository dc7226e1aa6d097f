"""More of JAX's API on funcgrad: jax.ops segment reductions, jax.image, lax extras and *_p primitives,
top-level helpers (custom_gradient, float0, make_mesh, shard_map, config context managers, ...),
tree_util and nn extras. Checked against NumPy / analytic values; against real JAX where installed."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
SEG_IDS = np.array([0, 2, 2, 5, 1, -1, 9])


def _segment_loop(how, x, ids, n):
    ident = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}[how]
    op = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[how]
    out = np.full((n,) + x.shape[1:], ident, x.dtype)
    for i, s in enumerate(ids):
        if 0 <= s < n:
            out[s] = op(out[s], x[i])
    return out


# --- jax.ops ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sum", "prod", "max", "min"])
def test_segment_ops_values_jit_vmap(how):
    f = getattr(fg.ops, "segment_" + how)
    x = RNG.standard_normal((7, 3)).astype(np.float32)
    want = _segment_loop(how, x, SEG_IDS, 7)
    np.testing.assert_allclose(np.asarray(f(x, SEG_IDS, 7)), want, rtol=1e-6)
    assert f(x, SEG_IDS).shape == (10, 3)  # num_segments = max id + 1
    np.testing.assert_allclose(np.asarray(fg.jit(f, static_argnums=2)(x, SEG_IDS, 7)), want, rtol=1e-6)
    xs = np.stack([x, 2 * x, -x])
    got = fg.vmap(lambda d: f(d, SEG_IDS, 7))(xs)
    np.testing.assert_allclose(np.asarray(got), np.stack([_segment_loop(how, d, SEG_IDS, 7) for d in xs]),
                               rtol=1e-6)
    # clip mode sends -1 to segment 0 and 9 to segment 6
    want_clip = _segment_loop(how, x, np.clip(SEG_IDS, 0, 6), 7)
    np.testing.assert_allclose(np.asarray(f(x, SEG_IDS, 7, mode="clip")), want_clip, rtol=1e-6)


@pytest.mark.parametrize("how", ["sum", "prod", "max", "min"])
def test_segment_ops_grads(how):
    f = getattr(fg.ops, "segment_" + how)
    x = RNG.uniform(0.5, 1.5, (7, 2))  # float64, distinct values (no ties for max/min)
    ids = np.array([0, 2, 2, 1, 1, 0, 3])
    check_grads(lambda d: f(d, ids, 4), (x,), order=2)


def test_segment_ops_integers_and_errors():
    xi = np.arange(7, dtype=np.int32)
    assert fg.ops.segment_max(xi, SEG_IDS, 7).tolist()[3] == np.iinfo(np.int32).min
    assert fg.ops.segment_min(xi, SEG_IDS, 7).tolist()[3] == np.iinfo(np.int32).max
    assert fg.ops.segment_sum(xi, SEG_IDS, 7).tolist() == [0, 4, 3, 0, 0, 3, 0]
    with pytest.raises(ValueError, match="num_segments"):
        fg.jit(lambda d, i: fg.ops.segment_sum(d, i))(xi, SEG_IDS)
    with pytest.raises(TypeError):
        fg.ops.segment_sum(xi, SEG_IDS.astype(np.float32), 7)


def test_segment_ops_match_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((7, 3)).astype(np.float32)
    for how in ["sum", "prod", "max", "min"]:
        for mode in [None, "clip"]:
            a = getattr(jax.ops, "segment_" + how)(x, SEG_IDS, 7, mode=mode)
            b = getattr(fg.ops, "segment_" + how)(x, SEG_IDS, 7, mode=mode)
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)
    ga = jax.grad(lambda d: jax.ops.segment_max(d, SEG_IDS, 7).clip(-9, 9).sum())(x)
    gb = fg.grad(lambda d: jnp.clip(fg.ops.segment_max(d, SEG_IDS, 7), -9, 9).sum())(x)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(ga))
