"""torch.futures.Future: then-chaining, callbacks, exceptions, collect_all / wait_all (also on the Work of an
asynchronous collective: tests/test_distributed.py's DDP hook checks)."""
import pytest

import funcgrad as torch
from funcgrad.futures import Future, collect_all, wait_all


def test_set_result_then_chain_and_callbacks():
    f = Future()
    order = []
    g = f.then(lambda fut: fut.value() * 2)
    h = g.then(lambda fut: fut.value() + 1)
    f.add_done_callback(lambda fut: order.append(("cb", fut.value())))
    assert not f.done() and not g.done()
    f.set_result(5)
    assert order == [("cb", 5)]
    assert f.done() and f.wait() == 5
    assert h.wait() == 11 and g.value() == 10
    late = []
    f.add_done_callback(lambda fut: late.append(fut.value()))  # already done: runs now
    assert late == [5]


def test_exceptions_propagate_through_then():
    f = Future()
    g = f.then(lambda fut: fut.value() + 1)
    f.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        g.wait()
    k = Future()
    k.set_result(1)
    bad = k.then(lambda fut: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        bad.wait()


def test_misuse_raises_clear_errors():
    f = Future()
    with pytest.raises(RuntimeError, match="no result yet"):
        f.wait()
    f.set_result(1)
    with pytest.raises(RuntimeError, match="already has a value"):
        f.set_result(2)
    with pytest.raises(TypeError, match="expects an exception"):
        Future().set_exception("not an exception")


def test_collect_all_and_wait_all():
    fs = [Future() for _ in range(3)]
    allf = collect_all(fs)
    assert not allf.done()
    for i, f in enumerate(fs):
        f.set_result(i * i)
    assert allf.done() and [f.value() for f in allf.wait()] == [0, 1, 4]
    assert wait_all(fs) == [0, 1, 4]


def test_public_paths():
    import funcgrad.futures as fut_mod
    assert torch.futures is fut_mod and fut_mod.Future is Future


def test_matches_torch_futures_semantics():
    real = pytest.importorskip("torch")
    for F in (real.futures.Future, Future):
        f = F()
        g = f.then(lambda fut: fut.wait() * 3)
        f.set_result(2)
        assert g.wait() == 6
        assert (f.wait(), g.wait(), f.done(), g.done()) == (2, 6, True, True)


def test_then_runs_when_the_parent_resolves_in_registration_order():
    # torch: a `then` callback runs at set_result, before callbacks registered after it (not when the child is
    # waited on)
    f = Future()
    log = []
    g = f.then(lambda fut: log.append(("then", fut.value())) or fut.value() * 2)
    f.add_done_callback(lambda fut: log.append("cb"))
    f.set_result(3)
    assert log == [("then", 3), "cb"]
    assert g.done() and g.wait() == 6


def test_then_callback_can_handle_an_errored_parent():
    # torch calls the callback on an errored Future too; only a callback that raises (value()) fails the child
    f = Future()
    recovered = f.then(lambda fut: -1 if fut.done() else 0)
    failed = f.then(lambda fut: fut.value())
    f.set_exception(ValueError("boom"))
    assert recovered.done() and recovered.wait() == -1
    with pytest.raises(ValueError, match="boom"):
        failed.wait()
    k = Future()
    k.set_exception(KeyError("k"))
    assert k.then(lambda fut: "handled").wait() == "handled"


def test_then_on_an_operation_future_completes_it_when_waited():
    calls = []
    op = Future._pending(lambda: calls.append("finish") or 7, lambda: False)
    g = op.then(lambda fut: fut.value() + 1)
    assert not g.done() and calls == []          # the operation has not completed: nothing runs
    assert g.wait() == 8 and calls == ["finish"]
    assert op.done() and op.wait() == 7


def test_then_error_handling_matches_torch():
    real = pytest.importorskip("torch")
    for F in (real.futures.Future, Future):
        f = F()
        log = []
        g = f.then(lambda fut: log.append("then") or "handled")
        f.add_done_callback(lambda fut: log.append("cb"))
        f.set_exception(ValueError("boom"))
        assert log == ["then", "cb"] and g.wait() == "handled"
