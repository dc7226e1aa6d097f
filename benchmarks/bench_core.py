"""Core benchmarks for funcgrad against NumPy (and torch / jax when they happen to be importable).

    python benchmarks/bench_core.py            # full run, under a minute
    python benchmarks/bench_core.py --quick    # fewer repeats, for a smoke test
    OPENBLAS_NUM_THREADS=4 python benchmarks/bench_core.py   # BLAS with 4 threads (the default here is 1)

Prints one markdown table of medians. Every time is the median over many repeats of
time.perf_counter() around a loop of calls; "x NumPy" is that median divided by the NumPy median
measured in the same run, on the same data.

(a) eager per-op overhead: funcgrad.numpy ops on a 16-element float32 Array vs the same NumPy call
    on a NumPy array ("+ vs NumPy" is the difference in microseconds: funcgrad's per-op overhead);
(b) a 100-op elementwise chain (multiply/add by constants, tanh, exp; float32; 16 and 1,000,000
    elements): raw NumPy calls vs funcgrad eager vs funcgrad.jit;
(c) jit(value_and_grad(loss)) of an MLP 784-512-512-10 (relu, softmax cross-entropy, batch 128,
    float32) vs a hand-written NumPy forward+backward of the same loss; the gradients are checked to
    agree to 1e-4 relative before anything is timed.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time

if __name__ == "__main__":
    # One BLAS thread unless told otherwise: the benchmark measures funcgrad's overhead over NumPy, and
    # multi-threaded OpenBLAS on a machine with other work running can be 10-50x slower and erratic.
    # This must happen before NumPy is imported.
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402

try:  # optional comparison columns; never required
    import torch  # noqa: E402
except Exception:  # noqa: BLE001
    torch = None
try:
    import jax  # noqa: E402
    import jax.numpy as jaxnp  # noqa: E402
    jax.config.update("jax_platforms", "cpu")
except Exception:  # noqa: BLE001
    jax = jaxnp = None

QUICK = False


# --- timing -----------------------------------------------------------------------------------------

def measure(fn, *, budget_s: float = 1.5, min_repeats: int = 7, max_repeats: int = 200,
            min_batch_s: float = 2e-3) -> float:
    """Median seconds per call of fn(): calls are timed in batches of n (n chosen so one batch takes
    at least min_batch_s), and the median over the batches is taken."""
    if QUICK:
        budget_s, min_repeats, max_repeats = budget_s / 6, 3, 20
    fn()  # warm up (and, for jit, compile)
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_batch_s:
            break
        n *= 2 if dt == 0 else max(2, min(100, int(min_batch_s / dt) + 1))
    repeats = int(min(max_repeats, max(min_repeats, budget_s / dt)))
    samples = []
    gc_was_enabled = gc.isenabled()
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
    return statistics.median(samples)


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


ROWS: list[tuple] = []


def row(case: str, impl: str, t: float, base: float | None, show_delta: bool = False) -> None:
    ratio = "1.00x" if base is None else f"{t / base:.2f}x"
    delta = ""
    if show_delta and base is not None:
        delta = f"{(t - base) * 1e6:+.2f} µs"
    ROWS.append((case, impl, fmt_time(t), ratio, delta))
    print(f"  {case:<34} {impl:<22} {fmt_time(t):>12} {ratio:>8} {delta}", file=sys.stderr, flush=True)


def optional(case: str, impl: str, make, base: float, show_delta: bool = False) -> None:
    """Time an optional (torch / jax) implementation; a failure becomes a note, not a crash."""
    try:
        fn = make()
        row(case, impl, measure(fn), base, show_delta)
    except Exception as e:  # noqa: BLE001
        ROWS.append((case, impl, "n/a", "", f"{type(e).__name__}: {str(e)[:60]}"))


# --- (a) eager per-op overhead ----------------------------------------------------------------------

def bench_eager_ops() -> None:
    a = np.linspace(-1, 1, 16, dtype=np.float32)
    x = jnp.asarray(a)
    ops = {
        "add": (lambda: np.add(a, a), lambda: jnp.add(x, x)),
        "multiply": (lambda: np.multiply(a, a), lambda: jnp.multiply(x, x)),
        "exp": (lambda: np.exp(a), lambda: jnp.exp(x)),
        "tanh": (lambda: np.tanh(a), lambda: jnp.tanh(x)),
        "sum": (lambda: np.sum(a), lambda: jnp.sum(x)),
    }
    for name, (np_fn, fg_fn) in ops.items():
        np.testing.assert_allclose(np.asarray(fg_fn()), np_fn(), rtol=1e-6)
        case = f"(a) {name}, 16 x f32"
        base = measure(np_fn)
        row(case, "NumPy", base, None)
        row(case, "funcgrad eager", measure(fg_fn), base, show_delta=True)
        if torch is not None:
            def make_torch(name=name):
                t = torch.from_numpy(a.copy())
                f = getattr(torch, name)
                return (lambda: f(t, t)) if name in ("add", "multiply") else (lambda: f(t))
            optional(case, "torch eager", make_torch, base, show_delta=True)
        if jax is not None:
            def make_jax(name=name):
                j = jaxnp.asarray(a)
                f = getattr(jaxnp, name)
                g = (lambda: f(j, j)) if name in ("add", "multiply") else (lambda: f(j))
                return lambda: g().block_until_ready()
            optional(case, "jax eager", make_jax, base, show_delta=True)


# --- (b) a 100-op elementwise chain -----------------------------------------------------------------

def chain(x, xp):
    """25 x (multiply, add, tanh, exp) = 100 elementwise ops; values stay in [0.37, 2.72]."""
    for i in range(25):
        x = x * 0.5
        x = x + (0.25 - 0.01 * i)
        x = xp.tanh(x)
        x = xp.exp(x)
    return x


def bench_chain() -> None:
    fg_chain = funcgrad.jit(lambda x: chain(x, jnp))
    for n in (16, 1_000_000):
        a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        x = jnp.asarray(a)
        ref = chain(a, np)
        assert ref.dtype == np.float32
        for out in (chain(x, jnp), fg_chain(x)):
            assert out.dtype == np.float32, out.dtype
            np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5)
        case = f"(b) 100-op chain, {n:,} x f32"
        base = measure(lambda: chain(a, np))
        row(case, "NumPy", base, None)
        row(case, "funcgrad eager", measure(lambda: chain(x, jnp)), base)
        row(case, "funcgrad.jit", measure(lambda: fg_chain(x)), base)
        if torch is not None:
            def make_torch():
                t = torch.from_numpy(a.copy())
                return lambda: chain(t, torch)
            optional(case, "torch eager", make_torch, base)
        if jax is not None:
            def make_jax():
                f = jax.jit(lambda v: chain(v, jaxnp))
                j = jaxnp.asarray(a)
                return lambda: f(j).block_until_ready()
            optional(case, "jax.jit", make_jax, base)


# --- (c) MLP value_and_grad -------------------------------------------------------------------------

def mlp_loss(params, x, y):
    """Mean softmax cross-entropy of a relu MLP; params = [(w, b), ...], y one-hot."""
    h = x
    for w, b in params[:-1]:
        h = jnp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    s = logits - funcgrad.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    logp = s - jnp.log(jnp.sum(jnp.exp(s), axis=-1, keepdims=True))
    return -jnp.sum(y * logp) / x.shape[0]


def numpy_mlp_value_and_grad(params, x, y):
    """The same loss and its gradient, forward and backward written by hand in NumPy."""
    acts, pre = [x], []
    h = x
    for w, b in params[:-1]:
        z = h @ w + b
        pre.append(z)
        h = np.maximum(z, 0)
        acts.append(h)
    w, b = params[-1]
    logits = h @ w + b
    s = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(s)
    se = e.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.sum(y * (s - np.log(se))) / n
    g = (e / se * y.sum(axis=1, keepdims=True) - y) / n  # d loss / d logits
    grads = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        w = params[i][0]
        grads[i] = (acts[i].T @ g, g.sum(axis=0))
        if i:
            g = (g @ w.T) * (pre[i - 1] > 0)
    return loss, grads


def bench_mlp() -> None:
    rng = np.random.default_rng(0)
    sizes, batch = [784, 512, 512, 10], 128
    np_params = [(rng.standard_normal((i, o)).astype(np.float32) * np.float32(np.sqrt(2.0 / i)),
                  rng.standard_normal(o).astype(np.float32) * np.float32(0.1))
                 for i, o in zip(sizes[:-1], sizes[1:])]
    x_np = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y_np = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in np_params]
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)

    vg = funcgrad.value_and_grad(mlp_loss)
    vg_jit = funcgrad.jit(vg)
    ref_loss, ref_grads = numpy_mlp_value_and_grad(np_params, x_np, y_np)
    for label, f in (("funcgrad eager", vg), ("funcgrad.jit", vg_jit)):
        loss, grads = f(params, x, y)
        np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-4, err_msg=label)
        for (gw, gb), (rw, rb) in zip(grads, ref_grads):
            for got, want in ((gw, rw), (gb, rb)):
                got = np.asarray(got)
                assert got.dtype == np.float32, (label, got.dtype)
                rel = np.linalg.norm(got - want) / np.linalg.norm(want)
                assert rel <= 1e-4, f"{label}: gradient differs from NumPy's by {rel:.2e} relative"

    case = "(c) MLP 784-512-512-10 value+grad, batch 128"
    base = measure(lambda: numpy_mlp_value_and_grad(np_params, x_np, y_np))
    row(case, "NumPy (by hand)", base, None)
    row(case, "funcgrad eager", measure(lambda: vg(params, x, y)), base)
    row(case, "funcgrad.jit", measure(lambda: vg_jit(params, x, y)), base)
    if torch is not None:
        def make_torch():
            tp = [(torch.from_numpy(w.copy()).requires_grad_(), torch.from_numpy(b.copy()).requires_grad_())
                  for w, b in np_params]
            tx, ty = torch.from_numpy(x_np), torch.from_numpy(y_np)
            flat = [t for wb in tp for t in wb]

            def step():
                h = tx
                for w, b in tp[:-1]:
                    h = torch.relu(h @ w + b)
                logits = h @ tp[-1][0] + tp[-1][1]
                loss = -(ty * torch.log_softmax(logits, dim=1)).sum() / tx.shape[0]
                return loss, torch.autograd.grad(loss, flat)
            return step
        optional(case, "torch eager", make_torch, base)
    if jax is not None:
        def make_jax():
            def loss(p, xx, yy):
                h = xx
                for w, b in p[:-1]:
                    h = jaxnp.maximum(h @ w + b, 0.0)
                logits = h @ p[-1][0] + p[-1][1]
                return -jaxnp.sum(yy * jax.nn.log_softmax(logits, axis=1)) / xx.shape[0]
            f = jax.jit(jax.value_and_grad(loss))
            jp = [(jaxnp.asarray(w), jaxnp.asarray(b)) for w, b in np_params]
            jx, jy = jaxnp.asarray(x_np), jaxnp.asarray(y_np)
            return lambda: jax.block_until_ready(f(jp, jx, jy))
        optional(case, "jax.jit", make_jax, base)


# --- main -------------------------------------------------------------------------------------------

def main(argv=None) -> None:
    global QUICK
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (a smoke test, noisy numbers)")
    QUICK = ap.parse_args(argv).quick

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    print("running (progress on stderr) ...", file=sys.stderr)
    bench_eager_ops()
    bench_chain()
    bench_mlp()
    total = time.perf_counter() - start

    extras = [f"torch {torch.__version__}" if torch is not None else None,
              f"jax {jax.__version__}" if jax is not None else None]
    print(f"funcgrad {funcgrad.__version__}, NumPy {np.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs"
          + "".join(f", {e}" for e in extras if e) + ("  (--quick)" if QUICK else ""))
    if load is not None:
        # Other processes on the machine distort every row (BLAS threads especially): note the load.
        print(f"1-minute load average at start: {load:.2f} on {os.cpu_count()} CPUs")
    threads = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
               if k in os.environ]
    print("BLAS threads: " + (", ".join(threads) if threads else "library default"))
    print()
    print("| benchmark | implementation | median | x NumPy | + vs NumPy |")
    print("|---|---|---:|---:|---:|")
    for r in ROWS:
        print("| " + " | ".join(r) + " |")
    print()
    print(f"total benchmark time {total:.1f} s")


if __name__ == "__main__":
    main()
