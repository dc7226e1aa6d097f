"""funcgrad's caches used from many threads at their smallest size, and jit's bound on cached bytes.

Every cache is hammered from 8 threads with room for one entry, so that nearly every call inserts and
evicts while other threads look up: no exception may escape and every result must be the exact one. A
lookup-then-act race needs a thread switch between the lookup and the act; the caches are given a
lookup that lets other threads run right after it (`_Yielding*`), which makes that switch the rule rather
than a one-in-ten-thousand event, so a race fails the test every run.
"""
import sys
import threading
import time
import traceback
from collections import OrderedDict

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.core import aval as _aval
from funcgrad.numpy import _promote
from funcgrad._src.prims import linalg as _linalg
from funcgrad._src.interpreters import backward_cache
from funcgrad._src.interpreters.compiler import blocked

THREADS = 8


class _YieldingLRU(OrderedDict):
    """An OrderedDict (jit's and the backward cache's type) whose lookups let other threads run."""

    def get(self, key, default=None):
        v = super().get(key, default)
        time.sleep(0)
        return v


class _YieldingSize1(dict):
    """A dict whose lookups let other threads run, and whose size reads as 'over any bound' as soon as it
    holds an entry, so the caches that clear themselves when full keep at most one entry."""

    def get(self, key, default=None):
        v = super().get(key, default)
        time.sleep(0)
        return v

    def __len__(self):
        return 10 ** 9 if dict.__len__(self) else 0


def _hammer(body, iterations):
    """Run body(thread, i) for i < iterations in each of 8 threads started together; fail with every
    exception raised."""
    errors = []
    start = threading.Barrier(THREADS)

    def run(t):
        try:
            start.wait()
            for i in range(iterations):
                body(t, i)
        except BaseException:
            errors.append(traceback.format_exc())

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        assert not any(th.is_alive() for th in threads), "a thread did not finish"
    finally:
        sys.setswitchinterval(old)
    assert not errors, f"{len(errors)} thread(s) failed; the first:\n{errors[0]}"


@pytest.fixture
def jit_cache_size_1():
    old = fg.config.read("jit_cache_size")
    fg.config.update("jit_cache_size", 1)
    yield
    fg.config.update("jit_cache_size", old)


def _check_bytes_accounting(f):
    """The cache's byte count is that of the distinct constant buffers its entries hold."""
    from funcgrad._src.interpreters.jit import _buffer_roots
    roots = {}
    for e in f._cache.values():
        roots.update(_buffer_roots(e))
    assert f._cache_bytes() == sum(n for _, n in roots.values())


# --- jit ---------------------------------------------------------------------------------------------

XS = [np.arange(n, dtype=np.float32) - 2 for n in (3, 4, 5, 6)]


def test_jit_cache_hit_and_evict_from_8_threads(jit_cache_size_1):
    f = fg.jit(lambda x: x * 2.0 + 1.0)
    f._cache = _YieldingLRU()
    arrays = [jnp.asarray(x) for x in XS]

    def body(t, i):
        k = (t + i) % 4
        np.testing.assert_array_equal(np.asarray(f(arrays[k])), XS[k] * 2 + 1)

    _hammer(body, 300)
    assert f._cache_size() == 1
    _check_bytes_accounting(f)


def test_jit_cache_with_static_arguments_from_8_threads(jit_cache_size_1):
    f = fg.jit(lambda x, k, *, scale: x * k + scale, static_argnums=1)
    f._cache = _YieldingLRU()
    arrays = [jnp.asarray(x) for x in XS]

    def body(t, i):
        j, k = (t + i) % 4, (t * i) % 3 + 1
        got = f(arrays[j], k, scale=jnp.asarray(np.float32(0.5)))
        np.testing.assert_array_equal(np.asarray(got), XS[j] * k + np.float32(0.5))

    _hammer(body, 200)
    assert f._cache_size() == 1
    _check_bytes_accounting(f)


def test_jit_cache_with_constants_from_8_threads(jit_cache_size_1):
    """Entries holding constants (charged to the cache's bytes): the count stays exact under eviction."""
    f = fg.jit(lambda x: x * jnp.ones(x.shape) + jnp.arange(x.shape[0], dtype=x.dtype))
    f._cache = _YieldingLRU()
    arrays = [jnp.asarray(x) for x in XS]

    def body(t, i):
        k = (t + i) % 4
        np.testing.assert_array_equal(np.asarray(f(arrays[k])), XS[k] + np.arange(len(XS[k]), dtype=np.float32))

    _hammer(body, 200)
    assert f._cache_size() == 1
    _check_bytes_accounting(f)
    assert 0 < f._cache_bytes() <= 8 * len(XS[-1])                 # one entry's constants


