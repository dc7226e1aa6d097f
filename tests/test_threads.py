"""BLAS threads per operation (funcgrad/_src/core/threads.py): torch's set_num_threads / get_num_threads
semantics, the config option, and the policy: one thread for small products, the ceiling for large ones
(read from threadpoolctl inside the operation), with results unchanged."""
import sys
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.core import threads

_STATE = ("_grain", "_ceiling", "_current", "_explicit", "_setters", "_libs", "_owner", "_ready", "_warned")


@pytest.fixture(autouse=True)
def _restore_policy():
    """Each test starts from and leaves the policy's state and the BLAS's thread count as they were."""
    threads.get_num_threads()  # (reads the BLAS libraries once)
    saved = {k: getattr(threads, k) for k in _STATE}
    counts = [c.get_num_threads() for c in threads._libs]
    yield
    for k, v in saved.items():
        setattr(threads, k, v)
    for c, n in zip(threads._libs, counts):
        c.set_num_threads(n)
    if threads._libs:
        threads._current = max(counts)


def _fresh(monkeypatch, without_threadpoolctl=False):
    """The policy as in a new process (nothing read yet); optionally as if threadpoolctl were absent."""
    for k, v in (("_grain", 1), ("_ceiling", 1), ("_current", 0), ("_explicit", None), ("_setters", []),
                 ("_libs", []), ("_owner", None), ("_ready", False), ("_warned", False)):
        monkeypatch.setattr(threads, k, v)
    if without_threadpoolctl:
        monkeypatch.setitem(sys.modules, "threadpoolctl", None)


# --- set_num_threads / get_num_threads: torch's semantics --------------------------------------------

@pytest.mark.parametrize("bad, message", [(0, "positive integer"), (-1, "positive integer"),
                                          (2.5, "expects an int, but got float"),
                                          ("2", "expects an int, but got str"),
                                          (True, "expects an int, but got bool")])
def test_set_num_threads_rejects_as_torch(bad, message):
    with pytest.raises(RuntimeError, match=message):
        funcgrad.set_num_threads(bad)


def test_set_get_round_trip():
    funcgrad.set_num_threads(3)  # above the CPU count is allowed, as in torch
    assert funcgrad.get_num_threads() == 3
    funcgrad.set_num_threads(np.int64(1))
    assert funcgrad.get_num_threads() == 1 and type(funcgrad.get_num_threads()) is int
    assert funcgrad.set_num_threads is funcgrad._torch.set_num_threads


def test_set_get_against_torch():
    torch = pytest.importorskip("torch")
    saved = torch.get_num_threads()
    try:
        for n in (1, 3, np.int64(2)):
            torch.set_num_threads(n)
            funcgrad.set_num_threads(n)
            assert funcgrad.get_num_threads() == torch.get_num_threads() == int(n)
        for bad in (0, -2, 1.0, "1", False):
            with pytest.raises(RuntimeError) as want:
                torch.set_num_threads(bad)
            with pytest.raises(RuntimeError) as got:
                funcgrad.set_num_threads(bad)
            assert str(want.value).split(",")[0] in str(got.value)
    finally:
        torch.set_num_threads(saved)


def test_config_option_sets_the_ceiling():
    funcgrad.config.update("intra_op_threads", 2)
    assert funcgrad.get_num_threads() == 2 == funcgrad.config.read("intra_op_threads")
    funcgrad.set_num_threads(1)
    assert funcgrad.config.read("intra_op_threads") == 1
    with pytest.raises(RuntimeError, match="intra_op_threads"):
        funcgrad.config.update("intra_op_threads", 0)
    assert funcgrad.get_num_threads() == 1


def test_default_ceiling_without_threadpoolctl_reads_the_environment(monkeypatch):
    _fresh(monkeypatch, without_threadpoolctl=True)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert funcgrad.get_num_threads() == 3


