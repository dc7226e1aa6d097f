"""funcgrad.save / funcgrad.load: exact round trips of tensors, state_dicts and containers; the old pickle-free
format still loads; weights_only refuses what it does not know."""
import io
import json
import math
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import optim

DTYPES = [fg.bool, fg.uint8, fg.int8, fg.int16, fg.int32, fg.int64, fg.float16, fg.float32, fg.float64,
          fg.complex64, fg.complex128]


def _rt(obj, **kw):
    buf = io.BytesIO()
    fg.save(obj, buf)
    buf.seek(0)
    return fg.load(buf, **kw)


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_tensor_round_trip_exact(dt):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 100).astype(fg.zeros(1, dtype=dt).numpy().dtype)
    t = fg.tensor(a)
    u = _rt(t)
    assert isinstance(u, fg.Tensor) and u.dtype == t.dtype and u.shape == t.shape
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    assert u.data_ptr() != t.data_ptr()


def test_special_values_views_and_requires_grad(tmp_path):
    t = fg.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45], dtype=fg.float32)
    u = _rt(t)
    assert np.array_equal(u.numpy().view(np.uint32), t.numpy().view(np.uint32))
    m = fg.arange(12.0).reshape(3, 4)
    v = _rt(m.T[1:])          # a non-contiguous view is saved as its values
    np.testing.assert_array_equal(v.numpy(), m.T[1:].numpy())
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    w2 = fg.load(_save_path(w, tmp_path / "w.pt"))
    assert w2.requires_grad and w2.is_leaf
    np.testing.assert_array_equal(w2.detach().numpy(), [1.0, 2.0])
    s = _rt(fg.tensor(3.5))
    assert s.shape == () and s.item() == 3.5


def _save_path(obj, path):
    fg.save(obj, path)
    return str(path)


def test_containers_round_trip():
    shared = fg.ones(2)
    obj = {"a": [1, 2.5, -3, True, None, "x", b"\x00\xff", 1 + 2j, 2 ** 70, 0.1],
           (1, "k"): (fg.zeros(1), shared, shared),
           3: OrderedDict([("z", np.arange(4, dtype=np.int16)), ("y", np.float32(1.25))]),
           "dt": fg.float16, "size": fg.Size([2, 3]), "nested": {"deep": [[[]]], "e": {}}}
    with pytest.raises(pickle.UnpicklingError, match="numpy"):   # NumPy arrays need weights_only=False
        _rt(obj)
    r = _rt(obj, weights_only=False)
    assert r["a"] == obj["a"] and all(type(x) is type(y) for x, y in zip(r["a"], obj["a"]))
    assert isinstance(r[(1, "k")], tuple) and r[(1, "k")][1] is r[(1, "k")][2]
    assert isinstance(r[3], OrderedDict) and list(r[3]) == ["z", "y"]
    assert r[3]["z"].dtype == np.int16 and isinstance(r[3]["y"], np.float32) and r[3]["y"] == 1.25
    assert r["dt"] is fg.float16 and r["size"] == fg.Size([2, 3]) and isinstance(r["size"], fg.Size)
    assert r["nested"] == {"deep": [[[]]], "e": {}}
    assert list(r) == list(obj)


def test_optimizer_state_dict_round_trip(tmp_path):
    w = fg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    sd = opt.state_dict()
    path = tmp_path / "opt.fg"
    fg.save(sd, path)
    sd2 = fg.load(path, weights_only=True)
    assert sd2["param_groups"] == sd["param_groups"]
    for k, st in sd["state"].items():
        for n, v in st.items():
            assert sd2["state"][k][n].dtype == v.dtype
            np.testing.assert_array_equal(sd2["state"][k][n].numpy(), v.numpy())
    w2 = fg.tensor(w.detach().numpy().copy(), requires_grad=True)
    opt2 = optim.Adam([w2])
    opt2.load_state_dict(sd2)
    for o, p in ((opt, w), (opt2, w2)):
        o.zero_grad()
        (p * p).sum().backward()
        o.step()
    np.testing.assert_array_equal(w.detach().numpy(), w2.detach().numpy())


def test_file_layout_is_torchs_and_unpicklable_objects_are_refused():
    buf = io.BytesIO()
    fg.save({"x": fg.ones(3)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        names = sorted(z.namelist())
        assert names == ["archive/byteorder", "archive/data.pkl", "archive/data/0", "archive/version"]
        assert z.read("archive/byteorder") == b"little"
        assert np.frombuffer(z.read("archive/data/0"), np.float32).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(pickle.PicklingError):
        fg.save({"f": lambda: 0}, io.BytesIO())


def _old_format(root, arrays=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("funcgrad/manifest.json", json.dumps({"format": "funcgrad.save", "version": 1, "root": root}))
        for i, a in enumerate(arrays):
            npy = io.BytesIO()
            np.save(npy, a)
            z.writestr(f"funcgrad/data/{i}.npy", npy.getvalue())
    buf.seek(0)
    return buf


def test_old_pickle_free_format_still_loads():
    root = {"T": "dict", "v": [[{"T": "str", "v": "w"}, {"T": "tensor", "v": 0, "requires_grad": True,
                                                        "parameter": True}],
                               [{"T": "str", "v": "again"}, {"T": "ref", "v": 0}],
                               [{"T": "str", "v": "f"}, {"T": "float", "v": (0.1).hex()}],
                               [{"T": "str", "v": "dt"}, {"T": "dtype", "v": "torch.int16"}]]}
    r = fg.load(_old_format(root, [np.arange(4, dtype=np.float64)]))
    assert isinstance(r["w"], fg.nn.Parameter) and r["w"].requires_grad and r["w"].dtype == fg.float64
    assert r["again"] is r["w"] and r["f"] == 0.1 and r["dt"] is fg.int16
    np.testing.assert_array_equal(r["w"].detach().numpy(), [0, 1, 2, 3])


def test_load_rejects_foreign_and_malicious_files():
    with pytest.raises(RuntimeError, match="zip"):
        fg.load(io.BytesIO(b"\x80\x02not a zip"))
    # an object-dtype .npy (which would need pickle) is refused
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("funcgrad/manifest.json", json.dumps({"format": "funcgrad.save", "version": 1,
                                                          "root": {"T": "ndarray", "v": 0}}))
        npy = io.BytesIO()
        np.save(npy, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        z.writestr("funcgrad/data/0.npy", npy.getvalue())
    buf.seek(0)
    with pytest.raises(ValueError):
        fg.load(buf, weights_only=False)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("funcgrad/manifest.json", json.dumps({"format": "funcgrad.save", "version": 1,
                                                          "root": {"T": "os.system", "v": "echo hi"}}))
    buf.seek(0)
    with pytest.raises(ValueError, match="unknown entry"):
        fg.load(buf)


def test_legacy_and_torchscript_files_are_refused(tmp_path):
    torch = pytest.importorskip("torch")
    p = tmp_path / "t.pt"
    torch.save({"a": torch.ones(2)}, p, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy"):
        fg.load(p)
    with pytest.raises(NotImplementedError):
        fg.save(fg.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
