"""The blocked evaluation of random samples (funcgrad._src.prims._util.BLOCK_SIZE: threefry2x32's and
erf_inv's NumPy kernels, and funcgrad.random's blockwise bits -> uniform -> normal on concrete keys)
gives the bits of the unblocked computation, whatever the block size."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.random as jr
from funcgrad._src.prims import _util
from funcgrad._src.prims import prng, special
from funcgrad.random import _keys

UNBLOCKED = 2 ** 62   # one block holds any array: the plain whole-array computation


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


@pytest.fixture
def block_size(monkeypatch):
    def set_(n):
        monkeypatch.setattr(_util, "BLOCK_SIZE", n)
    return set_


def _reference_threefry(k1, k2, x1, x2):
    """Threefry-2x32, 20 rounds, written out plainly over whole uint64 arrays (an independent
    reference for the blocked, in-place uint32 kernel)."""
    m = 0xFFFFFFFF
    k1, k2, x1, x2 = (np.asarray(a, np.uint64) for a in (k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x, y = (x1 + ks[0]) & m, (x2 + ks[1]) & m
    for i in range(5):
        for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
            x = (x + y) & m
            y = (((y << r) & m) | (y >> (32 - r))) ^ x
        x = (x + ks[(i + 1) % 3]) & m
        y = (y + ks[(i + 2) % 3] + i + 1) & m
    return x.astype(np.uint32), y.astype(np.uint32)


@pytest.mark.parametrize("n", [0, 1, 5, 37, 1000, 4099])
@pytest.mark.parametrize("scalar_key", [True, False])
@pytest.mark.parametrize("block", [1, 7, 64, UNBLOCKED])
def test_threefry_kernel_matches_reference(n, scalar_key, block, block_size):
    block_size(block)
    rng = np.random.default_rng(n)
    if scalar_key:
        k1 = np.broadcast_to(np.uint32(rng.integers(2 ** 32)), (n,))
        k2 = np.broadcast_to(np.uint32(rng.integers(2 ** 32)), (n,))
    else:
        k1, k2 = (rng.integers(0, 2 ** 32, n, dtype=np.uint32) for _ in range(2))
    x1, x2 = (rng.integers(0, 2 ** 32, n, dtype=np.uint32) for _ in range(2))
    got = prng.threefry2x32_p.impl_for(np)(k1, k2, x1, x2)
    want = _reference_threefry(k1, k2, x1, x2)
    assert _same_bits(got[0], want[0]) and _same_bits(got[1], want[1])


def test_threefry_known_answer():
    # Random123's known-answer vector for threefry2x32_20 (key = counter = pi's digits).
    k1, k2 = np.uint32([0x13198A2E]), np.uint32([0x03707344])
    x1, x2 = np.uint32([0x243F6A88]), np.uint32([0x85A308D3])
    y1, y2 = prng.threefry2x32_p.impl_for(np)(k1, k2, x1, x2)
    assert (int(y1[0]), int(y2[0])) == (0xC4923A9C, 0x483DF7A0)


SHAPES = [(), (1,), (3,), (1000,), (1001,), (7, 131), (2, 3, 97)]


def _samples():
    key = jr.PRNGKey(1234)
    out = {}
    for shape in SHAPES:
        for bits in (np.uint8, np.uint16, np.uint32, np.uint64):
            out["bits", shape, bits] = jr.bits(key, shape, bits)
        for dt in (np.float16, np.float32, np.float64):
            out["uniform", shape, dt] = jr.uniform(key, shape, dt)
            out["uniform ab", shape, dt] = jr.uniform(key, shape, dt, -2.5, 7.0)
            out["normal", shape, dt] = jr.normal(key, shape, dt)
        out["normal", shape, np.complex64] = jr.normal(key, shape, np.complex64)
        out["truncated_normal", shape] = jr.truncated_normal(key, -1.0, 2.5, shape)
    return out


@pytest.mark.parametrize("block", [3, 64, 300])
def test_blocked_samples_match_unblocked(block, block_size):
    block_size(UNBLOCKED)
    want = _samples()
    block_size(block)
    assert _keys._block_elements() < 1000   # the blocked path is really taken for the larger shapes
    got = _samples()
    bad = [k for k in want if not _same_bits(got[k], want[k])]
    assert not bad, bad


def test_blocked_path_is_taken(block_size, monkeypatch):
    """blockwise splits a concrete draw into blocks (so the comparison above compares two paths)."""
    block_size(5)
    calls = []
    real = _keys._partitionable_bits

    def spy(key, start, count, bit_width):
        calls.append((start, count))
        return real(key, start, count, bit_width)
    monkeypatch.setattr(_keys, "_partitionable_bits", spy)
    jr.bits(jr.PRNGKey(0), (7, 3))
    assert calls == [(0, 10), (10, 10), (20, 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_matches_jit_and_vmap(dtype, block_size):
    block_size(16)
    key = jr.PRNGKey(3)
    shape = (5, 41)
    eager = jr.normal(key, shape, dtype)
    jitted = funcgrad.jit(lambda k: jr.normal(k, shape, dtype))(key)
    assert _same_bits(eager, jitted)
    keys = jr.split(key, 3)
    mapped = funcgrad.vmap(lambda k: jr.uniform(k, shape, dtype, -1.0, 3.0))(keys)
    for i in range(3):
        assert _same_bits(mapped[i], jr.uniform(keys[i], shape, dtype, -1.0, 3.0))


def test_blocked_uniform_gradient(block_size, x64_on):  # float64 bounds stay float64 only with x64 on (JAX)
    block_size(8)
    key = jr.PRNGKey(5)
    g = funcgrad.grad(lambda lo, hi: jr.uniform(key, (50,), np.float64, lo, hi).sum(), argnums=(0, 1))(
        np.float64(-1.0), np.float64(2.0))
    u = np.asarray(jr.uniform(key, (50,), np.float64))
    np.testing.assert_allclose(np.asarray(g[1]), u.sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g[0]), 50 - u.sum(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_erf_inv_blocked(dtype, block_size):
    rng = np.random.default_rng(0)
    y = np.concatenate([rng.uniform(-1, 1, 3004), 1 - rng.uniform(0, 1e-3, 500),
                        [-1.0, 1.0, 0.0, -0.0, np.nan, 1.5, -2.0, np.inf]]).astype(dtype)
    f = special.erf_inv_p.impl_for(np)
    block_size(UNBLOCKED)
    want = f(y)
    nan = np.isnan(want)
    assert nan.sum() == 4   # (the sign of a NaN from log of a negative number varies with NumPy's loops)
    block_size(13)
    for got in (f(y), f(y.reshape(8, -1)).reshape(-1)):
        assert np.array_equal(np.isnan(got), nan)
        assert _same_bits(got[~nan], want[~nan])
