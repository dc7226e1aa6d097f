"""Public module paths whose code moved into a face's package (issue 21) keep working.

Two kinds of alias: a `sys.modules` entry set up by funcgrad/__init__.py (the public name is the implementing
module itself, so private names, monkeypatching and pickles behave as before), and a thin re-export file
for a module that serves both faces (funcgrad.profiler: jax.profiler's and torch.profiler's names).
"""
from __future__ import annotations

import importlib
import io
import pickle
import subprocess
import sys

import pytest

import funcgrad

# public name -> the module that implements it
MOVED = {
    "funcgrad.serialization": "funcgrad._torch.serialization",
    "funcgrad._weights_unpickler": "funcgrad._torch._weights_unpickler",
    "funcgrad.amp": "funcgrad._torch.amp",
    "funcgrad.hub": "funcgrad._torch.hub",
    "funcgrad.overrides": "funcgrad._torch.overrides",
    "funcgrad.func": "funcgrad._torch.func",
    "funcgrad.fft": "funcgrad._torch.fft",
    "funcgrad.sharding": "funcgrad._jax.sharding",
    "funcgrad.image": "funcgrad._jax.image",
    "funcgrad.custom_batching": "funcgrad._jax.custom_batching",
    "funcgrad.ops": "funcgrad._jax.ops",
    "funcgrad.dtypes": "funcgrad._jax.dtypes",
    "funcgrad._jax_api": "funcgrad._jax.api",
}


@pytest.mark.parametrize("public,home", sorted(MOVED.items()))
def test_sys_modules_alias_is_the_implementing_module(public, home):
    mod = importlib.import_module(public)
    assert mod is importlib.import_module(home)
    assert sys.modules[public] is mod
    # the attribute on the package is the same module (funcgrad.fft is torch.fft, ...)
    assert getattr(funcgrad, public.rpartition(".")[2]) is mod


def test_public_imports_in_a_fresh_interpreter():
    """`import funcgrad.x` / `from funcgrad.x import y` as the first import of a program (nothing loaded yet)."""
    code = ("import funcgrad.serialization, funcgrad.hub\n"
            "from funcgrad.func import vmap, grad, functional_call\n"
            "from funcgrad.amp import GradScaler, autocast\n"
            "from funcgrad.fft import rfft\n"
            "from funcgrad.sharding import NamedSharding, PartitionSpec\n"
            "from funcgrad.custom_batching import custom_vmap\n"
            "import funcgrad.config, funcgrad.dtypes, funcgrad.image, funcgrad.ops\n"
            "import funcgrad as torch\n"
            "assert torch.serialization.add_safe_globals is funcgrad.serialization.add_safe_globals\n"
            "assert rfft is torch.fft.rfft\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(_root()))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _root():
    import pathlib
    return pathlib.Path(funcgrad.__file__).resolve().parent.parent


def test_private_names_and_monkeypatching_reach_the_implementation(monkeypatch, tmp_path):
    import funcgrad.hub as hub
    monkeypatch.setattr(hub, "_hub_dir", str(tmp_path / "h"))
    # the implementing module's get_dir reads the patched global
    assert funcgrad._torch.hub.get_dir() == str(tmp_path / "h")
    assert funcgrad.hub.get_dir() == str(tmp_path / "h")


def test_pickle_naming_the_public_module_loads():
    """A pickle written before the move names the class by its public module; it loads the same class."""
    import funcgrad._torch.amp as amp_home
    # protocol 0 GLOBAL opcode: "c<module>\n<name>\n"
    assert pickle.loads(b"cfuncgrad.amp\nGradScaler\n.") is amp_home.GradScaler
    assert pickle.loads(b"cfuncgrad.serialization\nload\n.") is funcgrad.load
    # an instance round-trips and a pickle naming the old path of its class rebuilds it
    scaler = amp_home.GradScaler("cpu", init_scale=8.0)
    data = pickle.dumps(scaler, protocol=2)
    old = data.replace(b"funcgrad._torch.amp", b"funcgrad.amp")
    assert old != data
    back = pickle.loads(old)
    assert type(back) is amp_home.GradScaler and back._init_scale == 8.0


def test_save_load_through_the_public_serialization_module():
    import funcgrad.serialization as S
    buf = io.BytesIO()
    S.save({"w": funcgrad.tensor([1.0, 2.0, 3.0])}, buf)
    buf.seek(0)
    back = funcgrad.load(buf)
    assert back["w"].tolist() == [1.0, 2.0, 3.0]


def test_config_module_and_object():
    """funcgrad.config is the Config object (jax.config); the module funcgrad.config answers as it does (a
    program's `from jax.config import config`, through a jax -> funcgrad name shim, rebinds the package
    attribute to the module, as before the move)."""
    cfg_module = sys.modules["funcgrad.config"]
    assert cfg_module is importlib.import_module("funcgrad._src.core.config")
    assert funcgrad.config is cfg_module.config or funcgrad.config is cfg_module
    assert cfg_module.update == cfg_module.config.update and cfg_module.read("enable_x64") in (True, False)
    before = funcgrad.config.read("enable_x64")
    try:
        cfg_module.update("jax_enable_x64", True)  # the module's update is the Config's
        assert funcgrad.config.jax_enable_x64 is True
        assert funcgrad.numpy.asarray(1.5).dtype == funcgrad.numpy.float64
    finally:
        funcgrad.config.update("jax_enable_x64", before)
    assert funcgrad.numpy.asarray(1.5).dtype == (funcgrad.numpy.float64 if before else funcgrad.numpy.float32)


def test_sharding_pickles_and_identity():
    from funcgrad.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding
    x = funcgrad.numpy.ones(3)
    assert isinstance(x.sharding, SingleDeviceSharding)  # Array.sharding builds the public class
    spec = PartitionSpec("data", None)
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert pickle.loads(b"cfuncgrad.sharding\nNamedSharding\n.") is NamedSharding
    assert funcgrad.NamedSharding is NamedSharding and funcgrad.P is PartitionSpec


def test_profiler_shim_serves_both_faces():
    """funcgrad.profiler is a re-export file (no def/class): jax.profiler's names and torch.profiler's."""
    import ast
    import pathlib
    import funcgrad.profiler as prof
    src = pathlib.Path(prof.__file__).read_text()
    assert not [n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    from funcgrad._jax import profiler as jprof
    from funcgrad._torch import profiler as tprof
    assert prof.TraceAnnotation is jprof.TraceAnnotation and prof.trace is jprof.trace
    assert prof.profile is tprof.profile and prof.schedule is tprof.schedule
    assert set(prof.__all__) == set(jprof.__all__) | set(tprof.__all__)
    assert not set(jprof.__all__) & set(tprof.__all__)
    # torch.profiler.schedule: wait 1, warmup 1, active 2 -> NONE, WARMUP, RECORD, RECORD_AND_SAVE, NONE, ...
    sched = prof.schedule(wait=1, warmup=1, active=2)
    A = prof.ProfilerAction
    assert [sched(i) for i in range(5)] == [A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE]
