"""The funcgrad benchmark suite: funcgrad against hand-written NumPy (and torch / jax when importable).

    python benchmarks/bench_suite.py                 # everything, about 2 minutes on 2 CPUs
    python benchmarks/bench_suite.py --quick         # a smoke run (about 25 s; noisy numbers)
    python benchmarks/bench_suite.py --only W2,W5    # some workloads (ids: see --list)
    python benchmarks/bench_suite.py --out benchmarks/results   # also write the table and a plot there
    OPENBLAS_NUM_THREADS=4 python benchmarks/bench_suite.py   # BLAS with 4 threads (the default is 1)

Prints ONE markdown table (workload, implementation, median, x NumPy, peak memory, notes) after a header with
the machine, versions, load and thread settings. Every time is the median over repeats of
time.perf_counter() around a batch of calls; "x NumPy" divides it by the NumPy median of the same
workload, measured in the same run on the same data. Before anything is timed, funcgrad's results
(and the optional torch / jax results) are checked against the NumPy version; a funcgrad workload that
fails its check or raises is reported as FAILED in the table and the script exits with status 1.

Workloads (see benchmarks/README.md for the exact definitions):
  E0  eager per-op overhead (add, multiply, exp, tanh, sum on 16 float32)
  W1  100-op elementwise chain, float32, 16 and 1,000,000 elements: eager and jit
  W2  MLP 784-512-512-10 SGD step, batch 128: jit(value_and_grad + tree_map update)
  W3  per-example gradients, MLP 784-128-10, batch 64: jit(vmap(grad))
  W4  Hessian-vector product of sum(tanh(A @ x)**2), A 1000x1000 float64: jit(jvp of grad)
  W5  small CNN forward+backward (conv-relu-pool x2, linear), batch 32x1x28x28: jit(value_and_grad)
  W6  jit(grad(W2 loss)): first call (trace + optimise + compile) and later calls
  W7  tiny RNN (hidden 8, float64) over 50 steps as a Python loop: eager grad and jit(grad)
  S1  conv2d 1->16->32 forward+backward; einsum 'ij,jk,kl->il' and 'bij,bjk->bik'
  S2  lax.scan of an RNN cell (hidden 64) over 1000 steps, value and gradient under jit
  S3  10**7 float32 normals: jit(funcgrad.random.normal) and eager random.normal vs
      numpy.random.Generator.standard_normal
  T0-T5  the PyTorch-style face against torch eager (per-op overhead, MLP / CNN / LSTM training steps, an
      LSTMCell loop at default threads, an actor-critic episode);
      see torch_face.py. "x base" is x NumPy for E/W/S rows and x torch eager for T rows.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

# One BLAS / OpenMP thread unless told otherwise: the suite measures funcgrad's overhead over NumPy, and
# multi-threaded OpenBLAS on a machine with other work running can be 10-50x slower and erratic. This
# must happen before NumPy (or torch) is imported; torch and XLA get the same single thread below.
# The child process of the W2D rows (--w2d-child) keeps every library's default threads instead.
_W2D_CHILD = "--w2d-child" in sys.argv[1:]
if not _W2D_CHILD:
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    if os.environ["OMP_NUM_THREADS"] == "1":
        os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.lax as flax  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
import funcgrad.random as jrandom  # noqa: E402
# JAX's x64 mode, as the jax column sets it: W4 / W7 are float64 workloads; the others' inputs carry their dtypes
funcgrad.config.update("jax_enable_x64", True)
from funcgrad.tree_util import tree_leaves, tree_map  # noqa: E402

torch = None  # set by load_optional() when importable (never required)
jax = jaxnp = jaxlax = None

F32, F64 = np.float32, np.float64

# --- timing and the table -----------------------------------------------------------------------------

QUICK = False


def measure(fn, budget_s: float | None = None, warm: bool = False, mem: bool = True) -> float:
    """Median seconds per call of fn(): after one warm-up call (which compiles a jitted function; left
    out when warm=True, i.e. fn was just called), calls are timed in batches of n (n chosen so a batch
    takes at least 2 ms) and the median over the batches is returned. About budget_s seconds are spent
    (at least 5 batches; 3 for calls slower than 40% of the budget, and with --quick). With mem, one
    more call measures the peak memory (peak_memory) that the next add_row reports."""
    budget = (0.12 if QUICK else 0.9) if budget_s is None else budget_s
    min_repeats, max_repeats = (3, 15) if QUICK else (5, 200)
    if not warm:
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= 2e-3:
            break
        n *= 2 if dt == 0 else max(2, min(100, int(2e-3 / dt) + 1))
    if dt * min_repeats > 2 * budget:
        min_repeats = 3
    repeats = int(min(max_repeats, max(min_repeats, budget / dt)))
    samples = []
    if n == 1 and dt > 0.2:  # a slow call: the calibration call is a sample like any other
        samples.append(dt)
        repeats -= 1
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples.append((time.perf_counter() - t0) / n)
    finally:
        if gc_was_enabled:
            gc.enable()
    _PEAK[0] = peak_memory(fn) if mem else None
    return statistics.median(samples)


_PEAK = [None]  # the peak memory of the last measured function, for the next row
_libc = None


def _proc_status(*keys) -> dict:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0]) * 1024
    return out


def peak_memory(fn) -> float | None:
    """Bytes by which one call of fn() raises the process's resident set (RSS high-water mark) above what
    it held before the call: the peak of the buffers it allocates at once, whichever library allocates
    them (NumPy, torch, XLA). Linux: free heap memory is first returned to the system (malloc_trim) so
    that reused pages count, and the kernel's high-water mark is reset (/proc/self/clear_refs). Elsewhere
    tracemalloc's peak (NumPy's buffers and Python objects; not torch's or XLA's allocations)."""
    global _libc
    gc.collect()
    try:
        if _libc is None:
            import ctypes
            _libc = ctypes.CDLL("libc.so.6")
        _libc.malloc_trim(0)
        base = _proc_status("VmRSS")["VmRSS"]
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        fn()
        return max(0, _proc_status("VmHWM")["VmHWM"] - base)
    except (OSError, KeyError, AttributeError):
        import tracemalloc
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def fmt_mem(b: float | None) -> str:
    if b is None:
        return ""
    return f"{b / 2**20:.1f} MiB" if b >= 2**20 else f"{b / 1024:.0f} KiB"


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


ROWS: list[tuple] = []
RATIOS: list[tuple] = []  # (workload, implementation, x base or None), for the plot
FAILURES: list[str] = []


def add_row(case: str, impl: str, t: float | None, base: float | None, note: str = "") -> None:
    """A table row; its peak memory is that of the function measure() timed last (none after given())."""
    peak, _PEAK[0] = (_PEAK[0] if t is not None else None), None
    if t is None:
        shown, ratio = "n/a", ""
    else:
        shown = fmt_time(t)
        ratio = "" if base is None else f"{t / base:.2f}x"
    ROWS.append((case, impl, shown, ratio, fmt_mem(peak), note))
    RATIOS.append((case, impl, None if t is None or base is None else t / base))
    print(f"  {case:<44} {impl:<26} {shown:>12} {ratio:>8} {fmt_mem(peak):>10}  {note}", file=sys.stderr, flush=True)


def settle(jf, call, timeout_s: float = 300.0) -> str:
    """Calls the funcgrad.jit function `jf` (through `call`) until jit's native tier (numba, the `fast`
    extra; see compiler/native.py) is done with it: its code built on the background thread and swapped
    in (or nothing found to build), so that the row times the steady state and no compile thread runs
    under a later row. Returns the row's note."""
    from funcgrad._src.interpreters.compiler import native  # (private: the tier's own state)
    if not native.wanted(np):
        return ""
    t0 = time.perf_counter()
    for _ in range(max(native.config.threshold, 1)):
        call()
    while any(getattr(e.fn, "native_pending", False) for e in jf._cache.values()):
        if time.perf_counter() - t0 > timeout_s:
            return f"native code not ready after {timeout_s:.0f} s"
        call()
        time.sleep(0.01)
    if not any(e.native is not None for e in jf._cache.values()):
        return ""
    return f"native code (tiered up after {time.perf_counter() - t0:.1f} s)"


