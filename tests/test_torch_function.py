"""The `__torch_function__` protocol on torch's top-level functions (funcgrad/_torch/overrides.py): NestedTensor,
MaskedTensor and user Tensor-like classes, against torch 2.13 where installed."""
import numpy as np
import pytest

import funcgrad as fg

A = np.arange(6.0).reshape(2, 3) / 7 - 0.3
B = np.arange(12.0).reshape(4, 3) / 5 - 1.1
W = np.arange(15.0).reshape(3, 5) / 11 - 0.6


def _nt(lib, layout):
    return lib.nested.nested_tensor([lib.tensor(A), lib.tensor(B)], layout=getattr(lib, layout))


CASES = {
    "matmul": lambda t, nt: t.matmul(nt, t.tensor(W)),
    "softmax": lambda t, nt: t.softmax(nt, -1),
    "cat2": lambda t, nt: t.cat([nt, nt], dim=2),
    "add": lambda t, nt: t.add(nt, nt),
    "add_alpha": lambda t, nt: t.add(nt, nt, alpha=2),
    "mul_scalar": lambda t, nt: t.mul(nt, 2.0),
    "linear": lambda t, nt: t.nn.functional.linear(nt, t.tensor(W.T)),
    "transpose": lambda t, nt: t.transpose(nt, 1, 2),
    "sum_keep": lambda t, nt: t.sum(nt, -1, keepdim=True),
    "tanh": lambda t, nt: t.tanh(nt),
    "relu": lambda t, nt: t.relu(nt),
    "where": lambda t, nt: t.where(nt > 0, nt, 0.0),
    "sum": lambda t, nt: t.sum(nt, -1),
    "cat0": lambda t, nt: t.cat([nt, nt]),
}


def _expected(name, comps):
    """The exact per-component result (NumPy), None where the op refuses."""
    f = {"matmul": lambda c: c @ W, "softmax": lambda c: np.exp(c) / np.exp(c).sum(-1, keepdims=True),
         "cat2": lambda c: np.concatenate([c, c], 1), "add": lambda c: c + c, "add_alpha": lambda c: 3 * c,
         "mul_scalar": lambda c: 2 * c, "linear": lambda c: c @ W, "transpose": lambda c: c.T,
         "sum_keep": lambda c: c.sum(-1, keepdims=True), "tanh": np.tanh, "relu": lambda c: np.maximum(c, 0),
         "where": lambda c: np.where(c > 0, c, 0.0), "sum": lambda c: c.sum(-1)}[name]
    return [f(c) for c in comps]


@pytest.mark.parametrize("layout", ["jagged", "strided"])
@pytest.mark.parametrize("name", [n for n in CASES if n != "cat0"])
def test_nested_top_level_functions(name, layout):
    nt = _nt(fg, layout)
    if layout == "strided" and name in ("matmul", "where", "sum"):
        with pytest.raises(RuntimeError):
            CASES[name](fg, nt)
        return
    r = CASES[name](fg, nt)
    assert isinstance(r, fg.nested.NestedTensor)
    for got, want in zip(r.unbind(), _expected(name, [A, B])):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("layout", ["jagged", "strided"])
@pytest.mark.parametrize("name", list(CASES))
def test_nested_matches_torch(name, layout):
    torch = pytest.importorskip("torch")
    res = []
    for lib in (fg, torch):
        try:
            r = CASES[name](lib, _nt(lib, layout))
            res.append([c.detach().numpy() for c in r.unbind()])
        except (RuntimeError, NotImplementedError) as e:
            res.append(type(e))
    if isinstance(res[1], type):
        assert res[0] is res[1]
    else:
        assert len(res[0]) == len(res[1])
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_nested_unsupported_raises_torchs_error():
    for layout, msg in (("jagged", "aten.cumsum.default"), ("strided", "aten::cumsum")):
        with pytest.raises(NotImplementedError, match=msg):
            fg.cumsum(_nt(fg, layout), 1)


def test_nested_top_level_keeps_autograd():
    a, b = fg.tensor(A, requires_grad=True), fg.tensor(B, requires_grad=True)
    nt = fg.nested.as_nested_tensor([a, b], layout=fg.jagged)
    out = fg.sum(fg.matmul(nt, fg.tensor(W)), -1)
    fg.cat([c for c in out.unbind()]).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(W.sum(1), A.shape), rtol=1e-12)


def test_masked_top_level_functions():
    data = fg.tensor(A)
    mask = fg.tensor(A > 0)
    mt = fg.masked.masked_tensor(data, mask)
    s = fg.sum(mt, 1)
    np.testing.assert_allclose(s.get_data().numpy(), np.where(A > 0, A, 0).sum(1), rtol=1e-12)
    np.testing.assert_allclose(fg.exp(mt).get_data().numpy()[A > 0], np.exp(A[A > 0]), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="cumsum"):
        fg.cumsum(mt, 1)


class ScalarTensor:
    """torch's docs' example ("Extending torch with a Tensor-like type"): N x N times value."""
    HANDLED = {}

    def __init__(self, n, value):
        self._n, self._value = n, value

    def tensor(self, lib):
        return self._value * lib.eye(self._n)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func.__name__ != "mean":
            return NotImplemented
        return float(args[0]._value) / args[0]._n


def test_user_tensor_like_dispatches():
    assert fg.mean(ScalarTensor(5, 2)) == 0.4
    with pytest.raises(TypeError, match=r"^Multiple dispatch failed for 'torch\.cumsum'; all __torch_function__ "
                                        r"handlers returned NotImplemented:\n\n  - tensor subclass <class "):
        fg.cumsum(ScalarTensor(5, 2), 0)


