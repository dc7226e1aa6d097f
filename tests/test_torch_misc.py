"""torch names added for ordinary code: memory formats and layouts, gradient, stft/istft, histogramdd,
empty_strided, frombuffer, from_dlpack, *_copy, fractional max pooling and small Tensor methods, against torch."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")
from torch_check import check, r  # noqa: E402

RNG = np.random.default_rng(4)


def test_formats_and_aliases():
    for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "strided"):
        assert repr(getattr(fg, name)) == repr(getattr(torch, name))
    x = fg.randn(2, 3, 4, 5)
    assert x.to(memory_format=fg.channels_last).shape == (2, 3, 4, 5)
    assert x.contiguous(memory_format=fg.channels_last).is_contiguous()
    check(lambda L, t: (L.conj(t), L.adjoint(t), L.detach(t)), r(3, 2) + 1j * r(3, 2), grad=False)
    assert fg.is_signed(fg.ones(1)) and not fg.is_signed(fg.ones(1, dtype=fg.uint8))
    with pytest.raises(RuntimeError, match="removed"):
        fg.matrix_rank(fg.eye(2))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient(edge_order):
    f = r(5, 6)
    check(lambda L, t: L.gradient(t, edge_order=edge_order), f)
    check(lambda L, t: L.gradient(t, spacing=0.5, dim=1, edge_order=edge_order), f)
    check(lambda L, t: L.gradient(t, spacing=[2.0, 3.0], edge_order=edge_order), f)
    xs = np.cumsum(RNG.uniform(0.2, 1.0, 6))
    check(lambda L, t, c: L.gradient(t, spacing=(c,), dim=1, edge_order=edge_order), f, xs)
    check(lambda L, t: L.gradient(t, dim=-1), np.arange(6) ** 2, grad=False)


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("normalized", [True, False])
def test_stft_istft(center, normalized):
    x = r(2, 300)
    w = np.hanning(64)
    check(lambda L, s, win: L.stft(s, 64, 16, window=win, center=center, normalized=normalized, return_complex=True),
          x, w, rtol=1e-9, atol=1e-9)
    check(lambda L, s: L.stft(s, 32, win_length=20, return_complex=True, center=center), x[0], rtol=1e-9, atol=1e-9)
    check(lambda L, s, win: s.stft(40, 10, window=win, onesided=False, return_complex=True), x, np.hanning(40),
          rtol=1e-9, atol=1e-9)
    wt = fg.tensor(w)
    spec = fg.stft(fg.tensor(x), 64, 16, window=wt, center=center, normalized=normalized, return_complex=True)
    if center:
        back = fg.istft(spec, 64, 16, window=wt, center=True, normalized=normalized, length=300)
        np.testing.assert_allclose(back.numpy(), x, atol=1e-10)
    tspec = torch.tensor(spec.numpy())
    if not center:  # the Hann window is 0 at the ends: the first sample cannot be recovered
        with pytest.raises(RuntimeError, match="window overlap add min"):
            torch.istft(tspec, 64, 16, window=torch.tensor(w), center=center, normalized=normalized)
        with pytest.raises(RuntimeError, match="window overlap add min"):
            fg.istft(spec, 64, 16, window=wt, center=center, normalized=normalized)
        return
    ref = torch.istft(tspec, 64, 16, window=torch.tensor(w), center=center, normalized=normalized)
    got = fg.istft(spec, 64, 16, window=wt, center=center, normalized=normalized)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-9)
    check(lambda L, sp, win: L.istft(sp, 64, 16, window=win, normalized=normalized), spec.numpy(), w,
          rtol=1e-9, atol=1e-9)
    with pytest.raises(RuntimeError, match="return_complex"):
        fg.stft(fg.tensor(x), 64)


def test_histogramdd_and_creation():
    pts = r(50, 2)
    check(lambda L, t: L.histogramdd(t, [3, 4]), pts, grad=False)
    check(lambda L, t: L.histogramdd(t, 5, range=[-1.0, 1.0, -2.0, 2.0], density=True), pts, grad=False)
    a = fg.empty_strided((2, 3), (1, 2))
    assert a.shape == (2, 3) and a.stride() == (1, 2)
    buf = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = fg.frombuffer(buf, dtype=fg.float32)
    t[0] = 7.0
    assert np.frombuffer(buf, np.float32)[0] == 7.0
    np.testing.assert_array_equal(fg.from_dlpack(np.arange(3.0)).numpy(), [0.0, 1.0, 2.0])
    fg.manual_seed(0)
    b = fg.binomial(fg.full((1000,), 10.0), fg.full((1000,), 0.3))
    assert abs(b.mean().item() - 3.0) < 0.2 and b.min().item() >= 0 and b.max().item() <= 10


def test_copy_variants():
    x = r(3, 4)
    check(lambda L, t: (L.view_copy(t, (4, 3)), L.t_copy(t), L.transpose_copy(t, 0, 1), L.permute_copy(t, (1, 0)),
                        L.unsqueeze_copy(t, 1), L.diagonal_copy(t), L.select_copy(t, 1, 2), L.narrow_copy(t, 1, 1, 2),
                        L.expand_copy(t[:1], (3, 4)), L.unbind_copy(t, 0), L.split_copy(t, 2, 1),
                        L.slice_copy(t, 1, 0, 3, 2), L.alias_copy(t), L.as_strided_copy(t, (2, 2), (1, 2))), x)
    t = fg.tensor(x)
    c = fg.t_copy(t)
    c[0, 0] = 100.0
    assert t[0, 0].item() != 100.0


def test_fractional_max_pool():
    F = "fractional_max_pool"
    x = r(2, 3, 7, 9)
    s = RNG.random((2, 3, 2))
    check(lambda L, t, u: getattr(L.nn.functional, F + "2d")(t, (2, 3), output_size=(3, 4), _random_samples=u.detach(),
                                                                 return_indices=True), x, s)
    check(lambda L, t, u: L.nn.functional.fractional_max_pool2d(t[0], 2, output_ratio=(0.5, 0.5), _random_samples=u[:1].detach()),
          x, s)
    x3, s3 = r(1, 2, 5, 6, 7), RNG.random((1, 2, 3))
    check(lambda L, t, u: L.nn.functional.fractional_max_pool3d(t, 2, output_ratio=0.5, _random_samples=u.detach()),
          x3, s3)
    out = fg.nn.functional.fractional_max_pool2d(fg.randn(1, 1, 8, 8), 2, output_size=3)
    assert out.shape == (1, 1, 3, 3)


def test_small_methods():
    x = fg.ones(3)
    x.map_(fg.arange(3.0), lambda a, b: a + 2 * b)
    np.testing.assert_array_equal(x.numpy(), [1.0, 3.0, 5.0])

    class Sub(fg.Tensor):
        pass
    assert type(fg.ones(2).as_subclass(Sub)) is Sub
    assert fg.ones(2).to_dense().shape == (2,)
    assert fg.ones(2).new_empty_strided((2, 2), (2, 1)).shape == (2, 2)
    with pytest.raises(RuntimeError):
        fg.ones(2).indices()


def test_unfold_and_as_strided_inside_func_transforms():
    x = r(6)
    fx, tx = fg.tensor(x), torch.tensor(x)
    g = fg.func.grad(lambda t: (t.unfold(0, 3, 1) ** 2).sum())(fx)
    gt = torch.func.grad(lambda t: (t.unfold(0, 3, 1) ** 2).sum())(tx)
    np.testing.assert_allclose(g.numpy(), gt.numpy())
    b = r(3, 4)
    v = fg.func.vmap(lambda t: t.as_strided((2, 2), (1, 2)).sum(0))(fg.tensor(b))
    # each row t viewed as [[t0, t2], [t1, t3]] and summed over the first axis
    np.testing.assert_allclose(v.numpy(), np.stack([b[:, 0] + b[:, 1], b[:, 2] + b[:, 3]], 1))