class Case:
    """One table row group: a NumPy baseline, then implementations timed against it."""

    def __init__(self, label: str):
        self.label, self.base = label, None

    def numpy(self, fn, impl: str = "NumPy", note: str = "") -> float:
        self.base = measure(fn)
        add_row(self.label, impl, self.base, self.base, note)
        return self.base

    def time(self, impl: str, fn, note: str = "", budget_s: float | None = None, warm: bool = False) -> float:
        t = measure(fn, budget_s, warm)
        add_row(self.label, impl, t, self.base, note)
        return t

    def given(self, impl: str, t: float, note: str = "") -> None:
        _PEAK[0] = None
        add_row(self.label, impl, t, self.base, note)

    def optional(self, impl: str, make, want=None, rtol: float = 1e-4, note: str = "") -> None:
        """An optional (torch / jax) implementation: make() returns the function to time; its result is
        checked against `want` first. A failure becomes a note in the table, never a crash. jax rows are
        built and timed with every thread of the process on one CPU (see one_cpu)."""
        try:
            with one_cpu() if impl.startswith("jax") else contextlib.nullcontext():
                fn = make()
                if want is not None:
                    check(f"{impl} ({self.label})", fn(), want, rtol, check_dtype=False)
                self.time(impl, fn, note)
        except Exception as e:  # noqa: BLE001
            add_row(self.label, impl, None, None, f"{type(e).__name__}: {str(e).splitlines()[0][:70]}")


@contextlib.contextmanager
def one_cpu():
    """Every thread of this process on one CPU for the duration (Linux; elsewhere nothing changes).
    XLA's CPU runtime runs work on threads of its own whatever XLA_FLAGS say (a matmul-bound jax row
    measured faster than one core's peak), so without this its rows would use a second core that the
    NumPy, torch and funcgrad rows do not."""
    if not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    saved = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            saved[int(tid)] = os.sched_getaffinity(int(tid))
            os.sched_setaffinity(int(tid), {cpu})
        except OSError:  # a thread that has just exited
            pass
    try:
        yield
    finally:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), saved.get(int(tid), allowed))  # (new threads: the caller's)
            except OSError:
                pass


def compiled_with_parallel_ops(f, *args):
    """A fresh jit of f compiled (by one checked call) with jit_parallel_ops on: large matrix products
    split between two threads, independent convolutions paired. The setting is read when code is
    generated, so later calls run that code with the setting restored."""
    old = funcgrad.config.read("jit_parallel_ops")
    funcgrad.config.update("jit_parallel_ops", True)
    try:
        jf = funcgrad.jit(f)  # (made under the setting: jit(f) shares f's signatures compiled under the same ones)
        out = jf(*args)
    finally:
        funcgrad.config.update("jit_parallel_ops", old)
    return jf, out


# --- checking results ---------------------------------------------------------------------------------

def to_numpy(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def leaves(tree) -> list:
    if torch is not None and isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in leaves(t)]
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in leaves(tree[k])]
    return tree_leaves(tree) or [tree]


def check(what: str, got, want, rtol: float, check_dtype: bool = True) -> None:
    """Each leaf of `got` equals the matching leaf of `want` to `rtol` in relative 2-norm
    (||got - want|| <= rtol * ||want||), with the same shape (and dtype, for funcgrad's results)."""
    g_leaves, w_leaves = leaves(got), leaves(want)
    if len(g_leaves) != len(w_leaves):
        raise AssertionError(f"{what}: {len(g_leaves)} result leaves, expected {len(w_leaves)}")
    for i, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        g, w = to_numpy(g), np.asarray(w)
        if g.shape != w.shape:
            raise AssertionError(f"{what}: leaf {i} has shape {g.shape}, expected {w.shape}")
        if check_dtype and g.dtype != w.dtype:
            raise AssertionError(f"{what}: leaf {i} has dtype {g.dtype}, expected {w.dtype}")
        g64, w64 = g.astype(F64).ravel(), w.astype(F64).ravel()
        err = np.linalg.norm(g64 - w64) / max(np.linalg.norm(w64), 1e-300)
        if not err <= rtol:
            raise AssertionError(f"{what}: leaf {i} (shape {w.shape}) differs from NumPy's by {err:.2e} "
                                 f"relative (tolerance {rtol:.0e})")


# --- shared models (written once over a namespace: funcgrad's, or jax's) ----------------------------

class NS:
    """The array namespace a model is written in: xp (numpy-like), lax, stop_gradient."""

    def __init__(self, xp, lax, stop_gradient):
        self.xp, self.lax, self.stop_gradient = xp, lax, stop_gradient


FG = NS(jnp, flax, funcgrad.stop_gradient)


def chain(x, xp):
    """25 x (multiply, add, tanh, exp) = 100 elementwise ops; values stay in [0.37, 2.72]."""
    for i in range(25):
        x = x * 0.5
        x = x + (0.25 - 0.01 * i)
        x = xp.tanh(x)
        x = xp.exp(x)
    return x


def xent(ns, logits, y):
    """Summed softmax cross-entropy over the last axis (y one-hot)."""
    xp = ns.xp
    s = logits - ns.stop_gradient(xp.max(logits, axis=-1, keepdims=True))
    logp = s - xp.log(xp.sum(xp.exp(s), axis=-1, keepdims=True))
    return -xp.sum(y * logp)


def mlp_loss(ns, params, x, y):
    """Mean softmax cross-entropy of a relu MLP over a batch; params = [(w, b), ...], y one-hot."""
    h = x
    for w, b in params[:-1]:
        h = ns.xp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    return xent(ns, h @ w + b, y) / x.shape[0]


def mlp_loss_one(ns, params, x, y):
    """The loss of one example (x: (784,), y: (10,)), for per-example gradients."""
    h = x
    for w, b in params[:-1]:
        h = ns.xp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    return xent(ns, h @ w + b, y)


