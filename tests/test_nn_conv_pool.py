"""funcgrad.nn convolution, pooling (lp, 3-d adaptive, unpooling, fractional), channel shuffle, padding and
resampling layers (affine_grid, grid_sample) against real torch: forward values, gradients (of
(out * random).sum()), indices, reprs, default init and error types."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import functional as F

torch = pytest.importorskip("torch")
from torch_check import RNG, check, pos, r  # noqa: E402
TF = torch.nn.functional

TOL = {np.float32: (1e-4, 1e-5), np.float64: (1e-10, 1e-12)}


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _randn(*shape, seed=1, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _compare(tfn, ffn, *inputs, grad=None, dtype=None):
    """Run tfn on torch tensors and ffn on funcgrad tensors; compare outputs (and integer indices exactly)
    and the gradients of (out * random).sum() w.r.t. the float inputs (or the indices in `grad`)."""
    dtype = dtype or inputs[0].dtype.type
    rtol, atol = TOL.get(dtype, TOL[np.float32])
    grad = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"] if grad is None else grad
    tin = [torch.tensor(x, requires_grad=i in grad) for i, x in enumerate(inputs)]
    fin = [fg.tensor(x, requires_grad=i in grad) for i, x in enumerate(inputs)]
    tout, fout = tfn(*tin), ffn(*fin)
    if isinstance(tout, tuple):
        assert isinstance(fout, (tuple, list)) and len(fout) == len(tout)
        np.testing.assert_array_equal(_np(fout[1]), _np(tout[1]))
        assert fout[1].dtype == fg.int64
        tout, fout = tout[0], fout[0]
    assert tuple(fout.shape) == tuple(tout.shape)
    assert fout.dtype == getattr(fg, str(tout.dtype).split(".")[-1])
    np.testing.assert_allclose(_np(fout), _np(tout), rtol, atol)
    if grad:
        ct = np.random.default_rng(7).standard_normal(tuple(tout.shape)).astype(_np(tout).dtype)
        (tout * torch.tensor(ct)).sum().backward()
        (fout * fg.tensor(ct)).sum().backward()
        for i in grad:
            np.testing.assert_allclose(_np(fin[i].grad), _np(tin[i].grad), rtol, atol)
    return fout, tout


def _twin(tmod, fmod):
    res = fmod.load_state_dict(tmod.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    return fmod


def _check_module(tmod, fmod, x, **kw):
    """Forward and input + parameter gradients of a module pair in train and eval mode."""
    assert repr(fmod) == repr(tmod)
    for mode in ("train", "eval"):
        getattr(tmod, mode)()
        getattr(fmod, mode)()
        tmod.zero_grad()
        fmod.zero_grad()
        _compare(lambda t: tmod(t, **kw), lambda f: fmod(f, **kw), x)
        tp = dict(tmod.named_parameters())
        rtol, atol = TOL[x.dtype.type]
        for name, p in fmod.named_parameters():
            np.testing.assert_allclose(_np(p.grad), _np(tp[name].grad), rtol, atol)


# --- convolution layers ----------------------------------------------------------------------------
CONV_CASES = [
    ("Conv1d", (2, 4, 11), dict(kernel_size=3)),
    ("Conv1d", (4, 11), dict(kernel_size=4, stride=2, padding=2, dilation=2, groups=2)),
    ("Conv1d", (2, 4, 9), dict(kernel_size=4, padding="same", padding_mode="reflect")),
    ("Conv1d", (2, 4, 9), dict(kernel_size=3, padding=2, padding_mode="circular", bias=False)),
    ("Conv2d", (2, 4, 7, 8), dict(kernel_size=(2, 3), stride=(2, 1), padding=(1, 2), padding_mode="replicate")),
    ("Conv2d", (4, 7, 8), dict(kernel_size=3, padding=1, padding_mode="reflect", groups=2)),
    ("Conv2d", (2, 4, 7, 8), dict(kernel_size=3, padding="valid", dilation=(2, 1))),
    ("Conv2d", (2, 4, 7, 8), dict(kernel_size=(4, 2), padding="same", padding_mode="circular")),
    ("Conv3d", (2, 4, 5, 6, 5), dict(kernel_size=3, stride=(1, 2, 1), padding=1)),
    ("Conv3d", (4, 5, 6, 5), dict(kernel_size=(2, 3, 2), padding="same", groups=2, padding_mode="replicate")),
]


@pytest.mark.parametrize("name,shape,kw", CONV_CASES)
def test_conv_modules(name, shape, kw):
    out_ch = 6
    t = getattr(torch.nn, name)(4, out_ch, **kw)
    f = _twin(t, getattr(nn, name)(4, out_ch, **kw))
    _check_module(t, f, _randn(*shape))


@pytest.mark.parametrize("name,shape,kw", [
    ("Conv1d", (3, 8, 12), dict(kernel_size=3, stride=2, padding=1)),
    ("Conv2d", (3, 8, 9, 7), dict(kernel_size=3, padding=1)),
    ("Conv2d", (3, 8, 9, 7), dict(kernel_size=(2, 3), stride=(2, 1), dilation=(1, 2), padding=(1, 0))),
    ("Conv3d", (2, 8, 4, 5, 4), dict(kernel_size=2, padding=(1, 0, 1))),
])
def test_conv_modules_with_many_input_channels(name, shape, kw):
    """More input channels than the convolution gathers channels-first (conv._FEW_CHANNELS): the weight's
    gradient comes from windows gathered channels-last."""
    from funcgrad._src.prims import conv as conv_card
    assert shape[1] > conv_card._FEW_CHANNELS
    t = getattr(torch.nn, name)(shape[1], 5, **kw)
    f = _twin(t, getattr(nn, name)(shape[1], 5, **kw))
    _check_module(t, f, _randn(*shape))


def test_conv_float64():
    t = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="reflect").double()
    f = _twin(t, nn.Conv2d(3, 4, 3, stride=2, padding=1, padding_mode="reflect").double())
    assert f.weight.dtype == fg.float64
    _check_module(t, f, _randn(2, 3, 7, 6, dtype=np.float64))


@pytest.mark.parametrize("fname,x,w", [("conv1d", (2, 3, 10), (4, 3, 3)), ("conv2d", (2, 3, 8, 7), (6, 1, 3, 2)),
                                       ("conv3d", (3, 5, 4, 6), (2, 3, 2, 2, 3))])
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2, padding="same")])
def test_functional_conv(fname, x, w, kw):
    groups = x[-len(w) + 1] // w[1] if len(x) == len(w) else x[0] // w[1]
    b = _randn(w[0], seed=3)
    _compare(lambda a, k, c: getattr(TF, fname)(a, k, c, groups=groups, **kw),
             lambda a, k, c: getattr(F, fname)(a, k, c, groups=groups, **kw), _randn(*x), _randn(*w, seed=2), b)


def test_conv_grad_fn_is_convolution():
    x = fg.randn(1, 2, 5, 5, requires_grad=True)
    assert type(nn.Conv2d(2, 3, 3)(x).grad_fn).__name__ == "ConvolutionBackward0"
    assert type(nn.ConvTranspose2d(2, 3, 3)(x).grad_fn).__name__ == "ConvolutionBackward0"


@pytest.mark.parametrize("name,args", [("Conv1d", (4, 8, 5)), ("Conv2d", (4, 6, (3, 2))), ("Conv3d", (2, 4, 3)),
                                       ("ConvTranspose1d", (6, 4, 3)), ("ConvTranspose2d", (4, 6, 3))])
def test_conv_default_init(name, args):
    """kaiming_uniform_(a=sqrt(5)) weight and U(+-1/sqrt(fan_in)) bias, with torch's fan_in."""
    fg.manual_seed(0)
    f = getattr(nn, name)(*args, groups=2)
    t = getattr(torch.nn, name)(*args, groups=2)
    assert tuple(f.weight.shape) == tuple(t.weight.shape) and tuple(f.bias.shape) == tuple(t.bias.shape)
    w = _np(f.weight)
    fan_in = w.shape[1] * math.prod(w.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.25 * bound
    assert np.abs(_np(f.bias)).max() <= bound and len(np.unique(_np(f.bias))) == f.bias.numel()


@pytest.mark.parametrize("name,shape,kw", [
    ("ConvTranspose1d", (2, 4, 7), dict(kernel_size=3)),
    ("ConvTranspose1d", (4, 7), dict(kernel_size=4, stride=3, padding=2, output_padding=1, groups=2, dilation=2)),
    ("ConvTranspose2d", (2, 4, 5, 6), dict(kernel_size=(3, 2), stride=2, padding=(1, 0), output_padding=(1, 0))),
    ("ConvTranspose2d", (2, 4, 5, 6), dict(kernel_size=3, stride=(1, 2), groups=2, bias=False, dilation=(2, 1))),
    ("ConvTranspose2d", (4, 5, 6), dict(kernel_size=3, padding=2)),
    ("ConvTranspose3d", (1, 4, 3, 4, 3), dict(kernel_size=2, stride=2, padding=(0, 1, 0))),
])
def test_conv_transpose_modules(name, shape, kw):
    t = getattr(torch.nn, name)(4, 6, **kw)
    f = _twin(t, getattr(nn, name)(4, 6, **kw))
    _check_module(t, f, _randn(*shape))


def test_conv_transpose_output_size():
    t = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
    f = _twin(t, nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1))
    x = _randn(1, 3, 5, 4)
    for size in [(10, 8), (9, 7), (1, 2, 10, 7)]:
        _compare(lambda a: t(a, output_size=size), lambda a: f(a, output_size=size), x)
    with pytest.raises(ValueError, match="requested an output size"):
        f(fg.tensor(x), output_size=(11, 8))
    with pytest.raises(ValueError, match="output_size must have"):
        f(fg.tensor(x), output_size=(11,))
    _compare(lambda a: t(a[0], output_size=(10, 8)), lambda a: f(a[0], output_size=(10, 8)), x)


