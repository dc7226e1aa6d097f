"""funcgrad.fft, funcgrad.special, funcgrad.amp, storages and the importable funcgrad.linalg / funcgrad.cuda,
against real PyTorch (values, dtypes, gradients, warnings and errors)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._torch._complex_reject import NO_HALF

torch = pytest.importorskip("torch")
from torch_check import check, pos, r  # noqa: E402

RNG = np.random.default_rng(1)


# --- module names ------------------------------------------------------------------------------------------

class _TorchShim(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Maps `fakeTorch` and `fakeTorch.x.y` to funcgrad and funcgrad.x.y (how users run torch code on funcgrad)."""

    def find_spec(self, name, path, target=None):
        if name == "fakeTorch" or name.startswith("fakeTorch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("funcgrad" + spec.name[len("fakeTorch"):])

    def exec_module(self, module):
        pass


def test_importable_modules_through_a_shim():
    shim = _TorchShim()
    sys.meta_path.insert(0, shim)
    try:
        import fakeTorch.linalg as LA  # noqa: F401
        import fakeTorch.cuda
        import fakeTorch.cuda.amp
        import fakeTorch.fft
        import fakeTorch.special  # noqa: F401
        from fakeTorch.amp import GradScaler, autocast  # noqa: F401
        assert LA.lu_factor is fg.linalg.lu_factor and LA.matrix_exp is fg.linalg.matrix_exp
        assert fakeTorch.cuda.is_available() is False
        assert fakeTorch.fft.rfft is fg.fft.rfft
    finally:
        sys.meta_path.remove(shim)
        for k in [k for k in sys.modules if k == "fakeTorch" or k.startswith("fakeTorch.")]:
            del sys.modules[k]
    for name in ("funcgrad.linalg", "funcgrad.cuda", "funcgrad.cuda.amp", "funcgrad.fft", "funcgrad.special",
                 "funcgrad.amp"):
        assert importlib.import_module(name) is not None


# --- fft ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", [None, "ortho", "forward", "backward"])
def test_fft_1d(norm):
    x, z = r(3, 8), r(3, 8) + 1j * r(3, 8)
    for name in ("fft", "ifft"):
        check(lambda L, t: getattr(L.fft, name)(t, norm=norm), x)
        check(lambda L, t: getattr(L.fft, name)(t, n=6, dim=0, norm=norm), z)
    check(lambda L, t: (L.fft.rfft(t, norm=norm), L.fft.rfft(t, n=11, norm=norm)), x)
    check(lambda L, t: (L.fft.irfft(t, norm=norm), L.fft.irfft(t, n=9, dim=0, norm=norm)), z)
    check(lambda L, t: (L.fft.hfft(t, norm=norm), L.fft.ihfft(t.real, norm=norm)), z)
    check(lambda L, t: L.fft.fft(t), x.astype(np.float32), rtol=1e-4, atol=1e-5)
    check(lambda L, t: L.fft.fft(t), np.arange(6), grad=False, rtol=1e-5)


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_nd(norm):
    x, z = r(2, 4, 6), r(2, 4, 6) + 1j * r(2, 4, 6)
    for name in ("fft2", "ifft2", "fftn", "ifftn"):
        check(lambda L, t: getattr(L.fft, name)(t, norm=norm), z)
    check(lambda L, t: (L.fft.rfft2(t, norm=norm), L.fft.rfftn(t, s=(3, 5), dim=(0, 2), norm=norm)), x)
    check(lambda L, t: (L.fft.irfft2(t, norm=norm), L.fft.irfftn(t, s=(4, 8), norm=norm)), z)
    check(lambda L, t: (L.fft.hfft2(t, norm=norm), L.fft.hfftn(t, s=(4, 6), dim=(0, 1), norm=norm)), z)
    check(lambda L, t: (L.fft.ihfft2(t, norm=norm), L.fft.ihfftn(t, norm=norm)), x)
    check(lambda L, t: L.fft.fftn(t, s=(-1, 3)), z)


def test_fft_freqs_shifts_errors():
    check(lambda L: (L.fft.fftfreq(7), L.fft.rfftfreq(8, 0.5), L.fft.fftfreq(4, dtype=L.float64)), grad=False)
    x = r(4, 5)
    check(lambda L, t: (L.fft.fftshift(t), L.fft.ifftshift(t, dim=1), L.fft.fftshift(t, dim=(0,))), x)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        fg.fft.fft(fg.ones(4), norm="bad")
    with pytest.raises(RuntimeError):
        torch.fft.fft(torch.ones(4), norm="bad")
    with pytest.raises(RuntimeError):
        fg.fft.rfft(fg.ones(4, dtype=fg.complex64))
    with pytest.raises(RuntimeError):
        torch.fft.rfft(torch.ones(4, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        fg.fft.fft(fg.ones(4), n=0)
    with pytest.raises(IndexError):
        fg.fft.fft(fg.ones(4), dim=3)


# --- special ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,lo,hi", [("i0", -30, 30), ("i0e", -40, 40), ("i1", -30, 30), ("i1e", -40, 40),
                                        ("ndtr", -8, 8), ("ndtri", 0.02, 0.98), ("log_ndtr", -60, 8),
                                        ("entr", 0.01, 3), ("erf", -3, 3), ("erfc", -3, 3), ("erfinv", -0.9, 0.9),
                                        ("expit", -5, 5), ("gammaln", 0.1, 9), ("digamma", 0.1, 9),
                                        ("sinc", -3, 3), ("log1p", -0.5, 3), ("expm1", -2, 2), ("exp2", -3, 3),
                                        ("spherical_bessel_j0", -9, 9)])
def test_special_unary(name, lo, hi):
    x = RNG.uniform(lo, hi, (3, 5))
    check(lambda L, t: getattr(L.special, name)(t), x, rtol=1e-10 if name != "log_ndtr" else 1e-9)
    check(lambda L, t: getattr(L.special, name)(t), x.astype(np.float32), rtol=2e-5, atol=1e-6)


def test_special_edges_and_ints():
    check(lambda L, t: (L.special.entr(t), L.special.i0(t), L.special.ndtr(t)), np.array([-1.0, 0.0, 2.0, np.nan]),
          grad=False)
    check(lambda L, t: (L.special.i0(t), L.special.i1e(t), L.special.ndtr(t)), np.arange(-3, 4), grad=False)
    check(lambda L, t: L.i0(t), np.array([0.0, 0.5, 50.0]))
    check(lambda L, t: L.special.i1(t), np.array([0.0, 1e-3]))
    check(lambda L, t: L.special.log_ndtr(t), np.array([-1e3, -40.0, -20.5, -19.5, 0.0, 30.0]))


def test_special_binary_and_reductions():
    x, y = RNG.uniform(0, 3, (4, 3)), RNG.uniform(-0.5, 3, (4, 3))
    x[0, 0] = 0
    check(lambda L, a, b: (L.special.xlog1py(a, b), L.special.xlogy(a, b + 1)), x, y)
    y[0, 0] = -1.0  # x = 0 gives 0 even where log1p(y) is -inf (torch's gradient there is 0 * inf = NaN)
    check(lambda L, a, b: (L.special.xlog1py(a, b), L.special.xlogy(a, b + 1)), x, y, grad=False)
    check(lambda L, a: (L.special.polygamma(2, a + 0.5), L.polygamma(1, a + 0.5), (a + 0.5).polygamma(3)), x)
    check(lambda L, a: (L.special.logsumexp(a, 1), L.special.softmax(a, 0), L.special.log_softmax(a, 1),
                        L.special.logit(a / 4, eps=1e-6), L.special.round(a * 3)), x)
    check(lambda L, a: L.special.multigammaln(a, 3), x + 2)


def test_incomplete_gamma():
    a, x = RNG.uniform(0.1, 8, (4, 5)), RNG.uniform(0, 15, (4, 5))
    x[0, :2] = 0.0
    check(lambda L, p, q: (L.special.gammainc(p, q), L.special.gammaincc(p, q), L.igamma(p, q), L.igammac(p, q),
                           p.igamma(q)), a, x, grad=False, rtol=1e-9, atol=1e-12)
    xt, xf = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    w = r(4, 5)
    (torch.special.gammainc(torch.tensor(a), xt) * torch.tensor(w)).sum().backward()
    (fg.special.gammainc(fg.tensor(a), xf) * fg.tensor(w)).sum().backward()
    np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-9)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h",
                                  "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"])
