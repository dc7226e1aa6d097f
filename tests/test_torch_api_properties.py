"""Hypothesis properties of the added torch functions: inverses (fft/ifft, stft/istft, lu_unpack, matrix_exp),
agreement with NumPy's definitions (quantile, cummax, cov, gradient, trapezoid), and with real torch where
installed (the *_scatter family on random shapes)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.testing import arrays, shapes

F64 = np.dtype(np.float64)


def floats(shape, lo=-5.0, hi=5.0):
    return arrays(F64, shape, elements=st.floats(lo, hi))


@given(st.data())
def test_fft_round_trips(data):
    shp = tuple(data.draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=6)))
    x = fg.tensor(data.draw(floats(shp)))
    norm = data.draw(st.sampled_from([None, "ortho", "forward"]))
    np.testing.assert_allclose(fg.fft.ifftn(fg.fft.fftn(x, norm=norm), norm=norm).real.numpy(), x.numpy(),
                               atol=1e-10)
    n = shp[-1]
    np.testing.assert_allclose(fg.fft.irfft(fg.fft.rfft(x, norm=norm), n=n, norm=norm).numpy(), x.numpy(),
                               atol=1e-10)


@given(st.data())
def test_stft_istft_round_trip(data):
    n_fft = data.draw(st.sampled_from([8, 16, 32]))
    hop = data.draw(st.sampled_from([n_fft // 4, n_fft // 2]))
    length = data.draw(st.integers(n_fft + 1, 120))
    x = fg.tensor(data.draw(floats((length,))))
    w = fg.hann_window(n_fft, dtype=fg.float64)
    spec = fg.stft(x, n_fft, hop, window=w, return_complex=True)
    np.testing.assert_allclose(fg.istft(spec, n_fft, hop, window=w, length=length).numpy(), x.numpy(), atol=1e-9)


@given(st.data())
def test_lu_reconstructs_and_matrix_exp_inverts(data):
    n = data.draw(st.integers(1, 5))
    m = data.draw(st.integers(1, 5))
    a = fg.tensor(data.draw(floats((n, m))))
    P, L, U = fg.linalg.lu(a)
    np.testing.assert_allclose((P @ L @ U).numpy(), a.numpy(), atol=1e-10)
    assert np.all(np.abs(L.numpy()) <= 1 + 1e-12)  # partial pivoting bounds the multipliers
    info = fg.linalg.lu_factor_ex(a).info.item()
    assert info == 0 or U.numpy()[info - 1, info - 1] == 0
    sq = fg.tensor(data.draw(floats((n, n), -2, 2)))
    np.testing.assert_allclose((fg.matrix_exp(sq) @ fg.matrix_exp(-sq)).numpy(), np.eye(n), atol=1e-9)


@given(st.data())
def test_statistics_match_numpy(data):
    shp = tuple(data.draw(shapes(min_dims=1, max_dims=2, min_side=1, max_side=6)))
    v = data.draw(floats(shp))
    x = fg.tensor(v)
    q = data.draw(st.floats(0, 1))
    method = data.draw(st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]))
    np.testing.assert_allclose(fg.quantile(x, q, dim=-1, interpolation=method).numpy(),
                               np.quantile(v, q, axis=-1, method=method), atol=1e-12)
    vals, idx = fg.cummax(x, -1)
    np.testing.assert_array_equal(vals.numpy(), np.maximum.accumulate(v, axis=-1))
    np.testing.assert_array_equal(np.take_along_axis(v, idx.numpy(), -1), vals.numpy())
    if v.ndim == 2 and v.shape[1] > 1:
        np.testing.assert_allclose(fg.cov(x).numpy(), np.cov(v), atol=1e-10)
    if v.shape[-1] > 1:
        np.testing.assert_allclose(fg.gradient(x, dim=-1)[0].numpy(), np.gradient(v, axis=-1), atol=1e-12)
        np.testing.assert_allclose(fg.trapezoid(x).numpy(), np.trapezoid(v, axis=-1) if hasattr(np, "trapezoid")
                                   else np.trapz(v, axis=-1), atol=1e-12)


@given(st.data())
def test_scatter_family_matches_torch(data):
    torch = pytest.importorskip("torch")
    shp = tuple(data.draw(shapes(min_dims=2, max_dims=3, min_side=1, max_side=5)))
    v = data.draw(floats(shp))
    d = data.draw(st.integers(0, len(shp) - 1))
    i = data.draw(st.integers(-shp[d], shp[d] - 1))
    src = np.take(v, i, axis=d) * 2 + 1
    np.testing.assert_array_equal(fg.select_scatter(fg.tensor(v), fg.tensor(src), d, i).numpy(),
                                  torch.select_scatter(torch.tensor(v), torch.tensor(src), d, i).numpy())
    start = data.draw(st.integers(0, shp[d]))
    step = data.draw(st.integers(1, 3))
    key = (slice(None),) * d + (slice(start, None, step),)
    s2 = v[key] - 3
    np.testing.assert_array_equal(fg.slice_scatter(fg.tensor(v), fg.tensor(s2), d, start, None, step).numpy(),
                                  torch.slice_scatter(torch.tensor(v), torch.tensor(s2), d, start, None,
                                                      step).numpy())
    off = data.draw(st.integers(-shp[0] + 1, shp[1] - 1)) if len(shp) >= 2 else 0
    diag = np.diagonal(v, off, 0, 1) + 5
    np.testing.assert_array_equal(fg.diagonal_scatter(fg.tensor(v), fg.tensor(diag), off).numpy(),
                                  torch.diagonal_scatter(torch.tensor(v), torch.tensor(diag), off).numpy())
