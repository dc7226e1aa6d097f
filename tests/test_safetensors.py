"""funcgrad.safetensors: both faces write the standard format (read back by the safetensors library itself and,
where installed, by real torch) and read files the library wrote; lazy slices; tied weights; errors."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp

safetensors_numpy = pytest.importorskip("safetensors.numpy")

from funcgrad.safetensors import flax as sf, safe_open, torch as st  # noqa: E402

DTYPES = [fg.float32, fg.float64, fg.float16, fg.int64, fg.int32, fg.int16, fg.int8, fg.uint8, fg.bool] + \
    ([fg.bfloat16] if fg.bfloat16 is not None else [])


def _tensor(dtype, shape=(3, 4), seed=0):
    g = np.random.default_rng(seed)
    if dtype == fg.bool:
        return fg.tensor(g.integers(0, 2, shape).astype(bool))
    return (fg.tensor(g.standard_normal(shape) * 5) if dtype.is_floating_point else
            fg.tensor(g.integers(-8 if dtype != fg.uint8 else 0, 9, shape))).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torch_face_round_trip_and_library_reads_it(tmp_path, dtype):
    tensors = {"a": _tensor(dtype), "b.weight": _tensor(dtype, (5,), 1)}
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path, metadata={"format": "pt"})
    back = st.load_file(path)
    assert sorted(back) == ["a", "b.weight"]
    for k, t in tensors.items():
        assert back[k].dtype == t.dtype and back[k].shape == t.shape
        np.testing.assert_array_equal(back[k].numpy(), t.numpy())
    raw = safetensors_numpy.load_file(str(path)) if dtype != fg.bfloat16 else None  # (numpy's API lacks BF16)
    if raw is not None:
        np.testing.assert_array_equal(raw["a"], tensors["a"].numpy())
    assert st.load(st.save(tensors))["a"].tolist() == tensors["a"].tolist()


def test_reads_what_the_library_wrote_and_loads_a_state_dict(tmp_path):
    model = fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.ReLU(), fg.nn.Linear(4, 2))
    state = {k: v.detach().numpy() * 0 + i for i, (k, v) in enumerate(model.state_dict().items())}
    path = str(tmp_path / "w.safetensors")
    safetensors_numpy.save_file(state, path)
    model.load_state_dict(st.load_file(path))
    for i, (k, v) in enumerate(model.state_dict().items()):
        assert np.all(v.numpy() == i), k


def test_real_torch_reads_ours_and_we_read_torchs(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file as torch_load, save_file as torch_save
    ours = {"w": _tensor(fg.float32), "i": _tensor(fg.int64)}
    st.save_file(ours, tmp_path / "ours.safetensors")
    theirs = torch_load(str(tmp_path / "ours.safetensors"))
    assert theirs["w"].dtype == torch.float32 and np.array_equal(theirs["w"].numpy(), ours["w"].numpy())
    torch_save({"x": torch.arange(6.).reshape(2, 3), "h": torch.ones(2, dtype=torch.float16)},
               str(tmp_path / "theirs.safetensors"))
    back = st.load_file(tmp_path / "theirs.safetensors")
    assert back["x"].tolist() == [[0., 1., 2.], [3., 4., 5.]] and back["h"].dtype == fg.float16


def test_safe_open_reads_lazily_and_slices(tmp_path):
    path = tmp_path / "big.safetensors"
    full = np.arange(24.).reshape(4, 6)
    safetensors_numpy.save_file({"m": full, "v": np.ones(3, np.float32)}, str(path), metadata={"k": "v"})
    with safe_open(path, framework="pt") as f:
        assert sorted(f.keys()) == ["m", "v"] and f.metadata() == {"k": "v"}
        sl = f.get_slice("m")
        assert sl.get_shape() == [4, 6] and sl.get_dtype() == "F64"
        part = sl[1:3, ::2]
        assert isinstance(part, fg.Tensor) and part.tolist() == full[1:3, ::2].tolist()
        assert isinstance(f.get_tensor("v"), fg.Tensor)
    with safe_open(path, framework="flax") as f:
        assert isinstance(f.get_tensor("v"), type(jnp.zeros(1)))
    with safe_open(path, framework="numpy") as f:
        assert isinstance(f.get_tensor("m"), np.ndarray)
    with pytest.raises(ValueError, match="framework"):
        safe_open(path, framework="tf")
    with pytest.raises(FileNotFoundError):
        safe_open(tmp_path / "missing.safetensors")


def test_save_model_stores_tied_weights_once(tmp_path):
    class Tied(fg.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = fg.nn.Embedding(5, 3)
            self.out = fg.nn.Linear(3, 5, bias=False)
            self.out.weight = self.emb.weight

    a, b = Tied(), Tied()
    st.save_model(a, tmp_path / "t.safetensors")
    with safe_open(tmp_path / "t.safetensors") as f:
        assert sorted(f.keys()) == ["emb.weight"]
    missing, unexpected = st.load_model(b, tmp_path / "t.safetensors")
    assert missing == [] and unexpected == []
    np.testing.assert_array_equal(b.out.weight.detach().numpy(), a.emb.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="missing keys"):
        st.load_model(fg.nn.Linear(2, 2), tmp_path / "t.safetensors")


def test_jax_face_round_trip(tmp_path):
    params = {"dense/kernel": jnp.arange(6.).reshape(2, 3), "dense/bias": jnp.zeros(3, dtype=jnp.int32)}
    sf.save_file(params, tmp_path / "p.safetensors")
    back = sf.load_file(tmp_path / "p.safetensors")
    assert back["dense/kernel"].dtype == params["dense/kernel"].dtype
    np.testing.assert_array_equal(np.asarray(back["dense/kernel"]), np.asarray(params["dense/kernel"]))
    assert np.asarray(sf.load(sf.save(params))["dense/bias"]).tolist() == [0, 0, 0]


def test_bad_input_errors(tmp_path):
    with pytest.raises(TypeError, match="dict"):
        st.save_file([fg.ones(2)], tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="not a Tensor"):
        st.save_file({"a": np.ones(2)}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="metadata"):
        st.save_file({"a": fg.ones(2)}, tmp_path / "x.safetensors", metadata={"n": 1})
    with pytest.raises(TypeError, match="names must be str"):
        sf.save({1: jnp.ones(2)})


def test_without_the_library_the_error_names_the_extra():
    code = ("import sys; sys.modules['safetensors'] = None; sys.modules['safetensors.numpy'] = None\n"
            "import funcgrad as t\nfrom funcgrad.safetensors import torch as st\n"
            "try:\n    st.save({'a': t.ones(2)})\nexcept ImportError as e:\n"
            "    assert 'funcgrad[safetensors]' in str(e); print('named')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "named" in out.stdout, out.stderr