def cnn_loss(ns, params, x, y):
    """conv3x3 1->16, relu, maxpool2, conv3x3 16->32, relu, maxpool2, linear 1568->10; mean xent.
    NCHW / OIHW, 'SAME' convolutions, 2x2 stride-2 max pooling with lax.reduce_window."""
    xp, lax = ns.xp, ns.lax
    k1, b1, k2, b2, w, b = params
    h = x
    for k, bias in ((k1, b1), (k2, b2)):
        h = lax.conv_general_dilated(h, k, (1, 1), "SAME") + bias.reshape(1, -1, 1, 1)
        h = xp.maximum(h, 0.0)
        h = lax.reduce_window(h, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    h = h.reshape(h.shape[0], -1)
    return xent(ns, h @ w + b, y) / x.shape[0]


def conv2_loss(ns, params, x, r):
    """S1: conv3x3 1->16, relu, conv3x3 16->32 ('SAME', no bias); loss sum(out * r)."""
    k1, k2 = params
    h = ns.xp.maximum(ns.lax.conv_general_dilated(x, k1, (1, 1), "SAME"), 0.0)
    out = ns.lax.conv_general_dilated(h, k2, (1, 1), "SAME")
    return ns.xp.sum(out * r)


def rnn_loop_loss(xp, params, h0, xs):
    """W7: h = tanh(h @ W + x_t @ U + b) for each row x_t of xs, as a Python loop; loss sum_t |h_t|^2."""
    W, U, b = params
    h, loss = h0, 0.0
    for t in range(xs.shape[0]):
        h = xp.tanh(h @ W + xs[t] @ U + b)
        loss = loss + xp.sum(h * h)
    return loss


def scan_rnn_loss(ns, params, h0, xs):
    """S2: the same cell as a lax.scan over the rows of xs; loss mean_t |h_t|^2."""
    W, U, b = params

    def cell(h, x):
        h = ns.xp.tanh(h @ W + x @ U + b)
        return h, h
    _, hs = ns.lax.scan(cell, h0, xs)
    return ns.xp.sum(hs * hs) / xs.shape[0]


def hvp_f(xp, A, x):
    """W4: f(x) = sum(tanh(A @ x)**2)."""
    return xp.sum(xp.tanh(A @ x) ** 2)


# --- the NumPy versions, by hand --------------------------------------------------------------------

def numpy_xent(logits, y):
    """Mean softmax cross-entropy and its gradient with respect to the logits."""
    s = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(s)
    se = e.sum(axis=1, keepdims=True)
    n = logits.shape[0]
    loss = -np.sum(y * (s - np.log(se))) / n
    return loss, (e / se * y.sum(axis=1, keepdims=True) - y) / n


def numpy_mlp_value_and_grad(params, x, y):
    acts, pre = [x], []
    h = x
    for w, b in params[:-1]:
        z = h @ w + b
        pre.append(z)
        h = np.maximum(z, 0)
        acts.append(h)
    w, b = params[-1]
    loss, g = numpy_xent(h @ w + b, y)
    grads = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        w = params[i][0]
        grads[i] = (acts[i].T @ g, g.sum(axis=0))
        if i:
            g = (g @ w.T) * (pre[i - 1] > 0)
    return loss, grads


def numpy_per_example_grads(params, x, y):
    """Per-example gradients of the 2-layer MLP's per-example loss, batched by broadcasting."""
    (w1, b1), (w2, b2) = params
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    logits = h @ w2 + b2
    s = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(s)
    g = e / e.sum(axis=1, keepdims=True) * y.sum(axis=1, keepdims=True) - y     # (B, 10)
    gh = (g @ w2.T) * (z1 > 0)                                                 # (B, 128)
    # batched outer products: einsum is ~1.7x faster than broadcasting x[:, :, None] * gh[:, None, :]
    return [(np.einsum("bi,bj->bij", x, gh), gh), (np.einsum("bi,bj->bij", h, g), g)]


def numpy_hvp(A, x, v):
    """H v for f = sum(tanh(A x)^2): A^T diag(2 (1 - t^2)(1 - 3 t^2)) A v, t = tanh(A x)."""
    t = np.tanh(A @ x)
    t2 = t * t
    return A.T @ (2 * (1 - t2) * (1 - 3 * t2) * (A @ v))


def im2col(x):
    """x (N, H, W, C) -> (N*H*W, 9*C): the 3x3 'SAME' patches (pad 1, stride 1), one row per pixel, in
    (kh, kw, C) order. Channels-last, so that each copied run is C contiguous numbers."""
    n, h, w, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    if c == 1:  # nine strided copies beat one gather of single numbers
        cols = np.empty((n, h, w, 3, 3, c), x.dtype)
        for i in range(3):
            for j in range(3):
                cols[:, :, :, i, j, :] = xp[:, i:i + h, j:j + w, :]
        return cols.reshape(n * h * w, 9 * c)
    win = sliding_window_view(xp, (3, 3), axis=(1, 2))                 # (N, H, W, C, 3, 3), a view
    return win.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, 9 * c)   # one copy


def kernel_matrix(k):
    """OIHW kernel -> (9*C, O), rows in im2col's (kh, kw, C) order."""
    return k.transpose(2, 3, 1, 0).reshape(-1, k.shape[0])


def conv_fwd(x, k):
    """3x3 'SAME' cross-correlation of an NHWC input with an OIHW kernel: (NHWC output, cols)."""
    n, h, w, _ = x.shape
    cols = im2col(x)
    return (cols @ kernel_matrix(k)).reshape(n, h, w, -1), cols


def conv_bwd(g, cols, k, need_dx: bool):
    """Gradients of conv_fwd from the NHWC output cotangent g: (dk (OIHW), dx (NHWC) or None)."""
    n, h, w, o = g.shape
    c = k.shape[1]
    gm = g.reshape(-1, o)                                              # (N*H*W, O)
    dk = (cols.T @ gm).reshape(3, 3, c, o).transpose(3, 2, 0, 1)
    if not need_dx:
        return dk, None
    dcols = (gm @ kernel_matrix(k).T).reshape(n, h, w, 3, 3, c)
    dxp = np.zeros((n, h + 2, w + 2, c), g.dtype)
    for i in range(3):                                                 # col2im: one add per kernel tap
        for j in range(3):
            dxp[:, i:i + h, j:j + w, :] += dcols[:, :, :, i, j, :]
    return dk, dxp[:, 1:-1, 1:-1, :]


_POOL_OFFSETS = ((0, 0), (0, 1), (1, 0), (1, 1))  # row-major order within a 2x2 window


def maxpool_fwd(x):
    """2x2 stride-2 max pooling of NHWC x: (out, the four strided quarters, for maxpool_bwd)."""
    q = [x[:, i::2, j::2, :] for i, j in _POOL_OFFSETS]
    return np.maximum(np.maximum(q[0], q[1]), np.maximum(q[2], q[3])), q


def maxpool_bwd(g, out, q, shape):
    """Each window's cotangent goes to its first maximum (row-major), as XLA's select_and_scatter."""
    dx = np.zeros(shape, g.dtype)
    taken = None
    for (i, j), qi in zip(_POOL_OFFSETS, q):
        hit = qi == out
        if taken is None:
            taken = hit
        else:
            hit &= ~taken
            taken |= hit
        np.multiply(g, hit, out=dx[:, i::2, j::2, :])
    return dx


def numpy_cnn_value_and_grad(params, x, y):
    """W5 by hand: channels-last (NHWC) activations, im2col convolutions."""
    k1, b1, k2, b2, w, b = params
    n = x.shape[0]
    z1, cols1 = conv_fwd(x.transpose(0, 2, 3, 1), k1)
    z1 += b1
    a1 = np.maximum(z1, 0)
    p1, q1 = maxpool_fwd(a1)
    z2, cols2 = conv_fwd(p1, k2)
    z2 += b2
    a2 = np.maximum(z2, 0)
    p2, q2 = maxpool_fwd(a2)
    f = p2.transpose(0, 3, 1, 2).reshape(n, -1)                       # flatten in NCHW order
    loss, g = numpy_xent(f @ w + b, y)
    gw, gb = f.T @ g, g.sum(axis=0)
    gp2 = (g @ w.T).reshape(n, p2.shape[3], p2.shape[1], p2.shape[2]).transpose(0, 2, 3, 1)
    gz2 = maxpool_bwd(gp2, p2, q2, a2.shape) * (z2 > 0)
    gk2, gp1 = conv_bwd(gz2, cols2, k2, need_dx=True)
    gz1 = maxpool_bwd(gp1, p1, q1, a1.shape) * (z1 > 0)
    gk1, _ = conv_bwd(gz1, cols1, k1, need_dx=False)
    return loss, (gk1, gz1.sum(axis=(0, 1, 2)), gk2, gz2.sum(axis=(0, 1, 2)), gw, gb)


def numpy_conv2_value_and_grad(params, x, r):
    """S1 by hand (NCHW in and out, NHWC inside)."""
    k1, k2 = params
    z1, cols1 = conv_fwd(x.transpose(0, 2, 3, 1), k1)
    h = np.maximum(z1, 0)
    out, cols2 = conv_fwd(h, k2)
    r_nhwc = r.transpose(0, 2, 3, 1)
    gk2, gh = conv_bwd(np.ascontiguousarray(r_nhwc), cols2, k2, need_dx=True)
    gk1, _ = conv_bwd(gh * (z1 > 0), cols1, k1, need_dx=False)
    return np.sum(out * r_nhwc), (gk1, gk2)


def numpy_rnn_value_and_grad(params, h0, xs):
    """W7 by hand: the forward loop, then backpropagation through time; loss = sum_t |h_t|^2."""
    W, U, b = params
    hs = [h0]
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(hs[-1] @ W + xs[t] @ U + b)
        hs.append(h)
        loss += h @ h
    dW, dU, db = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
    dh = np.zeros_like(h0)
    for t in range(xs.shape[0] - 1, -1, -1):
        h = hs[t + 1]
        dz = (dh + 2 * h) * (1 - h * h)
        dW += np.outer(hs[t], dz)
        dU += np.outer(xs[t], dz)
        db += dz
        dh = W @ dz
    return loss, (dW, dU, db)


def numpy_scan_rnn_value_and_grad(params, h0, xs):
    """S2's loss (mean over the T steps of |h_t|^2) and gradient, forward loop + BPTT."""
    T = xs.shape[0]
    loss, (dW, dU, db) = numpy_rnn_value_and_grad(params, h0, xs)
    return loss / T, (dW / T, dU / T, db / T)


# --- helpers for data ---------------------------------------------------------------------------------

