"""funcgrad.save / load against real PyTorch: files written by torch.save load in funcgrad (without importing
torch), files written by funcgrad.save load in torch, whole-object round trips and the weights_only allow-list."""
import io
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import serialization as S

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64",
          "complex128", "uint16"]


class Arbitrary:
    """An ordinary user class: weights_only loads must refuse it unless allow-listed."""

    def __init__(self, x=1):
        self.x = x

    def __eq__(self, other):
        return type(other) is Arbitrary and other.x == self.x


def _values(dt, shape=(3, 4)):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape) * 50
    if dt.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt if dt != "bool" else "float64") if dt != "bool" else a > 0


def _torch_file(obj, path):
    torch.save(obj, path)
    return path


@pytest.mark.parametrize("dt", DTYPES)
def test_load_torch_tensors_of_every_dtype(dt, tmp_path):
    a = _values(dt)
    t = torch.from_numpy(a.copy())
    r = fg.load(_torch_file({"t": t, "s": t[1, 2], "e": t[:0]}, tmp_path / "x.pt"))
    assert str(r["t"].dtype) == str(t.dtype) and r["t"].shape == t.shape
    np.testing.assert_array_equal(r["t"].numpy(), a)
    assert r["s"].shape == () and r["s"].item() == t[1, 2].item()
    assert r["e"].shape == (0, 4)


def test_bfloat16_loads_or_is_refused_clearly(tmp_path):
    p = _torch_file(torch.tensor([1.5, -2.0], dtype=torch.bfloat16), tmp_path / "b.pt")
    if getattr(fg, "bfloat16", None) is None:
        with pytest.raises(RuntimeError, match="bfloat16"):
            fg.load(p)
    else:
        r = fg.load(p)
        assert r.dtype == fg.bfloat16
        np.testing.assert_array_equal(r.float().numpy(), [1.5, -2.0])


def test_views_keep_layout_and_share_storage(tmp_path):
    base = torch.arange(24, dtype=torch.float32)
    obj = {"base": base, "t": base[2:14].view(3, 4).t(), "step": base[1::3], "row": base.view(4, 6)[2],
           "other": torch.zeros(3)}
    r = fg.load(_torch_file(obj, tmp_path / "v.pt"))
    for k, v in obj.items():
        assert r[k].stride() == v.stride() and r[k].storage_offset() == v.storage_offset(), k
        np.testing.assert_array_equal(r[k].numpy(), v.numpy())
    r["base"][4] = -1.0          # a write through one is seen by the views of the same storage
    assert r["t"][2, 0].item() == -1.0 and r["step"][1].item() == -1.0
    assert r["other"].sum().item() == 0.0
    assert r["base"]._version == r["t"]._version