# --- the backward cache ------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2])
def test_backward_cache_from_8_threads(monkeypatch, size):
    monkeypatch.setattr(backward_cache, "_cache", _YieldingLRU())
    monkeypatch.setattr(backward_cache, "_seen", OrderedDict())
    monkeypatch.setattr(backward_cache.config, "compile_on_first", True)
    old = fg.config.read("backward_cache_size")
    fg.config.update("backward_cache_size", size)
    arrays = [jnp.asarray(x) for x in XS]
    g = fg.grad(lambda v: jnp.sum(jnp.sin(v) * v))

    def body(t, i):
        k = (t + i) % 4
        x = XS[k].astype(np.float64)
        np.testing.assert_allclose(np.asarray(g(arrays[k])), np.cos(x) * x + np.sin(x), rtol=1e-5, atol=1e-6)

    try:
        _hammer(body, 60)
        assert backward_cache.cache_size() == size
    finally:
        fg.config.update("backward_cache_size", old)


# --- the process-wide tables that clear themselves when full ------------------------------------------

def test_aval_interning_from_8_threads(monkeypatch):
    monkeypatch.setattr(_aval, "_interned", _YieldingSize1())
    dts = [np.dtype(np.float32), np.dtype(np.int64)]

    def body(t, i):
        shape, dt, weak = ((t + i) % 5,) * ((i % 3) + 1), dts[i % 2], bool(t % 2)
        av = _aval.shaped(shape, dt, weak)
        assert (av.shape, av.dtype, av.weak_type) == (shape, dt, weak)

    _hammer(body, 400)


def test_weak_scalar_tables_from_8_threads(monkeypatch):
    monkeypatch.setattr(_promote, "_SCALARS", _YieldingSize1())
    monkeypatch.setattr(_promote, "_FILLED", _YieldingSize1())
    dt = np.dtype(np.float32)

    def body(t, i):
        v = float((t + i) % 7 + 1) / 4
        s = _promote._weak_scalar(v, dt)
        assert s.weak_type and s._buf.dtype == dt and s._buf.shape == () and float(s._buf) == v
        shape = (i % 4 + 1, 2)
        b = _promote.weak_filled(v, dt, shape)
        assert b.weak_type and b._buf.shape == shape and (np.asarray(b._buf) == np.float32(v)).all()

    _hammer(body, 400)


def test_filled_blocks_from_8_threads(monkeypatch):
    monkeypatch.setattr(blocked, "_filled_cache", _YieldingSize1())

    def body(t, i):
        value = np.array((t * 31 + i) % 11 - 5, np.float64)
        shape = (i % 3 + 1, 4)
        b = blocked.filled_block(shape, value)
        assert b.shape == shape and b.dtype == value.dtype and (b == value).all() and not b.flags.writeable

    _hammer(body, 400)


def test_dot_general_vjp_plans_from_8_threads(monkeypatch):
    monkeypatch.setattr(_linalg, "_VJP_PLANS", _YieldingSize1())
    monkeypatch.setattr(_linalg, "_VJP_PLANS_BY_ID", _YieldingSize1())
    dns = [(((1,), (0,)), ((), ())), (((0,), (0,)), ((), ())), (((2,), (1,)), ((0,), (0,))),
           (((1,), (1,)), ((), ()))]
    ndims = [(2, 2), (2, 2), (3, 3), (2, 2)]
    expected = {(j, w): _linalg._make_vjp_plan(dns[j], *ndims[j], w) for j in range(4) for w in (True, False)}

    def body(t, i):
        j, w = (t + i) % 4, bool(i % 2)
        assert _linalg._vjp_plan(dns[j], *ndims[j], w) == expected[j, w]

    _hammer(body, 400)