def test_orthogonal_polynomials(name):
    x = RNG.uniform(-1, 1, (6,))
    for n in (0, 1, 2, 5):
        check(lambda L, t: getattr(L.special, name)(t, n), x, grad=False, rtol=1e-10, atol=1e-10)
    check(lambda L, t, n: getattr(L.special, name)(t, n), x, np.array([0, 1, 2, 3, 4, 6]), grad=False,
          rtol=1e-10, atol=1e-10)


# --- amp ------------------------------------------------------------------------------------------------

def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)) for x in w if x.category is not ImportWarning]


def test_autocast_matches_a_cpu_only_torch():
    for mk in (lambda L: L.autocast("cuda"), lambda L: L.amp.autocast("cuda"), lambda L: L.cuda.amp.autocast(),
               lambda L: L.autocast("cpu", dtype=L.float32), lambda L: L.autocast("cpu")):
        (a, wa), (b, wb) = _warns(lambda: mk(fg)), _warns(lambda: mk(torch))
        assert [c for c, _ in wa] == [c for c, _ in wb]
        assert [m.split(".")[0] for _, m in wa] == [m.split(".")[0] for _, m in wb]
        assert a._enabled == b._enabled
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        fg.autocast("xyz")
    assert not fg.is_autocast_enabled("cpu")
    with fg.autocast("cpu"):
        assert fg.is_autocast_enabled("cpu") and not fg.is_autocast_enabled()
        assert fg.get_autocast_dtype("cpu") == fg.bfloat16 if fg.bfloat16 is not None else True
        with fg.autocast("cpu", enabled=False):
            assert not fg.is_autocast_enabled("cpu")
        assert fg.is_autocast_enabled("cpu")
    assert not fg.is_autocast_enabled("cpu")

    @fg.autocast("cpu")
    def f(x):
        return fg.is_autocast_enabled("cpu"), x * 2

    assert f(fg.ones(1))[0] and not fg.is_autocast_enabled("cpu")


