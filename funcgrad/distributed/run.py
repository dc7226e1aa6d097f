"""A torchrun-compatible launcher: `funcgrad-run --nproc-per-node N script.py args` (or
`python -m funcgrad.distributed.run ...`).

Each rank gets torchrun's environment: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
NODE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID, and OMP_NUM_THREADS=1 plus one BLAS thread per
rank unless those are set. On one node the ranks run under `mpiexec` (one MPI job: any rank that raises,
exits non-zero or is killed ends the whole job, with its traceback shown). With --nnodes M, run the launcher
on every node with its --node-rank and the same --master-addr/--master-port: each starts its local ranks,
which meet at the master through init_process_group's rendezvous (funcgrad.distributed.rendezvous).
`--hostfile FILE` instead starts every node's ranks from this one through mpiexec (MPICH's hostfile format).
torchrun's spellings with underscores (--nproc_per_node) are accepted; elastic options (--max-restarts,
--rdzv-*) are accepted and ignored, since MPI jobs have a fixed size.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid

from .rendezvous import _mpiexec

__all__ = ["main", "parse_args"]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _flag(parser: argparse.ArgumentParser, name: str, **kwargs) -> None:
    """--a-b and --a_b both (torchrun accepts both)."""
    names = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
    parser.add_argument(*names, **kwargs)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="funcgrad-run", description="Runs a training script on several "
                                "processes (torchrun-compatible), over MPI.")
    _flag(p, "nproc-per-node", default="1", help="ranks on this node (an integer, or 'cpu'/'auto')")
    _flag(p, "nnodes", default="1", help="number of nodes (M or MIN:MAX; MPI jobs use MAX)")
    _flag(p, "node-rank", type=int, default=0, help="this node's index, 0..nnodes-1")
    _flag(p, "master-addr", default="127.0.0.1", help="address of node 0")
    _flag(p, "master-port", type=int, default=29500, help="a free port on node 0")
    p.add_argument("--standalone", action="store_true", help="one node, local master address and port")
    p.add_argument("--hostfile", default=None, help="start every node's ranks from here through mpiexec")
    p.add_argument("--timeout", type=float, default=None, help="end the job after this many seconds")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the script as a program")
    for name in ("max-restarts", "monitor-interval", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf",
                 "run-path", "log-dir", "redirects", "tee", "role", "start-method", "local-addr",
                 "logs-specs", "local-ranks-filter"):
        _flag(p, name, default=None, help=argparse.SUPPRESS)
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def _nproc(value: str) -> int:
    if value in ("cpu", "auto", "gpu"):
        return os.cpu_count() or 1
    try:
        n = int(value)
    except ValueError:
        raise SystemExit(f"funcgrad-run: --nproc-per-node must be an integer or 'cpu', got {value!r}") from None
    if n < 1:
        raise SystemExit(f"funcgrad-run: --nproc-per-node must be at least 1, got {n}")
    return n


def _environment(args, nproc: int, nnodes: int) -> dict:
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port), WORLD_SIZE=str(nproc * nnodes),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(args.node_rank), NODE_RANK=str(args.node_rank),
               GROUP_WORLD_SIZE=str(nnodes), ROLE_NAME="default", ROLE_WORLD_SIZE=str(nproc * nnodes),
               TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex[:12]))
    for v in _THREAD_VARS:
        env.setdefault(v, "1")
    return env


def _command(args) -> list[str]:
    if args.no_python:
        return [args.script] + args.script_args
    return [sys.executable, "-m", "funcgrad.distributed._bootstrap"] + (["-m"] if args.module else []) + \
        [args.script] + args.script_args


def _mpich_segments() -> set:
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("mpich_shm_")}
    except OSError:
        return set()


def _remove_stale_segments(names: set) -> None:
    """MPICH's shared-memory segments of a job that was aborted are never unlinked (each holds megabytes of
    /dev/shm until reboot). After a failed job, remove those it created that no running process maps."""
    deadline = time.monotonic() + 3.0  # the job's last processes may still be exiting: look again briefly
    while names:
        mapped = set()
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/maps") as f:
                        mapped.update(n for n in names if n in f.read())
                except OSError:
                    continue
        for n in names - mapped:
            try:
                os.unlink(os.path.join("/dev/shm", n))
            except OSError:
                pass
        names = mapped
        if not names or time.monotonic() > deadline:
            return
        time.sleep(0.1)


def _wait(procs: list[subprocess.Popen], timeout) -> int:
    """Waits for the local ranks; the first failure (or the timeout) ends the others. Returns the exit status."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        codes = [p.poll() for p in procs]
        failed = [c for c in codes if c not in (None, 0)]
        if failed or (deadline is not None and time.monotonic() > deadline):
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
            if not failed:
                print(f"funcgrad-run: the job ran past --timeout {timeout:g} s and was stopped", file=sys.stderr)
                return 124
            return failed[0] if failed[0] > 0 else 128 - failed[0]
        if all(c == 0 for c in codes):
            return 0
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    nproc = _nproc(args.nproc_per_node)
    nnodes = int(str(args.nnodes).split(":")[-1])
    if args.standalone:
        nnodes, args.node_rank, args.master_addr = 1, 0, "127.0.0.1"
    if not 0 <= args.node_rank < nnodes:
        raise SystemExit(f"funcgrad-run: --node-rank {args.node_rank} is outside 0..{nnodes - 1}")
    env = _environment(args, nproc, nnodes)
    if nnodes == 1 or args.hostfile:
        cmd = [_mpiexec(), "-n", str(nproc * nnodes)]
        if args.hostfile:
            cmd += ["-f", args.hostfile, "-ppn", str(nproc)]
        if args.timeout is not None:
            env["MPIEXEC_TIMEOUT"] = str(int(max(1, args.timeout)))
        for v in ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
                  "GROUP_WORLD_SIZE", *_THREAD_VARS):
            cmd += ["-genv", v, env[v]]
        before = _mpich_segments()
        status = subprocess.call(cmd + _command(args), env=env)
        if status != 0:
            _remove_stale_segments(_mpich_segments() - before)
        return status
    procs = []
    for local in range(nproc):
        rank_env = dict(env, RANK=str(args.node_rank * nproc + local), LOCAL_RANK=str(local))
        procs.append(subprocess.Popen(_command(args), env=rank_env))
    try:
        return _wait(procs, args.timeout)
    except KeyboardInterrupt:
        for p in procs:
            p.send_signal(signal.SIGINT)
        return 130


if __name__ == "__main__":
    sys.exit(main())
