"""funcgrad.distributed on real ranks: the scripts in tests/distributed/ run on 2 and 4 processes, started
by the launcher (funcgrad-run over mpiexec), by mp.spawn with MASTER_ADDR/PORT, and as two "nodes" that meet
at a master address. Every collective and dtype is checked against NumPy inside the scripts; DDP against
single-process training on the concatenated batch; every failure mode must end the job within seconds.
Each job runs in a subprocess with a timeout, so a hang fails the test instead of stalling the suite."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import funcgrad as fg

HERE = Path(__file__).parent / "distributed"
ROOT = Path(__file__).parent.parent

pytest.importorskip("mpi4py", reason="funcgrad.distributed needs the 'distributed' extra (mpi4py + MPICH)")
if shutil.which("mpiexec", path=os.path.dirname(sys.executable)) is None and shutil.which("mpiexec") is None:
    pytest.skip("no mpiexec (the MPICH wheel of the 'distributed' extra provides one)", allow_module_level=True)

JOB_TIMEOUT = 240  # seconds per job: generous for a loaded 2-core machine; a hang still fails


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"):
        env.pop(v, None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args, timeout=JOB_TIMEOUT):
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=timeout, env=_env(),
                          cwd=ROOT)


def _launch(nproc, script, *script_args, timeout=JOB_TIMEOUT, launcher_args=()):
    return _run(["-m", "funcgrad.distributed.run", "--nproc-per-node", str(nproc), "--master-port",
                 str(_free_port()), *launcher_args, str(HERE / script), *script_args], timeout)


def _ok(proc, marker):
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert marker in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_get_default_backend_for_device_as_torch():
    """pytorch/examples' distributed/ddp example picks its backend with get_default_backend_for_device."""
    torch = pytest.importorskip("torch")
    for dev in ("cpu", "cuda", "cuda:1", "xpu", "mps", "meta", "foo", None, "cpu_dev"):
        try:
            want = torch.distributed.get_default_backend_for_device(dev)
        except Exception as e:  # noqa: BLE001 (the error's type and message are compared)
            with pytest.raises(type(e)) as got:
                fg.distributed.get_default_backend_for_device(dev)
            assert str(got.value).split(":")[0] == str(e).split(":")[0]
        else:
            assert fg.distributed.get_default_backend_for_device(dev) == want
    assert fg.distributed.get_default_backend_for_device(fg.device("cpu")) == "gloo"
    # torch's map as torch starts; a backend registered later (torch's fake process group, which some other test
    # module may have imported in this process, adds 'hpu') extends torch's
    ours, theirs = fg.distributed.Backend.default_device_backend_map, torch.distributed.Backend.default_device_backend_map
    assert {"cpu", "cuda", "xpu", "mps"} <= set(ours) and {k: theirs.get(k) for k in ours} == ours


@pytest.mark.parametrize("nproc", [2, 4])
def test_every_collective_and_dtype(nproc):
    _ok(_launch(nproc, "collectives_check.py"), f"collectives ok {nproc}")


@pytest.mark.parametrize("nproc", [2, 4])
def test_ddp_equals_single_process_training(nproc):
    _ok(_launch(nproc, "ddp_check.py"), f"ddp ok {nproc}")


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_comm_hooks_and_join_on_uneven_inputs(nproc):
    _ok(_launch(nproc, "ddp_hooks_join_check.py"), f"ddp hooks join ok {nproc}")


def test_jax_multiprocess_api():
    _ok(_launch(2, "jax_multiprocess_check.py"), "jax multiprocess ok 2")


@pytest.mark.parametrize("nproc", [2, 4])
def test_pmap_collectives_span_processes(nproc):
    _ok(_launch(nproc, "pmap_check.py"), f"pmap ok {nproc}")


