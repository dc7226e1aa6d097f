"""How many BLAS threads each matrix product, convolution or solve runs on: chosen per operation by its size.

NumPy's OpenBLAS puts every product above ~2.6e5 multiply-adds (m*n*k) on all its threads. On a machine
with other work running that is ruinous for small products: a (97x51)@(51x204) product took ~4 ms on
two threads instead of ~0.02 ms on one, because each call waits for a thread the scheduler has given
to someone else. torch parallelises an op only above a grain size; so does funcgrad, through
threadpoolctl (an optional dependency, the `fast` extra):

- `fit(mac)` before a product of `mac` multiply-adds (per matrix product: a stacked matmul threads each
  product on its own) asks for one thread below `GRAIN` multiply-adds per thread, else
  min(ceiling, mac // GRAIN). The BLAS is switched only when the wanted count differs from the one
  funcgrad set last (`_current`), so a loop of small products pays one switch (~2 µs), not one per call.
- The ceiling is torch's intra-op thread count: `funcgrad.set_num_threads(n)` / `get_num_threads()`, or
  config "intra_op_threads". Its default is the BLAS's own thread count when funcgrad first needs it
  (so OPENBLAS_NUM_THREADS / OMP_NUM_THREADS still cap it).
- Without threadpoolctl nothing is switched: every product runs on the BLAS's own setting, as NumPy's
  do (set_num_threads then only records the number and warns once that it cannot apply it).

funcgrad owns the BLAS's thread count while it runs these operations: an outer `threadpool_limits(...)`
around funcgrad code is overridden by the first product that wants another count; cap funcgrad with
set_num_threads instead (which also re-reads the BLAS's count, should anything else have changed it).
Only the thread that first switched the BLAS switches it, until that thread ends (threadpoolctl lets one
thread control OpenBLAS's shared pool); products on other threads run on whatever count is set.
jit's generated code calls numpy.matmul itself for 2-D products (interpreters/compiler/codegen.py); it calls
fit(mac) with each product's size, known from its static shapes, only where the wanted count may change
along the program (before its first small product, before each large one, and before a small one that
follows a large product or an operation that may switch), so a program of small products checks once per
call and switches at most once. Other dot_generals, convolutions and solves in jitted code go through
their impls, which call fit themselves.
"""
from __future__ import annotations

import operator
import os
import threading
import warnings

from . import options as _options

__all__ = ["fit", "fit_shared", "switchable", "set_num_threads", "get_num_threads", "GRAIN", "blas_info"]

# Multiply-adds per thread below which a second thread does not pay. Measured on a 2-CPU x86-64 VM
# (OpenBLAS 0.3.31, SkylakeX kernels, float32/float64): two threads start to win, on an idle machine,
# between 8e6 (200^3: 0.89x of one thread's time) and 5e7 multiply-adds (128x784x512: 0.45x); with
# another process running, two threads took 4-16 ms per product below ~5e7 whatever their size.
GRAIN = 1 << 23

# The policy's state. `_grain` is GRAIN while the policy acts, and never reached (no switching) without
# threadpoolctl; `_current` is the count funcgrad set last (0: none yet, so the first fit() initialises).
_grain = 1
_ceiling = 1
_current = 0  # (jit's generated code reads it: codegen.py's emit_fit)
_explicit: int | None = None  # the ceiling set through set_num_threads / config (None: the BLAS's default)
_setters: list = []  # set_num_threads of each BLAS library threadpoolctl found
_libs: list = []  # threadpoolctl's controllers of those libraries (blas_info)
_ready = False  # _init has run
_owner: threading.Thread | None = None  # the thread whose switches take effect (None: the next to switch)
_lock = threading.Lock()
_NEVER = 1 << 62