def test_conv_errors():
    x = fg.randn(2, 3, 5, 5)
    for call, exc in [
        (lambda: F.conv2d(x, fg.randn(4, 2, 3, 3)), RuntimeError),            # channel mismatch
        (lambda: F.conv2d(fg.randn(3, 5), fg.randn(4, 3, 3, 3)), RuntimeError),  # bad rank
        (lambda: F.conv1d(fg.randn(2, 3, 5), fg.randn(4, 3, 3, 3)), RuntimeError),
        (lambda: F.conv2d(x, fg.randn(4, 3, 7, 7)), RuntimeError),            # kernel larger than input
        (lambda: F.conv2d(x, fg.randn(4, 3, 3, 3), padding="foo"), RuntimeError),
        (lambda: F.conv2d(x, fg.randn(4, 3, 3, 3), stride=2, padding="same"), RuntimeError),
        (lambda: F.conv2d(x, fg.randn(4, 3, 3, 3), stride=0), RuntimeError),
        (lambda: F.conv2d(x, fg.randn(4, 3, 3, 3), padding=-1), RuntimeError),
        (lambda: F.conv2d(x, fg.randn(4, 3, 3, 3), bias=fg.randn(3)), RuntimeError),
        (lambda: F.conv2d(x.double(), fg.randn(4, 3, 3, 3)), RuntimeError),
        (lambda: F.conv_transpose2d(x, fg.randn(4, 3, 3, 3)), RuntimeError),
        (lambda: F.conv_transpose2d(x, fg.randn(3, 3, 3, 3), stride=2, output_padding=2), RuntimeError),
        (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError),
        (lambda: nn.Conv2d(3, 3, 3, groups=0), ValueError),
        (lambda: nn.Conv2d(3, 3, 3, padding="foo"), ValueError),
        (lambda: nn.Conv2d(3, 3, 3, stride=2, padding="same"), ValueError),
        (lambda: nn.Conv2d(3, 3, 3, padding_mode="foo"), ValueError),
        (lambda: nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect"), ValueError),
    ]:
        with pytest.raises(exc):
            call()
    # torch raises the same types
    with pytest.raises(RuntimeError):
        TF.conv2d(torch.randn(2, 3, 5, 5), torch.randn(4, 3, 3, 3), padding="foo")
    with pytest.raises(RuntimeError):
        TF.conv2d(torch.randn(2, 3, 5, 5).double(), torch.randn(4, 3, 3, 3))


# --- pooling --------------------------------------------------------------------------------------
MAXPOOL2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
             dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), padding=(1, 1)),
             dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=2, stride=3, ceil_mode=True)]