def mlp_params(sizes, rng):
    return [(rng.standard_normal((i, o)).astype(F32) * F32(np.sqrt(2.0 / i)),
             rng.standard_normal(o).astype(F32) * F32(0.1)) for i, o in zip(sizes[:-1], sizes[1:])]


def one_hot(rng, n, k):
    return np.eye(k, dtype=F32)[rng.integers(0, k, n)]


def fg_tree(tree):
    """The same pytree with funcgrad Arrays for leaves."""
    return tree_map(jnp.asarray, tree)


def torch_tree(tree, requires_grad=False):
    if isinstance(tree, (list, tuple)):
        return type(tree)(torch_tree(t, requires_grad) for t in tree)
    t = torch.from_numpy(np.array(tree))
    return t.requires_grad_() if requires_grad else t


def jax_tree(tree):
    if isinstance(tree, (list, tuple)):
        return type(tree)(jax_tree(t) for t in tree)
    return jaxnp.asarray(tree)


def jax_ns():
    return NS(jaxnp, jaxlax, jaxlax.stop_gradient)


def jax_ready(f):
    return lambda *a: jax.block_until_ready(f(*a))


LR = 0.01  # the SGD learning rate of W2


# --- the workloads ------------------------------------------------------------------------------------

def bench_e0() -> None:
    """Eager per-op overhead on a 16-element float32 array ("notes": the difference from NumPy)."""
    a = np.linspace(-1, 1, 16, dtype=F32)
    x = jnp.asarray(a)
    for name in ("add", "multiply", "exp", "tanh", "sum"):
        binary = name in ("add", "multiply")
        np_f, fg_f = getattr(np, name), getattr(jnp, name)
        np_fn = (lambda: np_f(a, a)) if binary else (lambda: np_f(a))
        fg_fn = (lambda: fg_f(x, x)) if binary else (lambda: fg_f(x))
        check(f"E0 {name}", fg_fn(), np_fn(), 1e-6)
        c = Case(f"E0 {name}, 16 x f32")
        base = c.numpy(np_fn)
        t = c.time("funcgrad eager", fg_fn)
        ROWS[-1] = ROWS[-1][:5] + (f"{(t - base) * 1e6:+.2f} µs per op",)
        if torch is not None:
            def make_torch(name=name, binary=binary):
                tt, f = torch.from_numpy(a.copy()), getattr(torch, name)
                return (lambda: f(tt, tt)) if binary else (lambda: f(tt))
            c.optional("torch eager", make_torch)


def bench_w1() -> None:
    fg_chain = funcgrad.jit(lambda x: chain(x, jnp))
    for n in (16, 1_000_000):
        a = np.random.default_rng(0).standard_normal(n).astype(F32)
        x = jnp.asarray(a)
        ref = chain(a, np)
        check(f"W1 eager n={n}", chain(x, jnp), ref, 1e-5)
        check(f"W1 jit n={n}", fg_chain(x), ref, 1e-5)
        c = Case(f"W1 100-op chain, {n:,} x f32")
        c.numpy(lambda: chain(a, np))
        c.time("funcgrad eager", lambda: chain(x, jnp))
        c.time("funcgrad.jit", lambda: fg_chain(x), settle(fg_chain, lambda: fg_chain(x)))
        if torch is not None:
            def make_torch():
                t = torch.from_numpy(a.copy())
                return lambda: chain(t, torch)
            c.optional("torch eager", make_torch, ref, 1e-5)
        if jax is not None:
            def make_jax():
                f, j = jax.jit(lambda v: chain(v, jaxnp)), jaxnp.asarray(a)
                return lambda: f(j).block_until_ready()
            c.optional("jax.jit", make_jax, ref, 1e-5)


def mlp_data():
    rng = np.random.default_rng(0)
    np_params = mlp_params([784, 512, 512, 10], rng)
    return np_params, rng.standard_normal((128, 784)).astype(F32), one_hot(rng, 128, 10)


# W2's arithmetic: forward 2(128*784*512 + 128*512*512 + 128*512*10); backward the weight gradients
# (the same again) plus the input gradients of layers 2 and 3 (2(128*512*512 + 128*512*10)).
W2_FLOPS = 2 * (2 * (128 * 784 * 512 + 128 * 512 * 512 + 128 * 512 * 10) + 128 * 512 * 512 + 128 * 512 * 10)


def gemm_peak_flops() -> float:
    """This core's float32 matrix-product rate (512^3, the best of 20 runs): what a matmul-bound step
    can reach on the one BLAS thread the suite allows."""
    a = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    best = float("inf")
    for _ in range(20):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2 * 512 ** 3 / best


def w2_fg_step(params, x, y):
    """W2's step on funcgrad: value_and_grad of the MLP loss, then the SGD update."""
    loss, grads = funcgrad.value_and_grad(lambda p: mlp_loss(FG, p, x, y))(params)
    return loss, tree_map(lambda p, g: p - LR * g, params, grads)


def w2_numpy_step(params, x, y):
    """W2's step by hand in NumPy."""
    loss, grads = numpy_mlp_value_and_grad(params, x, y)
    return loss, [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]


def w2_jax_step():
    """W2's step on JAX, under jax.jit (blocking until its results are ready)."""
    ns = jax_ns()

    def step(p, xx, yy):
        loss, g = jax.value_and_grad(lambda q: mlp_loss(ns, q, xx, yy))(p)
        return loss, jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g)
    return jax_ready(jax.jit(step))


def bench_w2() -> None:
    np_params, x_np, y_np = mlp_data()
    params, x, y = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(y_np)

    ref_loss, ref_grads = numpy_mlp_value_and_grad(np_params, x_np, y_np)
    check("W2 value_and_grad (eager)",
          funcgrad.value_and_grad(lambda p: mlp_loss(FG, p, x, y))(params), (ref_loss, ref_grads), 1e-4)
    want = w2_numpy_step(np_params, x_np, y_np)
    step_jit = funcgrad.jit(w2_fg_step)
    # new parameters to 1e-6: the update LR * g is ~1e-3 of the parameters, so a missing or wrong update
    # (or a gradient off by more than ~1e-3 relative) fails
    check("W2 SGD step (eager)", w2_fg_step(params, x, y), want, 1e-6)
    check("W2 SGD step (jit)", step_jit(params, x, y), want, 1e-6)

    c = Case("W2 MLP 784-512-512-10 SGD step, batch 128")
    base = c.numpy(lambda: w2_numpy_step(np_params, x_np, y_np), "NumPy (by hand)")
    peak = gemm_peak_flops()
    ROWS[-1] = ROWS[-1][:5] + (f"{W2_FLOPS / 1e6:.0f} MFLOP at {W2_FLOPS / base / 1e9:.0f} GFLOP/s: "
                               f"{100 * W2_FLOPS / base / peak:.0f}% of one core's GEMM peak "
                               f"({peak / 1e9:.0f} GFLOP/s)",)
    c.time("funcgrad eager", lambda: w2_fg_step(params, x, y))
    c.time("funcgrad.jit", lambda: step_jit(params, x, y), settle(step_jit, lambda: step_jit(params, x, y)))
    step_par, out = compiled_with_parallel_ops(w2_fg_step, params, x, y)
    check("W2 SGD step (jit, parallel ops)", out, want, 1e-6)
    settle(step_par, lambda: step_par(params, x, y))  # (no compile thread under the row)
    c.time("funcgrad.jit, jit_parallel_ops", lambda: step_par(params, x, y), "opt-in: a second thread (not BLAS's)")
    if torch is not None:
        def make_torch():
            tp = torch_tree(np_params, requires_grad=True)
            flat = [t for wb in tp for t in wb]
            tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

            def step():
                h = tx
                for w, b in tp[:-1]:
                    h = torch.relu(h @ w + b)
                logits = h @ tp[-1][0] + tp[-1][1]
                loss = -(ty * torch.log_softmax(logits, dim=1)).sum() / tx.shape[0]
                gs = torch.autograd.grad(loss, flat)
                with torch.no_grad():
                    new = [p - LR * g for p, g in zip(flat, gs)]
                return loss.detach(), [tuple(new[i:i + 2]) for i in range(0, len(new), 2)]
            return step
        c.optional("torch eager", make_torch, want, 1e-6)
    if jax is not None:
        def make_jax():
            return lambda f=w2_jax_step(), a=jax_tree(np_params), b=jax_tree(x_np), c=jax_tree(y_np): f(a, b, c)
        c.optional("jax.jit", make_jax, want, 1e-6)