def test_user_subclass_super_keeps_subclass_and_sees_calls():
    calls = []

    class Logging(fg.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    x = fg.Tensor._make_subclass(Logging, fg.tensor([1.0, -2.0]))
    r = fg.add(x, fg.tensor([1.0, 1.0]))
    assert type(r) is Logging and calls == ["add"]
    np.testing.assert_array_equal(fg.Tensor._make_subclass(fg.Tensor, r).numpy(), [2.0, -1.0])
    r2 = fg.abs(r)
    assert type(r2) is Logging and calls == ["add", "abs"]


def test_plain_tensors_and_parameters_take_no_dispatch():
    from funcgrad._torch import overrides
    p = fg.nn.Parameter(fg.ones(2))
    assert not overrides.has_torch_function((fg.ones(1), p, 1.0, None))
    np.testing.assert_array_equal(fg.add(p, p).detach().numpy(), [2.0, 2.0])


# --- the cache of the generated checks (overrides._codes): a second import loads them instead of compiling ---------
_CHILD = r"""
import sys
import funcgrad as fg
o = sys.modules["funcgrad._torch.overrides"]
print(o.cache_source)

class ScalarTensor:
    def __init__(self, n, value):
        self._n, self._value = n, value
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return float(args[0]._value) / args[0]._n if func.__name__ == "mean" else NotImplemented

class Logging(fg.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs)

assert fg.mean(ScalarTensor(5, 2)) == 0.4
r = fg.cat([fg.Tensor._make_subclass(Logging, fg.tensor([1.0, -2.0])), fg.tensor([3.0])])
assert type(r) is Logging and fg.Tensor._make_subclass(fg.Tensor, r).tolist() == [1.0, -2.0, 3.0]
assert fg.add(fg.tensor([1.0]), fg.tensor([2.0])).tolist() == [3.0]
# the installed code is what the functions' current source gives
g = sys.modules["funcgrad._torch._tf_check"].generate
assert all(f.__code__ == g(f, k) for k, f in enumerate(o._FUNCS)), "installed code differs from source"
print(len(o._FUNCS))
"""


def _import_child(cache_home):
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(fg.__file__).resolve().parent.parent
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=str(root), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    source, n = out.stdout.split()
    return source, int(n)


def test_install_cache_written_then_loaded_then_rebuilt_when_corrupt(tmp_path):
    """First import generates and stores (atomically: no temporary file left), the second loads the cache, a corrupt
    cache is regenerated and rewritten; every time torch's dispatch works and the code matches the source."""
    assert _import_child(tmp_path)[0] == "generated"
    files = sorted((tmp_path / "funcgrad").iterdir())
    spaces = sorted(f.name.split(".")[1] + (".functional" if f.name.split(".")[1] == "nn" else "") for f in files)
    assert spaces == ["fft", "linalg", "nn.functional", "special", "torch"]  # (one file per namespace)
    assert all(f.name.startswith("torch_function.") and f.suffix == ".marshal" for f in files)
    source, n = _import_child(tmp_path)
    assert source == "cache" and n > 700
    files[0].write_bytes(b"not marshal data")
    assert _import_child(tmp_path) == ("generated", n)
    assert _import_child(tmp_path) == ("cache", n)
    assert sorted((tmp_path / "funcgrad").iterdir()) == files


def test_install_without_a_writable_cache_dir_compiles(tmp_path):
    (tmp_path / "file").write_text("")  # the cache dir would be under a regular file: nothing can be written
    assert _import_child(tmp_path / "file")[0] == "generated"
    assert _import_child(tmp_path / "file")[0] == "generated"


def test_cache_file_roundtrip_and_key(tmp_path):
    """_load returns what _store wrote only for the same key: a changed source file (mtime or size), interpreter
    or function list makes it stale."""
    import sys
    o = sys.modules["funcgrad._torch._tf_check"]
    funcs = [(f.__name__, f) for f in sys.modules["funcgrad._torch.overrides"]._FUNCS[:5]]
    ident = o.identity(funcs, 0)
    codes = tuple(f.__code__ for _, f in funcs)
    path = str(tmp_path / "c" / "x.marshal")
    assert o.store(path, ident, codes)
    assert o.load(path, ident) == codes
    (p, mtime, size), *rest = ident[4]
    assert o.load(path, ident[:4] + (((p, mtime + 1, size), *rest),) + ident[5:]) is None
    assert o.load(path, ident[:4] + (((p, mtime, size + 1), *rest),) + ident[5:]) is None
    assert o.load(path, ident[:2] + ("cpython-00",) + ident[3:]) is None
    assert o.load(path, o.identity(funcs[:4], 0)) is None
    assert o.load(path, o.identity(funcs, 1)) is None
    (tmp_path / "f").write_text("")
    assert not o.store(str(tmp_path / "f" / "x.marshal"), ident, codes)


def test_plain_calls_do_not_reach_dispatch(monkeypatch):
    """The check's fast path: plain tensors, scalars and lists/tuples of them never call _dispatch (cat's list
    used to, costing ~9k instructions a call); a list holding an overriding object does."""
    calls = []
    g = fg.cat.__globals__
    real = g["_tf_dispatch"]
    monkeypatch.setitem(g, "_tf_dispatch", lambda *a: calls.append(a[0]) or real(*a))
    x, y = fg.ones(2), fg.ones(2)
    fg.cat([x, y]); fg.cat((x, y), 0); fg.stack([x, y])
    assert calls == [] and fg.cat([x, y]).tolist() == [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.cat'"):
        fg.cat([x, ScalarTensor(5, 2)])
    assert len(calls) == 1
