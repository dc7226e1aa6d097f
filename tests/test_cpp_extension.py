"""funcgrad.utils.cpp_extension (torch.utils.cpp_extension): C++ compiled with the system compiler against
funcgrad's torch/extension.h, called through its C ABI.

The extensions are compiled once per session (module-scoped fixtures into tmp_path_factory); the tests that
compile are marked `compiles` (deselect them with -m "not compiles") and skip without a C++ compiler."""
from __future__ import annotations

import gc
import inspect
import os
import pathlib
import shutil
import subprocess
import sys
import weakref

import numpy as np
import pytest

import funcgrad as torch
from funcgrad.utils import cpp_extension as ce

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
HAVE_CXX = shutil.which(ce.get_cxx_compiler()) is not None
compiles = [pytest.mark.compiles, pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")]

INLINE_SRC = r"""
#include <tuple>
// the tutorial's first function, written with ATen operations
torch::Tensor d_sigmoid(torch::Tensor z) {
  auto s = torch::sigmoid(z);
  return (1 - s) * s;
}
// the same with a data_ptr loop over each floating dtype
at::Tensor d_sigmoid_loop(at::Tensor z) {
  auto zc = z.contiguous();
  auto out = torch::empty_like(zc);
  AT_DISPATCH_FLOATING_TYPES(zc.scalar_type(), "d_sigmoid_loop", ([&] {
    const scalar_t* p = zc.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < zc.numel(); ++i) {
      scalar_t s = scalar_t(1) / (scalar_t(1) + std::exp(-p[i]));
      o[i] = (scalar_t(1) - s) * s;
    }
  }));
  return out;
}
// a 2-D accessor loop: out[i][j] = x[i][j] * w[j] + b
at::Tensor affine_rows(at::Tensor x, at::Tensor w, double b) {
  TORCH_CHECK(x.dim() == 2, "affine_rows: expected a 2-D x, got ", x.dim(), "-D");
  TORCH_CHECK(w.size(0) == x.size(1), "affine_rows: w has ", w.size(0), " entries for ", x.size(1), " columns");
  auto out = torch::zeros({x.size(0), x.size(1)}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "affine_rows", [&] {
    auto xa = x.accessor<scalar_t, 2>();
    auto wa = w.accessor<scalar_t, 1>();
    auto oa = out.packed_accessor64<scalar_t, 2>();
    for (int64_t i = 0; i < xa.size(0); ++i)
      for (int64_t j = 0; j < xa.size(1); ++j) oa[i][j] = xa[i][j] * wa[j] + static_cast<scalar_t>(b);
  });
  return out;
}
at::Tensor mysin(at::Tensor x) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "mysin", [&] {
    auto* p = xc.data_ptr<scalar_t>();
    auto* o = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < xc.numel(); ++i) o[i] = std::sin(p[i]);
  });
  return out;
}
at::Tensor ident(at::Tensor x) { return x; }
at::Tensor transposed(at::Tensor x) { return x.t(); }
void scale_(at::Tensor x, double a) { x.mul_(a); }
// in-place ATen operations bump the tensor's version (views share it); a data_ptr write does not, as in torch
int64_t add_then_zero_row_(at::Tensor x) { x.add_(1); x.narrow(0, 0, 1).zero_(); return x._version(); }
void raw_write_(at::Tensor x) { x.data_ptr<double>()[0] = 5.0; }
void zero_first_row_(at::Tensor x) { x.narrow(0, 0, 1).zero_(); }
void detached_add_(at::Tensor x) { x.detach().add_(1); }
int64_t version_of(at::Tensor x) { return x._version(); }
static at::Tensor kept;
void keep(at::Tensor x) { kept = x; }
at::Tensor get_kept() { return kept; }
void drop() { kept = at::Tensor(); }
std::tuple<at::Tensor, int64_t, double, bool, std::string> combine(std::vector<at::Tensor> xs, c10::optional<at::Tensor> y,
                                                                  int64_t k, std::string s) {
  at::Tensor acc = torch::zeros_like(xs[0]);
  for (auto& x : xs) acc += x;
  if (y) acc += *y;
  return {acc, k * 2, 0.5, true, s + "!"};
}
std::vector<at::Tensor> split_halves(at::Tensor x) { return x.chunk(2, 0); }
int64_t count(at::IntArrayRef a) { return static_cast<int64_t>(a.size()); }
at::Tensor full_of(int64_t n, double v, at::ScalarType t) { return torch::full({n}, v, torch::dtype(t)); }
at::Tensor empty_rows() { return torch::empty({0, 3}); }
at::Tensor sum_float(at::Tensor x) { return torch::ones({1}) * x.data_ptr<float>()[0]; }
// ATen arithmetic of the header, with torch's type promotion
std::vector<at::Tensor> arith(at::Tensor x, at::Tensor y) {
  return {x + y, x - y * 2, x * y, x / y, x + 1.5, 2 - x, x > y, x.pow(2), x.sum(), x.sum(0, true), x.abs(),
          x.clamp(-1, 1), torch::relu(x), x.mm(y.t()), torch::cat({x, y}, 0), x.to(torch::kDouble).mean(1), -x,
          x.exp()};
}
at::Tensor index_error(at::Tensor x) { TORCH_CHECK_INDEX(false, "index ", 7, " is out of bounds for size ", x.size(0)); return x; }
at::Tensor std_error(at::Tensor x) { throw std::invalid_argument("std::invalid_argument from C++"); }
"""
INLINE_FUNCTIONS = ["d_sigmoid", "d_sigmoid_loop", "affine_rows", "mysin", "ident", "transposed", "scale_",
                    "add_then_zero_row_", "raw_write_", "zero_first_row_", "detached_add_", "version_of", "keep",
                    "get_kept", "drop", "combine", "split_halves", "count", "full_of", "empty_rows", "sum_float", "arith",
                    "index_error", "std_error"]


@pytest.fixture(scope="module")
def inline(tmp_path_factory):
    """load_inline of INLINE_SRC with functions=[...], built under $TORCH_EXTENSIONS_DIR (no build_directory)."""
    if not HAVE_CXX:
        pytest.skip("no C++ compiler")
    root = tmp_path_factory.mktemp("ext_root")
    old = os.environ.get("TORCH_EXTENSIONS_DIR")
    os.environ["TORCH_EXTENSIONS_DIR"] = str(root)
    try:
        m = ce.load_inline("fg_inline_ext", INLINE_SRC, functions={f: f"doc of {f}" for f in INLINE_FUNCTIONS})
    finally:
        if old is None:
            del os.environ["TORCH_EXTENSIONS_DIR"]
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = old
    m._root = root
    return m


@pytest.fixture(scope="module")
def lltm(tmp_path_factory):
    """The tutorial's lltm.cpp through load(), with its own PYBIND11_MODULE block."""
    if not HAVE_CXX:
        pytest.skip("no C++ compiler")
    build = tmp_path_factory.mktemp("lltm_build")
    return ce.load("lltm_cpp", [str(HERE / "data" / "cpp_extension" / "lltm.cpp")], build_directory=str(build))


def _sigmoid_grad(x: np.ndarray) -> np.ndarray:
    s = 1.0 / (1.0 + np.exp(-x))
    return (1.0 - s) * s


# --- what needs no compiler -----------------------------------------------------------------------------------------
def test_missing_compiler_names_cxx_and_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", str(tmp_path / "no" / "such-g++"))
    with pytest.raises(RuntimeError) as e:
        ce.load_inline("fg_nocxx", "int f(int x) { return x; }", functions=["f"], build_directory=str(tmp_path))
    msg = str(e.value)
    assert "Error building extension 'fg_nocxx'" in msg
    assert str(tmp_path / "no" / "such-g++") in msg and "CXX" in msg
    assert "g++" in msg and "clang" in msg


def test_cuda_sources_raise_torchs_oserror(tmp_path):
    with pytest.raises(OSError, match="CUDA_HOME environment variable is not set. Please set it to your CUDA "
                                      "install root."):
        ce.load_inline("fg_cuda", "int f();", cuda_sources="__global__ void k() {}", functions=["f"],
                       build_directory=str(tmp_path))
    with pytest.raises(OSError, match="CUDA_HOME"):
        ce.include_paths("cuda")
    with pytest.raises(OSError, match="CUDA_HOME"):
        ce.CUDAExtension("x", ["x.cu"])


def test_paths_and_ninja(monkeypatch, tmp_path):
    (inc,) = ce.include_paths()
    assert (pathlib.Path(inc) / "torch" / "extension.h").is_file()
    assert ce.include_paths(torch_include_dirs=False) == [] and ce.library_paths() == []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ce.get_default_build_root() == os.path.realpath(tmp_path / "funcgrad_extensions")
    assert ce.is_ninja_available() is (shutil.which("ninja") is not None)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ce.is_ninja_available() is False
    with pytest.raises(RuntimeError, match=r"Ninja is required to load C\+\+ extensions"):
        ce.verify_ninja_availability()


def test_signatures_are_torchs():
    tce = pytest.importorskip("torch.utils.cpp_extension")
    for name in ("load", "load_inline", "include_paths", "get_default_build_root", "is_ninja_available",
                 "verify_ninja_availability", "library_paths", "CppExtension"):
        ours, theirs = inspect.signature(getattr(ce, name)), inspect.signature(getattr(tce, name))
        assert [(p.name, p.default) for p in ours.parameters.values()] == \
               [(p.name, p.default) for p in theirs.parameters.values()], name


def test_header_is_package_data():
    import tomllib
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "include/**/*.h" in data["funcgrad.utils"]


# --- the tutorial's numbers -------------------------------------------------------------------------------------------
@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
@pytest.mark.parametrize("fn", ["d_sigmoid", "d_sigmoid_loop"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_d_sigmoid_matches_the_formula(inline, fn, dtype):
    x = np.linspace(-6, 6, 25).astype(dtype).reshape(5, 5)
    out = getattr(inline, fn)(torch.from_numpy(x))
    assert out.dtype == getattr(torch, dtype) and out.shape == (5, 5)
    # (1 - s) cancels where s is near 1: the error is a few ulps of s, absolute
    tol = dict(rtol=1e-6, atol=2.5e-7) if dtype == "float32" else dict(rtol=1e-14, atol=5e-16)
    np.testing.assert_allclose(out.numpy(), _sigmoid_grad(x.astype(np.float64)), **tol)
    t = pytest.importorskip("torch")
    s = t.sigmoid(t.from_numpy(x))
    np.testing.assert_allclose(out.numpy(), ((1 - s) * s).numpy(), **tol)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_accessors(inline):
    x = np.arange(12.0).reshape(3, 4)
    w = np.array([1.0, -2.0, 0.5, 3.0])
    out = inline.affine_rows(torch.from_numpy(x.T.copy()).t(), torch.from_numpy(w), 1.5)  # x through a strided view
    np.testing.assert_array_equal(out.numpy(), x * w + 1.5)
    with pytest.raises(RuntimeError, match="affine_rows: expected a 2-D x, got 1-D"):
        inline.affine_rows(torch.from_numpy(w), torch.from_numpy(w), 1.0)


def _lltm_reference(X, W, b, h, c):
    """The tutorial's LLTM in Python (its LLTM module's forward), in funcgrad or torch operations."""
    Xc = torch.cat([h, X], dim=1)
    gates = torch.addmm(b, Xc, W.t()).chunk(3, dim=1)
    ig, og, cc = torch.sigmoid(gates[0]), torch.sigmoid(gates[1]), torch.nn.functional.elu(gates[2])
    new_c = c + cc * ig
    return torch.tanh(new_c) * og, new_c


def _lltm_inputs(requires_grad=False):
    rng = np.random.default_rng(0)
    B, F, S = 3, 5, 4
    shapes = [(B, F), (3 * S, F + S), (1, 3 * S), (B, S), (B, S)]
    return [torch.tensor(rng.standard_normal(s), dtype=torch.float64, requires_grad=requires_grad) for s in shapes]


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_lltm_forward_matches_python_and_torch(lltm):
    X, W, b, h, c = _lltm_inputs()
    outs = lltm.forward(X, W, b, h, c)
    assert isinstance(outs, list) and len(outs) == 7
    ref_h, ref_c = _lltm_reference(X, W, b, h, c)
    np.testing.assert_allclose(outs[0].numpy(), ref_h.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(outs[1].numpy(), ref_c.numpy(), rtol=1e-13, atol=1e-15)
    # X is [h, X]: an exact copy
    np.testing.assert_array_equal(outs[5].numpy(), np.concatenate([h.numpy(), X.numpy()], axis=1))
    t = pytest.importorskip("torch")
    tX, tW, tb, th, tc = (t.from_numpy(a.numpy()) for a in (X, W, b, h, c))
    Xc = t.cat([th, tX], dim=1)
    g = t.addmm(tb, Xc, tW.t()).chunk(3, dim=1)
    t_c = tc + t.nn.functional.elu(g[2]) * t.sigmoid(g[0])
    np.testing.assert_allclose(outs[1].numpy(), t_c.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(outs[0].numpy(), (t.tanh(t_c) * t.sigmoid(g[1])).numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_lltm_function_gradients(lltm):
    """The tutorial's LLTMFunction (forward and backward in C++) against autograd through the Python LLTM."""
    class LLTMFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, weights, bias, old_h, old_cell):
            outputs = lltm.forward(input, weights, bias, old_h, old_cell)
            new_h, new_cell = outputs[:2]
            ctx.save_for_backward(*(outputs[1:] + [weights]))
            return new_h, new_cell

        @staticmethod
        def backward(ctx, grad_h, grad_cell):
            d_old_h, d_input, d_weights, d_bias, d_old_cell = lltm.backward(
                grad_h.contiguous(), grad_cell.contiguous(), *ctx.saved_tensors)
            return d_input, d_weights, d_bias, d_old_h, d_old_cell

    inputs = _lltm_inputs(requires_grad=True)
    new_h, new_c = LLTMFunction.apply(*inputs)
    (new_h.sum() + (2 * new_c).sum()).backward()
    ours = [t.grad.clone() for t in inputs]
    for t in inputs:
        t.grad = None
    ref_h, ref_c = _lltm_reference(*inputs)
    (ref_h.sum() + (2 * ref_c).sum()).backward()
    for a, r in zip(ours, inputs):
        np.testing.assert_allclose(a.numpy(), r.grad.numpy(), rtol=1e-12, atol=1e-14)


# --- binding: arguments, results, errors ----------------------------------------------------------------------------
@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_argument_and_result_types(inline):
    x = torch.arange(6.0).reshape(2, 3)
    acc, k, half, flag, s = inline.combine([x, x], None, 3, "hi")
    np.testing.assert_array_equal(acc.numpy(), 2 * np.arange(6.0).reshape(2, 3))
    assert (k, half, flag, s) == (6, 0.5, True, "hi!")
    acc2 = inline.combine([x], x, 1, "")[0]
    np.testing.assert_array_equal(acc2.numpy(), acc.numpy())
    halves = inline.split_halves(torch.arange(5))
    assert [h.tolist() for h in halves] == [[0, 1, 2], [3, 4]] and halves[0].dtype == torch.int64
    assert inline.count([4, 5, 6]) == 3 and inline.count(()) == 0
    f = inline.full_of(3, 2.5, torch.float64)
    assert f.dtype == torch.float64 and f.tolist() == [2.5, 2.5, 2.5]
    assert inline.full_of(2, 7, torch.int32).tolist() == [7, 7] and inline.full_of(2, 7, torch.int32).dtype == torch.int32
    e = inline.empty_rows()
    assert e.shape == (0, 3) and e.dtype == torch.float32


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_header_arithmetic_and_promotion(inline, dtype):
    x = np.array([[-2, 0, 3], [1, -1, 4]], dtype=dtype)
    y = np.array([[1, 2, -3], [4, 5, 2]], dtype=dtype)
    got = inline.arith(torch.from_numpy(x), torch.from_numpy(y))
    f = np.float32 if dtype == "int32" else np.float64   # what an integer tensor promotes to with a float
    expect = [x + y, x - y * 2, x * y, (x / y).astype(f), (x + 1.5).astype(f), 2 - x, x > y, x ** 2,
              x.sum(dtype=np.int64 if dtype == "int32" else None), x.sum(0, keepdims=True, dtype=np.int64 if dtype == "int32" else None),
              np.abs(x), np.clip(x, -1, 1), np.maximum(x, 0), x @ y.T, np.concatenate([x, y]),
              x.astype(np.float64).mean(1), -x, np.exp(x.astype(f))]
    assert len(got) == len(expect)
    for i, (g, e) in enumerate(zip(got, expect)):
        assert g.numpy().dtype == e.dtype, (i, g.dtype, e.dtype)
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-6 if e.dtype == np.float32 else 1e-15, err_msg=str(i))
    t = pytest.importorskip("torch")
    tx, ty = t.from_numpy(x), t.from_numpy(y)
    theirs = [tx + ty, tx / ty, tx + 1.5, 2 - tx, tx > ty, tx.pow(2), tx.sum(), tx.exp()]
    for g, e in zip([got[0], got[3], got[4], got[5], got[6], got[7], got[8], got[17]], theirs):
        assert str(g.dtype) == str(e.dtype)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_incompatible_arguments_raise_pybind_typeerror(inline):
    with pytest.raises(TypeError) as e:
        inline.mysin(1.5)
    assert str(e.value) == ("mysin(): incompatible function arguments. The following argument types are supported:\n"
                            "    1. (arg0: torch.Tensor) -> torch.Tensor\n\nInvoked with: 1.5")
    with pytest.raises(TypeError, match="incompatible function arguments"):
        inline.combine([torch.ones(2)], None, 1.5, "x")   # a float for an int64_t
    with pytest.raises(TypeError, match="incompatible function arguments"):
        inline.mysin(torch.ones(2), torch.ones(2))
    assert not ce._PINS   # the buffers pinned for the failed calls were released


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_cpp_errors_become_python_errors(inline):
    with pytest.raises(RuntimeError, match=r'^"mysin" not implemented for \'Int\'$'):
        inline.mysin(torch.ones(3, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double$"):
        inline.sum_float(torch.ones(2, dtype=torch.float64))
    with pytest.raises(IndexError, match="^index 7 is out of bounds for size 4$"):
        inline.index_error(torch.ones(4))
    with pytest.raises(ValueError, match="^std::invalid_argument from C\\+\\+$"):
        inline.std_error(torch.ones(4))
    t = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as theirs:   # torch's own message for the same dispatch failure
        t.nn.functional.elu(t.ones(3, dtype=t.int32))
    assert "not implemented for 'Int'" in str(theirs.value)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_docstrings_and_schema(inline):
    assert inline.mysin.__doc__.endswith("doc of mysin")
    assert inline.mysin._schema == "(Tensor arg0) -> Tensor"
    assert inline.combine._schema == "(Tensor[] arg0, Tensor? arg1, int arg2, str arg3) -> (Tensor, int, float, bool, str)"
    assert torch.library._OPS["fg_inline_ext::mysin"] is inline.mysin


# --- memory: borrowed inputs, owned results ---------------------------------------------------------------------------
@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_inputs_are_borrowed_and_writes_are_seen(inline):
    x = torch.arange(6.0).reshape(2, 3)
    inline.scale_(x, 2.0)
    assert x.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    y = inline.ident(x)
    assert np.shares_memory(y.numpy(), x.numpy()) and y.tolist() == x.tolist()
    v = inline.transposed(x)
    assert v.shape == (3, 2) and np.shares_memory(v.numpy(), x.numpy())
    np.testing.assert_array_equal(v.numpy(), x.numpy().T)
    del y, v
    gc.collect()
    assert not ce._PINS


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_in_place_writes_bump_the_version_counter(inline):
    """C++'s in-place ATen operations add one to the argument's version each, as torch's (whose C++ calls go through
    the same in-place operators); a write through data_ptr() does not; C++ sees the Python tensor's version."""
    x = torch.zeros(2, 3, dtype=torch.float64)
    x.add_(1)
    assert x._version == 1 and inline.version_of(x) == 1
    assert inline.add_then_zero_row_(x) == 3 and x._version == 3
    assert x.tolist() == [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]]
    inline.raw_write_(x)
    assert x._version == 3 and x[0, 0].item() == 5.0
    v = x[1]                       # a view shares the counter
    inline.scale_(v, 2.0)
    assert x._version == v._version == 4 and x[1].tolist() == [4.0, 4.0, 4.0]
    inline.scale_(x.numpy(), 1.0)  # (a NumPy array has no counter)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_in_place_write_into_a_saved_tensor_raises_torchs_error(inline):
    """A C++ in-place write into a tensor autograd saved makes backward raise torch's error (checked against torch
    running the same in-place operator, which is what torch's C++ x.mul_ calls)."""
    def run(lib, scale_):
        a = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = a * 2
        z = y.sin()                # saves y
        with lib.no_grad():
            scale_(y, 3.0)
        with pytest.raises(RuntimeError) as e:
            z.sum().backward()
        return y._version, str(e.value)
    version, msg = run(torch, inline.scale_)
    assert version == 1
    assert msg.startswith("one of the variables needed for gradient computation has been modified by an inplace "
                          "operation: [torch.DoubleTensor [3]], which is output 0 of Mul, is at version 1; "
                          "expected version 0 instead.")
    t = pytest.importorskip("torch")
    assert (version, msg) == run(t, lambda y, a: y.mul_(a))


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_in_place_write_into_a_leaf_requiring_grad_raises_torchs_error(inline):
    """C++'s in-place operators on a leaf that requires grad (or a view of one, made in Python or in C++) raise
    torch's RuntimeError before writing, as torch's C++ operators do (the same check as its Python in-place
    operators, run here as the reference); under no_grad, on a non-leaf, after detach() or through data_ptr()
    the write goes through, as in torch (which loaded with its own load_inline behaves the same, torch 2.13)."""
    def calls(lib, cpp):
        def leaf():
            return lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        out = {}
        cases = {"leaf": lambda x: cpp["scale_"](x, 2.0), "python_view": lambda x: cpp["scale_"](x[1], 2.0),
                 "cpp_view": lambda x: cpp["zero_first_row_"](x)}
        for name, f in cases.items():
            x = leaf()
            with pytest.raises(RuntimeError) as e:
                f(x)
            out[name] = (str(e.value).splitlines()[0], x.detach().tolist(), x._version)
        for name, f in {"raw": cpp["raw_write_"], "detached": cpp["detached_add_"]}.items():
            x = leaf()
            f(x)
            out[name] = (x.detach().tolist(), x._version)
        x = leaf()
        with lib.no_grad():
            cpp["scale_"](x, 2.0)
        out["no_grad"] = (x.detach().tolist(), x._version)
        y = leaf() * 1
        cpp["scale_"](y, 2.0)
        out["non_leaf"] = (y.detach().tolist(), y._version)
        return out
    ours = calls(torch, {n: getattr(inline, n) for n in ("scale_", "zero_first_row_", "raw_write_", "detached_add_")})
    assert ours["leaf"] == ("a leaf Variable that requires grad is being used in an in-place operation.",
                            [[1.0, 2.0], [3.0, 4.0]], 0)
    assert ours["cpp_view"][0] == ours["python_view"][0] == \
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    assert ours["raw"] == ([[5.0, 2.0], [3.0, 4.0]], 0)
    t = pytest.importorskip("torch")
    ref = {"scale_": lambda x, a: x.mul_(a), "zero_first_row_": lambda x: x.narrow(0, 0, 1).zero_(),
           "raw_write_": lambda x: x.data.view(-1).__setitem__(0, 5.0),  # (.data: a write autograd does not see)
           "detached_add_": lambda x: x.detach().add_(1)}
    theirs = calls(t, ref)
    assert ours == theirs


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_a_tensor_cpp_keeps_outlives_the_python_one(inline):
    x = torch.tensor([1.5, 2.5, 3.5], dtype=torch.float64)
    inline.keep(x)
    del x
    gc.collect()
    assert len(ce._PINS) == 1                     # the buffer stays while C++ holds it
    np.ones(10000)                                # (allocate over anything freed)
    assert inline.get_kept().tolist() == [1.5, 2.5, 3.5]
    gc.collect()
    inline.drop()
    assert not ce._PINS


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_results_own_cpp_memory_until_the_last_view_goes(inline):
    out = inline.mysin(torch.linspace(0, 1, 8, dtype=torch.float64))
    arr = out.numpy()
    owner = arr.base
    while not isinstance(owner, ce._ResultBuffer):
        owner = owner.base
    ref = weakref.ref(owner)
    view = arr[2:5]
    del out, arr, owner
    gc.collect()
    assert ref() is not None
    np.testing.assert_allclose(view, np.sin(np.linspace(0, 1, 8))[2:5], rtol=1e-15)
    del view
    gc.collect()
    assert ref() is None


# --- custom_op: autograd, no_grad, compile ----------------------------------------------------------------------------
@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_register_autograd_gives_the_gradient(inline):
    x = torch.linspace(-2, 2, 7, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        inline.mysin(x).sum().backward()
    with torch.no_grad():
        assert not inline.mysin(x).requires_grad
    x.grad = None
    try:
        inline.mysin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
                                       setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
        y = inline.mysin(x)
        assert y.requires_grad
        (y * torch.arange(7.0, dtype=torch.float64)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos(x.detach().numpy()) * np.arange(7.0), rtol=1e-15)
        assert torch.autograd.gradcheck(inline.mysin, (x.detach().requires_grad_(),))
    finally:
        inline.mysin._fn_cls = None


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_torch_compile_falls_back_to_eager(inline):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return inline.d_sigmoid(self.lin(x))

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(3, 4)
    with torch.no_grad():
        expect = net(x)
        got = torch.compile(net)(x)
    np.testing.assert_array_equal(got.numpy(), expect.numpy())


# --- building: directories, caching, errors, setuptools ---------------------------------------------------------------
@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_build_directory_and_cache(inline, monkeypatch):
    path = pathlib.Path(inline.__file__)
    assert path.parent == inline._root / "fg_inline_ext" and path.suffix == ce.LIB_EXT
    mtime = path.stat().st_mtime_ns
    main_cpp = path.parent / "main.cpp"
    main_mtime = main_cpp.stat().st_mtime_ns

    def no_compiling(*args, **kwargs):
        raise AssertionError("the unchanged extension was compiled again")
    monkeypatch.setattr(ce.subprocess, "run", no_compiling)
    again = ce.load_inline("fg_inline_ext", INLINE_SRC, functions={f: f"doc of {f}" for f in INLINE_FUNCTIONS},
                           build_directory=str(path.parent))
    assert again.__file__ == str(path) and path.stat().st_mtime_ns == mtime
    assert main_cpp.stat().st_mtime_ns == main_mtime
    np.testing.assert_array_equal(again.ident(torch.ones(2)).numpy(), [1.0, 1.0])


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_changed_source_rebuilds(tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text("#include <torch/extension.h>\nint64_t k() { return 1; }\n"
                   "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"k\", &k); }\n")
    m1 = ce.load("fg_k", [str(src)], build_directory=str(tmp_path / "b"))
    assert m1.k() == 1
    src.write_text(src.read_text().replace("return 1;", "return 2;"))
    m2 = ce.load("fg_k", [str(src)], build_directory=str(tmp_path / "b"))
    assert m2.k() == 2 and m2.__file__ != m1.__file__
    assert m1.k() == 1   # the library already loaded stays usable
    assert sorted(p.name for p in (tmp_path / "b").glob("fg_k_*")) == [pathlib.Path(m2.__file__).name]
    lib = ce.load("fg_k", [str(src)], build_directory=str(tmp_path / "b"), is_python_module=False)
    assert lib == m2.__file__


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_compile_error_carries_the_compilers_output(tmp_path):
    with pytest.raises(RuntimeError) as e:
        ce.load_inline("fg_broken", "at::Tensor f(at::Tensor x) { return x.no_such_method(); }", functions=["f"],
                       build_directory=str(tmp_path))
    msg = str(e.value)
    assert msg.startswith("Error building extension 'fg_broken': ")
    assert "no_such_method" in msg and "error" in msg and "main.cpp" in msg
    assert not list(tmp_path.glob("fg_broken_*"))   # nothing half-built is left


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_library_without_bindings_is_an_importerror(tmp_path):
    with pytest.raises(ImportError, match="PYBIND11_MODULE"):
        ce.load_inline("fg_nobind", "int f() { return 1; }", build_directory=str(tmp_path))
    path = ce.load_inline("fg_nobind", "int f() { return 1; }", build_directory=str(tmp_path), is_python_module=False)
    assert os.path.isfile(path)


@pytest.mark.compiles
@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_setup_py_with_build_extension(tmp_path):
    (tmp_path / "tiny.cpp").write_text(
        "#include <torch/extension.h>\n"
        "torch::Tensor add_one(torch::Tensor x) {\n"
        "  auto out = torch::empty_like(x);\n"
        "  auto* o = out.data_ptr<float>(); auto* p = x.contiguous().data_ptr<float>();\n"
        "  for (int64_t i = 0; i < x.numel(); ++i) o[i] = p[i] + 1;\n"
        "  return out;\n"
        "}\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"add_one\", &add_one, \"x + 1\"); }\n")
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "from funcgrad.utils.cpp_extension import BuildExtension, CppExtension\n"
        "setup(name='tiny', ext_modules=[CppExtension('tiny', ['tiny.cpp'], extra_compile_args=['-O0'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([sys.executable, "-c", "import funcgrad as torch, tiny; "
                          "print(tiny.add_one(torch.tensor([1.0, 2.5])).tolist(), tiny.add_one.__doc__.splitlines()[-1])"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[2.0, 3.5] x + 1"