@pytest.mark.parametrize("kw", MAXPOOL2D)
@pytest.mark.parametrize("indices", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 8, 9), (3, 7, 7)])
def test_max_pool2d(kw, indices, shape):
    t, f = torch.nn.MaxPool2d(**kw, return_indices=indices), nn.MaxPool2d(**kw, return_indices=indices)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(*shape))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=2, stride=1, dilation=3, padding=1), dict(kernel_size=4, stride=3,
                                                                                        ceil_mode=True)])
@pytest.mark.parametrize("shape", [(2, 3, 10), (3, 11)])
def test_max_pool1d(kw, shape):
    for indices in (False, True):
        t, f = torch.nn.MaxPool1d(**kw, return_indices=indices), nn.MaxPool1d(**kw, return_indices=indices)
        assert repr(t) == repr(f)
        _compare(t, f, _randn(*shape))


def test_max_pool_ties_nan_and_float64():
    x = np.zeros((1, 1, 4, 4), np.float64)
    x[0, 0, 1, 1] = np.nan
    _compare(lambda a: TF.max_pool2d(a, 2, return_indices=True), lambda a: F.max_pool2d(a, 2, return_indices=True),
             x, grad=[])
    x = np.round(_randn(2, 2, 6, 6, dtype=np.float64))  # many ties: first maximum wins in both
    _compare(lambda a: TF.max_pool2d(a, 3, 1, 1, return_indices=True),
             lambda a: F.max_pool2d(a, 3, 1, 1, return_indices=True), x)
    _compare(lambda a: TF.max_pool2d(a, 3, 1, 1), lambda a: F.max_pool2d(a, 3, 1, 1), x)
    _compare(lambda a: TF.max_pool3d(a, 2, ceil_mode=True), lambda a: F.max_pool3d(a, 2, ceil_mode=True),
             _randn(1, 2, 5, 4, 3))