def test_launcher_sets_torchrun_environment():
    proc = _launch(2, "env_check.py", launcher_args=("--max_restarts", "0"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = json.loads(proc.stdout.strip().splitlines()[-1])
    for k, info in enumerate(ranks):
        assert (info["RANK"], info["LOCAL_RANK"], info["WORLD_SIZE"], info["LOCAL_WORLD_SIZE"]) == \
            (str(k), str(k), "2", "2")
        assert info["rank"] == k and info["world"] == 2 and info["elastic"] is True
        assert info["GROUP_RANK"] == "0" and info["MASTER_ADDR"] == "127.0.0.1" and info["OMP_NUM_THREADS"] == "1"
    assert ranks[0]["TORCHELASTIC_RUN_ID"] == ranks[1]["TORCHELASTIC_RUN_ID"]


def test_mp_spawn_pattern():
    """The tutorial pattern: the script spawns its workers, which set MASTER_ADDR/PORT and join."""
    proc = _run([str(HERE / "spawn_check.py"), "2", str(_free_port())])
    _ok(proc, "spawn ok 2")


def test_two_nodes_meet_at_the_master():
    """--nnodes 2: one launcher per node (both on this machine here), joined through the master address."""
    port = _free_port()
    common = ["-m", "funcgrad.distributed.run", "--nnodes", "2", "--nproc_per_node", "1", "--master_addr",
              "127.0.0.1", "--master_port", str(port)]
    nodes = [subprocess.Popen([sys.executable] + common + ["--node_rank", str(k), str(HERE / "env_check.py")],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
             for k in range(2)]
    outs = [p.communicate(timeout=JOB_TIMEOUT) for p in nodes]
    assert [p.returncode for p in nodes] == [0, 0], outs
    ranks = json.loads(outs[0][0].strip().splitlines()[-1])
    assert [(i["rank"], i["GROUP_RANK"], i["LOCAL_RANK"], i["world"]) for i in ranks] == \
        [(0, "0", "0", 2), (1, "1", "0", 2)]


@pytest.mark.parametrize("mode, status", [("raise", 1), ("exit", 3), ("kill", None), ("mismatch", None),
                                                 ("late", 1), ("late_async", 1)])
def test_a_failing_rank_ends_the_job(mode, status):
    """Rank 1 fails while rank 0 waits in all_reduce: the job ends non-zero, quickly, with the traceback."""
    shm = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    start = time.monotonic()
    proc = _launch(2, "failure_check.py", mode, timeout=120)
    took = time.monotonic() - start
    if os.path.isdir("/dev/shm"):  # the aborted job's shared-memory segments are removed, not leaked
        left = {n for n in set(os.listdir("/dev/shm")) - shm if n.startswith("mpich_shm_")}
        assert not left, f"segments left in /dev/shm: {sorted(left)}"
    assert proc.returncode != 0 and "unreachable" not in proc.stdout
    if status is not None:
        assert proc.returncode == status, proc.stderr[-3000:]
    if mode == "raise":
        assert "ValueError: rank 1 fails on purpose" in proc.stderr
    if mode.startswith("late"):
        assert "did not complete within the process group's timeout (3 s)" in proc.stderr, proc.stderr[-2000:]
    if mode == "late_async":
        assert "all_reduce (started with async_op=True)" in proc.stderr, proc.stderr[-2000:]
        assert took < 60, took  # the watchdog, not rank 1's return, ended the job
    if mode == "mismatch":  # the rank that detects it first names it (ours, or MPI's own report)
        assert ("DistBackendError: all_reduce failed on rank" in proc.stderr and "same shape and dtype" in
                proc.stderr) or "Message truncated" in proc.stderr, proc.stderr[-2000:]
    assert took < 90, f"the job took {took:.0f} s to end"


def test_ddp_example_matches_one_process():
    """examples/ddp_train.py: 2 ranks and one process reach the same parameters (a few epochs here)."""
    def result(proc):
        assert proc.returncode == 0, proc.stderr[-3000:]
        words = proc.stdout.strip().splitlines()[-1].replace(",", "").split()
        return float(words[words.index("accuracy") + 1]), float(words[-1])
    one = result(_run([str(ROOT / "examples" / "ddp_train.py"), "4"]))
    two = result(_run(["-m", "funcgrad.distributed.run", "--nproc-per-node", "2", "--master-port",
                       str(_free_port()), str(ROOT / "examples" / "ddp_train.py"), "4"]))
    assert one[0] == pytest.approx(two[0], abs=2e-3) and one[1] == pytest.approx(two[1], rel=1e-4), (one, two)


def test_launcher_timeout():
    proc = _run(["-m", "funcgrad.distributed.run", "--nnodes", "2", "--node-rank", "0", "--master-port",
                 str(_free_port()), "--timeout", "3", str(HERE / "env_check.py")], timeout=120)
    # node 1 never starts, so rank 0 waits at the rendezvous until the launcher's timeout stops it
    assert proc.returncode == 124 and "--timeout" in proc.stderr


def test_world_size_one_in_a_subprocess():
    code = ("import funcgrad as t, funcgrad.distributed as d\n"
            "assert d.is_available() and not d.is_initialized()\n"
            "d.init_process_group('gloo', rank=0, world_size=1)\n"
            "x = t.arange(4.); d.all_reduce(x, op=d.ReduceOp.MAX); d.broadcast(x, src=0)\n"
            "assert x.tolist() == [0., 1., 2., 3.] and d.get_rank() == 0 and d.get_world_size() == 1\n"
            "assert d.get_backend() == 'gloo' and d.is_initialized()\n"
            "try:\n    d.init_process_group('gloo', rank=0, world_size=1)\nexcept ValueError as e:\n"
            "    assert 'twice' in str(e)\nelse:\n    raise AssertionError('second init accepted')\n"
            "d.destroy_process_group(); assert not d.is_initialized(); print('single ok')\n")
    _ok(_run(["-c", code]), "single ok")


def test_errors_without_a_group_or_with_bad_arguments():
    dist = fg.distributed
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="not been initialized"):
        dist.all_reduce(fg.ones(2))
    with pytest.raises(RuntimeError, match="nccl.*gloo|GPUs"):
        dist.init_process_group("nccl", rank=0, world_size=1)
    with pytest.raises(ValueError, match="unknown backend"):
        dist.init_process_group("carrier-pigeon", rank=0, world_size=1)
    with pytest.raises(ValueError, match="MASTER_ADDR"):
        os.environ.pop("MASTER_ADDR", None)
        dist.init_process_group("gloo", rank=0, world_size=2)
    with pytest.raises(ValueError, match="rank and world_size"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_without_mpi4py_the_package_imports_and_names_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import funcgrad.distributed as d\n"
            "assert d.is_available() is False\n"
            "try:\n    d.init_process_group('gloo', rank=0, world_size=1)\n"
            "except ImportError as e:\n    assert 'funcgrad[distributed]' in str(e); print('named')\n")
    _ok(_run(["-c", code]), "named")


def test_the_docs_quick_start_trains_and_prints_the_quoted_losses(tmp_path):
    """docs/distributed.md's quick start, run as a newcomer would (saved as train.py, launched on 2 ranks): rank
    0 prints the first and last losses the page quotes (torch's own numbers for the same script) and saves the
    model."""
    import re
    text = (ROOT / "docs" / "distributed.md").read_text()
    script = re.search(r"^```py\n(.*?)^```", text, re.S | re.M).group(1)
    quoted = re.findall(r"`(epoch \d: loss [0-9.]+)`", text)
    assert len(quoted) == 2, quoted
    (tmp_path / "train.py").write_text(script)
    proc = subprocess.run([sys.executable, "-m", "funcgrad.distributed.run", "--nproc-per-node", "2",
                           "--master-port", str(_free_port()), "train.py"], capture_output=True, text=True,
                          timeout=JOB_TIMEOUT, env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("epoch")][::4] == quoted, proc.stdout
    assert (tmp_path / "model.pt").exists()
