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
from funcgrad._src.interpreters.compiler import codegen

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


# --- jit's generated code (interpreters/compiler/codegen.py: emit_fit) -----------------------------------

def _switch_lines(source: str) -> list:
    """The generated lines that call the policy (before matmul lines), in order."""
    return [ln.strip() for ln in source.split("\n") if "fit(" in ln or "fit_shared(" in ln]


def _to_two_threads(threadpoolctl):
    """The BLAS left on two threads, as by a large eager product before the jitted call."""
    a = np.ones((512, 512))
    jnp.dot(a, a)
    assert _blas_threads(threadpoolctl) == 2 and threads._current == 2


def test_jit_small_products_run_on_one_thread_large_on_the_ceiling(spy_matmul):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 4, (97, 51)).astype(np.float64)
    w = rng.integers(-3, 4, (51, 204)).astype(np.float64)
    u = rng.integers(-3, 4, (204, 51)).astype(np.float64)
    big = rng.integers(-3, 4, (512, 512)).astype(np.float64)

    def f(x, w, u, big):
        small = (x @ w) @ u          # two small products: one thread
        large = big @ big            # 512^3 = 16 * GRAIN: the ceiling
        return small @ w, large      # small again: back to one thread

    jf = funcgrad.jit(f)
    _to_two_threads(threadpoolctl)
    del spy_matmul[:]
    small, large = jf(x, w, u, big)
    assert spy_matmul == [1, 1, 2, 1]
    np.testing.assert_array_equal(np.asarray(small), ((x @ w) @ u) @ w)  # exact: small integers
    np.testing.assert_array_equal(np.asarray(large), big @ big)
    src = jf.lower(x, w, u, big).source()
    assert _switch_lines(src) == [f"if _threads._current != 1: _threads.fit({97 * 51 * 204})",
                                  f"_fit({512 ** 3})", f"if _threads._current != 1: _threads.fit({97 * 204 * 51})"]


def test_jit_all_small_program_checks_once_and_switches_only_when_needed(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    rng = np.random.default_rng(3)
    x, w, u = rng.standard_normal((97, 51)), rng.standard_normal((51, 204)), rng.standard_normal((204, 51))

    def f(x, w, u):
        h = jnp.tanh(x @ w)
        for _ in range(3):
            h = jnp.tanh((h @ u) @ w)
        return h

    jf = funcgrad.jit(f)
    src = jf.lower(x, w, u).source()
    assert src.count("_matmul(") == 7
    # one check, before the first product; no switch call at all (the check calls fit only when needed)
    assert _switch_lines(src) == [f"if _threads._current != 1: _threads.fit({97 * 51 * 204})"]
    assert src.index("_threads._current") < src.index("_matmul(")
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        want = np.asarray(f(x, w, u))  # eager, every product on one thread
    threads.set_num_threads(2)
    calls = []
    real = list(threads._setters)
    monkeypatch.setattr(threads, "_setters", [lambda n, s=s: (calls.append(n), s(n)) for s in real])
    _to_two_threads(threadpoolctl)
    del calls[:]
    got = jf(x, w, u)
    assert calls == [1] * len(real)  # switched down once
    assert _blas_threads(threadpoolctl) == 1
    jf(x, w, u)
    assert calls == [1] * len(real)  # and not again: the BLAS is on one thread already
    np.testing.assert_array_equal(np.asarray(got), want)  # bit-identical to the eager products on one thread


def test_jit_emits_nothing_without_threadpoolctl(monkeypatch):
    _fresh(monkeypatch, without_threadpoolctl=True)
    a = np.ones((512, 512))
    src = funcgrad.jit(lambda a, b: jnp.tanh(a @ b) @ b[:, :3]).lower(a, a).source()
    assert "_matmul(" in src and _switch_lines(src) == [] and "_threads" not in src
    out = funcgrad.jit(lambda a, b: jnp.tanh(a @ b) @ b[:, :3])(a, a)
    np.testing.assert_array_equal(np.asarray(out), np.full((512, 3), 512 * np.tanh(512.0)))


def test_jit_rechecks_after_an_impl_that_may_switch():
    pytest.importorskip("threadpoolctl")
    _ceiling_two()
    x, y = np.ones((8, 8)), np.ones((8, 3))

    def f(x, y):
        a = x @ x                                  # small: checked
        b = a @ x                                  # small after small: nothing
        s = jnp.linalg.solve(b + jnp.eye(8), y)    # an impl: it calls fit itself
        return (b @ s) @ s.T                       # small after the impl: checked again, then nothing

    src = funcgrad.jit(f).lower(x, y).source()
    assert src.count("_matmul(") == 4
    assert _switch_lines(src) == [f"if _threads._current != 1: _threads.fit({8 ** 3})",
                                  f"if _threads._current != 1: _threads.fit({8 * 8 * 3})"]


def test_jit_scan_body_products_follow_the_policy(spy_matmul):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    rng = np.random.default_rng(4)
    h0 = rng.integers(-1, 2, (4, 16)).astype(np.float64)
    ws = rng.integers(-1, 2, (5, 16, 16)).astype(np.float64)

    def body(h, w):
        h = jnp.clip(h @ w, -2.0, 2.0)
        return h, (h @ w.T).sum()

    jf = funcgrad.jit(lambda h, ws: funcgrad.lax.scan(body, h, ws))
    _to_two_threads(threadpoolctl)
    del spy_matmul[:]
    h, sums = jf(h0, ws)
    assert spy_matmul == [1] * 10  # two small products per step, none on the two threads left by dot
    want_h, want_sums = h0, []
    for w in ws:
        want_h = np.clip(want_h @ w, -2.0, 2.0)
        want_sums.append((want_h @ w.T).sum())
    np.testing.assert_array_equal(np.asarray(h), want_h)
    np.testing.assert_array_equal(np.asarray(sums), np.array(want_sums))


def test_jit_while_body_products_follow_the_policy(spy_matmul):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    w = np.eye(6) * 2.0

    def f(x):
        return funcgrad.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] @ w), (0, x))[1]

    _to_two_threads(threadpoolctl)
    del spy_matmul[:]
    out = funcgrad.jit(f)(np.ones((3, 6)))
    assert spy_matmul == [1, 1, 1]
    np.testing.assert_array_equal(np.asarray(out), np.full((3, 6), 8.0))


