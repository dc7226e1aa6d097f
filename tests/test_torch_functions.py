"""The torch functions, Tensor methods and in-place variants added beyond the core set (addcmul, cummax,
quantile, diag_embed, scatter_reduce, the *_scatter family, window functions, as_strided, in-place view ops,
torch.* aliases of nn.functional, ...), checked against real PyTorch: values, dtypes, gradients and the
exception types of bad input. (Their linear algebra is in tests/test_torch_linalg.py.)"""
from __future__ import annotations

import math

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")
from torch_check import RNG, as_numpy, check, check_one, err_or_val, pos, r  # noqa: E402


# --- pointwise and products ------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [1, 0.5, -2.0])
def test_addcmul_addcdiv(value):
    a, b, c = r(3, 1), r(1, 4), pos(3, 4)
    check(lambda L, x, y, z: L.addcmul(x, y, z, value=value), a, b, c)
    check(lambda L, x, y, z: L.addcdiv(x, y, z, value=value), a, b, c)
    check(lambda L, x, y, z: x.addcmul(y, z, value=value), a, b, c)


def test_addcmul_inplace_and_errors():
    a, b, c = r(3, 4), r(3, 4), pos(3, 4)
    check(lambda L, x, y, z: (x * 1).addcdiv_(y, z, value=0.3), a, b, c)
    check(lambda L, x, y, z: (x * 1).addcmul_(y, z), a, b, c)
    i = np.arange(4)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        fg.addcdiv(fg.tensor(i), fg.tensor(i), fg.tensor(i + 1))
    with pytest.raises(RuntimeError):
        torch.addcdiv(torch.tensor(i), torch.tensor(i), torch.tensor(i + 1))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addbmm_addr(beta, alpha):
    check(lambda L, m, x, y: L.addbmm(m, x, y, beta=beta, alpha=alpha), r(3, 5), r(4, 3, 2), r(4, 2, 5))
    check(lambda L, m, x, y: L.addr(m, x, y, beta=beta, alpha=alpha), r(3, 4), r(3), r(4))
    check(lambda L, m, x, y: (m * 1).addr_(x, y, beta=beta, alpha=alpha), r(3, 4), r(3), r(4))
    check(lambda L, m, x, y: (m * 1).baddbmm_(x, y, beta=beta, alpha=alpha), r(4, 3, 5), r(4, 3, 2), r(4, 2, 5))