def test_without_threadpoolctl_nothing_switches_and_set_warns(monkeypatch):
    _fresh(monkeypatch, without_threadpoolctl=True)
    threads.fit(10)
    assert threads._current == 1 and threads._setters == []
    threads.fit(1 << 40)  # a huge product: still no switch (nothing to switch with)
    assert threads._current == 1
    with pytest.warns(RuntimeWarning, match="threadpoolctl is not installed"):
        funcgrad.set_num_threads(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        funcgrad.set_num_threads(2)  # warned once
    assert funcgrad.get_num_threads() == 2


# --- the policy, with threadpoolctl --------------------------------------------------------------------

def _blas_threads(threadpoolctl):
    """NumPy's BLAS's thread count now, as threadpoolctl reads it (SciPy may have loaded a BLAS of its own)."""
    path = threads._libs[0].filepath
    return next(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["filepath"] == path)


@pytest.fixture
def spy_matmul(monkeypatch):
    """Record the BLAS's thread count at each np.matmul call the impls make (xp.matmul)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen = []
    real = np.matmul

    def spy(*a, **k):
        seen.append(_blas_threads(threadpoolctl))
        return real(*a, **k)
    monkeypatch.setattr(np, "matmul", spy)
    return seen


def _ceiling_two():
    funcgrad.set_num_threads(2)
    if not threads._setters:
        pytest.skip("threadpoolctl found no BLAS library to switch")


def test_small_batched_product_runs_on_one_thread_large_on_the_ceiling(spy_matmul):
    _ceiling_two()
    rng = np.random.default_rng(0)
    small = rng.integers(-3, 4, (4, 97, 51)).astype(np.float64), rng.integers(-3, 4, (4, 51, 204)).astype(np.float64)
    out = jnp.matmul(*small)
    assert spy_matmul[-1] == 1
    np.testing.assert_array_equal(np.asarray(out), np.einsum("bij,bjk->bik", *small))  # exact: small integers
    n = 256  # 256^3 = 2 * GRAIN multiply-adds per product: two threads
    assert n ** 3 >= 2 * threads.GRAIN
    big = rng.integers(-3, 4, (2, n, n)).astype(np.float64), rng.integers(-3, 4, (2, n, n)).astype(np.float64)
    out = jnp.matmul(*big)
    assert spy_matmul[-1] == 2
    np.testing.assert_array_equal(np.asarray(out), np.einsum("bij,bjk->bik", *big))
    out = jnp.matmul(*small)  # and back
    assert spy_matmul[-1] == 1


def test_two_d_product_threads_by_size():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((97, 51)), rng.standard_normal((51, 204))
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        want = a @ b  # (OpenBLAS's two-thread product of this shape differs in the last bits)
    threads.set_num_threads(2)  # (re-reads the count the context manager restored)
    got = jnp.dot(a, b)  # the 2-D path (ndarray.dot): the count it ran with is still set after it
    assert _blas_threads(threadpoolctl) == 1
    np.testing.assert_array_equal(np.asarray(got), want)
    a, b = rng.standard_normal((512, 300)), rng.standard_normal((300, 512))
    assert 512 * 300 * 512 >= 2 * threads.GRAIN
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        want = a @ b
    threads.set_num_threads(2)
    got = jnp.dot(a, b)
    assert _blas_threads(threadpoolctl) == 2
    np.testing.assert_array_equal(np.asarray(got), want)  # threads split rows/columns: same sums


def test_ceiling_one_keeps_large_products_on_one_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    funcgrad.set_num_threads(1)
    if not threads._setters:
        pytest.skip("threadpoolctl found no BLAS library to switch")
    a = np.ones((512, 512))
    np.testing.assert_array_equal(np.asarray(jnp.dot(a, a)), np.full((512, 512), 512.0))
    assert _blas_threads(threadpoolctl) == 1


def test_convolution_threads_by_the_size_of_one_product(spy_matmul):
    _ceiling_two()
    x = np.ones((2, 16, 14, 14))
    k = np.ones((32, 16, 3, 3))
    out = lax.conv_general_dilated(x, k, (1, 1), "VALID")  # per example (32, 144) @ (144, 144): small
    assert spy_matmul[-1] == 1
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 32, 12, 12), 144.0))
    x = np.ones((2, 64, 64, 64))
    k = np.ones((64, 64, 3, 3))
    out = lax.conv_general_dilated(x, k, (1, 1), "VALID")  # (64, 576) @ (576, 3844) = 1.4e8: large
    assert spy_matmul[-1] == 2
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 64, 62, 62), 576.0))


def test_solve_threads_by_size():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    a = np.eye(8) * 2.0
    np.testing.assert_array_equal(np.asarray(jnp.linalg.solve(a, np.ones((8, 3)))), np.full((8, 3), 0.5))
    assert _blas_threads(threadpoolctl) == 1
    n = 600  # n^3 / 3 = 7.2e7 multiply-adds
    a = np.eye(n) * 4.0
    np.testing.assert_array_equal(np.asarray(jnp.linalg.solve(a, np.ones((n, 1)))), np.full((n, 1), 0.25))
    assert _blas_threads(threadpoolctl) == 2


def test_switches_only_when_the_count_changes(monkeypatch):
    pytest.importorskip("threadpoolctl")
    _ceiling_two()
    calls = []
    monkeypatch.setattr(threads, "_setters", [calls.append])
    threads.fit(threads.GRAIN * 4)
    threads.fit(threads.GRAIN * 4)
    threads.fit(100)
    threads.fit(100)
    threads.fit(threads.GRAIN * 2 - 1)  # below two threads' worth of work: one
    threads.fit(threads.GRAIN * 3)
    assert calls == [2, 1, 2] or calls == [1, 2]  # (the first: unless the BLAS already ran on 2)


def test_other_threads_do_not_switch(monkeypatch):
    import threading
    pytest.importorskip("threadpoolctl")
    _ceiling_two()
    calls = []
    monkeypatch.setattr(threads, "_setters", [calls.append])
    monkeypatch.setattr(threads, "_owner", None)
    monkeypatch.setattr(threads, "_current", 2)
    threads.fit(100)  # this thread switches first: it controls the BLAS from now on
    assert calls == [1] and threads._owner is threading.current_thread()
    t = threading.Thread(target=threads.fit, args=(threads.GRAIN * 4,))
    t.start()
    t.join()
    assert calls == [1] and threads._current == 1
    threads.fit(threads.GRAIN * 4)
    assert calls == [1, 2]
    monkeypatch.setattr(threads, "_owner", t)  # a controlling thread that has ended hands over
    threads.fit(100)
    assert calls == [1, 2, 1] and threads._owner is threading.current_thread()