def test_grad_scaler_cpu_matches_torch():
    def run(L, grads_inf_at):
        L.manual_seed(0)
        w = L.nn.Parameter(L.tensor([1.0, -2.0]))
        opt = L.optim.SGD([w], lr=0.1)
        s = L.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
        scales = []
        for i in range(5):
            opt.zero_grad()
            loss = (w * w).sum() * (float("inf") if i == grads_inf_at else 1.0)
            s.scale(loss).backward()
            s.step(opt)
            s.update()
            scales.append(s.get_scale())
        return w.detach().numpy(), scales, s.state_dict()
    for k in (-1, 2):
        wf, sf, df = run(fg, k)
        wt, st, dt = run(torch, k)
        np.testing.assert_allclose(wf, wt)
        assert sf == st and df == dt


def test_grad_scaler_disabled_on_cuda():
    (s, w1) = _warns(lambda: fg.cuda.amp.GradScaler())
    (t, w2) = _warns(lambda: torch.cuda.amp.GradScaler())
    assert [c for c, _ in w1] == [c for c, _ in w2]
    assert s.is_enabled() == t.is_enabled() is False
    assert s.get_scale() == t.get_scale() == 1.0 and s.state_dict() == t.state_dict() == {}
    x = fg.ones(2)
    assert s.scale(x) is x
    with pytest.raises(AssertionError):
        fg.amp.GradScaler("cpu", growth_factor=0.5)


