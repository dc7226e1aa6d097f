"""funcgrad.distributed benchmarks: Allreduce bandwidth and DistributedDataParallel step time.

    python benchmarks/bench_distributed.py            # starts the jobs itself (funcgrad-run), prints the tables
    python benchmarks/bench_distributed.py --quick    # fewer repeats

Table 1 (2 ranks): all_reduce of a float32 tensor through funcgrad.distributed against mpi4py's Allreduce
on the same NumPy buffer, per message size; medians over repeats of a barrier-separated loop, measured in the
same job, alternating. Table 2: one DDP training step (MLP 784-512-512-10, batch 128 per rank, SGD) on 1,
2 and 4 ranks: the median step time on rank 0. Ranks share this machine's cores, so more ranks than cores
measures oversubscription, not scaling.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time

SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22]  # bytes


def _allreduce_job(repeats: int) -> None:
    import numpy as np
    from mpi4py import MPI

    import funcgrad as torch
    import funcgrad.distributed as dist
    dist.init_process_group("gloo")
    comm = MPI.COMM_WORLD
    rows = []
    for nbytes in SIZES:
        n = nbytes // 4
        t = torch.ones(n)
        a = np.ones(n, np.float32)
        inner = max(1, min(200, (1 << 22) // nbytes))
        fg_times, mpi_times = [], []
        for _ in range(repeats):
            comm.Barrier()
            s = time.perf_counter()
            for _ in range(inner):
                dist.all_reduce(t)
            fg_times.append((time.perf_counter() - s) / inner)
            comm.Barrier()
            s = time.perf_counter()
            for _ in range(inner):
                comm.Allreduce(MPI.IN_PLACE, a)
            mpi_times.append((time.perf_counter() - s) / inner)
        rows.append((nbytes, statistics.median(fg_times), statistics.median(mpi_times)))
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(rows), flush=True)
    dist.destroy_process_group()


def _ddp_job(repeats: int) -> None:
    import numpy as np

    import funcgrad as torch
    import funcgrad.distributed as dist
    import funcgrad.nn as nn
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = np.random.default_rng(dist.get_rank())
    x = torch.tensor(g.standard_normal((128, 784)).astype(np.float32))
    y = torch.tensor(g.integers(0, 10, 128))
    times = []
    for i in range(repeats + 3):
        dist.barrier()
        s = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()
        if i >= 3:
            times.append(time.perf_counter() - s)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(statistics.median(times)), flush=True)
    dist.destroy_process_group()


def _launch(nproc: int, job: str, repeats: int):
    env = dict(os.environ)
    for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(v, None)
    out = subprocess.run([sys.executable, "-m", "funcgrad.distributed.run", "--nproc-per-node", str(nproc),
                          "--master-port", str(29600 + nproc), os.path.abspath(__file__), job, str(repeats)],
                         capture_output=True, text=True, env=env, timeout=1200)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"the {job} job on {nproc} ranks failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] in ("allreduce", "ddp"):
        {"allreduce": _allreduce_job, "ddp": _ddp_job}[sys.argv[1]](int(sys.argv[2]))
        return
    quick = "--quick" in sys.argv
    import mpi4py
    import numpy as np
    try:
        from threadpoolctl import threadpool_info
        blas = ", ".join(sorted({f"{i.get('internal_api')} {i.get('architecture', '')}".strip()
                                 for i in threadpool_info() if i.get("user_api") == "blas"})) or "unknown"
    except ImportError:
        blas = "unknown (threadpoolctl not installed)"
    print(f"# funcgrad.distributed benchmarks\n{platform.platform()}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}; Python {platform.python_version()}, NumPy {np.__version__}, mpi4py "
          f"{mpi4py.__version__}; BLAS: {blas}; one BLAS thread per rank\n")
    rows = _launch(2, "allreduce", 5 if quick else 15)
    print("| message | funcgrad all_reduce | mpi4py Allreduce | overhead |\n|---|---|---|---|")
    for nbytes, fg, mp in rows:
        label = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
        print(f"| {label} | {fg * 1e6:.1f} us | {mp * 1e6:.1f} us | {100 * (fg / mp - 1):+.0f}% |")
    print("\n| ranks | DDP step (MLP 784-512-512-10, batch 128/rank) |\n|---|---|")
    for n in (1, 2, 4):
        print(f"| {n} | {_launch(n, 'ddp', 10 if quick else 30) * 1e3:.2f} ms |", flush=True)


if __name__ == "__main__":
    main()
