"""Modules PyTorch programs import: torch.distributed (before a process group exists), nn.parallel,
torch.compiler, torch.cond, nn.attention, torch.hub, torch.overrides and the profilers; against real torch
where behaviour is observable, and through the torch -> funcgrad import shim."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

import funcgrad as fg
from test_torch_example_programs import torch_is_funcgrad  # noqa: F401 (fixture)

torch = pytest.importorskip("torch")


def test_shim_imports(torch_is_funcgrad):  # noqa: F811
    import torch as t
    import torch.distributed as dist
    import torch.compiler
    import torch.hub
    import torch.overrides
    import torch.autograd.profiler as aprof
    from torch.nn.parallel import DataParallel, DistributedDataParallel
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    from torch.distributed.elastic.multiprocessing.errors import record
    assert t is fg and dist is fg.distributed and torch.compiler is fg.compiler and torch.hub is fg.hub
    assert aprof is fg.autograd.profiler and t.nn.parallel.DistributedDataParallel is DistributedDataParallel
    assert DataParallel is fg.nn.DataParallel and SDPBackend.MATH is t.nn.attention.SDPBackend.MATH
    assert sdpa_kernel and ProfilerActivity and profile and record_function and schedule
    assert record(lambda x: x + 1)(1) == 2
    assert dist.is_available() is fg.distributed._mpi.available()


def _err(fn, *args, **kwargs):
    with pytest.raises(BaseException) as info:
        fn(*args, **kwargs)
    return info.value


def test_distributed_uninitialized_like_torch():
    dist, tdist = fg.distributed, torch.distributed
    assert dist.is_initialized() is tdist.is_initialized() is False
    assert dist.is_torchelastic_launched() is tdist.is_torchelastic_launched() is False
    assert not dist.is_nccl_available()
    for name, args in [("get_rank", ()), ("get_world_size", ()), ("barrier", ()),
                       ("all_reduce", "t"), ("broadcast", "t0")]:
        targs = (torch.ones(1),) + ((0,) if args == "t0" else ()) if args else ()
        fargs = (fg.ones(1),) + ((0,) if args == "t0" else ()) if args else ()
        te, fe = _err(getattr(tdist, name), *targs), _err(getattr(dist, name), *fargs)
        assert isinstance(fe, type(te)) and isinstance(fe, RuntimeError)
        assert "process group has not been initialized" in str(fe) and "init_process_group" in str(fe)
    te, fe = _err(tdist.destroy_process_group), _err(dist.destroy_process_group)
    assert type(fe) is type(te) and "Process group cannot be None" in str(fe)


def test_distributed_names():
    dist, tdist = fg.distributed, torch.distributed
    for n in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        assert int(getattr(dist.ReduceOp, n)) == int(getattr(tdist.ReduceOp, n))
        assert getattr(dist.ReduceOp, n).name == getattr(tdist.ReduceOp, n).name
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX != dist.ReduceOp.MIN
    for n in ("GLOO", "gloo", "NCCL", "Mpi", "ucc", "custom"):
        assert dist.Backend(n) == tdist.Backend(n)
    assert dist.Backend.GLOO == tdist.Backend.GLOO == "gloo" and dist.Backend.NCCL == "nccl"
    with pytest.raises(ValueError):
        dist.Backend(3)
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None


def test_ddp_and_sampler_without_group():
    te = _err(torch.nn.parallel.DistributedDataParallel, torch.nn.Linear(2, 2))
    fe = _err(fg.nn.parallel.DistributedDataParallel, fg.nn.Linear(2, 2))
    assert isinstance(fe, type(te)) and "init_process_group" in str(fe)
    m = fg.nn.Linear(2, 3)
    dp = fg.nn.parallel.DataParallel(m)
    x = fg.randn(4, 2)
    np.testing.assert_allclose(dp(x).detach().numpy(), m(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    np.testing.assert_allclose(fg.nn.parallel.data_parallel(m, x).detach().numpy(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="distributed package|process group has not been initialized"):
        fg.utils.data.DistributedSampler(list(range(4)))  # torch: ValueError, which ours also is
    if fg.distributed.is_available():
        with pytest.raises(ValueError):
            fg.utils.data.DistributedSampler(list(range(4)))
    assert list(fg.utils.data.DistributedSampler(list(range(6)), num_replicas=2, rank=1, shuffle=False)) == [1, 3, 5]


def test_compiler():
    c, tc = fg.compiler, torch.compiler
    assert c.is_compiling() is tc.is_compiling() is False
    assert c.is_dynamo_compiling() is tc.is_dynamo_compiling() is False
    assert c.reset() is None

    def f(x):
        return x * 2
    for deco in (c.disable, c.disable(), c.disable(recursive=False), c.allow_in_graph, c.assume_constant_result):
        g = deco(f)
        assert g(3) == 6 and g(3) == tc.disable(f)(3)
    assert c.disable(f) is f
    m = fg.nn.Linear(2, 2)
    # compile wraps a module (torch's OptimizedModule), the module itself kept as _orig_mod
    assert fg.compile(m)._orig_mod is m and c.compile(m)._orig_mod is m
    assert type(fg.compile(m)).__name__ == type(tc.compile(torch.nn.Linear(2, 2))).__name__ == "OptimizedModule"


def test_cond_like_torch():
    for p in (True, False, 0, 2.0):
        tr = torch.cond(p, lambda a: a + 1, lambda a: a - 1, (torch.ones(2),))
        fr = fg.cond(p, lambda a: a + 1, lambda a: a - 1, (fg.ones(2),))
        np.testing.assert_allclose(fr.numpy(), tr.numpy())
    for p in (True, False):
        tr = torch.cond(torch.tensor([p]), lambda a, b: a * b, lambda a, b: a - b, [torch.ones(2), torch.full((2,), 3.0)])
        fr = fg.cond(fg.tensor([p]), lambda a, b: a * b, lambda a, b: a - b, [fg.ones(2), fg.full((2,), 3.0)])
        np.testing.assert_allclose(fr.numpy(), tr.numpy())
    assert fg.cond(True, lambda: 1, lambda: 0) == 1
    te = _err(torch.cond, torch.tensor([True, False]), lambda a: a, lambda a: a, (torch.ones(1),))
    fe = _err(fg.cond, fg.tensor([True, False]), lambda a: a, lambda a: a, (fg.ones(1),))
    assert type(fe) is type(te) and "single-element" in str(fe)
    te, fe = _err(torch.cond, None, lambda: 1, lambda: 0), _err(fg.cond, None, lambda: 1, lambda: 0)
    assert type(fe) is type(te) and "Expected pred" in str(fe)
    te = _err(torch.cond, True, lambda a: a, lambda a: a, 5)
    fe = _err(fg.cond, True, lambda a: a, lambda a: a, 5)
    assert type(fe) is type(te) is TypeError
    for p, want in ((True, [6.0, 6.0]), (False, [1.0, 1.0])):
        x = fg.ones(2, requires_grad=True)
        fg.cond(fg.tensor(p), lambda a: (a * a * 3).sum(), lambda a: a.sum(), (x,)).backward()
        np.testing.assert_allclose(x.grad.numpy(), want)


def test_sdpa_kernel():
    A, TA = fg.nn.attention, torch.nn.attention
    assert [m.name for m in A.SDPBackend] == list(TA.SDPBackend.__members__)
    assert all(A.SDPBackend[n].value == TA.SDPBackend.__members__[n].value for n in TA.SDPBackend.__members__)
    for bad in ("math", (A.SDPBackend.MATH,), {A.SDPBackend.MATH}, 0):
        tbad = bad if not isinstance(bad, (tuple, set)) else type(bad)([TA.SDPBackend.MATH])
        with pytest.raises(AssertionError, match="SDPBackend"):
            with TA.sdpa_kernel(tbad):
                pass
        with pytest.raises(AssertionError, match="SDPBackend"):
            with A.sdpa_kernel(bad):
                pass
    q = fg.randn(1, 2, 3, 4)
    ref = fg.nn.functional.scaled_dot_product_attention(q, q, q)
    for arg in (A.SDPBackend.MATH, [A.SDPBackend.FLASH_ATTENTION, A.SDPBackend.EFFICIENT_ATTENTION]):
        with A.sdpa_kernel(arg):
            assert A.current_backends() == (arg if isinstance(arg, list) else [arg])
            np.testing.assert_allclose(fg.nn.functional.scaled_dot_product_attention(q, q, q).numpy(), ref.numpy())
    assert len(A.current_backends()) == 5


def test_hub_dirs(monkeypatch, tmp_path):
    monkeypatch.setattr(fg.hub, "_hub_dir", None)
    monkeypatch.delenv("TORCH_HUB", raising=False)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert fg.hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert fg.hub.get_dir() == os.path.expanduser("~/.cache/torch/hub")
    old = torch.hub._hub_dir
    try:
        torch.hub._hub_dir = None
        assert fg.hub.get_dir() == torch.hub.get_dir()
    finally:
        torch.hub._hub_dir = old
    fg.hub.set_dir(tmp_path / "mine")
    assert fg.hub.get_dir() == str(tmp_path / "mine")


def test_hub_load_state_dict_from_url(monkeypatch, tmp_path):
    import hashlib
    monkeypatch.setattr(fg.hub, "_hub_dir", None)
    src = tmp_path / "src"
    src.mkdir()
    m = fg.nn.Linear(3, 2)
    fg.save(m.state_dict(), src / "w.pth")
    digest = hashlib.sha256((src / "w.pth").read_bytes()).hexdigest()
    named = src / f"lin-{digest[:8]}.pth"
    named.write_bytes((src / "w.pth").read_bytes())
    fg.hub.set_dir(tmp_path / "hub")
    sd = fg.hub.load_state_dict_from_url(named.as_uri(), check_hash=True)
    cached = tmp_path / "hub" / "checkpoints" / named.name
    assert cached.exists()
    np.testing.assert_allclose(sd["weight"].numpy(), m.weight.detach().numpy())
    named.unlink()  # the cached file is used from now on
    sd2 = fg.hub.load_state_dict_from_url(named.as_uri(), map_location="cpu")
    np.testing.assert_allclose(sd2["bias"].numpy(), m.bias.detach().numpy())
    sd3 = fg.hub.load_state_dict_from_url((src / "w.pth").as_uri(), model_dir=str(tmp_path / "md"), file_name="x.pt")
    assert (tmp_path / "md" / "x.pt").exists() and set(sd3) == {"weight", "bias"}
    bad = src / "lin-00000000.pth"
    bad.write_bytes((src / "w.pth").read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        fg.hub.load_state_dict_from_url(bad.as_uri(), check_hash=True)
    assert not (tmp_path / "hub" / "checkpoints" / bad.name).exists()
    assert [p for p in os.listdir(tmp_path / "hub" / "checkpoints") if "partial" in p] == []
    fg.hub.download_url_to_file((src / "w.pth").as_uri(), str(tmp_path / "d" / "f.bin"), hash_prefix=digest[:6])
    assert (tmp_path / "d" / "f.bin").read_bytes() == (src / "w.pth").read_bytes()


def test_hub_local_hubconf(tmp_path):
    (tmp_path / "hubconf.py").write_text("dependencies = []\n\ndef tiny(n=2):\n    'a tiny entry'\n    return [0] * n\n")
    assert fg.hub.load(str(tmp_path), "tiny", 3, source="local") == [0, 0, 0]
    assert "tiny" in fg.hub.list(str(tmp_path), source="local")
    assert fg.hub.help(str(tmp_path), "tiny", source="local") == "a tiny entry"
    with pytest.raises(RuntimeError, match="Cannot find callable"):
        fg.hub.load(str(tmp_path), "nope", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        fg.hub.load(str(tmp_path), "tiny", source="web")


def test_overrides_like_torch():
    o, to = fg.overrides, torch.overrides

    class Dispatching:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func.__name__, types)

    class Declining:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    def api(x):
        return x

    d = Dispatching()
    for mod, T in ((o, fg.ones(1)), (to, torch.ones(1))):
        assert mod.has_torch_function((T,)) is False and mod.has_torch_function_unary(T) is False
        assert mod.has_torch_function((1, d)) and mod.has_torch_function_variadic(T, d)
        assert mod.is_tensor_like(T) and mod.is_tensor_like(d) and not mod.is_tensor_like(1)
        assert mod.handle_torch_function(api, (T,), 5) == 5
        assert mod.handle_torch_function(api, (d, T), T) == ("handled", "api", (Dispatching, type(T)))
        assert mod.handle_torch_function(api, (T, d), T) == ("handled", "api", (type(T), Dispatching))
        assert mod.handle_torch_function(api, (d,), T) == ("handled", "api", (Dispatching,))
        with pytest.raises(TypeError, match="no implementation found"):
            mod.handle_torch_function(api, (Declining(),), 1)


def test_autograd_profiler(tmp_path):
    P = fg.autograd.profiler
    with P.profile() as prof:
        for _ in range(3):
            with P.record_function("step"):
                fg.ones(4) @ fg.ones(4)

        @P.record_function("deco")
        def g():
            return 1
        g()
    with P.record_function("outside"):
        pass
    avgs = {e.key: e for e in prof.key_averages()}
    assert set(avgs) == {"step", "deco"} and avgs["step"].count == 3 and avgs["step"].cpu_time_total > 0
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    assert "step" in table and "deco" in table
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert len(json.loads((tmp_path / "t.json").read_text())["traceEvents"]) == 4
    with P.profile(enabled=False) as off:
        with P.record_function("x"):
            pass
    assert len(off.key_averages()) == 0


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
def test_torch_profiler_schedule():
    for kw in (dict(wait=1, warmup=1, active=2, repeat=1), dict(wait=0, warmup=2, active=1, repeat=0, skip_first=3),
               dict(wait=2, warmup=0, active=3, repeat=2, skip_first=1)):
        fs, ts = fg.profiler.schedule(**kw), torch.profiler.schedule(**kw)
        assert [fs(i).name for i in range(16)] == [ts(i).name for i in range(16)], kw
    seen = []
    with fg.profiler.profile(activities=[fg.profiler.ProfilerActivity.CPU],
                             schedule=fg.profiler.schedule(wait=1, warmup=0, active=2, repeat=1),
                             on_trace_ready=lambda p: seen.append([e.key for e in p.key_averages()])) as prof:
        for i in range(5):
            with fg.profiler.record_function(f"s{i}"):
                pass
            prof.step()
    assert seen == [["s1", "s2"]]
    assert fg.profiler.TraceAnnotation and fg.profiler.trace  # the JAX names stay


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_like_torch(dtype, hermitian):
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 6, 9):
        for trial in range(6):
            a = rng.standard_normal((2, n, n))
            if dtype == np.complex128:
                a = a + 1j * rng.standard_normal((2, n, n))
            a = a.astype(dtype)
            a = a + (np.conj(a) if hermitian else a).swapaxes(-1, -2)
            if trial % 2 == 0:  # small diagonal: 2x2 pivot blocks
                a[..., np.arange(n), np.arange(n)] *= 0.01
            t = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
            f = fg.linalg.ldl_factor(fg.tensor(a), hermitian=hermitian)
            assert f.LD.dtype == fg.tensor(a).dtype and f.pivots.dtype == fg.int32
            np.testing.assert_array_equal(f.pivots.numpy(), t.pivots.numpy())
            np.testing.assert_allclose(f.LD.numpy(), t.LD.numpy(), rtol=1e-4, atol=1e-4)
            b = rng.standard_normal((2, n, 3)).astype(dtype)
            xf = fg.linalg.ldl_solve(f.LD, f.pivots, fg.tensor(b), hermitian=hermitian).numpy()
            xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.from_numpy(b), hermitian=hermitian).numpy()
            np.testing.assert_allclose(xf, xt, rtol=2e-3, atol=2e-3)
            ex = fg.linalg.ldl_factor_ex(fg.tensor(a), hermitian=hermitian)
            assert ex.info.numpy().tolist() == [0, 0]


def test_ldl_errors_like_torch():
    z = np.zeros((3, 3))
    t, f = torch.linalg.ldl_factor_ex(torch.from_numpy(z)), fg.linalg.ldl_factor_ex(fg.tensor(z))
    assert int(f.info) == int(t.info) == 1
    np.testing.assert_array_equal(f.pivots.numpy(), t.pivots.numpy())
    with pytest.raises(RuntimeError, match="ldl_factor"):
        fg.linalg.ldl_factor(fg.tensor(z))
    with pytest.raises(RuntimeError, match="ldl_factor_ex"):
        fg.linalg.ldl_factor_ex(fg.tensor(z), check_errors=True)
    for bad, key in ((np.ones((2, 3)), "square"), (np.ones((3, 3), np.int64), "floating point")):
        te, fe = _err(torch.linalg.ldl_factor, torch.from_numpy(bad)), _err(fg.linalg.ldl_factor, fg.tensor(bad))
        assert type(fe) is type(te) and key in str(fe) and key in str(te)
    LD, piv = fg.linalg.ldl_factor(fg.tensor(np.eye(5) * 2))
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes"):
        fg.linalg.ldl_solve(LD, piv, fg.ones(4, 2, dtype=fg.float64))