def test_matmul_gradients_from_8_threads(monkeypatch):
    """The same tables met through the public API: grad of a matmul, exact values."""
    monkeypatch.setattr(_linalg, "_VJP_PLANS_BY_ID", _YieldingSize1())
    monkeypatch.setattr(_aval, "_interned", _YieldingSize1())
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((n, 3)).astype(np.float64) for n in (2, 3, 4)]

    def body(t, i):
        w = ws[(t + i) % 3]
        x = np.arange(w.shape[0], dtype=np.float64) + t
        g = fg.grad(lambda v: jnp.sum(jnp.matmul(v, jnp.asarray(w))))(jnp.asarray(x))
        np.testing.assert_allclose(np.asarray(g), w.sum(axis=1).astype(np.asarray(g).dtype), rtol=1e-6)

    _hammer(body, 40)


# --- jit's bound on cached bytes -----------------------------------------------------------------------

@pytest.fixture
def max_bytes():
    old = fg.config.read("jit_cache_max_bytes")
    yield lambda v: fg.config.update("jit_cache_max_bytes", v)
    fg.config.update("jit_cache_max_bytes", old)


def test_cached_constants_are_bounded_in_bytes(max_bytes):
    """Each signature of f holds two input-sized float32 constants (8 n bytes); with a 3 MiB bound the
    cache evicts least recently used signatures as shapes vary, keeping what fits beside the newest."""
    limit = 3 << 20
    max_bytes(limit)
    f = fg.jit(lambda x: x * jnp.ones(x.shape) + jnp.arange(x.shape[0], dtype=x.dtype))
    sizes = [131072 + 7 * k for k in range(12)]          # ~1 MiB of constants per signature
    for k, n in enumerate(sizes):
        x = np.linspace(-1, 1, n, dtype=np.float32)
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), x + np.arange(n, dtype=np.float32))
        kept, total = [n], 8 * n                        # the newest, then older ones while they fit
        for m in reversed(sizes[:k]):
            if total - 8 * n + 8 * m > limit:
                break
            kept.append(m)
            total += 8 * m
        assert f._cache_size() == len(kept)
        assert f._cache_bytes() == total
        assert f._cache_bytes() - 8 * n <= limit
    assert f._cache_size() == 3 < len(sizes)
    x = jnp.asarray(np.zeros(sizes[-1], np.float32))     # the newest signatures are still cached
    before = f.compile_count
    f(x)
    assert f.compile_count == before


def test_a_shared_closed_over_array_larger_than_the_bound_does_not_thrash(max_bytes):
    """A closed-over array every signature holds is counted once and is no reason to evict."""
    max_bytes(1 << 20)
    w = np.arange(4 * 262144, dtype=np.float32).reshape(1024, 1024) / 1e6   # 4 MiB
    wj = jnp.asarray(w)
    f = fg.jit(lambda x: jnp.matmul(x, wj))
    for _ in range(3):
        for n in (1, 2, 3):
            x = np.ones((n, 1024), np.float32)
            np.testing.assert_allclose(np.asarray(f(jnp.asarray(x))), x @ w, rtol=1e-5)
    assert f.compile_count == 3 and f._cache_size() == 3
    assert f._cache_bytes() == w.nbytes


def test_jit_cache_max_bytes_option(max_bytes):
    assert fg.config.read("jit_cache_max_bytes") == 256 << 20
    with pytest.raises(ValueError, match="jit_cache_max_bytes must be at least 0"):
        fg.config.update("jit_cache_max_bytes", -1)
    max_bytes(None)                                      # no bound on bytes: only jit_cache_size counts
    f = fg.jit(lambda x: x + jnp.arange(x.shape[0], dtype=x.dtype))
    for n in (10, 11, 12):
        f(jnp.ones(n))
    assert f._cache_size() == 3 and f._cache_bytes() == 4 * (10 + 11 + 12)
    max_bytes(0)                                         # every new signature evicts the others
    f(jnp.ones(13))
    assert f._cache_size() == 1 and f._cache_bytes() == 4 * 13
    f.clear_cache()
    assert f._cache_size() == 0 and f._cache_bytes() == 0


def test_a_jitted_function_still_deep_copies():
    """(before its first call, as before: the cache's lock is a module global, not an attribute)"""
    import copy
    f = fg.jit(lambda x: x + jnp.arange(x.shape[0], dtype=x.dtype))
    g = copy.deepcopy(f)
    np.testing.assert_array_equal(np.asarray(g(jnp.zeros(3))), [0, 1, 2])
    # (a copy is a jit of the same function: it shares that function's compiled signatures, as jit(f) again does)
    assert g._cache_bytes() == 12 and f._cache_size() == 1 and g._cache is f._cache