def test_jit_parallel_ops_halves_share_the_ceiling(spy_matmul, monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    monkeypatch.setattr(codegen.config, "parallel_ops", True)
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, (512, 512)).astype(np.float64)
    jf = funcgrad.jit(lambda a, b: a @ b)
    src = jf.lower(a, a).source()
    assert "_split_matmul(" in src and _switch_lines(src) == [f"_fit_shared({512 ** 3 // 2}, 2)"]
    _to_two_threads(threadpoolctl)
    del spy_matmul[:]
    out = jf(a, a)
    assert spy_matmul == [1, 1]  # two halves at once, one BLAS thread each: two in all, the ceiling
    np.testing.assert_array_equal(np.asarray(out), a @ a)


def test_fit_shared_gives_each_product_its_share(monkeypatch):
    pytest.importorskip("threadpoolctl")
    _ceiling_two()
    calls = []
    monkeypatch.setattr(threads, "_setters", [calls.append])
    monkeypatch.setattr(threads, "_ceiling", 4)
    monkeypatch.setattr(threads, "_current", 1)
    threads.fit_shared(threads.GRAIN * 8, 2)  # each of two: at most 4 // 2
    threads.fit_shared(threads.GRAIN * 8, 2)  # unchanged: no switch
    threads.fit_shared(threads.GRAIN - 1, 2)  # small: one thread
    threads.fit_shared(threads.GRAIN * 8, 4)  # four at once: one each, already set
    monkeypatch.setattr(threads, "_ceiling", 1)
    threads.fit_shared(threads.GRAIN * 8, 2)  # a ceiling of one: still one, never zero
    assert calls == [2, 1]


def test_jit_parallel_ops_pair_shares_the_ceiling(spy_matmul, monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _ceiling_two()
    monkeypatch.setattr(codegen.config, "parallel_ops", True)
    rng = np.random.default_rng(6)
    a = rng.integers(-3, 4, (32, 20000)).astype(np.float64)  # 32 x 32 results: paired, not split
    b, c = (rng.integers(-3, 4, (20000, 32)).astype(np.float64) for _ in range(2))
    jf = funcgrad.jit(lambda a, b, c: (a @ b, a @ c))
    src = jf.lower(a, b, c).source()
    assert "_spawn(_matmul" in src and _switch_lines(src) == [f"_fit_shared({32 * 20000 * 32}, 2)"]
    assert src.index("_fit_shared") < src.index("_spawn(")
    _to_two_threads(threadpoolctl)
    del spy_matmul[:]
    x, y = jf(a, b, c)
    assert spy_matmul == [1, 1]
    np.testing.assert_array_equal(np.asarray(x), a @ b)
    np.testing.assert_array_equal(np.asarray(y), a @ c)