_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS")


def bench_w2d() -> None:
    """W2's step at every library's default threads: funcgrad.jit (BLAS threads per product by size, up to
    all usable CPUs), jax.jit (XLA's own thread pool) and NumPy's BLAS at its default. XLA fixes its threads
    when it starts, so these rows run in a child process started without the suite's thread settings;
    the child checks each result against NumPy's and prints its rows as JSON."""
    import json
    env = {k: v for k, v in os.environ.items() if k not in _THREAD_VARS}
    cmd = ([sys.executable, os.path.abspath(__file__), "--w2d-child"] + (["--quick"] if QUICK else [])
           + (["--no-jax"] if jax is None else []))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the W2D child process failed: {done.stderr.strip().splitlines()[-1:]}")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    base = rows[0][2]  # (the NumPy row)
    for case, impl, t, peak, note in rows:
        _PEAK[0] = peak
        add_row(case, impl, t, base, note)


def w2d_child(use_jax: bool) -> None:
    """The child of bench_w2d: W2's data, funcgrad.jit and jax.jit steps, timed at default threads."""
    import json
    load_optional(False, use_jax)
    np_params, x_np, y_np = mlp_data()
    params, x, y = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(y_np)

    want = w2_numpy_step(np_params, x_np, y_np)
    step_jit = funcgrad.jit(w2_fg_step)
    check("W2D SGD step (jit)", step_jit(params, x, y), want, 1e-6)
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    label = f"W2D W2's step at default threads ({n} CPUs)"
    rows = []

    def row(impl, fn, note=""):
        t = measure(fn)
        rows.append((label, impl, t, _PEAK[0], note))

    row("NumPy (by hand)", lambda: w2_numpy_step(np_params, x_np, y_np), "NumPy's BLAS at its default threads")
    tier = settle(step_jit, lambda: step_jit(params, x, y))
    row("funcgrad.jit", lambda: step_jit(params, x, y), "; ".join(
        filter(None, [tier, f"BLAS threads per product by size, ceiling {funcgrad.get_num_threads()}"])))
    if jax is not None:
        jf, a, b, c = w2_jax_step(), jax_tree(np_params), jax_tree(x_np), jax_tree(y_np)
        check("W2D SGD step (jax.jit)", jf(a, b, c), want, 1e-6, check_dtype=False)
        row("jax.jit", lambda: jf(a, b, c), "XLA's default thread pool")
    print(json.dumps(rows))


def bench_w3() -> None:
    rng = np.random.default_rng(1)
    np_params = mlp_params([784, 128, 10], rng)
    x_np, y_np = rng.standard_normal((64, 784)).astype(F32), one_hot(rng, 64, 10)
    params, x, y = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(y_np)
    want = numpy_per_example_grads(np_params, x_np, y_np)
    # the hand-written per-example gradients average to the batch gradient
    _, batch_grads = numpy_mlp_value_and_grad(np_params, x_np, y_np)
    check("W3 NumPy per-example grads (mean vs batch grad)",
          [(gw.mean(0), gb.mean(0)) for gw, gb in want], batch_grads, 1e-5)
    per_ex = funcgrad.vmap(funcgrad.grad(lambda p, xi, yi: mlp_loss_one(FG, p, xi, yi)), in_axes=(None, 0, 0))
    per_ex_jit = funcgrad.jit(per_ex)
    check("W3 vmap(grad) (eager)", per_ex(params, x, y), want, 1e-4)
    check("W3 jit(vmap(grad))", per_ex_jit(params, x, y), want, 1e-4)

    c = Case("W3 per-example grads, MLP 784-128-10, batch 64")
    c.numpy(lambda: numpy_per_example_grads(np_params, x_np, y_np), "NumPy (by hand)")
    c.time("funcgrad vmap(grad) eager", lambda: per_ex(params, x, y))
    c.time("funcgrad jit(vmap(grad))", lambda: per_ex_jit(params, x, y),
           settle(per_ex_jit, lambda: per_ex_jit(params, x, y)))
    if torch is not None:
        def make_torch():
            import torch.func

            def loss_one(p, xi, yi):
                h = xi
                for w, b in p[:-1]:
                    h = torch.relu(h @ w + b)
                return -(yi * torch.log_softmax(h @ p[-1][0] + p[-1][1], dim=-1)).sum()
            f = torch.func.vmap(torch.func.grad(loss_one), in_dims=(None, 0, 0))
            tp, tx, ty = torch_tree(np_params), torch.from_numpy(x_np), torch.from_numpy(y_np)
            return lambda: f(tp, tx, ty)
        c.optional("torch.func vmap(grad)", make_torch, want, 1e-4)
    if jax is not None:
        def make_jax():
            ns = jax_ns()
            f = jax.jit(jax.vmap(jax.grad(lambda p, xi, yi: mlp_loss_one(ns, p, xi, yi)), in_axes=(None, 0, 0)))
            return lambda f=jax_ready(f), a=jax_tree(np_params), b=jax_tree(x_np), c=jax_tree(y_np): f(a, b, c)
        c.optional("jax jit(vmap(grad))", make_jax, want, 1e-4)


def bench_w4() -> None:
    rng = np.random.default_rng(2)
    n = 1000
    A_np = rng.standard_normal((n, n)) / np.sqrt(n)
    x_np, v_np = rng.standard_normal(n), rng.standard_normal(n)
    A, x, v = jnp.asarray(A_np), jnp.asarray(x_np), jnp.asarray(v_np)

    def hvp(A, x, v):
        return funcgrad.jvp(lambda xx: funcgrad.grad(lambda a, z: hvp_f(jnp, a, z), argnums=1)(A, xx),
                            (x,), (v,))[1]
    hvp_jit = funcgrad.jit(hvp)
    want = numpy_hvp(A_np, x_np, v_np)
    check("W4 jvp(grad) (eager)", hvp(A, x, v), want, 1e-10)
    check("W4 jit(jvp(grad))", hvp_jit(A, x, v), want, 1e-10)

    c = Case("W4 Hessian-vector product, A 1000x1000 f64")
    c.numpy(lambda: numpy_hvp(A_np, x_np, v_np), "NumPy (by hand)")
    c.time("funcgrad jvp(grad) eager", lambda: hvp(A, x, v))
    c.time("funcgrad jit(jvp(grad))", lambda: hvp_jit(A, x, v), settle(hvp_jit, lambda: hvp_jit(A, x, v)))
    if jax is not None:
        def make_jax():
            def f(a, xx, vv):
                return jax.jvp(lambda z: jax.grad(lambda q, w: hvp_f(jaxnp, q, w), argnums=1)(a, z), (xx,), (vv,))[1]
            return lambda f=jax_ready(jax.jit(f)), a=jax_tree(A_np), b=jax_tree(x_np), c=jax_tree(v_np): f(a, b, c)
        c.optional("jax jit(jvp(grad))", make_jax, want, 1e-10)


