"""funcgrad.fft, funcgrad.special, funcgrad.amp, storages and the importable funcgrad.linalg / funcgrad.cuda,
against real PyTorch (values, dtypes, gradients, warnings and errors); the modules PyTorch programs import:
torch.distributed (before a process group exists), nn.parallel, torch.compiler, torch.cond, nn.attention,
torch.hub, torch.overrides and the profilers, against real torch where behaviour is observable and through the
torch -> funcgrad import shim; linalg.ldl_factor / ldl_solve."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import json
import os
import sys
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._torch._complex_reject import NO_HALF

torch = pytest.importorskip("torch")
from test_torch_example_programs import torch_is_funcgrad  # noqa: E402, F401 (fixture)
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


# --- distributed, nn.parallel, compiler, cond, attention, hub, overrides, profilers, ldl ---------------------

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
