"""Joining processes that MPI did not start into one MPI job (the `mp.spawn` + MASTER_ADDR pattern).

A tutorial script starts its own workers (`mp.spawn(main, nprocs=N)`) and each calls
`init_process_group("gloo", rank=r, world_size=N)` after setting MASTER_ADDR/MASTER_PORT. Those processes
have no MPI process manager. MPICH cannot connect such "singleton" processes to each other (MPI_Comm_connect
between singletons fails its disjoint-group check), so they borrow one: rank 0 starts
`mpiexec -pmi-port -n N python rendezvous.py ADDR PORT TIMEOUT`, a job of N placeholder processes that
never initialize MPI. Each placeholder hands its process-manager coordinates (PMI_PORT, PMI_ID, ...) to the
worker of the same rank through a small TCP rendezvous on MASTER_ADDR:MASTER_PORT; the worker then
initializes MPI as that rank of the job, and all data moves over MPI. A placeholder lives until its worker's
connection to it closes (the worker exited), so the job ends with the workers.

The messages are JSON lines: a placeholder sends {"placeholder": id, "env": {...}, "addr": [host, port]},
a worker {"worker": rank} and gets back {"env": {...}, "addr": [host, port]}.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import shutil
import socket
import subprocess
import sys
import threading
import time

__all__ = ["join"]

_keep = []  # the worker's connection to its placeholder: open for the life of the process
_jobs = []  # on rank 0: the placeholder job (mpiexec)


def _send(sock: socket.socket, msg: dict) -> None:
    sock.sendall((json.dumps(msg) + "\n").encode())


def _recv(sock: socket.socket) -> dict:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the rendezvous peer closed the connection")
        buf += chunk
    return json.loads(buf)


def connect(addr: str, port: int, deadline: float, what: str) -> socket.socket:
    """Connects to addr:port, retrying until the deadline (the server may not be listening yet)."""
    while True:
        try:
            return socket.create_connection((addr, port), timeout=max(1.0, deadline - time.monotonic()))
        except OSError as e:
            if time.monotonic() > deadline:
                raise RuntimeError(f"init_process_group: timed out connecting to {what} at {addr}:{port} "
                                   f"({e}); check MASTER_ADDR/MASTER_PORT and that rank 0 is running") from e
            time.sleep(0.05)


def _mpiexec() -> str:
    exe = os.environ.get("FUNCGRAD_MPIEXEC") or shutil.which("mpiexec", path=os.path.dirname(sys.executable)) \
        or shutil.which("mpiexec")
    if exe is None:
        raise RuntimeError("init_process_group: no mpiexec found (install funcgrad[distributed], whose MPICH "
                           "wheel provides one, or set FUNCGRAD_MPIEXEC)")
    return exe


class _Server(threading.Thread):
    """Rank 0's side: pairs placeholder i with worker i. Each connection is read on its own thread, so a slow
    peer delays nobody else."""

    def __init__(self, addr: str, port: int, world_size: int):
        super().__init__(daemon=True, name="funcgrad-rendezvous")
        self.listener = socket.create_server(("", port))
        self.world_size = world_size
        self.placeholders: dict[int, dict] = {}
        self.workers: dict[int, socket.socket] = {}
        self.answered: set[int] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()  # every rank has been answered

    def run(self) -> None:
        with self.listener:
            self.listener.settimeout(0.2)  # (closing a socket does not wake a thread blocked in its accept)
            while not self.done.is_set():
                try:
                    conn, _ = self.listener.accept()
                except socket.timeout:
                    continue
                except OSError:
                    return
                conn.settimeout(None)
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            msg = _recv(conn)
        except (OSError, ValueError):
            conn.close()
            return
        with self.lock:
            if "placeholder" in msg:  # kept open until paired: its closing tells the placeholder rank 0 is gone
                msg["conn"] = conn
                self.placeholders[int(msg["placeholder"])] = msg
            else:
                r = int(msg["worker"])
                if r in self.workers or r in self.answered:
                    _send(conn, {"error": f"rank {r} joined twice"})
                    conn.close()
                    return
                self.workers[r] = conn
            for r in [r for r in self.workers if r in self.placeholders]:
                p, c = self.placeholders[r], self.workers.pop(r)
                try:
                    _send(c, {"env": p["env"], "addr": p["addr"]})
                    _send(p["conn"], {"paired": True})
                except OSError:
                    pass
                finally:
                    c.close()
                    p["conn"].close()
                self.answered.add(r)
            if len(self.answered) == self.world_size:
                self.done.set()


def join(rank: int, world_size: int, addr: str, port: int, timeout: float) -> None:
    """Makes this process rank `rank` of a fresh MPI job of world_size processes (see the module docstring).
    Sets the process-manager environment; MPI must not be initialized yet."""
    deadline = time.monotonic() + timeout
    if rank == 0:
        server = _Server(addr, port, world_size)
        server.start()
        # the placeholder runs this file as a script: it needs nothing of funcgrad, so it starts fast
        cmd = [_mpiexec(), "-pmi-port", "-disable-auto-cleanup", "-n", str(world_size), sys.executable, "-S", os.path.abspath(__file__),
               addr, str(port), str(timeout)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "MPI_LOCAL"))}
        try:
            # the placeholders print nothing and hydra's reports about them are not the user's business,
            # unless FUNCGRAD_RENDEZVOUS_LOG names a file for them (diagnosing a rendezvous)
            log = os.environ.get("FUNCGRAD_RENDEZVOUS_LOG")
            out = open(log, "ab") if log else subprocess.DEVNULL
            job = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        except OSError as e:
            raise RuntimeError(f"init_process_group: could not start {cmd[0]} ({e})") from e
        _jobs.append(job)
        atexit.register(_reap)
    sock = connect(addr, port, deadline, "the rendezvous of rank 0")
    _send(sock, {"worker": rank})
    sock.settimeout(max(1.0, deadline - time.monotonic()))
    try:
        msg = _recv(sock)
    except (OSError, ConnectionError) as e:
        raise RuntimeError(f"init_process_group: rank {rank} of {world_size} got no MPI coordinates from the "
                           f"rendezvous at {addr}:{port} within the timeout ({e}); did every rank start?") from e
    finally:
        sock.close()
    if "error" in msg:
        raise RuntimeError(f"init_process_group: {msg['error']}")
    keep = connect(msg["addr"][0], int(msg["addr"][1]), deadline, "this rank's MPI placeholder")
    _keep.append(keep)
    if rank == 0:
        # MPI_Init (mpi4py's import) holds the GIL until every rank has joined, so the rendezvous' threads must
        # have answered every rank before rank 0 initializes MPI
        if not server.done.wait(max(0.0, deadline - time.monotonic())):
            missing = sorted(set(range(world_size)) - server.answered)
            raise RuntimeError(f"init_process_group: rank(s) {missing} of {world_size} did not reach the "
                               f"rendezvous at {addr}:{port} within the timeout")
    os.environ.update(msg["env"])
    _leave_without_c_exit_handlers()


_status = [0]


def _leave_without_c_exit_handlers() -> None:
    """A rank that joined this way crashes in one of MPICH's C exit handlers after MPI_Finalize (MPICH 5.0,
    PMI over a port; the results are unaffected). So such a rank ends with os._exit once Python's own exit
    work is done, finalizing MPI itself first. The exit status is the one sys.exit was given (an uncaught
    exception aborts the job before this)."""
    real_exit = sys.exit

    def recording_exit(code=None):
        _status[0] = 0 if code is None else code if isinstance(code, int) else 1
        real_exit(code)
    sys.exit = recording_exit

    def leave():
        import logging
        logging.shutdown()
        mpi = sys.modules.get("mpi4py.MPI")
        if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
            mpi.Finalize()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        _reap()
        os._exit(_status[0])
    atexit.register(leave)


def placeholder(argv: list[str]) -> int:
    """One rank of the placeholder job: hands this rank's process-manager coordinates to the worker of the
    same rank, then waits until that worker's connection closes (it has exited). Never initializes MPI."""
    # hydra signals SIGUSR1 to the processes of a job it was told not to clean up when one of them ends; a
    # placeholder's life is its worker's, so it does not die of that notification
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    addr, port, timeout = argv[0], int(argv[1]), float(argv[2])
    deadline = time.monotonic() + timeout
    ident = int(os.environ.get("PMI_ID", os.environ.get("PMI_RANK", "0")))
    env = {k: v for k, v in os.environ.items() if k.startswith(("PMI_", "MPI_LOCAL"))}
    listener = socket.create_server(("", 0))
    host = addr if addr not in ("", "0.0.0.0") else socket.gethostname()
    server = connect(addr, port, deadline, "the rendezvous")
    _send(server, {"placeholder": ident, "env": env, "addr": [host, listener.getsockname()[1]]})
    paired = False
    while True:  # until the worker connects; give up if rank 0 goes away first or the deadline passes
        left = deadline - time.monotonic()
        if left <= 0:
            print(f"placeholder {ident}: no worker connected within the timeout", file=sys.stderr)
            return 1
        readable, _, _ = select.select([listener] + ([] if paired else [server]), [], [], left)
        if listener in readable:
            conn, _ = listener.accept()
            break
        if server in readable:
            try:
                data = server.recv(4096)
            except OSError as e:
                data = repr(e).encode()
            paired = b"paired" in data
            if not paired:
                print(f"placeholder {ident}: the rendezvous closed before pairing (rank 0 gone?) {data!r}", file=sys.stderr)
                return 1
    server.close()
    conn.settimeout(None)
    while conn.recv(4096):  # returns b"" when the worker process has exited
        pass
    return 0


def _reap() -> None:
    """At exit: let this rank's placeholder go; on rank 0, wait for the placeholder job to end."""
    for sock in _keep:
        sock.close()
    for job in _jobs:
        try:
            job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()


if __name__ == "__main__":
    sys.exit(placeholder(sys.argv[1:]))
