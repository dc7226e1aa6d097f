"""torch.signal.windows, torch.svd_lowrank / pca_lowrank, DLPack export (Tensor.__dlpack__, torch.to_dlpack,
torch.utils.dlpack), the deterministic-algorithms flags and the typing-alias modules, against torch 2.13."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

WINDOWS = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann", "kaiser", "nuttall"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("M", [0, 1, 2, 5, 16, 33])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows_match_torch(name, M, sym, dtype):
    ours = getattr(fg.signal.windows, name)(M, sym=sym, dtype=getattr(fg, dtype))
    theirs = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype))
    assert ours.dtype == getattr(fg, dtype) and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-6 if dtype == "float32" else 1e-13,
                               atol=1e-7 if dtype == "float32" else 1e-15)


@pytest.mark.parametrize("call", [
    lambda W, L: W.exponential(7, sym=False, center=2.0, tau=0.5),
    lambda W, L: W.gaussian(9, std=0.7),
    lambda W, L: W.kaiser(8, beta=3.5, sym=False),
    lambda W, L: W.general_cosine(10, a=[0.46, 0.23, 0.31]),
    lambda W, L: W.general_hamming(6, alpha=0.6, sym=False),
    lambda W, L: W.hann(4, requires_grad=True),
])
def test_window_arguments(call):
    ours, theirs = call(fg.signal.windows, fg), call(torch.signal.windows, torch)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=2e-6, atol=1e-7)
    assert ours.requires_grad == theirs.requires_grad
    assert fg.windows is fg.signal.windows  # (torch.windows is torch's own alias of it)


@pytest.mark.parametrize("call", [
    lambda W, L: W.hann(-1),
    lambda W, L: W.hann(4, dtype=L.int32),
    lambda W, L: W.gaussian(4, std=0.0),
    lambda W, L: W.exponential(4, tau=-1.0),
    lambda W, L: W.exponential(4, center=1.0),
    lambda W, L: W.kaiser(4, beta=-1.0),
    lambda W, L: W.general_cosine(4, a=[]),
    lambda W, L: W.general_cosine(4, a=3),
])
def test_window_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch.signal.windows, torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(fg.signal.windows, fg)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape,q", [((30, 20), 8), ((12, 40), 5), ((3, 25, 10), 4)])
def test_svd_lowrank_matches_torch_with_the_same_seed(shape, q):
    """The test matrix comes from torch.randn, so the same seed gives the same factors as torch (each singular
    pair up to a common sign, which LAPACK drivers choose freely)."""
    a = np.random.default_rng(0).standard_normal(shape)
    outs = []
    for lib in (fg, torch):
        lib.manual_seed(3)
        outs.append([t.numpy() for t in lib.svd_lowrank(lib.tensor(a), q=q, niter=3)])
    (U, S, V), (tU, tS, tV) = outs
    np.testing.assert_allclose(S, tS, rtol=1e-10)
    sign = np.sign(np.sum(U * tU, axis=-2, keepdims=True))
    np.testing.assert_allclose(U * sign, tU, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(V * sign, tV, rtol=1e-8, atol=1e-10)


def test_svd_lowrank_recovers_a_low_rank_matrix_and_its_mean():
    rng = np.random.default_rng(1)
    low = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 25))
    mean = rng.standard_normal((1, 25))
    A = fg.tensor(low + mean)
    U, S, V = fg.svd_lowrank(A, q=5, M=fg.tensor(mean))
    np.testing.assert_allclose((U @ fg.diag(S) @ V.T).numpy(), low, atol=1e-9)
    np.testing.assert_allclose(S.numpy()[:3], np.linalg.svd(low, compute_uv=False)[:3], rtol=1e-10)


def test_pca_lowrank_matches_torch():
    a = np.random.default_rng(2).standard_normal((50, 7))
    for center in (True, False):
        outs = []
        for lib in (fg, torch):
            lib.manual_seed(5)
            outs.append([t.numpy() for t in lib.pca_lowrank(lib.tensor(a), center=center)])
        (U, S, V), (tU, tS, tV) = outs
        np.testing.assert_allclose(S, tS, rtol=1e-10)
        sign = np.sign(np.sum(V * tV, axis=-2, keepdims=True))
        np.testing.assert_allclose(V * sign, tV, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(U * sign, tU, rtol=1e-8, atol=1e-10)
    for lib in (fg, torch):
        with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer and not greater than"):
            lib.pca_lowrank(lib.tensor(a), q=9)


def test_svd_lowrank_gradient_flows():
    """Composed of recorded ops, so the factors are differentiable (here: the sum of the singular values)."""
    a = np.random.default_rng(3).standard_normal((9, 6))
    grads = []
    for lib in (fg, torch):
        lib.manual_seed(0)
        x = lib.tensor(a, requires_grad=True)
        lib.svd_lowrank(x, q=6)[1].sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)


def test_dlpack_shares_memory_both_ways():
    x = fg.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(x)
    t[0, 0] = 9.0
    assert x[0, 0].item() == 9.0
    y = fg.from_dlpack(fg.to_dlpack(x))  # a capsule, consumed once; the tensor writes into x's memory
    y[1, 1] = -1.0
    assert x[1, 1].item() == -1.0
    z = fg.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    z[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    assert torch.from_dlpack(x.T).stride() == x.T.stride() == (1, 3)
    np.testing.assert_array_equal(np.from_dlpack(x), x.numpy())
    assert x.__dlpack_device__() == torch.ones(1).__dlpack_device__()
    assert fg.utils.dlpack.DLDeviceType.kDLCPU == torch.utils.dlpack.DLDeviceType.kDLCPU


def test_dlpack_refuses_a_tensor_that_requires_grad():
    for lib in (fg, torch):
        with pytest.raises(BufferError, match="Can't export tensors that require gradient, use tensor.detach()"):
            lib.ones(2, requires_grad=True).__dlpack__()


def test_deterministic_flags_read_back_as_in_torch():
    def states(lib):
        out = [(lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
                lib.get_deterministic_debug_mode())]
        for mode in ("warn", 2, "default", 1, 0):
            lib.set_deterministic_debug_mode(mode)
            out.append((lib.are_deterministic_algorithms_enabled(),
                        lib.is_deterministic_algorithms_warn_only_enabled(), lib.get_deterministic_debug_mode()))
        lib.use_deterministic_algorithms(True, warn_only=True)
        out.append(lib.get_deterministic_debug_mode())
        lib.use_deterministic_algorithms(False)
        return out
    assert states(fg) == states(torch)
    for bad, exc in ((3, RuntimeError), ("loud", RuntimeError), (1.5, TypeError)):
        for lib in (fg, torch):
            with pytest.raises(exc, match="debug_mode"):
                lib.set_deterministic_debug_mode(bad)
    for lib in (fg, torch):
        with pytest.raises(TypeError, match="must be bool"):
            lib.use_deterministic_algorithms(1)


def test_typing_modules_and_functional_paths():
    from funcgrad.functional import einsum, svd_lowrank
    from funcgrad.nn.common_types import _size_2_t
    from funcgrad.types import Number
    assert einsum is fg.einsum and svd_lowrank is fg.svd_lowrank
    assert set(fg.functional.__all__) == set(torch.functional.__all__)
    assert _size_2_t == (int | tuple[int, int]) and Number == (int | float | bool)
    assert fg.nn.functional.grad is fg.nn.grad
    import funcgrad.nn.quantized as nnq  # torch's older path of torch.ao.nn.quantized: the same classes
    for sub, name in (("quantized", "Linear"), ("intrinsic", "LinearReLU"), ("qat", "Linear")):
        assert getattr(getattr(torch.nn, sub), name) is getattr(getattr(torch.ao.nn, sub), name)
        assert getattr(getattr(fg.nn, sub), name) is getattr(getattr(fg.ao.nn, sub), name)
    assert nnq is fg.ao.nn.quantized
    assert hasattr(torch.utils, "hooks") and fg.utils.hooks.RemovableHandle is not None  # (without importing it)
    assert fg.nn.factory_kwargs({"dtype": fg.float64, "factory_kwargs": {"device": "cpu"}}) == {
        "dtype": fg.float64, "device": "cpu"}
    for lib in (fg, torch):
        with pytest.raises(TypeError, match="unexpected kwargs"):
            lib.nn.factory_kwargs({"bias": True})
        with pytest.raises(TypeError, match="dtype specified twice"):
            lib.nn.factory_kwargs({"dtype": None, "factory_kwargs": {"dtype": None}})


def test_nn_modules_utils_and_version_match_torch():
    import torch.nn.modules.utils as tu

    import funcgrad.nn.modules.utils as fu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4, 5, 6]):
            assert getattr(fu, name)(arg) == getattr(tu, name)(arg)
    assert fu._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    assert fu._list_with_default([None, 4], [8, 3, 7, 9]) == tu._list_with_default([None, 4], [8, 3, 7, 9])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        fu._list_with_default([None, 4], [8, 3])
    for mod in (fu, tu):
        sd = fg.nn.Linear(2, 3).state_dict() if mod is fu else torch.nn.Linear(2, 3).state_dict()
        sd = type(sd)((f"module.{k}", v) for k, v in sd.items())
        sd._metadata = {"": {"version": 1}, "module": {"version": 1}, "module.sub": {}}
        mod.consume_prefix_in_state_dict_if_present(sd, "module.")
        assert list(sd) == ["weight", "bias"] and sorted(sd._metadata) == ["", "sub"]
    assert fg.version.cuda is None is torch.version.cuda and fg.version.__version__ == fg.__version__