def fit(mac: int) -> None:
    """Set the BLAS's threads for one product of `mac` multiply-adds (cheap when nothing changes)."""
    want = 1 if mac < _grain else (_ceiling if mac >= _grain * _ceiling else mac // _grain)
    if want != _current:
        _switch(want, mac)


def fit_shared(mac: int, ways: int) -> None:
    """fit for `ways` products of `mac` multiply-adds each that run at once on `ways` threads (jit's
    parallel_ops: a matrix product split in two, or two independent ones): each gets its share of
    the ceiling, so together they use at most the ceiling's threads."""
    if not _ready:
        _init()
    want = 1 if mac < _grain else max(1, min(_ceiling // ways, mac // _grain))
    if want != _current:
        _switch(want, mac)


def switchable() -> bool:
    """Whether fit can switch anything (threadpoolctl found a BLAS library); jit emits no fit without."""
    if not _ready:
        _init()
    return bool(_setters)


def _switch(want: int, mac: int) -> None:
    global _current, _owner
    if not _ready:
        _init()
        want = 1 if mac < _grain else min(_ceiling, mac // _grain)
        if want == _current:
            return
    if not _setters:
        return
    me = threading.current_thread()
    if me is not _owner:  # as threadpoolctl: one thread controls OpenBLAS's shared pool, until it ends
        if _owner is not None and _owner.is_alive():
            return
        _owner = me
    for s in _setters:
        s(want)
    _current = want


def _init() -> None:
    """Find the BLAS libraries (threadpoolctl), read the default ceiling, and take the switch."""
    global _grain, _ceiling, _current, _ready, _setters, _libs
    with _lock:
        if _ready:
            return
        try:
            import threadpoolctl
            libs = [c for c in threadpoolctl.ThreadpoolController().lib_controllers if c.user_api == "blas"]
        except Exception:  # not installed, or it could not read a library: switch nothing
            libs = []
        counts = [c.get_num_threads() for c in libs]
        counts = [n for n in counts if n]
        _libs, _setters = libs, [c.set_num_threads for c in libs]
        if libs:
            _current = max(counts) if counts else 1
            _ceiling = _explicit or _current
            _grain = GRAIN
        else:
            _ceiling, _current, _grain = _explicit or _default_without_blas_control(), 1, _NEVER
        _ready = True


def _default_without_blas_control() -> int:
    """The ceiling reported without threadpoolctl: what the environment gives the BLAS, else the CPUs."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        v = os.environ.get(var, "").split(",")[0].strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _check(n, what: str = "set_num_threads") -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise RuntimeError(f"{what} expects an int, but got {type(n).__name__}")
    n = operator.index(n)
    if n <= 0:
        raise RuntimeError(f"{what} expects a positive integer, got {n}")
    return n


_warned = False


def set_num_threads(n: int) -> None:
    """The most threads one operation (a matrix product, convolution, solve) may use, as
    torch.set_num_threads: products too small to gain from threads still run on one."""
    global _explicit, _ceiling, _warned, _current
    n = _check(n)
    if not _ready:
        _init()
    _explicit = _ceiling = n
    if _libs:  # read the BLAS's count again: something outside funcgrad may have changed it
        _current = max([c.get_num_threads() or 1 for c in _libs])
    if not _setters and not _warned:
        _warned = True
        warnings.warn("funcgrad.set_num_threads: threadpoolctl is not installed, so funcgrad cannot choose "
                      "the BLAS's threads (products run on its own setting; OPENBLAS_NUM_THREADS sets that "
                      "at start). Install threadpoolctl (pip install 'funcgrad[fast]') to apply it.",
                      RuntimeWarning, stacklevel=2)


def get_num_threads() -> int:
    """The ceiling set by set_num_threads, by default the BLAS's thread count at first use."""
    if not _ready:
        _init()
    return _ceiling


def blas_info() -> list[dict]:
    """threadpoolctl's description of each BLAS library funcgrad switches (empty without threadpoolctl):
    name, version, kernel set ('architecture' for OpenBLAS), thread count now."""
    if not _ready:
        _init()
    return [c.info() for c in _libs]


class _Setting:
    """Config "intra_op_threads": set_num_threads / get_num_threads as an option."""
    intra_op_threads = property(lambda self: get_num_threads(), lambda self, n: set_num_threads(n))


_options.register(_Setting(), ["intra_op_threads"], check=lambda name, n: _check(n, f"config {name!r}"))