def test_max_pool_nan_neg_inf_and_windows_in_the_padding_as_torchs_kernels():
    """torch's scan: the last NaN of a window is its index (and gets the gradient), a window with nothing above
    -inf keeps its starting index (the first position past the left padding, in steps of the dilation: past
    the input where the window lies wholly in the padding), and its backward adds each cotangent at that
    index counted from its plane's start, so past the plane into the next one's first elements."""
    x = np.array([[[1.0, np.nan, 2.0, np.nan, 0.0]], [[-np.inf, -np.inf, 1.0, 3.0, 2.0]]])
    for kw in (dict(kernel_size=5), dict(kernel_size=3, stride=1, padding=1), dict(kernel_size=2, dilation=2)):
        _compare(lambda a: TF.max_pool1d(a, return_indices=True, **kw),
                 lambda a: F.max_pool1d(a, return_indices=True, **kw), x, dtype=np.float64)
    # width 1, kernel 2, dilation 2, padding 1: the window (-1, 1) lies in the padding, its index is 1; torch's
    # backward then adds plane c's cotangent at plane c + 1's element 0 (and past the input for the last plane:
    # running torch's backward here would write out of bounds, so its values are written out)
    x = np.array([[[3.0], [4.0], [5.0]]])
    _compare(lambda a: TF.max_pool1d(a, 2, 1, 1, 2, return_indices=True),
             lambda a: F.max_pool1d(a, 2, 1, 1, 2, return_indices=True), x, grad=[], dtype=np.float64)
    f = fg.tensor(x, requires_grad=True)
    F.max_pool1d(f, 2, 1, 1, 2).backward(fg.tensor([[[1.0], [10.0], [100.0]]], dtype=fg.float64))
    assert f.grad.tolist() == [[[0.0], [1.0], [10.0]]]
    x = _randn(2, 2, 1, 6, dtype=np.float64)  # (2-d: the windows of rows -1 and 1 lie in the padding)
    _compare(lambda a: TF.max_pool2d(a, (2, 3), 2, 1, (2, 1), return_indices=True),
             lambda a: F.max_pool2d(a, (2, 3), 2, 1, (2, 1), return_indices=True), x, grad=[])


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.booleans(), st.integers(0, 2**32 - 1))
def test_max_pool2d_gradient_at_nan_inf_and_ties_as_torch(k, s, p, ceil, seed):
    """The card's torch convention against torch's kernels: NaN, +-inf and ties in 2-d windows (contiguous, so
    every window meets the input; torch's backward would write past its input otherwise), with padding and ceil
    mode; values, indices and the gradient."""
    rng = np.random.default_rng(seed)
    p = min(p, k // 2)
    x = rng.integers(-2, 3, (2, 3, 5, 6)).astype(np.float64)
    mask = rng.random(x.shape) < 0.3
    x[mask] = rng.choice([np.nan, -np.inf, np.inf], int(mask.sum()))
    _compare(lambda a: TF.max_pool2d(a, k, s, p, 1, ceil, True), lambda a: F.max_pool2d(a, k, s, p, 1, ceil, True),
             x)


@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2), st.integers(1, 2), st.booleans(),
       st.integers(5, 9), st.integers(5, 9), st.booleans())
def test_pool_geometry_hypothesis(k, s, p, d, ceil, h, w, include_pad):
    """Max (with indices) and average pooling over random geometries, output sizes included."""
    p = min(p, ((k - 1) * d + 1) // 2)
    x = _randn(1, 2, h, w, seed=h * 10 + w)
    _compare(lambda a: TF.max_pool2d(a, k, s, p, d, ceil, True), lambda a: F.max_pool2d(a, k, s, p, d, ceil, True), x)
    p = min(p, k // 2)
    _compare(lambda a: TF.avg_pool2d(a, k, s, p, ceil, include_pad), lambda a: F.avg_pool2d(a, k, s, p, ceil,
                                                                                         include_pad), x)


AVG2D = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
         dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
         dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), divisor_override=4),
         dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, divisor_override=5)]


@pytest.mark.parametrize("kw", AVG2D)
@pytest.mark.parametrize("shape", [(2, 3, 8, 9), (3, 7, 7)])
def test_avg_pool2d(kw, shape):
    t, f = torch.nn.AvgPool2d(**kw), nn.AvgPool2d(**kw)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(*shape))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)])
def test_avg_pool1d_and_3d(kw):
    t, f = torch.nn.AvgPool1d(**kw), nn.AvgPool1d(**kw)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(2, 3, 10))
    _compare(t, f, _randn(3, 11, dtype=np.float64))
    _compare(lambda a: TF.avg_pool3d(a, **kw), lambda a: F.avg_pool3d(a, **kw), _randn(1, 2, 5, 6, 5))


@pytest.mark.parametrize("out", [3, (4, 2), (None, 5), (1, 1), (9, 11)])
def test_adaptive_pool2d(out):
    x = _randn(2, 3, 7, 9)
    t, f = torch.nn.AdaptiveAvgPool2d(out), nn.AdaptiveAvgPool2d(out)
    assert repr(t) == repr(f)
    _compare(t, f, x)
    _compare(t, f, x[0].astype(np.float64))
    t, f = torch.nn.AdaptiveMaxPool2d(out, return_indices=True), nn.AdaptiveMaxPool2d(out, return_indices=True)
    assert repr(t) == repr(f)
    _compare(t, f, x)
    _compare(lambda a: TF.adaptive_max_pool2d(a, out), lambda a: F.adaptive_max_pool2d(a, out), x[0])


@pytest.mark.parametrize("out", [1, 3, 5, 8])
def test_adaptive_pool1d(out):
    x = _randn(2, 3, 7)
    _compare(torch.nn.AdaptiveAvgPool1d(out), nn.AdaptiveAvgPool1d(out), x)
    _compare(torch.nn.AdaptiveMaxPool1d(out, True), nn.AdaptiveMaxPool1d(out, True), x)
    _compare(torch.nn.AdaptiveMaxPool1d(out), nn.AdaptiveMaxPool1d(out), x[0])