def test_beta_zero_ignores_nan():
    m = np.full((2, 2), np.nan)
    check(lambda L, m, x, y: L.addr(m, x, y, beta=0), m, r(2), r(2), grad=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_unary_extras(dtype):
    x = (r(7) * 3).astype(dtype)
    x[0] = 0
    g = dtype != np.int64
    for name in ("angle", "deg2rad", "rad2deg", "sinc", "i0"):
        check(lambda L, t: getattr(L, name)(t), x, grad=g and name != "angle")
        check(lambda L, t: getattr(t, name)(), x, grad=False)
    if dtype != np.int64:
        check(lambda L, t: (t * 1).sinc_(), x)
        check(lambda L, t: L.deg2rad_(t * 1), x)


def test_complex_angle_polar_views():
    z = r(3, 2) + 1j * r(3, 2)
    check(lambda L, t: L.angle(t), z, grad=False)
    check(lambda L, a, b: L.polar(a, b), pos(4), r(4))
    check(lambda L, t: L.view_as_real(t), z, grad=False)
    check(lambda L, t: L.view_as_complex(t), r(3, 2))
    check(lambda L, t: (L.real(t), L.imag(t)), z, grad=False)
    # views share storage
    t = fg.tensor(z)
    fg.view_as_real(t)[0, 0, 0] = 100.0
    assert t[0, 0].real.item() == 100.0
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
        fg.view_as_real(fg.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        fg.view_as_complex(fg.ones(2, 3))


def test_binary_extras():
    a, b = r(3, 4), r(4)
    check(lambda L, x, y: L.logaddexp2(x, y), a, b)
    check(lambda L, x, y: L.ldexp(x, y), a, np.array([1, 2, 3, 0]))
    # (torch's gradient for a negative integer exponent is 0, from an integer 2 ** -1; the true one is 1/2)
    x = fg.tensor([3.0, 1.0], requires_grad=True)
    fg.ldexp(x, fg.tensor([-1, 2])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 4.0])
    check(lambda L, x, y: L.nextafter(x, y), a, b, grad=False)
    i, j = np.array([12, 18, -4, 0]), np.array([8, 27, 6, 5])
    check(lambda L, x, y: (L.gcd(x, y), L.lcm(x, y), x.gcd(y)), i, j, grad=False)
    check(lambda L, x, y: L.heaviside(x, y), np.array([-1.5, 0, 2.0, 0]), np.array([0.5, 0.25, 3, 7.0]),
          grad=False)
    check(lambda L, x: L.frexp(x), np.array([0.0, 1.5, -3.0, 1e-300, 1024.0]), grad=False)
    with pytest.raises(RuntimeError):
        fg.gcd(fg.ones(2), fg.ones(2))
    with pytest.raises(RuntimeError, match="different dtypes"):
        fg.heaviside(fg.ones(2), fg.ones(2, dtype=fg.float64))


def test_mvlgamma_renorm_logcumsumexp():
    check(lambda L, x: L.mvlgamma(x, 3), pos(5) + 2)
    check(lambda L, x: L.special.multigammaln(x, 2), pos(5) + 1)
    check(lambda L, x: L.mvlgamma(x, 3), np.array([0.1, 3.0]))  # (torch has no domain check: lgamma's sum)
    check(lambda L, x: L.renorm(x, 2, 0, 1.0), r(4, 3) * 2)
    check(lambda L, x: L.renorm(x, 1, 1, 0.5), r(4, 3))
    x = r(3, 5) * 50
    x[0, 2] = 800.0
    check(lambda L, t: L.logcumsumexp(t, 1), x)
    check(lambda L, t: t.logcumsumexp(0), x)


def test_logcumsumexp_complex():
    # torch's complex scan (LogAddExp.h): NaN in either part spreads as NaN + NaN j, equal infinite real parts
    # give the smaller operand (-inf) or log(exp + exp) (+inf); complex64 accumulates in complex128
    z = r(3, 6) * 3 + 1j * r(3, 6) * 3
    z[0, 1], z[1, 0], z[1, 3], z[2, 2] = complex(np.nan, 1.0), complex(-np.inf, 2.0), complex(np.inf, 0.5), 1j * np.nan
    for dt in ("complex64", "complex128"):
        for d in (1, 0, -1):
            check(lambda L, t: L.logcumsumexp(t.to(getattr(L, dt)), d), z, grad=False)
    check(lambda L, t: L.logcumsumexp(t, 1), np.zeros((2, 0), np.complex64), grad=False)
    a = r(3, 4) + 1j * r(3, 4)
    w = r(3, 4) + 1j * r(3, 4)
    grads = []
    for L in (torch, fg):
        x = L.tensor(a, requires_grad=True)
        y = L.logcumsumexp(x, 1)
        ((y * L.tensor(w)).real.sum() + (y.abs() ** 2).sum()).backward()
        grads.append(as_numpy(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)


# --- scans, statistics ------------------------------------------------------------------------------------

def test_cummax_cummin():
    x = np.array([[1.0, 3, 3, 2, np.nan, 5, np.nan], [0, -1, -1, 2, 2, -3, 9]])
    check(lambda L, t: (L.cummax(t, 1), L.cummin(t, 1)), x, grad=False)
    y = r(4, 5)
    check(lambda L, t: (L.cummax(t, 0), t.cummin(-1)), y)
    check(lambda L, t: L.cummin(t, 0), np.array([True, False, True]), grad=False)


def test_diff_diagflat():
    x = r(3, 5)
    check(lambda L, t: L.diff(t), x)
    check(lambda L, t, p, a: L.diff(t, n=2, dim=0, prepend=p, append=a), x, r(1, 5), r(2, 5))
    check(lambda L, t: L.diff(t), np.array([True, False, False, True]), grad=False)
    check(lambda L, t: (L.diagflat(t), L.diagflat(t, 1), L.diagflat(t, -2)), r(2, 2))


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(interp):
    x = r(4, 7)
    check(lambda L, t: L.quantile(t, 0.3, dim=1, interpolation=interp), x)
    check(lambda L, t, q: L.quantile(t, q, dim=0, keepdim=True, interpolation=interp), x, np.array([0.1, 0.5, 1.0]))
    check(lambda L, t: L.quantile(t, 0.75, interpolation=interp), x)
    y = x.copy()
    y[1, 2] = y[3, 0] = np.nan
    y[2, :] = np.nan
    check(lambda L, t: (L.nanquantile(t, 0.4, dim=1, interpolation=interp), L.quantile(t, 0.4, dim=1)), y,
          grad=False)


def test_quantile_errors_and_nanmedian():
    with pytest.raises(RuntimeError, match="range"):
        fg.quantile(fg.randn(4), 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        fg.quantile(fg.arange(4), 0.5)
    y = r(3, 6)
    y[0, 1] = y[1, :2] = np.nan
    check(lambda L, t: (L.nanmedian(t), L.nanmedian(t, 1), t.nanmedian(0, keepdim=True)), y, grad=False)
    check(lambda L, t: L.nanmedian(t, 1).values, y)


def test_cov_corrcoef():
    x = r(3, 8)
    check(lambda L, t: (L.cov(t), L.corrcoef(t), L.cov(t, correction=0)), x)
    fw = np.array([1, 2, 1, 3, 1, 1, 2, 1])
    aw = pos(8)
    check(lambda L, t, f, a: L.cov(t, fweights=f, aweights=a), x, fw, aw)
    check(lambda L, t, a: L.cov(t, aweights=a, correction=2), x, aw)
    check(lambda L, t: L.cov(t), r(8))
    with pytest.raises(RuntimeError, match="fweights"):
        fg.cov(fg.tensor(x), fweights=fg.tensor(np.ones(3, np.int64)))


def test_histogram():
    x = r(50)
    check(lambda L, t: L.histogram(t, 7), x, grad=False)
    check(lambda L, t: L.histogram(t, 5, range=(-1.0, 1.0), density=True), x, grad=False)
    check(lambda L, t, b: L.histogram(t, b), x, np.array([-2.0, -0.5, 0.0, 3.0]), grad=False)


# --- construction -------------------------------------------------------------------------------------------

def test_block_diag_vander_combinations():
    check(lambda L, a, b, c: L.block_diag(a, b, c), r(2, 3), r(3), np.array(2.5))
    v = np.array([0.0, 1.5, -2.0])
    check(lambda L, x: (L.vander(x), L.vander(x, 5, increasing=True)), v, grad=False)
    # (torch.vander's own backward fails with an in-place error; compare with powers written out)
    x = fg.tensor(v, requires_grad=True)
    w = r(3, 5)
    fg.vander(x, 5, increasing=True).mul(fg.tensor(w)).sum().backward()
    xt = torch.tensor(v, requires_grad=True)
    torch.stack([xt ** k for k in range(5)], 1).mul(torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
    check(lambda L, x: L.linalg.vander(x, N=4), r(2, 3))
    check(lambda L, x: L.vander(x), np.array([2, 3, 0]), grad=False)
    for kw in ({}, {"r": 3}, {"with_replacement": True}, {"r": 0}):
        check(lambda L, x: L.combinations(x, **kw), r(4))


def test_unravel_isin_nonzero_static():
    check(lambda L, i: L.unravel_index(i, (3, 4, 5)), np.array([0, 7, 59, -1]), grad=False)
    with pytest.raises(ValueError):
        fg.unravel_index(fg.tensor([60]), (3, 4, 5))
    check(lambda L, a, b: (L.isin(a, b), L.isin(a, b, invert=True)), np.array([1, 2, 3, 4]), np.array([2, 4, 9]),
          grad=False)
    x = np.array([[0, 1, 0], [2, 0, 3]])
    check(lambda L, t: (L.nonzero_static(t, size=2), L.nonzero_static(t, size=5, fill_value=-7)), x, grad=False)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(name, n, periodic):
    check(lambda L: getattr(L, name)(n, periodic), grad=False)
    check(lambda L: getattr(L, name)(n, periodic, dtype=L.float64), grad=False, rtol=1e-12, atol=1e-14)


def test_window_errors():
    with pytest.raises(RuntimeError):
        fg.hann_window(4, dtype=fg.int64)
    with pytest.raises(RuntimeError):
        torch.hann_window(4, dtype=torch.int64)
    check(lambda L: L.hamming_window(9, True, 0.6, 0.3), grad=False)
    check(lambda L: L.kaiser_window(9, False, 3.0), grad=False)


def test_splits():
    x = r(4, 6, 2)
    check(lambda L, t: (L.hsplit(t, 2), L.vsplit(t, [1, 3]), L.dsplit(t, 2)), x)
    check(lambda L, t: (t.split_with_sizes([2, 4], 1), L.split_with_sizes(t, [1, 3], 0)), x)
    with pytest.raises(RuntimeError, match="not divisible"):
        fg.hsplit(fg.ones(5, 5), 2)
    with pytest.raises(RuntimeError):
        fg.dsplit(fg.ones(5, 5), 1)


def test_trapezoid():
    y = r(3, 6)
    check(lambda L, t: (L.trapezoid(t), L.trapz(t, dim=0), L.trapezoid(t, dx=0.5)), y)
    check(lambda L, t, x: (L.trapezoid(t, x), L.cumulative_trapezoid(t, x)), y, np.sort(r(6)))
    check(lambda L, t, x: L.trapezoid(t, x, dim=0), y, r(3, 6))
    check(lambda L, t: L.cumulative_trapezoid(t, dx=2.0, dim=0), y)


@pytest.mark.parametrize("shape,offset,d1,d2", [((3,), 0, -2, -1), ((3,), 2, 0, 1), ((2, 3), 1, 0, 2),
                                                ((2, 3), -1, 1, 0), ((2, 3), 2, -1, 0), ((2, 2, 3), 0, 1, 3),
                                                ((4,), -3, 1, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_diag_embed(shape, offset, d1, d2, dtype):
    x = np.random.RandomState(0).randn(*shape).astype(dtype)
    check_one(lambda m, t: m.diag_embed(t, offset=offset, dim1=d1, dim2=d2), x)
    check_one(lambda m, t: t.diag_embed(offset, d1, d2), x)


@pytest.mark.parametrize("args", [(0, 0, 0), (0, 0, 3), (0, -3, 0)])
def test_diag_embed_errors(args):
    a = err_or_val(lambda m: m.diag_embed(m.ones(3), *args), torch)
    b = err_or_val(lambda m: m.diag_embed(m.ones(3), *args), fg)
    assert a[:2] == b[:2]


# --- scatters into copies -------------------------------------------------------------------------------

def test_scatter_family():
    x = r(4, 5)
    check(lambda L, t, s: L.diagonal_scatter(t, s, 1), x, r(4))
    check(lambda L, t, s: L.select_scatter(t, s, 1, -2), x, r(4))
    check(lambda L, t, s: L.slice_scatter(t, s, 1, 1, 5, 2), x, r(4, 2))
    s = r(2, 2)
    check(lambda L, t, s: L.as_strided_scatter(t, s, (2, 2), (5, 1), 3), x, s, grad=False)
    # its gradients are slice_scatter's over the same region (torch's own as_strided_scatter backward differs)
    ref = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
    got = fg.tensor(x, requires_grad=True), fg.tensor(s, requires_grad=True)
    w = r(4, 5)
    (torch.slice_scatter(ref[0][:2], ref[1], 1, 3, 5).sum() * 0 + torch.cat(
        [torch.slice_scatter(ref[0][:2], ref[1], 1, 3, 5), ref[0][2:]]).mul(torch.tensor(w)).sum()).backward()
    fg.as_strided_scatter(got[0], got[1], (2, 2), (5, 1), 3).mul(fg.tensor(w)).sum().backward()
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy())
    check(lambda L, t, s: t.diagonal_scatter(s), x, r(4))
    with pytest.raises(RuntimeError):
        fg.select_scatter(fg.tensor(x), fg.ones(3), 1, 0)


def test_put_masked_scatter_index_reduce():
    x = r(3, 4)
    idx = np.array([0, 5, -1, 5])
    check(lambda L, t, i, s: (L.put(t, i, s, accumulate=True), t.put(i[:3], s[:3])), x, idx, r(4))
    check(lambda L, t, i, s: (t * 1).put_(i, s, accumulate=True), x, idx, r(4))
    m = RNG.random((3, 4)) > 0.5
    check(lambda L, t, mm, s: L.masked_scatter(t, mm, s), x, m, r(12))
    check(lambda L, t, mm, s: (t * 1).masked_scatter_(mm, s), x, m[0], r(12))
    for red in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            check(lambda L, t, i, s: t.index_reduce(0, i, s, red, include_self=inc), x, np.array([0, 2, 0]),
                  r(3, 4) + 0.1 * np.arange(12).reshape(3, 4))


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_reduce(reduce, include_self, dim):
    rs = np.random.RandomState(3)
    inp = rs.randn(4, 5)
    src = rs.randn(3, 5) if dim == 0 else rs.randn(4, 3)
    idx = rs.randint(0, 4 if dim == 0 else 5, size=src.shape)
    for grad in (False, True):
        if grad and reduce == "prod":
            continue  # prod's gradient with repeated indices: see test below
        st, it = torch.tensor(src, requires_grad=grad), torch.tensor(inp, requires_grad=grad)
        sf, i_f = fg.tensor(src, requires_grad=grad), fg.tensor(inp, requires_grad=grad)
        rt = it.scatter_reduce(dim, torch.tensor(idx), st, reduce=reduce, include_self=include_self)
        rf = i_f.scatter_reduce(dim, fg.tensor(idx), sf, reduce=reduce, include_self=include_self)
        np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-12)
        if grad:
            w = rs.randn(*rt.shape)
            rt.backward(torch.tensor(w))
            rf.backward(fg.tensor(w))
            np.testing.assert_allclose(i_f.grad.numpy(), it.grad.numpy(), rtol=1e-6, atol=1e-12)
            np.testing.assert_allclose(sf.grad.numpy(), st.grad.numpy(), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_ties_split_the_gradient_as_torch(reduce, include_self):
    """torch's backward splits a tie evenly among the src values equal to the result and self where it equals
    it, self counted even when left out (include_self=False: its share then goes nowhere)."""
    inp = np.array([[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -0.0, 2.0]])
    src = np.array([[2.0, -1.0, 0.0, 1.0, 2.0, -1.0], [1.0, 0.0, 0.0, 2.0, 1.0, 3.0]])
    idx = np.array([[0, 1, 2, 1, 0, 1], [1, 1, 2, 3, 0, 3]])
    w = np.arange(8.0).reshape(2, 4) + 1
    grads = []
    for m in (torch, fg):
        t, s = m.tensor(inp, requires_grad=True), m.tensor(src, requires_grad=True)
        out = t.scatter_reduce(1, m.tensor(idx), s, reduce=reduce, include_self=include_self)
        out.backward(m.tensor(w))
        grads.append((out.detach().numpy(), t.grad.numpy(), s.grad.numpy()))
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_int_mean_and_errors(include_self):
    def f(m):
        src, idx, inp = m.tensor([1, 2, 3, 4, 5, 6]), m.tensor([0, 1, 0, 1, 2, 1]), m.tensor([1, 2, 3, 4])
        return inp.scatter_reduce(0, idx, src, reduce="mean", include_self=include_self).tolist()
    assert f(torch) == f(fg)
    a = err_or_val(lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), reduce="foo"), torch)
    b = err_or_val(lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1), reduce="foo"), fg)
    assert a[:2] == b[:2]


def test_scatter_reduce_prod_gradient_repeated_index():
    for m in (torch, fg):
        src = m.tensor([1., 5., 3.], requires_grad=True)
        m.tensor([2., 0.]).scatter_reduce(0, m.tensor([0, 0, 1]), src, reduce="prod").sum().backward()
        if m is torch:
            want = src.grad.tolist()
    assert src.grad.tolist() == want


# --- views and in-place view ops ----------------------------------------------------------------------------

def test_as_strided_and_unfold():
    x = r(4, 5)
    check(lambda L, t: L.as_strided(t, (3, 2), (2, 3), 1), x)
    check(lambda L, t: (t.unfold(1, 2, 1), t.unfold(0, 3, 2)), x)
    t = fg.zeros(6)
    v = t.as_strided((2, 2), (3, 1))
    v[1, 1] = 5.0
    assert t[4].item() == 5.0
    check(lambda L, t: t.sum_to_size(1, 5), x)
    check(lambda L, t: t.sum_to_size(4, 1), x)
    with pytest.raises(RuntimeError):
        fg.ones(4, 5).sum_to_size(3, 5)


def test_inplace_views_and_resize():
    for op in (lambda t: t.t_(), lambda t: t.transpose_(0, 1), lambda t: t.unsqueeze_(1),
               lambda t: t.unsqueeze_(0).squeeze_(0), lambda t: t.swapdims_(0, 1)):
        a, b = fg.tensor(r(2, 3)), None
        b = torch.tensor(a.numpy())
        ra, rb = op(a), op(b)
        assert ra is a and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    a = fg.arange(6.0)
    a.resize_(2, 3)
    assert a.shape == (2, 3) and a[1, 2].item() == 5.0
    a.resize_(2)
    np.testing.assert_array_equal(a.numpy(), [0.0, 1.0])
    a.resize_as_(fg.ones(3, 3))
    assert a.shape == (3, 3)
    with pytest.raises(RuntimeError, match="require grad"):
        fg.ones(2, requires_grad=True).resize_(3)


def test_predicates_and_misc():
    a = fg.ones(2, 3)
    assert fg.is_same_size(a, fg.zeros(2, 3)) and not a.is_same_size(fg.zeros(3, 2))
    assert not fg.is_conj(a) and not fg.is_neg(a) and not a.is_conj()
    assert a.is_nonzero() if False else fg.ones(1).is_nonzero()
    with pytest.raises(RuntimeError):
        a.is_nonzero()
    assert fg.typename(a) == torch.typename(torch.ones(2)) == "torch.FloatTensor"
    assert fg.typename(1.0) == torch.typename(1.0)
    assert fg.get_device(a) == torch.get_device(torch.ones(1)) == -1
    assert (fg.e, fg.pi, fg.inf, fg.newaxis) == (torch.e, torch.pi, torch.inf, torch.newaxis)
    assert math.isnan(fg.nan)
    check(lambda L, t: (L.fill(t, 2.5), L.conj_physical(t), L.resolve_conj(t), t.new(2, 3).shape),
          r(2, 3), grad=False)
    assert fg.ones(2, dtype=fg.int64).new([1, 2]).dtype == fg.int64
    fg.set_warn_always(True)
    assert fg.is_warn_always_enabled()
    fg.set_warn_always(False)
    assert not fg.is_anomaly_enabled()
    fg.set_anomaly_enabled(True)
    assert fg.is_anomaly_enabled()
    fg.set_anomaly_enabled(False)


def test_torch_inplace_functions():
    for name in ("relu_", "sigmoid_", "clamp_", "abs_", "exp_", "zero_", "sinc_"):
        assert hasattr(fg, name), name
    x = r(5)
    check(lambda L, t: L.relu_(t * 1), x)
    check(lambda L, t: L.clamp_(t * 1, -0.5, 0.5), x)
    check(lambda L, t: L.sigmoid_(t * 1), x)
    t = fg.tensor(x)
    assert fg.zero_(t) is t and t.sum().item() == 0


def test_copy_variants_of_views():
    x = r(3, 4)
    check(lambda L, t: (L.narrow_copy(t, 1, 1, 2) if hasattr(L, "narrow_copy") else t.narrow_copy(1, 1, 2)), x)


# --- torch.* aliases of nn.functional ------------------------------------------------------------------------

def test_nn_aliases():
    x = r(2, 3, 8)
    check(lambda L, t, w: L.conv1d(t, w, padding=1), x, r(4, 3, 3))
    check(lambda L, t: (L.max_pool1d(t, 2), L.avg_pool1d(t, 3, 2), L.adaptive_avg_pool1d(t, 4)), x)
    check(lambda L, t: L.adaptive_max_pool1d(t, 3), x)
    check(lambda L, t, w, b: L.layer_norm(t, (8,), w, b, 1e-5, True), x, pos(8), r(8))
    check(lambda L, t, w, b: L.group_norm(t, 3, w, b, 1e-5, True), x, pos(3), r(3))
    check(lambda L, t, w, b: L.batch_norm(t, w, b, None, None, True, 0.1, 1e-5, True), x, pos(3), r(3))
    check(lambda L, t, w, b: L.instance_norm(t, w, b, None, None, True, 0.1, 1e-5, True), x, pos(3), r(3))
    check(lambda L, w, i: L.embedding(w, i), r(10, 3), np.array([[1, 2], [9, 0]]))
    check(lambda L, t: (L.selu(t), L.celu(t, 0.5), L.threshold(t, 0.1, -1.0), L.hardshrink(t, 0.3)), x)
    check(lambda L, t: (L.dropout(t, 0.3, False), L.alpha_dropout(t, 0.3, False)), x)
    check(lambda L, t, w: L.prelu(t, w), x, pos(3))
    check(lambda L, t: (L.pixel_shuffle(t, 2), L.pixel_unshuffle(t, 2)), r(1, 4, 4, 4))
    check(lambda L, t: (L.pdist(t), L.pairwise_distance(t, t.flip(0))), r(4, 3))
    a, b = r(4, 5), r(4, 5)
    y = np.array([1.0, -1.0, 1.0, -1.0])
    check(lambda L, p, q, t: (L.cosine_embedding_loss(p, q, t), L.cosine_embedding_loss(p, q, t, 0.1, 2),
                              L.margin_ranking_loss(p[:, 0], q[:, 0], t, 0.2, 0)), a, b, y)
    check(lambda L, p, q: (L.kl_div(p, q), L.kl_div(p, q, 2, log_target=True)), a, b)
    check(lambda L, p, q: L.hinge_embedding_loss(p, q, 1.0, 1), a, np.sign(b))
    check(lambda L, p, q: L.poisson_nll_loss(p, q, True, False, 1e-8, 1), a, pos(4, 5))
    check(lambda L, p, q, n: L.triplet_margin_loss(p, q, n), a, b, r(4, 5))
    check(lambda L, p, q: L.binary_cross_entropy_with_logits(p, q), a, RNG.random((4, 5)))


@pytest.mark.parametrize("call", [
    lambda L: L.addcmul(1, 2, 3), lambda L: L.cummax([1.0, 2.0], 0), lambda L: L.special.i0(2.0),
    lambda L: L.fft.fft([1.0, 2.0]), lambda L: L.det(3), lambda L: L.linalg.det([[1.0]]),
    lambda L: L.trapezoid([1.0, 2.0]), lambda L: L.logcumsumexp([1.0], 0), lambda L: L.diff([1, 2, 3]),
    lambda L: L.linalg.lu_factor(3), lambda L: L.view_as_real(1j)])
def test_non_tensor_arguments_raise_type_error(call):
    with pytest.raises(TypeError) as want:
        call(torch)
    with pytest.raises(TypeError) as got:
        call(fg)
    assert str(got.value).split("(")[0].split("_")[-1] == str(want.value).split("(")[0].split("_")[-1]
    assert "must be Tensor" in str(got.value)


@pytest.mark.parametrize("call", [
    lambda L: L.cov(L.ones(2, 2, 2)), lambda L: L.quantile(L.ones(3), L.tensor([[0.5]])),
    lambda L: L.combinations(L.ones(2, 2)), lambda L: L.vander(L.ones(2, 2)), lambda L: L.block_diag(L.ones(2, 2, 2)),
    lambda L: L.diff(L.tensor(1.0)), lambda L: L.renorm(L.ones(2, 2), -1, 0, 1.0), lambda L: L.mvlgamma(L.ones(2), 0),
    lambda L: L.polar(L.ones(2), L.ones(2, dtype=L.float64)), lambda L: L.nonzero_static(L.ones(2), size=-1),
    lambda L: L.index_reduce(L.ones(3), 0, L.tensor([0]), L.ones(1), "sum"),
    lambda L: L.linalg.multi_dot([L.ones(2, 2)]), lambda L: L.matrix_exp(L.ones(2, 3)),
    lambda L: L.linalg.lu_factor(L.tensor([[0.0, 1.0], [0.0, 2.0]])),
    lambda L: L.nn.functional.channel_shuffle(L.ones(1, 5, 2), 2),
    lambda L: L.nn.functional.ctc_loss(L.ones(3, 1, 4), L.ones(1, 2, dtype=L.int64), [3], [2], blank=7)])
def test_bad_values_raise_runtime_error(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(fg)


def test_view_as_complex_under_forward_mode_and_transforms():
    """funcgrad.func.jvp / vmap / grad through view_as_complex (a traced view: its layout shadow has one byte
    per element); the tangent of a view is the view of the tangent."""
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    t = np.arange(9.0).reshape(3, 3)
    out = []
    for L in (torch, fg):
        f = lambda x: L.view_as_complex(x[:, :2].contiguous())  # noqa: E731
        p, tan = L.func.jvp(f, (L.tensor(a),), (L.tensor(t),))
        g = L.func.grad(lambda x: (L.view_as_complex(x) ** 2).real.sum())(L.tensor(a[:, :2].copy()))
        out.append([as_numpy(p), as_numpy(tan), as_numpy(g)])
    for got, want in zip(out[1], out[0]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out[1][1], t[:, 0] + 1j * t[:, 1])  # exact: the view of the tangent
    np.testing.assert_array_equal(out[1][2], 2 * a[:, :2] * [1, -1])  # d Re(z^2) = (2x, -2y)
    vm = fg.func.vmap(fg.view_as_complex)(fg.tensor(np.arange(12.0).reshape(3, 2, 2)))
    np.testing.assert_array_equal(as_numpy(vm), np.arange(0, 12, 2.0).reshape(3, 2) + 1j * np.arange(1, 12, 2.0).reshape(3, 2))


def test_out_of_place_resize_as_differentiates():
    """Tensor.resize_as / resize (torch's deprecated autograd Resize): same element count, a view of the
    input (of a contiguous copy when the input is not contiguous), gradient reshaped back."""
    x = r(2, 3)
    check(lambda L, t, o: t.resize_as(o), x, r(3, 2))
    check(lambda L, t, o: t.resize_as(o), x, r(6))
    check(lambda L, t: t.t().resize_as(L.zeros(6)), x)
    check(lambda L, t: t.resize(3, 2), x)
    t = fg.tensor(x, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        y = t.resize_as(fg.zeros(3, 2))
    (y * fg.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.arange(6.0).reshape(2, 3))  # exact: the weights, reshaped
    base = fg.tensor(np.zeros(4))
    base.resize_as(fg.zeros(2, 2))[1, 1] = 7.0  # a view of a contiguous input: writes are seen
    assert base[3].item() == 7.0
    for L in (torch, fg):
        with pytest.raises(RuntimeError, match=r"requested resize to 5 \(5 elements in total\), but the given "
                                               r"tensor has a size of 2x3 \(6 elements\)"):
            L.tensor(x).resize_as(L.zeros(5))


_DEPRECATED_ALPHA_FIRST = [lambda L, a, b: a.add(2, b), lambda L, a, b: a.clone().add_(-0.5, b),
                           lambda L, a, b: L.add(a, 2, b), lambda L, a, b: a.sub(2, b),
                           lambda L, a, b: a.clone().sub_(0.25, b), lambda L, a, b: L.sub(a, 3, b),
                           lambda L, a, b: L.add(a, 2, b, out=L.empty(3)),
                           # addcmul/addcdiv(value, tensor1, tensor2): old Adam's exp_avg_sq.addcmul_(1 - beta2, g, g)
                           lambda L, a, b: a.addcmul(0.5, b, a), lambda L, a, b: a.clone().addcmul_(-2, b, b),
                           lambda L, a, b: L.addcmul(a, 3, b, a), lambda L, a, b: a.addcdiv(0.5, b, a),
                           lambda L, a, b: a.clone().addcdiv_(-0.25, a, b), lambda L, a, b: L.addcdiv(a, 2, b, a)]


@pytest.mark.parametrize("call", range(len(_DEPRECATED_ALPHA_FIRST)))
def test_deprecated_number_first_overloads(call, monkeypatch):
    # old code (pytorch/tutorials' char_rnn_classification: p.data.add_(-learning_rate, p.grad.data); pre-1.5
    # optimisers) passes alpha first: torch 2.13 still takes it, warning of the deprecation once per process
    import warnings
    from funcgrad._torch.ops import arithmetic
    f = _DEPRECATED_ALPHA_FIRST[call]
    a, b = np.array([1.0, 2.0, -1.5], np.float32), np.array([0.5, -2.0, 4.0], np.float32)
    want = f(torch, torch.tensor(a), torch.tensor(b))
    monkeypatch.setattr(arithmetic, "_deprecation_warned", [False])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = f(fg, fg.tensor(a), fg.tensor(b))
        again = f(fg, fg.tensor(a), fg.tensor(b))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(again.numpy(), want.numpy())
    assert len(caught) == 1 and caught[0].category is UserWarning  # (once, as torch's)
    assert str(caught[0].message).startswith("This overload of ")
    name = str(caught[0].message).split()[3]
    if name.endswith("_"):  # the in-place methods' wording is torch's exactly
        assert str(caught[0].message) == (f"This overload of {name} is deprecated:\n\t{name}(Number alpha, Tensor "
                                          f"other)\nConsider using one of the following signatures instead:\n\t"
                                          f"{name}(Tensor other, *, Number alpha = 1)")
    with pytest.raises(TypeError):  # (the overload takes a number, then a tensor)
        fg.tensor(a).add_(fg.tensor(b), fg.tensor(b))
    with pytest.raises(TypeError):  # (the value once)
        fg.addcmul(fg.tensor(a), 2, fg.tensor(b), fg.tensor(a), value=3)