def cnn_data():
    rng = np.random.default_rng(3)

    def init(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(F32)
    np_params = (init((16, 1, 3, 3), 9), (0.1 * rng.standard_normal(16)).astype(F32),
                 init((32, 16, 3, 3), 144), (0.1 * rng.standard_normal(32)).astype(F32),
                 init((32 * 7 * 7, 10), 32 * 7 * 7), (0.1 * rng.standard_normal(10)).astype(F32))
    return np_params, rng.standard_normal((32, 1, 28, 28)).astype(F32), one_hot(rng, 32, 10)


def bench_w5() -> None:
    np_params, x_np, y_np = cnn_data()
    params, x, y = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(y_np)
    vg = funcgrad.value_and_grad(lambda p, xx, yy: cnn_loss(FG, p, xx, yy))
    vg_jit = funcgrad.jit(vg)
    want = numpy_cnn_value_and_grad(np_params, x_np, y_np)
    check("W5 value_and_grad (eager)", vg(params, x, y), want, 1e-4)
    check("W5 jit(value_and_grad)", vg_jit(params, x, y), want, 1e-4)

    c = Case("W5 CNN fwd+bwd, batch 32x1x28x28")
    c.numpy(lambda: numpy_cnn_value_and_grad(np_params, x_np, y_np), "NumPy (im2col, by hand)")
    c.time("funcgrad eager", lambda: vg(params, x, y))
    c.time("funcgrad.jit", lambda: vg_jit(params, x, y), settle(vg_jit, lambda: vg_jit(params, x, y)))
    vg_par, out = compiled_with_parallel_ops(vg, params, x, y)
    check("W5 jit(value_and_grad), parallel ops", out, want, 1e-4)
    settle(vg_par, lambda: vg_par(params, x, y))  # (no compile thread under the row)
    c.time("funcgrad.jit, jit_parallel_ops", lambda: vg_par(params, x, y), "opt-in: a second thread (not BLAS's)")
    if torch is not None:
        def make_torch():
            import torch.nn.functional as F
            tp = torch_tree(np_params, requires_grad=True)
            tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)

            def step():
                k1, b1, k2, b2, w, b = tp
                h = F.max_pool2d(torch.relu(F.conv2d(tx, k1, b1, padding=1)), 2)
                h = F.max_pool2d(torch.relu(F.conv2d(h, k2, b2, padding=1)), 2)
                logits = h.reshape(h.shape[0], -1) @ w + b
                loss = -(ty * torch.log_softmax(logits, dim=1)).sum() / tx.shape[0]
                return loss.detach(), torch.autograd.grad(loss, tp)
            return step
        c.optional("torch eager", make_torch, want, 1e-4)
    if jax is not None:
        def make_jax():
            ns = jax_ns()
            f = jax.jit(jax.value_and_grad(lambda p, xx, yy: cnn_loss(ns, p, xx, yy)))
            return lambda f=jax_ready(f), a=jax_tree(np_params), b=jax_tree(x_np), c=jax_tree(y_np): f(a, b, c)
        c.optional("jax.jit", make_jax, want, 1e-4)


def bench_w6() -> None:
    np_params, x_np, y_np = mlp_data()
    params, x, y = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(y_np)
    want = numpy_mlp_value_and_grad(np_params, x_np, y_np)[1]

    def loss(p, xx, yy):
        return mlp_loss(FG, p, xx, yy)

    def first_calls(make, k):
        times = []
        for _ in range(k):
            f = make()  # a fresh jit: its first call traces, optimises, generates code and runs
            gc.collect()
            t0 = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - t0)
        return times, out

    k = 2 if QUICK else 5
    times, out = first_calls(lambda: (lambda g=funcgrad.jit(funcgrad.grad(loss)): g(params, x, y)), k)
    check("W6 jit(grad) first call", out, want, 1e-4)
    g_jit = funcgrad.jit(funcgrad.grad(loss))
    check("W6 jit(grad)", g_jit(params, x, y), want, 1e-4)

    c = Case("W6 jit(grad(W2 loss)) first / later calls")
    c.numpy(lambda: numpy_mlp_value_and_grad(np_params, x_np, y_np), "NumPy value+grad (by hand)")
    c.given("funcgrad.jit first call", statistics.median(times),
            f"median of {k} fresh jits (the process's first: {fmt_time(times[0])}); trace+optimise+codegen+run")
    c.time("funcgrad.jit later calls", lambda: g_jit(params, x, y), settle(g_jit, lambda: g_jit(params, x, y)))
    if jax is not None:
        try:
            ns = jax_ns()
            jp, jx, jy = jax_tree(np_params), jax_tree(x_np), jax_tree(y_np)

            def make_jax():
                f = jax.jit(jax.grad(lambda p, xx, yy: mlp_loss(ns, p, xx, yy)))
                return lambda: jax.block_until_ready(f(jp, jx, jy))
            with one_cpu():
                jtimes, jout = first_calls(make_jax, k)
            check("W6 jax first call", jout, want, 1e-4, check_dtype=False)
            c.given("jax.jit first call", statistics.median(jtimes),
                    f"median of {k} fresh jits (the process's first: {fmt_time(jtimes[0])})")
        except Exception as e:  # noqa: BLE001
            add_row(c.label, "jax.jit first call", None, None, f"{type(e).__name__}: {str(e)[:70]}")


def rnn_data(rng, hidden, inputs, steps, dtype, w_scale):
    params = ((rng.standard_normal((hidden, hidden)) * w_scale / np.sqrt(hidden)).astype(dtype),
              (rng.standard_normal((inputs, hidden)) / np.sqrt(inputs)).astype(dtype),
              (0.1 * rng.standard_normal(hidden)).astype(dtype))
    return params, np.zeros(hidden, dtype), rng.standard_normal((steps, inputs)).astype(dtype)


def bench_w7() -> None:
    np_params, h0_np, xs_np = rnn_data(np.random.default_rng(4), 8, 4, 50, F64, 0.9)
    params, h0, xs = fg_tree(np_params), jnp.asarray(h0_np), jnp.asarray(xs_np)
    g = funcgrad.grad(lambda p, h, s: rnn_loop_loss(jnp, p, h, s))
    g_jit = funcgrad.jit(g)
    want = numpy_rnn_value_and_grad(np_params, h0_np, xs_np)[1]
    check("W7 grad (eager)", g(params, h0, xs), want, 1e-10)
    check("W7 jit(grad)", g_jit(params, h0, xs), want, 1e-10)

    c = Case("W7 RNN grad, hidden 8, 50-step Python loop, f64")
    c.numpy(lambda: numpy_rnn_value_and_grad(np_params, h0_np, xs_np), "NumPy BPTT (by hand)")
    c.time("funcgrad grad eager", lambda: g(params, h0, xs))
    c.time("funcgrad jit(grad)", lambda: g_jit(params, h0, xs), settle(g_jit, lambda: g_jit(params, h0, xs)))
    if torch is not None:
        def make_torch():
            tp = torch_tree(np_params, requires_grad=True)
            th0, txs = torch.from_numpy(h0_np), torch.from_numpy(xs_np)
            return lambda: torch.autograd.grad(rnn_loop_loss(torch, tp, th0, txs), tp)
        c.optional("torch eager", make_torch, want, 1e-10)
    if jax is not None:
        def make_jax():
            f = jax.jit(jax.grad(lambda p, h, s: rnn_loop_loss(jaxnp, p, h, s)))
            return lambda f=jax_ready(f), a=jax_tree(np_params), b=jax_tree(h0_np), c=jax_tree(xs_np): f(a, b, c)
        c.optional("jax jit(grad)", make_jax, want, 1e-10)


def bench_s1() -> None:
    # conv2d forward + backward
    rng = np.random.default_rng(5)
    np_params = ((rng.standard_normal((16, 1, 3, 3)) / 3).astype(F32),
                 (rng.standard_normal((32, 16, 3, 3)) / 12).astype(F32))
    x_np = rng.standard_normal((32, 1, 28, 28)).astype(F32)
    r_np = rng.standard_normal((32, 32, 28, 28)).astype(F32)
    params, x, r = fg_tree(np_params), jnp.asarray(x_np), jnp.asarray(r_np)
    vg_jit = funcgrad.jit(funcgrad.value_and_grad(lambda p, xx, rr: conv2_loss(FG, p, xx, rr)))
    want = numpy_conv2_value_and_grad(np_params, x_np, r_np)
    check("S1 conv jit(value_and_grad)", vg_jit(params, x, r), want, 1e-4)
    c = Case("S1 conv2d 1->16->32 fwd+bwd, 32x28x28")
    c.numpy(lambda: numpy_conv2_value_and_grad(np_params, x_np, r_np), "NumPy (im2col, by hand)")
    c.time("funcgrad.jit", lambda: vg_jit(params, x, r), settle(vg_jit, lambda: vg_jit(params, x, r)))
    if jax is not None:
        def make_jax():
            ns = jax_ns()
            f = jax.jit(jax.value_and_grad(lambda p, xx, rr: conv2_loss(ns, p, xx, rr)))
            return lambda f=jax_ready(f), a=jax_tree(np_params), b=jax_tree(x_np), c=jax_tree(r_np): f(a, b, c)
        c.optional("jax.jit", make_jax, want, 1e-4)

    # einsum
    for spec, shapes in (("ij,jk,kl->il", [(64, 512), (512, 512), (512, 64)]),
                         ("bij,bjk->bik", [(32, 128, 128), (32, 128, 128)])):
        ops_np = [rng.standard_normal(s).astype(F32) for s in shapes]
        ops = [jnp.asarray(o) for o in ops_np]
        want = np.einsum(spec, *ops_np, optimize=True)
        ein_jit = funcgrad.jit(lambda *a, spec=spec: jnp.einsum(spec, *a))
        check(f"S1 einsum {spec}", jnp.einsum(spec, *ops), want, 1e-5)
        check(f"S1 einsum {spec} (jit)", ein_jit(*ops), want, 1e-5)
        c = Case(f"S1 einsum {spec} " + ",".join("x".join(map(str, s)) for s in shapes))
        c.numpy(lambda spec=spec, o=ops_np: np.einsum(spec, *o, optimize=True), "numpy.einsum(optimize=True)")
        c.time("funcgrad eager", lambda spec=spec, o=ops: jnp.einsum(spec, *o))
        c.time("funcgrad.jit", lambda f=ein_jit, o=ops: f(*o), settle(ein_jit, lambda f=ein_jit, o=ops: f(*o)))
        if jax is not None:
            def make_jax(spec=spec, o=ops_np):
                f, jo = jax.jit(lambda *a: jaxnp.einsum(spec, *a)), [jaxnp.asarray(v) for v in o]
                return lambda: f(*jo).block_until_ready()
            c.optional("jax.jit", make_jax, want, 1e-5)