def test_max_unpool():
    x = _randn(2, 3, 8, 8)
    tv, ti = TF.max_pool2d(torch.tensor(x), 2, stride=2, return_indices=True)
    v, i = tv.numpy(), ti.numpy()
    t, f = torch.nn.MaxUnpool2d(2), nn.MaxUnpool2d(2)
    assert repr(t) == repr(f)
    _compare(t, f, v, i)
    _compare(lambda a, b: t(a, b, output_size=(9, 9)), lambda a, b: f(a, b, output_size=(9, 9)), v, i)
    _compare(lambda a, b: t(a[0], b[0], output_size=(8, 8)), lambda a, b: f(a[0], b[0], output_size=(8, 8)), v, i)
    with pytest.raises(ValueError):
        f(fg.tensor(v[0]), fg.tensor(i[0]), output_size=(3, 8, 8))
    tv, ti = TF.max_pool1d(torch.tensor(x[0]), 3, stride=2, padding=1, return_indices=True)
    _compare(lambda a, b: TF.max_unpool1d(a, b, 3, 2, 1, (8,)), lambda a, b: F.max_unpool1d(a, b, 3, 2, 1, (8,)),
             tv.numpy(), ti.numpy())
    bad = i.copy()
    bad[0, 0, 0, 0] = 64
    with pytest.raises(RuntimeError, match="invalid max index"):
        f(fg.tensor(v), fg.tensor(bad))
    with pytest.raises(ValueError):
        f(fg.tensor(v), fg.tensor(i), output_size=(12, 8))


def test_pool_errors():
    x = fg.randn(2, 3, 5, 5)
    for call, exc in [
        (lambda: F.max_pool2d(x, 3, padding=2), RuntimeError),
        (lambda: F.max_pool2d(x, 7), RuntimeError),
        (lambda: F.max_pool2d(fg.randn(5, 5), 2), RuntimeError),
        (lambda: F.max_pool1d(fg.randn(5), 2), RuntimeError),
        (lambda: F.max_pool2d(x, 2, stride=0), RuntimeError),
        (lambda: F.avg_pool2d(x, 3, padding=2), RuntimeError),
        (lambda: F.avg_pool1d(fg.randn(1, 1, 5), 2, padding=-1), RuntimeError),
        (lambda: F.adaptive_avg_pool2d(fg.randn(1, 1, 1, 5, 5), 2), RuntimeError),
        (lambda: F.adaptive_max_pool1d(fg.randn(5), 2), RuntimeError),
        (lambda: F.adaptive_avg_pool1d(fg.randn(1, 5), (2, 3)), RuntimeError),
    ]:
        with pytest.raises(exc):
            call()


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_lp_pool(p):
    x = pos(2, 3, 8, 7, 6)
    check(lambda L, a: L.nn.functional.lp_pool1d(a[0, :, 0, 0], p, 3), x)
    check(lambda L, a: (L.nn.functional.lp_pool2d(a[0], p, 2), L.nn.functional.lp_pool2d(a[0], p, (3, 2), 2,
                                                                                           ceil_mode=True)), x)
    check(lambda L, a: L.nn.functional.lp_pool3d(a, p, 2, 2), x)
    check(lambda L, a: (L.nn.LPPool2d(p, 2)(a[0]), L.nn.LPPool1d(p, 2)(a[0, :, 0, 0])), x)


def test_pool3d_and_shuffle():
    x = r(2, 3, 6, 5, 7)
    check(lambda L, a: (L.nn.functional.adaptive_avg_pool3d(a, (2, 3, 4)), L.nn.AdaptiveAvgPool3d((3, None, 2))(a)),
          x)
    check(lambda L, a: (L.nn.functional.adaptive_max_pool3d(a, 2, return_indices=True),
                        L.nn.AdaptiveMaxPool3d((1, 2, 3))(a)), x)
    check(lambda L, a: L.nn.functional.max_pool3d_with_indices(a, 2), x)
    y = x[..., :4, :6].copy()
    check(lambda L, a: L.nn.functional.max_unpool3d(*L.nn.functional.max_pool3d(a, 2, return_indices=True), 2), y)
    check(lambda L, a: L.nn.MaxUnpool3d(2)(*L.nn.functional.max_pool3d(a, 2, return_indices=True)), y)
    check(lambda L, a: (L.nn.functional.channel_shuffle(a, 3), L.nn.ChannelShuffle(3)(a), L.channel_shuffle(a, 1)),
          r(2, 6, 3))
    with pytest.raises(RuntimeError, match="divisible"):
        fg.nn.functional.channel_shuffle(fg.ones(1, 5, 2), 2)


def test_dataparallel_fractional_modules_nllloss2d():
    keys = {L: list(L.nn.DataParallel(L.nn.Linear(2, 3)).state_dict()) for L in (fg, torch)}
    assert keys[fg] == keys[torch] == ["module.weight", "module.bias"]
    x, s = r(2, 3, 7, 9), np.random.default_rng(6).random((2, 3, 2))
    check(lambda L, t, u: L.nn.FractionalMaxPool2d((2, 3), output_size=(3, 4), _random_samples=u.detach())(t), x, s)
    lp = r(2, 4, 3, 3)
    y = np.random.default_rng(7).integers(0, 4, (2, 3, 3))
    check(lambda L, a, t: L.nn.NLLLoss2d()(a.log_softmax(1), t), lp, y)
    with pytest.raises(ValueError):
        fg.nn.FractionalMaxPool2d(2)


# --- padding --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", [((2, 3, 6), (2, 3)), ((3, 6), (-1, 2)), ((2, 3, 5, 6), (1, 2, 3, 0)),
                                       ((3, 5, 6), (2, -1, -2, 3)), ((1, 2, 4, 5, 6), (1, 2, 0, 3, 2, 1)),
                                       ((2, 4, 5, 6), (3, 3, 1, 1, 0, 2))])
def test_pad_modes(mode, shape, pad):
    _compare(lambda a: TF.pad(a, pad, mode=mode), lambda a: F.pad(a, pad, mode=mode), _randn(*shape))