def test_nested_containers_parameters_and_state_dict(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.Linear(5, 2))
    tm.train()
    tm(torch.randn(8, 4))
    obj = {"sd": tm.state_dict(), "p": torch.nn.Parameter(torch.ones(2)), "frozen": torch.nn.Parameter(
        torch.zeros(1), requires_grad=False), "g": torch.ones(2, requires_grad=True),
        "meta": [1, 2.5, "s", None, (True, b"\x00\x01", 2 ** 70, 1 + 2j)], "size": torch.Size([2, 3]),
        "dt": torch.int16, "dev": torch.device("cpu"), "set": {1, 2}, "od": OrderedDict(a=1)}
    r = fg.load(_torch_file(obj, tmp_path / "m.pt"))
    assert isinstance(r["sd"], OrderedDict) and list(r["sd"]) == list(obj["sd"])
    assert r["sd"]["1.num_batches_tracked"].dtype == fg.int64
    assert isinstance(r["p"], fg.nn.Parameter) and r["p"].requires_grad
    assert isinstance(r["frozen"], fg.nn.Parameter) and not r["frozen"].requires_grad
    assert r["g"].requires_grad and r["g"].is_leaf and type(r["g"]) is fg.Tensor
    assert r["meta"] == [1, 2.5, "s", None, (True, b"\x00\x01", 2 ** 70, 1 + 2j)]
    assert r["size"] == fg.Size([2, 3]) and isinstance(r["size"], fg.Size)
    assert r["dt"] is fg.int16 and r["dev"] == fg.device("cpu") and r["set"] == {1, 2}
    fm = fg.nn.Sequential(fg.nn.Linear(4, 5), fg.nn.BatchNorm1d(5), fg.nn.Linear(5, 2))
    fm.load_state_dict(r["sd"])
    fm.eval()
    tm.eval()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        ref = tm(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(fm(fg.tensor(x)).detach().numpy(), ref, rtol=1e-5, atol=1e-6)


def test_torch_optimizer_checkpoint_resumes_in_funcgrad(tmp_path):
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    x, y = torch.randn(6, 3), torch.randn(6, 2)
    topt = torch.optim.Adam(tm.parameters(), lr=0.05, amsgrad=True)
    for _ in range(3):
        topt.zero_grad()
        ((tm(x) - y) ** 2).mean().backward()
        topt.step()
    ck = fg.load(_torch_file({"model": tm.state_dict(), "opt": topt.state_dict()}, tmp_path / "ck.pt"))
    fm = fg.nn.Linear(3, 2)
    fm.load_state_dict(ck["model"])
    fopt = fg.optim.Adam(fm.parameters())
    fopt.load_state_dict(ck["opt"])
    fx, fy = fg.tensor(x.numpy()), fg.tensor(y.numpy())
    for _ in range(3):
        topt.zero_grad()
        ((tm(x) - y) ** 2).mean().backward()
        topt.step()
        fopt.zero_grad()
        ((fm(fx) - fy) ** 2).mean().backward()
        fopt.step()
    np.testing.assert_allclose(fm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_torch_loads_funcgrad_files(tmp_path):
    base = fg.arange(12.0)
    obj = {"base": base, "view": base[2:8].reshape(2, 3).T, "p": fg.nn.Parameter(fg.ones(2)),
           "g": fg.zeros(2, requires_grad=True), "i": fg.tensor([1, -2], dtype=fg.int64),
           "c": fg.tensor([1 + 2j], dtype=fg.complex128), "h": fg.tensor([0.5], dtype=fg.float16),
           "b": fg.tensor([True, False]), "dt": fg.float64, "size": fg.Size([4]), "x": [1, "a", (2.5, None)]}
    fg.save(obj, tmp_path / "f.pt")
    r = torch.load(tmp_path / "f.pt")             # torch's own weights_only=True default
    for k in ("base", "view", "i", "c", "h", "b"):
        assert str(r[k].dtype) == str(obj[k].dtype) and r[k].stride() == obj[k].stride()
        np.testing.assert_array_equal(r[k].numpy(), obj[k].numpy())
    assert r["view"].untyped_storage().data_ptr() == r["base"].untyped_storage().data_ptr()
    assert isinstance(r["p"], torch.nn.Parameter) and r["g"].requires_grad
    assert r["dt"] is torch.float64 and r["size"] == torch.Size([4]) and r["x"] == [1, "a", (2.5, None)]
    # and the model's state_dict drives torch's model
    fm = fg.nn.Linear(3, 2)
    fg.save(fm.state_dict(), tmp_path / "sd.pt")
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict(torch.load(tmp_path / "sd.pt"))
    np.testing.assert_array_equal(tm.bias.detach().numpy(), fm.bias.detach().numpy())


def test_arbitrary_objects_are_refused_by_weights_only(tmp_path):
    p = _torch_file({"obj": Arbitrary(3), "t": torch.ones(1)}, tmp_path / "a.pt")
    with pytest.raises(pickle.UnpicklingError) as ei:
        fg.load(p)
    with pytest.raises(pickle.UnpicklingError) as ti:
        torch.load(p)
    name = f"{Arbitrary.__module__}.Arbitrary"
    assert f"GLOBAL {name} was not an allowed global" in str(ei.value)
    assert "add_safe_globals" in str(ei.value) and "weights_only" in str(ei.value)
    assert str(ei.value) == str(ti.value)
    assert S.get_unsafe_globals_in_checkpoint(p) == [name]
    assert fg.load(p, weights_only=False)["obj"] == Arbitrary(3)


def test_malicious_pickle_is_not_executed(tmp_path):
    flag = tmp_path / "pwned"
    payload = b"\x80\x02cos\nsystem\nX" + len(f"touch {flag}").to_bytes(4, "little") + f"touch {flag}".encode() \
        + b"\x85R."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", "3\n")
    for kw in ({}, {"weights_only": True}):
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.system|GLOBAL os.system"):
            fg.load(buf, **kw)
    assert not flag.exists()


def test_safe_globals_allow_list(tmp_path):
    S.clear_safe_globals()
    p = tmp_path / "o.pt"
    fg.save({"o": Arbitrary(5)}, p)
    with pytest.raises(pickle.UnpicklingError):
        fg.load(p)
    with S.safe_globals([Arbitrary]):
        assert S.get_safe_globals() == [Arbitrary]
        assert fg.load(p)["o"] == Arbitrary(5)
    assert S.get_safe_globals() == []
    S.add_safe_globals([(Arbitrary, f"{Arbitrary.__module__}.Arbitrary")])
    try:
        assert fg.load(p)["o"] == Arbitrary(5)
    finally:
        S.clear_safe_globals()
    assert S.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        fg.load(p)
    # the same calls work through the torch-style alias
    assert fg.serialization.add_safe_globals is S.add_safe_globals


def test_whole_module_and_optimizer_round_trip(tmp_path):
    fm = fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.ReLU(), fg.nn.Linear(4, 2))
    opt = fg.optim.SGD(fm.parameters(), lr=0.1, momentum=0.9)
    x = fg.tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    fm(x).sum().backward()
    opt.step()
    fg.save({"model": fm, "opt": opt, "epoch": 3}, tmp_path / "w.pt")
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        fg.load(tmp_path / "w.pt")
    r = fg.load(tmp_path / "w.pt", weights_only=False)
    m2, o2 = r["model"], r["opt"]
    assert type(m2) is fg.nn.Sequential and r["epoch"] == 3
    np.testing.assert_array_equal(m2(x).detach().numpy(), fm(x).detach().numpy())
    assert o2.param_groups[0]["params"][0] is m2[0].weight          # identity survives
    np.testing.assert_array_equal(o2.state[m2[0].weight]["momentum_buffer"].numpy(),
                                  opt.state[fm[0].weight]["momentum_buffer"].numpy())
    for o, m in ((opt, fm), (o2, m2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    np.testing.assert_array_equal(m2[2].weight.detach().numpy(), fm[2].weight.detach().numpy())
    fg.save(fm, tmp_path / "m.pt")
    with S.safe_globals([fg.nn.Sequential, fg.nn.Linear, fg.nn.ReLU, set]):
        m3 = fg.load(tmp_path / "m.pt")
    assert isinstance(m3[0].weight, fg.nn.Parameter)


def test_env_vars_and_argument_errors(tmp_path, monkeypatch):
    p = tmp_path / "o.pt"
    fg.save(Arbitrary(1), p)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert fg.load(p) == Arbitrary(1)
    with pytest.raises(pickle.UnpicklingError):       # an explicit weights_only=True wins over it
        fg.load(p, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(RuntimeError, match="Only one of"):
        fg.load(p)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    with pytest.raises(pickle.UnpicklingError):       # forced even when weights_only=False is passed
        fg.load(p, weights_only=False)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    with pytest.raises(RuntimeError, match="pickle_module"):
        fg.load(p, pickle_module=pickle, weights_only=True)
    assert fg.load(p, pickle_module=pickle) == Arbitrary(1)       # weights_only defaults to False then


@pytest.mark.parametrize("ml", ["cpu", fg.device("cpu"), torch.device("cpu"), {"cpu": "cpu"},
                                lambda storage, loc: storage, lambda storage, loc: None, None])
def test_map_location(ml, tmp_path):
    p = _torch_file({"w": torch.arange(3.0)}, tmp_path / "x.pt")
    np.testing.assert_array_equal(fg.load(p, map_location=ml)["w"].numpy(), [0.0, 1.0, 2.0])


def test_map_location_to_missing_cuda_is_an_error(tmp_path):
    if fg.cuda.is_available():
        pytest.skip("a GPU is present")
    p = _torch_file({"w": torch.arange(3.0)}, tmp_path / "x.pt")
    with pytest.raises(RuntimeError, match="CUDA"):
        fg.load(p, map_location="cuda")


def test_load_never_imports_torch(tmp_path):
    p = _torch_file({"w": torch.arange(6.0).view(2, 3).t(), "p": torch.nn.Parameter(torch.ones(1))}, tmp_path / "x.pt")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None          # any import of torch now fails
        import funcgrad as fg
        r = fg.load({str(p)!r})
        assert r["w"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], r
        assert isinstance(r["p"], fg.nn.Parameter)
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(fg.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