def bench_s2() -> None:
    np_params, h0_np, xs_np = rnn_data(np.random.default_rng(6), 64, 16, 1000, F32, 0.9)
    params, h0, xs = fg_tree(np_params), jnp.asarray(h0_np), jnp.asarray(xs_np)
    vg_jit = funcgrad.jit(funcgrad.value_and_grad(lambda p, h, s: scan_rnn_loss(FG, p, h, s)))
    want = numpy_scan_rnn_value_and_grad(np_params, h0_np, xs_np)
    check("S2 jit(value_and_grad(scan))", vg_jit(params, h0, xs), want, 1e-4)
    c = Case("S2 lax.scan RNN 1000 steps, hidden 64, value+grad")
    c.numpy(lambda: numpy_scan_rnn_value_and_grad(np_params, h0_np, xs_np), "NumPy loop + BPTT (by hand)")
    c.time("funcgrad.jit", lambda: vg_jit(params, h0, xs), settle(vg_jit, lambda: vg_jit(params, h0, xs)))
    if jax is not None:
        def make_jax():
            ns = jax_ns()
            f = jax.jit(jax.value_and_grad(lambda p, h, s: scan_rnn_loss(ns, p, h, s)))
            return lambda f=jax_ready(f), a=jax_tree(np_params), b=jax_tree(h0_np), c=jax_tree(xs_np): f(a, b, c)
        c.optional("jax.jit", make_jax, want, 1e-4)


def check_normal_sample(what: str, z, n: int) -> None:
    """z looks like n independent float32 N(0, 1) draws: mean, variance, P(z < 1) and P(|z| > 3)
    each within 6 standard errors of their exact values."""
    z = to_numpy(z)
    if z.dtype != F32 or z.shape != (n,):
        raise AssertionError(f"{what}: got {z.dtype}{z.shape}, expected float32 ({n},)")
    n, z64 = z.size, z.astype(F64)
    stats = {"mean": (z64.mean(), 0.0, 1.0), "var": (z64.var(), 1.0, np.sqrt(2.0)),
             "P(z<1)": ((z64 < 1).mean(), 0.841344746, np.sqrt(0.8413 * 0.1587)),
             "P(|z|>3)": ((np.abs(z64) > 3).mean(), 0.002699796, np.sqrt(0.0027 * 0.9973))}
    for name, (got, exact, sd) in stats.items():
        if abs(got - exact) > 6 * sd / np.sqrt(n):
            raise AssertionError(f"{what}: {name} = {got:.6f}, expected {exact:.6f} +- {6 * sd / np.sqrt(n):.1e}")


def bench_s3() -> None:
    n = 10**6 if QUICK else 10**7  # --quick: a tenth
    gen = np.random.default_rng(7)
    key = jrandom.PRNGKey(0)
    normal_jit = funcgrad.jit(lambda k: jrandom.normal(k, (n,), jnp.float32))
    check_normal_sample("numpy standard_normal", gen.standard_normal(n, dtype=F32), n)
    check_normal_sample("funcgrad jit(random.normal)", normal_jit(key), n)  # also the warm-up
    small = funcgrad.jit(lambda k: jrandom.normal(k, (1000,), jnp.float32))
    check("S3 jit(normal) == eager normal", small(key), np.asarray(jrandom.normal(key, (1000,), jnp.float32)), 0)
    c = Case(f"S3 10^{len(str(n)) - 1} normal f32")
    c.numpy(lambda: gen.standard_normal(n, dtype=F32), "Generator.standard_normal")
    c.time("funcgrad jit(random.normal)", lambda: normal_jit(key), "Threefry-2x32 + erf_inv", warm=True)
    check_normal_sample("funcgrad random.normal (eager)", jrandom.normal(key, (n,), jnp.float32), n)
    c.time("funcgrad random.normal (eager)", lambda: jrandom.normal(key, (n,), jnp.float32),
           "concrete key: computed in cache-sized blocks", warm=True)
    if jax is not None:
        def make_jax():
            f, k = jax.jit(lambda kk: jax.random.normal(kk, (n,), jaxnp.float32)), jax.random.PRNGKey(0)
            fn = lambda: f(k).block_until_ready()  # noqa: E731
            check_normal_sample("jax.random.normal", fn(), n)
            return fn
        c.optional("jax jit(random.normal)", make_jax)


WORKLOADS = {
    "E0": ("eager per-op overhead, 16 x f32", bench_e0),
    "W1": ("100-op elementwise chain, eager and jit", bench_w1),
    "W2": ("MLP 784-512-512-10 SGD step: jit(value_and_grad) + update", bench_w2),
    "W2D": ("W2's step at every library's default threads (a child process): funcgrad.jit vs jax.jit", bench_w2d),
    "W3": ("per-example gradients, MLP 784-128-10: jit(vmap(grad))", bench_w3),
    "W4": ("Hessian-vector product, A 1000x1000 f64: jit(jvp(grad))", bench_w4),
    "W5": ("small CNN forward+backward: jit(value_and_grad)", bench_w5),
    "W6": ("jit(grad(W2 loss)): first call and later calls", bench_w6),
    "W7": ("tiny RNN grad, 50-step Python loop: eager and jit", bench_w7),
    "S1": ("conv2d fwd+bwd vs im2col; einsum vs numpy.einsum", bench_s1),
    "S2": ("lax.scan RNN, 1000 steps, value+grad under jit", bench_s2),
    "S3": ("10^7 normals: jit(random.normal) vs Generator", bench_s3),
}
# The T workloads (the PyTorch-style face against torch eager) live in torch_face.py.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_face  # noqa: E402

WORKLOADS.update({k: (title, (lambda fn=fn: fn(sys.modules[__name__]))) for k, (title, fn)
                  in torch_face.WORKLOADS.items()})


# --- main -----------------------------------------------------------------------------------------------

def load_optional(use_torch: bool, use_jax: bool) -> None:
    global torch, jax, jaxnp, jaxlax
    if use_torch:
        try:
            import torch as _torch
            threads = os.environ.get("OMP_NUM_THREADS")
            # torch reads OMP_NUM_THREADS itself; calling set_num_threads anyway (even with the same
            # count) stops two NumPy BLAS calls in two Python threads from overlapping afterwards, which
            # would distort the jit_parallel_ops rows
            if threads and threads.isdigit() and _torch.get_num_threads() != int(threads):
                _torch.set_num_threads(int(threads))
            torch = _torch
        except Exception:  # noqa: BLE001
            torch = None
    if use_jax:
        try:
            import jax as _jax
            _jax.config.update("jax_platforms", "cpu")
            _jax.config.update("jax_enable_x64", True)  # for W4 / W7 (float64); inputs carry their dtypes
            import jax.lax as _jaxlax
            import jax.numpy as _jaxnp
            jax, jaxnp, jaxlax = _jax, _jaxnp, _jaxlax
        except Exception:  # noqa: BLE001
            jax = jaxnp = jaxlax = None


