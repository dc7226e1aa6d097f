"""Core benchmarks: the E0, W1 and W2 workloads of the suite (benchmarks/bench_suite.py).

    python benchmarks/bench_core.py            # under a minute
    python benchmarks/bench_core.py --quick    # a few seconds, noisy numbers

is the same as `python benchmarks/bench_suite.py --only E0,W1,W2 [--quick]`: eager per-op overhead,
the 100-op elementwise chain (eager and jit) and the MLP 784-512-512-10 SGD step under
jit(value_and_grad). Kept so that the short command keeps working; see benchmarks/README.md.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_suite  # noqa: E402  (pins BLAS threads before NumPy is imported)

if __name__ == "__main__":
    args = sys.argv[1:]
    if not any(a == "--only" or a.startswith("--only=") for a in args):
        args = ["--only", "E0,W1,W2"] + args
    sys.exit(bench_suite.main(args))