def test_pad_constant():
    x = _randn(2, 3, 4, 5)
    for pad, value in [((1, 1), None), ((0, 2, -1, 1, 1, 0, 2, 2), 2.5), ((-2, -3), None), ((0, 0), None)]:
        _compare(lambda a: TF.pad(a, pad, value=value), lambda a: F.pad(a, pad, value=value), x)
    xi = np.arange(10).reshape(2, 5)
    np.testing.assert_array_equal(_np(F.pad(fg.tensor(xi), (1, 2), value=2.5)),
                                  TF.pad(torch.tensor(xi), (1, 2), value=2.5).numpy())
    assert F.pad(fg.tensor(xi), (1, 2)).dtype == fg.int64


@pytest.mark.parametrize("name,arg,shape", [("ZeroPad2d", 2, (2, 3, 4, 5)), ("ZeroPad1d", (1, 2), (3, 4)),
                                            ("ConstantPad1d", ((2, 1), 3.5), (2, 3, 4)),
                                            ("ConstantPad2d", (1, -0.5), (3, 4, 5)),
                                            ("ConstantPad3d", ((1, 0, 2, 1, 0, 1), 1.0), (1, 2, 3, 4, 5)),
                                            ("ReflectionPad1d", (3, 1), (2, 3, 5)), ("ReflectionPad2d", 2, (3, 4, 5)),
                                            ("ReplicationPad1d", 3, (3, 4)),
                                            ("ReplicationPad2d", (1, 0, 2, 3), (2, 3, 4, 5)),
                                            ("ReflectionPad3d", 1, (1, 2, 3, 4, 5)),
                                            ("CircularPad2d", (1, 2, 2, 0), (2, 3, 4, 5))])
def test_pad_modules(name, arg, shape):
    args = arg if isinstance(arg, tuple) and name.startswith("Constant") else (arg,)
    t, f = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(*shape))


def test_pad_errors():
    x = fg.randn(2, 3, 5, 5)
    for call, exc in [
        (lambda: F.pad(x, (1, 2, 3)), RuntimeError),
        (lambda: F.pad(x, (1,) * 10), RuntimeError),
        (lambda: F.pad(x, (1, 2), mode="reflect"), NotImplementedError),
        (lambda: F.pad(fg.randn(5), (1, 2), mode="replicate"), NotImplementedError),
        (lambda: F.pad(x, (5, 5, 1, 1), mode="reflect"), RuntimeError),
        (lambda: F.pad(x, (6, 0, 1, 1), mode="circular"), RuntimeError),
        (lambda: F.pad(x, (1, 2), mode="foo"), NotImplementedError),
        (lambda: F.pad(x, (1, 1, 1, 1), mode="reflect", value=1.0), RuntimeError),
        (lambda: F.pad(x, (-6, 0)), RuntimeError),
        (lambda: nn.CircularPad2d(1)(fg.randn(5, 5)), ValueError),
    ]:
        with pytest.raises(exc):
            call()
    np.testing.assert_array_equal(_np(F.pad(x, (1, 1, 1, 1), mode="reflect", value=0)),
                                  _np(F.pad(x, (1, 1, 1, 1), mode="reflect")))


# --- resampling -----------------------------------------------------------------------------------
INTERP = [
    ((2, 3, 5, 6), dict(scale_factor=2)), ((2, 3, 5, 6), dict(scale_factor=1.7)),
    ((2, 3, 5, 6), dict(size=(3, 11))), ((2, 3, 5, 6), dict(scale_factor=(0.6, 2.5), recompute_scale_factor=True)),
    ((2, 3, 5, 6), dict(size=(8, 4), mode="bilinear")), ((2, 3, 5, 6), dict(scale_factor=2.3, mode="bilinear")),
    ((2, 3, 5, 6), dict(size=(9, 3), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(1, 7), mode="bilinear", align_corners=True)),
    ((2, 3, 5, 6), dict(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 7), dict(scale_factor=1.6, mode="linear")), ((2, 3, 7), dict(size=12, mode="linear", align_corners=True)),
    ((2, 3, 7), dict(size=4, mode="nearest")), ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(4, 3, 7), mode="trilinear")), ((2, 3, 5, 6), dict(size=(7, 9), mode="bicubic")),
    ((2, 3, 5, 6), dict(scale_factor=0.7, mode="bicubic", align_corners=True)),
    ((2, 3, 5, 6), dict(size=(3, 4), mode="area")), ((2, 3, 5, 6), dict(scale_factor=0.5, mode="area")),
    ((2, 3, 5, 6), dict(size=(8, 11), mode="nearest-exact")),
]


@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(shape, kw):
    _compare(lambda a: TF.interpolate(a, **kw), lambda a: F.interpolate(a, **kw), _randn(*shape))


def test_interpolate_float64():
    x = _randn(2, 3, 5, 6, dtype=np.float64)
    for kw in [dict(scale_factor=1.3, mode="bilinear"), dict(size=(7, 4), mode="bicubic", align_corners=True)]:
        _compare(lambda a: TF.interpolate(a, **kw), lambda a: F.interpolate(a, **kw), x)