def openblas_core() -> str:
    """The kernel set NumPy's OpenBLAS chose for this CPU (e.g. Haswell, SkylakeX), or "" if unknown.
    OpenBLAS picks it from the CPU model; where a hypervisor hides the model it falls back to older
    kernels (OPENBLAS_CORETYPE overrides it), which decides how fast every matrix product here runs."""
    import ctypes
    import glob
    libdir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                     "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return ""


def blas_architecture() -> str:
    """The kernel set of NumPy's BLAS as threadpoolctl reports it ('architecture'), or ""."""
    try:
        import threadpoolctl
        for info in threadpoolctl.threadpool_info():
            if info.get("user_api") == "blas" and "numpy" in info.get("filepath", "") and info.get("architecture"):
                return info["architecture"]
    except Exception:  # noqa: BLE001
        pass
    return ""


def funcgrad_threads() -> str:
    """funcgrad's BLAS thread policy: the ceiling and whether it can switch (threadpoolctl)."""
    try:
        from funcgrad._src.core import threads as fg_threads
    except ImportError:  # a funcgrad from before the policy
        return "funcgrad BLAS threads: the BLAS's own setting (no per-product policy)"
    n = funcgrad.get_num_threads()
    if getattr(fg_threads, "blas_info", None) and fg_threads.blas_info():
        return f"funcgrad BLAS threads per product by size, ceiling {n} (threadpoolctl)"
    return f"funcgrad BLAS threads: the BLAS's own setting (no threadpoolctl), ceiling {n}"


def header(load, selected, total) -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        rev = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--", "../funcgrad"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        rev = f"git {rev}" + (" + uncommitted changes in funcgrad/" if dirty else "") if rev else ""
    except Exception:  # noqa: BLE001
        rev = ""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except Exception:  # noqa: BLE001
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001
        blas = "?"
    core = openblas_core() or blas_architecture()
    if core:
        blas += f", {core} kernels" + (f" (OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']})"
                                       if os.environ.get("OPENBLAS_CORETYPE") else "")
    ncpu = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else ncpu
    extras = [f"torch {torch.__version__}" if torch is not None else "torch not importable",
              f"jax {jax.__version__}" if jax is not None else "jax not importable"]
    fg_dir = os.path.dirname(os.path.dirname(os.path.abspath(funcgrad.__file__)))
    if fg_dir != os.path.dirname(here):  # not this checkout's funcgrad: the git state does not apply
        rev = f"imported from {fg_dir}"
    lines = [f"funcgrad {funcgrad.__version__}" + (f" ({rev})" if rev else "")
             + f", NumPy {np.__version__} ({blas}), Python {platform.python_version()}, " + ", ".join(extras),
             f"{cpu}, {platform.machine()}, {ncpu} CPUs ({usable} usable), {platform.system()} {platform.release()}"]
    if load is not None:
        lines.append(f"1-minute load average at start: {load:.2f} on {ncpu} CPUs")
    threads = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
               if k in os.environ]
    if torch is not None:
        threads.append(f"torch threads={torch.get_num_threads()}")
    if jax is not None and os.environ.get("XLA_FLAGS"):
        threads.append(f"XLA_FLAGS='{os.environ['XLA_FLAGS']}'")
    threads.append(funcgrad_threads())
    lines.append("threads: " + ", ".join(threads))
    lines.append("peak memory: " + ("the RSS high-water mark of one call above the RSS before it (malloc_trim'd)"
                                    if os.path.exists("/proc/self/clear_refs") else
                                    "tracemalloc's peak of one call (NumPy buffers and Python objects only)"))
    lines.append(f"workloads: {','.join(selected)}" + ("  (--quick: few repeats, noisy)" if QUICK else "")
                 + f"; total time {total:.0f} s")
    return lines


def main(argv=None) -> int:
    global QUICK
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(f"  {k}  {v[0]}" for k, v in WORKLOADS.items()))
    ap.add_argument("--quick", action="store_true", help="few repeats: a smoke run with noisy numbers")
    ap.add_argument("--only", metavar="IDS", help="comma-separated workload ids, e.g. W2,W5 (see --list)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--no-torch", action="store_true", help="leave out torch even if importable")
    ap.add_argument("--no-jax", action="store_true", help="leave out jax even if importable")
    ap.add_argument("--out", metavar="DIR", help="also write the table (markdown) and, with matplotlib, a bar "
                                                 "plot of the ratios (PNG) to DIR, e.g. benchmarks/results")
    ap.add_argument("--w2d-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.w2d_child:
        QUICK = args.quick
        w2d_child(not args.no_jax)
        return 0
    if args.list:
        for k, (title, _) in WORKLOADS.items():
            print(f"{k}  {title}")
        return 0
    QUICK = args.quick
    selected = list(WORKLOADS)
    if args.only:
        selected = [s.strip().upper() for s in args.only.split(",") if s.strip()]
        unknown = [s for s in selected if s not in WORKLOADS]
        if unknown:
            ap.error(f"unknown workload id(s) {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    load_optional(not args.no_torch, not args.no_jax)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    print("running (progress on stderr, the table on stdout at the end) ...", file=sys.stderr)
    for wid in selected:
        title, fn = WORKLOADS[wid]
        print(f"{wid}: {title}", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            fn()
        except Exception as e:  # noqa: BLE001  (a funcgrad failure: report it, go on, exit 1 at the end)
            traceback.print_exc()
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            FAILURES.append(f"{wid}: {msg}")
            add_row(f"{wid} {title}", "funcgrad", None, None, "FAILED: " + msg[:150].replace("|", "/"))
        print(f"  ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    total = time.perf_counter() - start

    text = "\n".join(header(load, selected, total)) + "\n\n" + table()
    print(text)
    if args.out:
        write_results(args.out, text, selected)
    return 1 if FAILURES else 0


def table() -> str:
    lines = ["| workload | implementation | median | x base | peak memory | notes |", "|---|---|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in ROWS]
    if FAILURES:
        lines += ["", f"{len(FAILURES)} workload(s) FAILED: " + "; ".join(FAILURES)]
    return "\n".join(lines)


def write_results(out: str, text: str, selected) -> None:
    """DIR/suite-<time>.md (header and table) and, when matplotlib is importable, DIR/suite-<time>.png: one
    horizontal bar per row that has a ratio, on a log scale with the base (1x) marked."""
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, time.strftime("suite-%Y%m%d-%H%M%S"))
    with open(stem + ".md", "w") as f:
        f.write(text + "\n")
    written = [stem + ".md"]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401
    except ImportError:
        print(f"wrote {stem}.md (matplotlib not importable: no plot)", file=sys.stderr)
        return
    bars = [(f"{case.split(',')[0][:38]} | {impl[:30]}", r, impl) for case, impl, r in RATIOS
            if r is not None and not (0.999 < r < 1.001 and impl.startswith(("NumPy", "numpy", "Generator", "torch eager")))]
    if bars:
        fig, ax = plt.subplots(figsize=(10, 0.22 * len(bars) + 1.2))
        colors = ["tab:blue" if impl.startswith("funcgrad") else "tab:orange" if impl.startswith("torch")
                  else "tab:green" if impl.startswith("jax") else "tab:gray" for _, _, impl in bars]
        ax.barh(range(len(bars)), [r for _, r, _ in bars], color=colors)
        ax.set_yticks(range(len(bars)), [label for label, _, _ in bars], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x")
        ax.xaxis.set_major_formatter(fmt)
        ax.xaxis.set_minor_formatter(fmt)
        ax.tick_params(axis="x", which="both", labelsize=7)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xlabel("time / base (NumPy for E/W/S rows, torch eager for T rows); below 1 is faster")
        ax.set_title(f"funcgrad benchmark suite: {','.join(selected)}", fontsize=9)
        fig.tight_layout()
        fig.savefig(stem + ".png", dpi=110)
        plt.close(fig)
        written.append(stem + ".png")
    print("wrote " + ", ".join(written), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