# --- storages -----------------------------------------------------------------------------------------------

def test_storages():
    for L in (fg, torch):
        t = L.arange(6, dtype=L.float32).reshape(2, 3)
        v = t[:, 1]
        us, ts = v.untyped_storage(), v.storage()
        assert us.nbytes() == 24 and len(ts) == 6 and ts.dtype == L.float32
        assert ts.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        ts[0] = 9.0
        assert t[0, 0].item() == 9.0
        assert L.is_storage(us) and L.is_storage(ts)
    assert fg.UntypedStorage(5).size() == 5
    assert fg.Storage is fg.TypedStorage


def test_special_more():
    x = RNG.uniform(-3, 30, (12,))
    x[:3] = [-26.0, -1.0, 0.0]
    check(lambda L, t: L.special.erfcx(t), x, rtol=1e-12)
    check(lambda L, t: L.special.erfcx(t), np.array([-27.0, -1e3]), grad=False)  # inf
    check(lambda L, t: L.special.erfcx(t), x.astype(np.float32), rtol=1e-5)
    y = RNG.uniform(-1, 1, (7,))
    for name in ("chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                 "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"):
        for n in (0, 1, 2, 6):
            check(lambda L, t: getattr(L.special, name)(t, n), y, grad=False, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_i0_i1_sinc_of_half_types_compute_in_float32(dtype):
    # exp(|x|) overflows float16 from 11.1 and pi * x from 20860, where I0/I1 (to 12.9) and sinc stay finite;
    # torch computes in float32 and rounds once
    x = np.array([0.0, 0.5, 3.0, 11.5, 12.9, 100.0, 1000.0, 20000.0, 60000.0], np.float32)
    for f in (lambda L, t: L.i0(t), lambda L, t: L.special.i1(t), lambda L, t: L.sinc(t),
              lambda L, t: L.special.sinc(t)):
        want = f(torch, torch.tensor(x).to(getattr(torch, dtype))).float().numpy()
        got = f(fg, fg.tensor(x).to(getattr(fg, dtype)))
        assert got.dtype == getattr(fg, dtype)
        np.testing.assert_allclose(got.float().numpy(), want, rtol=1e-2, atol=1e-7)


@pytest.mark.parametrize("name", sorted(NO_HALF))
def test_special_functions_without_half_kernels(name):
    """torch.special's functions with no float16/bfloat16 kernel raise for a half result dtype, as torch."""
    binary = "polynomial" in name or name == "zeta"
    for dt, legacy in (("float16", "Half"), ("bfloat16", "BFloat16")):
        for L in (torch, fg):
            x = L.tensor([0.5, 1.5]).to(getattr(L, dt))
            with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for '{legacy}'"):
                getattr(L.special, name)(*((x, 2) if binary else (x,)))
    if binary:  # a float32 tensor operand makes the result float32
        check(lambda L, t: getattr(L.special, name)(t.half(), t + 1), np.array([0.5, 2.0], np.float32), grad=False)


def test_bessel_j_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    x = np.concatenate([RNG.uniform(-40, 40, 60), [0.0, 5.0, 15.99, 16.01, -16.01]])
    for nu, name in ((0, "bessel_j0"), (1, "bessel_j1")):
        want = np.array([float(mpmath.besselj(nu, v)) for v in x])
        got = getattr(fg.special, name)(fg.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=5e-11)
        # (torch's own J0/J1 are off by up to 4e-7 near x = 5)
        np.testing.assert_allclose(got, getattr(torch.special, name)(torch.tensor(x)).numpy(), atol=1e-6)
    xt = fg.tensor(x, requires_grad=True)
    (fg.special.bessel_j0(xt).sum() + fg.special.bessel_j1(xt).sum()).backward()
    want = np.array([float(-mpmath.besselj(1, v) + mpmath.diff(lambda t: mpmath.besselj(1, t), v)) for v in x])
    np.testing.assert_allclose(xt.grad.numpy(), want, atol=5e-11)


def test_zeta():
    x = np.array([2.0, 3.0, 1.0, 0.5, 2.5, 2.0, 2.0, 2.0, 7.5, 1.0001, 40.0, 1.5])
    q = np.array([1.0, 2.0, 1.0, 1.0, -1.5, -2.0, 0.0, -1.5, 0.3, 5.0, 0.9, 1e3])
    check(lambda L, a, b: L.special.zeta(a, b), x, q, grad=False, rtol=1e-13)
    check(lambda L, b: (L.special.zeta(2.0, b), L.special.zeta(b + 2, 1.0)), q[:2], grad=False, rtol=1e-13)
    xt = fg.tensor(x[:2], requires_grad=True)
    with pytest.raises(NotImplementedError):
        fg.special.zeta(xt, fg.tensor(q[:2])).sum().backward()


def test_cpu_module():
    import funcgrad.cpu.amp  # noqa: F401
    for name in ("is_available", "device_count", "current_device"):
        assert getattr(fg.cpu, name)() == getattr(torch.cpu, name)()
    (a, wa), (b, wb) = _warns(lambda: fg.cpu.amp.autocast()), _warns(lambda: torch.cpu.amp.autocast())
    assert [c for c, _ in wa] == [c for c, _ in wb] and a._enabled == b._enabled
    (s, ws), (t, wt) = _warns(lambda: fg.cpu.amp.GradScaler()), _warns(lambda: torch.cpu.amp.GradScaler())
    assert [c for c, _ in ws] == [c for c, _ in wt] and s.is_enabled() == t.is_enabled()
    with fg.cpu.stream(fg.cpu.current_stream()):
        fg.cpu.synchronize()


@pytest.mark.parametrize("name,nu,kind", [("bessel_y0", 0, "y"), ("bessel_y1", 1, "y"), ("modified_bessel_k0", 0, "k"),
                                          ("modified_bessel_k1", 1, "k"), ("scaled_modified_bessel_k0", 0, "ks"),
                                          ("scaled_modified_bessel_k1", 1, "ks")])
def test_bessel_second_kind(name, nu, kind):
    mpmath = pytest.importorskip("mpmath")
    x = np.concatenate([np.geomspace(1e-4, 60, 40), [15.99, 16.01]])
    ref = {"y": lambda v: mpmath.bessely(nu, v), "k": lambda v: mpmath.besselk(nu, v),
           "ks": lambda v: mpmath.besselk(nu, v) * mpmath.exp(v)}[kind]
    want = np.array([float(ref(v)) for v in x])
    got = getattr(fg.special, name)(fg.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    # edges and dtypes as torch: 0 and negative arguments, float32, no gradient
    check(lambda L, t: getattr(L.special, name)(t), np.array([0.0, -1.0, 2.5]), grad=False)
    check(lambda L, t: getattr(L.special, name)(t), x.astype(np.float32), grad=False, rtol=2e-5, atol=1e-6)
    assert not getattr(fg.special, name)(fg.ones(2, requires_grad=True)).requires_grad


def test_airy_ai():
    mpmath = pytest.importorskip("mpmath")
    x = np.concatenate([np.linspace(-30, 12, 120), [0.0, -8.0, -8.001, 2.0, 2.001, 40.0]])
    want = np.array([float(mpmath.airyai(v)) for v in x])
    np.testing.assert_allclose(fg.special.airy_ai(fg.tensor(x)).numpy(), want, rtol=1e-11, atol=1e-14)
    # torch's own Ai is off by up to ~3e-6 on the negative axis
    np.testing.assert_allclose(fg.special.airy_ai(fg.tensor(x)).numpy(),
                               torch.special.airy_ai(torch.tensor(x)).numpy(), atol=1e-5)
    check(lambda L, t: L.special.airy_ai(t), np.array([-np.inf, np.nan, 1.0], np.float32), grad=False)
    assert fg.special.airy_ai(fg.tensor([np.inf])).item() == 0.0  # the limit (torch gives NaN)