AA = [
    ((2, 3, 13, 17), dict(size=(5, 6))), ((2, 3, 13, 17), dict(size=(20, 4))),
    ((1, 2, 9, 11), dict(scale_factor=(0.37, 2.2))), ((1, 2, 9, 11), dict(size=(4, 4), align_corners=True)),
    ((1, 2, 9, 11), dict(scale_factor=0.5, recompute_scale_factor=True)),
    ((1, 2, 7, 12), dict(size=(23, 1))),  # (torch's forward gives every row the first's taps at width 1)
    ((1, 2, 18, 3), dict(scale_factor=(1.0, 1.02))),  # (sizes kept: torch's forward copies, its backward resamples)
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kw", AA)
def test_interpolate_antialias(shape, kw, mode):
    """antialias=True: torch's separable antialiased kernels, values and gradients (float32 and float64)."""
    for dtype in (np.float32, np.float64):
        _compare(lambda a: TF.interpolate(a, mode=mode, antialias=True, **kw),
                 lambda a: F.interpolate(a, mode=mode, antialias=True, **kw), _randn(*shape, dtype=dtype))
    x = fg.randn(1, 1, 5, 5, requires_grad=True)
    assert type(F.interpolate(x, size=(3, 3), mode=mode, antialias=True).grad_fn).__name__ == \
        type(TF.interpolate(torch.randn(1, 1, 5, 5, requires_grad=True), size=(3, 3), mode=mode,
                            antialias=True).grad_fn).__name__


@pytest.mark.parametrize("name,kw", [("Upsample", dict(scale_factor=2)), ("Upsample", dict(size=(7, 3),
                                                                                         mode="bilinear")),
                                     ("Upsample", dict(scale_factor=(1.5, 2.0), mode="bilinear", align_corners=True)),
                                     ("UpsamplingNearest2d", dict(size=(4, 9))),
                                     ("UpsamplingBilinear2d", dict(scale_factor=2))])
def test_upsample_modules(name, kw):
    t, f = getattr(torch.nn, name)(**kw), getattr(nn, name)(**kw)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(2, 3, 5, 6))


def test_interpolate_errors():
    x = fg.randn(2, 3, 5, 5)
    for call, exc in [
        (lambda: F.interpolate(x, size=3, scale_factor=2), ValueError),
        (lambda: F.interpolate(x), ValueError),
        (lambda: F.interpolate(x, size=3, align_corners=True), ValueError),
        (lambda: F.interpolate(x, size=3, mode="linear"), NotImplementedError),
        (lambda: F.interpolate(fg.randn(2, 3, 4), size=3, mode="bilinear"), NotImplementedError),
        (lambda: F.interpolate(x, size=(3, 3, 3)), ValueError),
        (lambda: F.interpolate(x, scale_factor=(2, 2, 2)), ValueError),
        (lambda: F.interpolate(x, size=3, mode="foo"), NotImplementedError),
        (lambda: F.interpolate(fg.randn(5, 5), scale_factor=2), NotImplementedError),
        (lambda: F.interpolate(x, size=3, recompute_scale_factor=True), ValueError),
        (lambda: F.interpolate(x, scale_factor=2, mode="nearest", antialias=True), ValueError),
        (lambda: F.interpolate(fg.randn(2, 3, 4), size=3, mode="linear", antialias=True), ValueError),
        (lambda: F.interpolate(x.half(), size=3, mode="bilinear", antialias=True), NotImplementedError),
    ]:
        with pytest.raises(exc):
            call()


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((12, 2, 3), 2), ((1, 2, 18, 1, 2), 3)])
def test_pixel_shuffle(shape, r):
    t, f = torch.nn.PixelShuffle(r), nn.PixelShuffle(r)
    assert repr(t) == repr(f)
    _compare(t, f, _randn(*shape))
    x = _randn(*shape[:-3], shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    t, f = torch.nn.PixelUnshuffle(r), nn.PixelUnshuffle(r)
    assert repr(t) == repr(f)
    _compare(t, f, x)
    with pytest.raises(RuntimeError):
        F.pixel_shuffle(fg.randn(2, 5, 3, 3), 2)
    with pytest.raises(RuntimeError):
        F.pixel_unshuffle(fg.randn(2, 5, 3, 4), 2)
    with pytest.raises(RuntimeError):
        F.pixel_shuffle(fg.randn(4, 5), 2)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, padding=1, stride=2),
                                dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))])
def test_unfold_fold(kw):
    x = _randn(2, 3, 7, 8)
    t, f = torch.nn.Unfold(**kw), nn.Unfold(**kw)
    assert repr(t) == repr(f)
    cols, _ = _compare(t, f, x)
    _compare(t, f, x[0])
    t, f = torch.nn.Fold((7, 8), **kw), nn.Fold((7, 8), **kw)
    assert repr(t) == repr(f)
    c = _randn(*cols.shape, seed=4)
    _compare(t, f, c)
    _compare(t, f, c[0].astype(np.float64))


def test_fold_errors():
    for call in [lambda: F.fold(fg.randn(2, 12, 8), (4, 4), 2), lambda: F.fold(fg.randn(2, 13, 9), (4, 4), 2),
                 lambda: F.fold(fg.randn(1, 1, 2, 5, 5), 2, 2), lambda: F.unfold(fg.randn(1, 1, 2, 5, 5), 2),
                 lambda: F.unfold(fg.randn(1, 1, 5, 5), 6)]:
        with pytest.raises(RuntimeError):
            call()


