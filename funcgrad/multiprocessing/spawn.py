"""spawn / start_processes (torch.multiprocessing.spawn): run fn(rank, *args) in nprocs processes.

Each child runs `fn(i, *args)`; if it raises, the child writes its formatted traceback to a private
temporary file and exits with code 1. `ProcessContext.join()` waits for any child to end; on the first
failure it terminates the others and raises ProcessRaisedException (with the child's traceback) or
ProcessExitedException (killed by a signal or a bare non-zero exit).
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
import traceback
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    """A child process of spawn() failed; error_index is its rank and error_pid its process id."""


    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception; the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code or was killed by a signal."""


    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    """Body of each child: run fn(i, *args); record a traceback on failure (exit code 1)."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        with open(error_file, "w") as f:
            f.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """Handles to the children of start_processes(join=False)."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _cleanup_files(self):
        for f in self.error_files:
            try:
                os.unlink(f)
            except OSError:
                pass

    def _terminate_all(self, grace_period: float = 5.0):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + grace_period
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in self.processes:
            if p.is_alive():
                p.kill()
                p.join()

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to `timeout` seconds for a child to end. Returns True once all children have ended
        successfully, False if some are still running; raises if one failed (terminating the rest)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                error_index = i
                break
        if error_index is None:
            if not self.sentinels:
                self._cleanup_files()
            return not self.sentinels
        self._terminate_all(5.0 if grace_period is None else grace_period)
        failed = self.processes[error_index]
        code, pid = failed.exitcode, failed.pid
        try:
            with open(self.error_files[error_index]) as f:
                original = f.read()
        except OSError:
            original = ""
        self._cleanup_files()
        if not original:
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {error_index} terminated with signal {name}",
                                             error_index, pid, code, name)
            raise ProcessExitedException(f"process {error_index} terminated with exit code {code}",
                                         error_index, pid, code)
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n{original}"
        raise ProcessRaisedException(msg, error_index, pid)


class SpawnContext(ProcessContext):
    """Kept for compatibility: the context spawn(join=False) returns."""


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """Start nprocs processes running fn(rank, *args) with the given start method; join them (raising the
    first failure) if join, else return their ProcessContext."""
    ctx = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="funcgrad_spawn_err_")
        os.close(fd)
        error_files.append(path)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    except BaseException:
        context._terminate_all()
        context._cleanup_files()
        raise
    return None


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False, start_method: str = "spawn"):
    """Spawn nprocs processes running fn(rank, *args) (torch.multiprocessing.spawn); always uses the 'spawn'
    start method (another one only earns a FutureWarning), as torch does."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      "start_method use:\n\t\t funcgrad.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, "spawn")
