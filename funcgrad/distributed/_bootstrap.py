"""Runs one rank's script under the launcher: `python -m funcgrad.distributed._bootstrap [-m] SCRIPT ARGS`.

Under mpiexec it sets torchrun's per-rank variables from the MPI process manager's (RANK, LOCAL_RANK, and
GROUP_RANK/NODE_RANK for jobs spread over a hostfile), then runs the script as `__main__`. An exception, or
a non-zero sys.exit, on any rank prints that rank's traceback and aborts the whole MPI job (the other ranks
would otherwise wait in their next collective forever).
"""
from __future__ import annotations

import os
import runpy
import sys
import time
import traceback

from . import _mpi


def _rank_environment() -> None:
    env = os.environ
    rank = env.get("PMI_RANK") or env.get("OMPI_COMM_WORLD_RANK") or env.get("PMIX_RANK")
    if rank is None:  # started without mpiexec (multi-node launcher): RANK and LOCAL_RANK are set already
        return
    local = env.get("MPI_LOCALRANKID") or env.get("OMPI_COMM_WORLD_LOCAL_RANK") or "0"
    env["RANK"], env["LOCAL_RANK"] = rank, local
    per_node = int(env.get("LOCAL_WORLD_SIZE") or env.get("MPI_LOCALNRANKS") or 1)
    env.setdefault("LOCAL_WORLD_SIZE", str(per_node))
    env["GROUP_RANK"] = env["NODE_RANK"] = str(int(rank) // per_node)


def _abort(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    if _mpi.launched_by_mpi() and _mpi.available():
        MPI = _mpi.MPI()
        if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            # mpiexec forwards this rank's output through its proxy asynchronously and kills the job on Abort:
            # give it a moment, or the traceback's last lines (the exception itself) can be lost
            time.sleep(0.5)
            MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv: list[str]) -> None:
    as_module = argv[:1] == ["-m"]
    if as_module:
        argv = argv[1:]
    if not argv:
        raise SystemExit("usage: python -m funcgrad.distributed._bootstrap [-m] SCRIPT [ARGS...]")
    _rank_environment()
    sys.argv = list(argv)
    try:
        if as_module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
        if code:
            print(f"funcgrad-run: rank {os.environ.get('RANK', '?')} exited with status {code}; ending the job",
                  file=sys.stderr)
            _abort(code)
    except BaseException:
        # (one write: the header and the whole traceback reach mpiexec's proxy together)
        sys.stderr.write(f"funcgrad-run: rank {os.environ.get('RANK', '?')} failed:\n{traceback.format_exc()}")
        _abort(1)


if __name__ == "__main__":
    main(sys.argv[1:])