@pytest.mark.parametrize("align", [True, False])
def test_affine_grid(align):
    check(lambda L, th: L.nn.functional.affine_grid(th, (2, 3, 4, 5), align_corners=align), r(2, 2, 3))
    check(lambda L, th: L.nn.functional.affine_grid(th, (1, 1, 3, 4, 2), align_corners=align), r(1, 3, 4))
    check(lambda L, th: L.nn.functional.affine_grid(th, (2, 3, 1, 5), align_corners=align), r(2, 2, 3))
    with pytest.raises(ValueError):
        fg.nn.functional.affine_grid(fg.ones(2, 3, 3), (2, 3, 4, 5), align_corners=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fg.nn.functional.affine_grid(fg.ones(1, 2, 3), (1, 1, 2, 2))
    assert any("align_corners" in str(x.message) for x in w)


@pytest.mark.parametrize("size", [(2, 1, 6, 5), (2, 1, 5, 6), (1, 2, 4, 4)])
@pytest.mark.parametrize("align", [True, False])
def test_affine_grid_identity_lands_on_pixel_centres_as_torch(size, align):
    # pytorch/tutorials' spatial transformer starts from the identity theta: its grid points sit on pixel centres,
    # where bilinear sampling's gradient takes the side floor() picks, so the grid must round as torch's does
    # (in theta's dtype, float32) for the gradient of theta to be torch's
    theta = np.tile(np.array([[1, 0, 0], [0, 1, 0]], np.float32), (size[0], 1, 1))
    x = r(*size).astype(np.float32)
    w = np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)
    grads = []
    for L in (torch, fg):
        th = L.tensor(theta, requires_grad=True)
        grid = L.nn.functional.affine_grid(th, size, align_corners=align)
        (L.nn.functional.grid_sample(L.tensor(x), grid, align_corners=align) * L.tensor(w)).sum().backward()
        grads.append((grid.detach().numpy(), th.grad.numpy()))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [True, False])
def test_grid_sample_2d(mode, padding, align):
    x = r(2, 3, 5, 6)
    grid = RNG.uniform(-1.4, 1.4, (2, 4, 7, 2))
    check(lambda L, a, g: L.nn.functional.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=align),
          x, grid, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(padding):
    x = r(1, 2, 3, 4, 5)
    grid = RNG.uniform(-1.2, 1.2, (1, 2, 3, 4, 3))
    check(lambda L, a, g: L.nn.functional.grid_sample(a, g, padding_mode=padding, align_corners=False), x, grid,
          rtol=1e-7, atol=1e-9)


def test_grid_sample_errors():
    F = fg.nn.functional
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 2), mode="cubic", align_corners=False)
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 2), padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(fg.ones(1, 1, 2, 2), fg.zeros(1, 1, 1, 3), align_corners=False)
    with pytest.raises(RuntimeError):
        torch.nn.functional.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 3), align_corners=False)


# --- composition with the functional transforms ----------------------------------------------------
def test_func_grad_through_layers():
    from funcgrad import func
    m = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"), nn.MaxPool2d(2, ceil_mode=True),
                      nn.Upsample(scale_factor=2, mode="bilinear"), nn.AdaptiveAvgPool2d(3))
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect"),
                             torch.nn.MaxPool2d(2, ceil_mode=True),
                             torch.nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.AdaptiveAvgPool2d(3))
    m.load_state_dict(tm.state_dict())
    x = _randn(2, 2, 7, 7)
    params = {k: v.detach() for k, v in m.named_parameters()}
    g = func.grad(lambda p: func.functional_call(m, p, (fg.tensor(x),)).sum())(params)
    tm(torch.tensor(x)).sum().backward()
    for k, p in tm.named_parameters():
        np.testing.assert_allclose(_np(g[k]), _np(p.grad), 1e-4, 1e-5)


def test_conv_checks_shapes_before_the_weights_dtype_as_torch():
    """torch's convolution checks a plain convolution's bias dtype first, then the shapes (channels, groups,
    bias size, kernel size), then the weight's dtype."""
    cases = [
        lambda L: L.nn.functional.conv2d(L.ones(1, 3, 5, 5), L.ones(2, 4, 3, 3, dtype=L.float64)),
        lambda L: L.nn.functional.conv2d(L.ones(1, 3, 5, 5), L.ones(2, 4, 3, 3), L.ones(2, dtype=L.float64)),
        lambda L: L.nn.functional.conv2d(L.ones(1, 4, 5, 5), L.ones(2, 4, 3, 3, dtype=L.float64), L.ones(3)),
        lambda L: L.nn.functional.conv2d(L.ones(1, 4, 5, 5), L.ones(3, 2, 3, 3, dtype=L.float64), groups=2),
        lambda L: L.nn.functional.conv2d(L.ones(1, 4, 2, 2), L.ones(2, 4, 3, 3, dtype=L.float64)),
        lambda L: L.nn.functional.conv_transpose2d(L.ones(1, 3, 5, 5), L.ones(4, 2, 3, 3, dtype=L.float64)),
        lambda L: L.nn.functional.conv1d(L.ones(1, 3, 5), L.ones(2, 4, 3, dtype=L.float64)),
    ]
    for call in cases:
        got = []
        for L in (fg, torch):
            with pytest.raises(RuntimeError) as e:
                call(L)
            got.append(str(e.value))
        assert got[0] == got[1]
