"""`python -m funcgrad.utils.bottleneck script.py [args...]`: torch.utils.bottleneck's report for a script.

The script runs twice, as in torch's tool: once under cProfile (the top functions by total time) and once
under funcgrad.autograd.profiler (the script's time and its record_function regions, by self CPU time),
after an environment line. torch 2.13 no longer ships the tool; its output is followed here. sys.argv is the script's own during each run."""
from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import runpy
import sys

import numpy as np

from ... import __version__ as _fg_version
from ...autograd import profiler as _profiler


def _run(path: str, args: list) -> None:
    old = sys.argv
    sys.argv = [path, *args]
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = old


def main(argv=None) -> int:
    """Runs the report; argv defaults to sys.argv[1:]. Returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m funcgrad.utils.bottleneck",
                                     description="Summarize a script's runtime under cProfile and the autograd "
                                                 "profiler.")
    parser.add_argument("scriptfile", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    parser.add_argument("--sort", default="tottime", help="cProfile sort key (default: tottime)")
    parser.add_argument("--rows", type=int, default=15, help="rows of each summary (default: 15)")
    ns = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.scriptfile)))

    print("-" * 80)
    print("  Environment Summary")
    print("-" * 80)
    print(f"funcgrad {_fg_version} (NumPy {np.__version__}), Python {platform.python_version()}, "
          f"{platform.platform()}; CPU only")

    print("-" * 80)
    print("  cProfile output")
    print("-" * 80)
    prof = cProfile.Profile()
    prof.runcall(_run, ns.scriptfile, ns.args)
    pstats.Stats(prof, stream=sys.stdout).sort_stats(ns.sort).print_stats(ns.rows)

    print("-" * 80)
    print("  autograd profiler output (CPU mode)")
    print("-" * 80)
    with _profiler.profile() as p, _profiler.record_function(os.path.basename(ns.scriptfile)):
        _run(ns.scriptfile, ns.args)
    print("(funcgrad's autograd profiler times the script and the regions it marks with record_function; "
          "operators are listed by the cProfile summary above)")
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=ns.rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
