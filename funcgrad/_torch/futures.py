"""torch.futures: a Future for the result of an asynchronous operation (a collective started with
`async_op=True`, DDP's communication hooks), with torch's `then` chaining.

funcgrad runs no background executor, so a Future is resolved lazily: one made from a pending operation
holds a function that finishes it, run by `wait()` (or by `done()` once the operation has completed);
a Future made by the user resolves when `set_result` / `set_exception` is called. Callbacks given to `then`
and `add_done_callback` run when the Future resolves, in the order given.
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["Future", "collect_all", "wait_all"]

_UNSET = object()


class Future:
    """The eventual value of an operation (torch.futures.Future)."""

    def __init__(self, *, devices=None):
        self._value: Any = _UNSET
        self._exception: BaseException | None = None
        self._finish: Callable[[], Any] | None = None   # completes the operation and returns the value
        self._poll: Callable[[], bool] | None = None     # whether the operation has completed
        self._callbacks: list = []
        self._upstream: Future | None = None          # the Future whose `then` made this one

    @classmethod
    def _pending(cls, finish: Callable[[], Any], poll: Callable[[], bool] | None = None) -> "Future":
        fut = cls()
        fut._finish, fut._poll = finish, poll
        return fut

    def _resolved(self) -> bool:
        return self._value is not _UNSET or self._exception is not None

    def _run_finish(self) -> None:
        finish, self._finish, self._poll = self._finish, None, None
        try:
            value = finish()
        except BaseException as e:  # noqa: BLE001 (the Future carries any failure to whoever waits)
            self.set_exception(e)
        else:
            self.set_result(value)

    def _drive(self, block: bool) -> None:
        """Complete the operation behind this Future where it can: run its finishing function (block, or the
        operation has completed), or drive the Future that `then` chained it to (whose callbacks resolve it)."""
        if self._resolved():
            return
        if self._finish is not None:
            if block or self._poll is None or self._poll():
                self._run_finish()
        elif self._upstream is not None:
            self._upstream._drive(block)

    def done(self) -> bool:
        """Whether the value (or an exception) is ready, without blocking."""
        self._drive(False)
        return self._resolved()

    def wait(self) -> Any:
        """Block until the Future resolves; return its value or raise its exception."""
        self._drive(True)
        if not self._resolved():
            raise RuntimeError("Future.wait: this Future has no result yet and nothing will complete it "
                               "(call set_result or set_exception first)")
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self) -> Any:
        """The value of a completed Future (waits for it here, where torch would require wait() first)."""
        return self.wait()

    def then(self, callback: Callable[["Future"], Any]) -> "Future":
        """A new Future holding callback(self), run as soon as self resolves (before later callbacks, in the
        order registered), as torch: the callback also runs when self holds an exception, which reaches the
        new Future only if the callback raises (e.g. by calling self.value())."""
        child = Future()
        child._upstream = self

        def run(parent: "Future") -> None:
            try:
                value = callback(parent)
            except BaseException as e:  # noqa: BLE001 (the Future carries any failure to whoever waits)
                child.set_exception(e)
            else:
                child.set_result(value)
        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback: Callable[["Future"], None]) -> None:
        """Run callback(self) when the Future resolves (now, if it has)."""
        if self._resolved():
            callback(self)
        else:
            self._callbacks.append(callback)

    def set_result(self, result: Any) -> None:
        if self._resolved():
            raise RuntimeError("Future.set_result: this Future already has a value or an exception")
        self._value = result
        self._fire()

    def set_exception(self, result: BaseException) -> None:
        if self._resolved():
            raise RuntimeError("Future.set_exception: this Future already has a value or an exception")
        if not isinstance(result, BaseException):
            raise TypeError(f"Future.set_exception expects an exception, got {type(result).__name__}")
        self._exception = result
        self._fire()

    def _fire(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def __repr__(self) -> str:
        state = "done" if self._resolved() else "pending"
        return f"<funcgrad.futures.Future ({state})>"


def collect_all(futures: list) -> Future:
    """A Future of the list of `futures`, resolved when all of them are."""
    futures = list(futures)

    def finish():
        for f in futures:
            f.wait()
        return futures
    return Future._pending(finish, lambda: all(f.done() for f in futures))


def wait_all(futures: list) -> list:
    """Wait for every Future; their values in order (the first exception is raised)."""
    return [f.wait() for f in futures]
