"""funcgrad attention and Transformer layers against torch: values, gradients, masks, state dicts, errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The tiny reference runs are faster on one thread (the suite shares two cores)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _np(t):
    return np.asarray(t.detach().numpy())


def _close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _pair(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmod = getattr(torch.nn, cls)(*args, **kw)
    fmod = getattr(nn, cls)(*args, **kw)
    assert list(fmod.state_dict()) == list(tmod.state_dict())
    res = fmod.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tmod.state_dict().items()})
    assert res.missing_keys == [] and res.unexpected_keys == []
    return tmod, fmod


def _cmp_grads(tmod, fmod, atol=1e-4):
    for (n, a), (_, b) in zip(tmod.named_parameters(), fmod.named_parameters()):
        if a.grad is None:
            assert b.grad is None or not np.any(b.grad.numpy()), n
            continue
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=RTOL, atol=atol, err_msg=n)


def _mask(m, lib):
    return None if m is None else lib.tensor(m)


# --- scaled_dot_product_attention ---------------------------------------------------------------------------
@given(shape=st.sampled_from([(3, 4), (2, 3, 4), (2, 2, 3, 4)]), S=st.integers(1, 5),
       mask_kind=st.sampled_from([None, "bool", "float", "causal"]), scale=st.sampled_from([None, 0.3]),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_sdpa_matches_torch(shape, S, mask_kind, scale, dtype):
    rng = np.random.default_rng(S + len(shape))
    L, E = shape[-2], shape[-1]
    q = rng.standard_normal(shape).astype(dtype)
    k = rng.standard_normal(shape[:-2] + (S, E)).astype(dtype)
    v = rng.standard_normal(shape[:-2] + (S, 5)).astype(dtype)
    mask, causal = None, mask_kind == "causal"
    if mask_kind == "bool":
        mask = rng.random((L, S)) > 0.4
        mask[0] = False  # a fully masked query row: torch gives zeros there
    elif mask_kind == "float":
        mask = rng.standard_normal((L, S)).astype(dtype)
        mask[-1, :] = -np.inf
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    fq, fk, fv = (fg.tensor(a, requires_grad=True) for a in (q, k, v))
    to = TF.scaled_dot_product_attention(tq, tk, tv, _mask(mask, torch), is_causal=causal, scale=scale)
    fo = F.scaled_dot_product_attention(fq, fk, fv, _mask(mask, fg), is_causal=causal, scale=scale)
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else {}
    _close(fo, to, **tol)
    ct = rng.standard_normal(tuple(to.shape)).astype(dtype)
    (to * torch.tensor(ct)).sum().backward()
    (fo * fg.tensor(ct)).sum().backward()
    for a, b in zip((fq, fk, fv), (tq, tk, tv)):
        _close(a.grad, b.grad, **tol)


def test_sdpa_gqa_and_broadcast_mask():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 4, 3, 8)).astype(np.float32)
    k = rng.standard_normal((2, 2, 5, 8)).astype(np.float32)
    v = rng.standard_normal((2, 2, 5, 6)).astype(np.float32)
    m = rng.random((2, 1, 3, 5)) > 0.3
    to = TF.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)), torch.tensor(m), enable_gqa=True)
    fo = F.scaled_dot_product_attention(*(fg.tensor(a) for a in (q, k, v)), fg.tensor(m), enable_gqa=True)
    _close(fo, to)


def test_sdpa_dropout_is_stochastic_and_unbiased_shape():
    fg.manual_seed(0)
    q = fg.randn(2, 6, 4)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert tuple(a.shape) == (2, 6, 4) and not np.allclose(a.numpy(), b.numpy())


def _raises_like(tfn, ffn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(type(te.value)) as fe:
        ffn()
    assert str(fe.value) == str(te.value), (str(fe.value), str(te.value))


def test_sdpa_errors():
    _raises_like(lambda: TF.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 3, 4),
                                                          torch.randn(2, 3, 4),
                                                          attn_mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True),
                 lambda: F.scaled_dot_product_attention(fg.randn(2, 3, 4), fg.randn(2, 3, 4), fg.randn(2, 3, 4),
                                                        attn_mask=fg.ones(3, 3, dtype=fg.bool), is_causal=True))
    _raises_like(lambda: TF.scaled_dot_product_attention(torch.randn(4), torch.randn(4), torch.randn(4)),
                 lambda: F.scaled_dot_product_attention(fg.randn(4), fg.randn(4), fg.randn(4)))
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(fg.randn(2, 3, 4), fg.randn(2, 3, 4), fg.randn(2, 3, 4),
                                       attn_mask=fg.zeros(3, 3, dtype=fg.int64))
    with pytest.raises(RuntimeError):
        TF.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4),
                                        attn_mask=torch.zeros(3, 3, dtype=torch.int64))


# --- MultiheadAttention --------------------------------------------------------------------------------------
MHA_CASES = [dict(), dict(add_bias_kv=True, add_zero_attn=True), dict(kdim=3, vdim=5), dict(batch_first=True),
             dict(bias=False)]
MASKS = ["none", "kpm_bool", "attn_float", "attn_bool+kpm_bool", "attn3d_float+kpm_float"]


def _mha_inputs(rng, kw, L=3, S=4, N=2, E=8, H=2):
    q = rng.standard_normal((L, N, E)).astype(np.float32)
    k = rng.standard_normal((S, N, kw.get("kdim", E))).astype(np.float32)
    v = rng.standard_normal((S, N, kw.get("vdim", E))).astype(np.float32)
    if kw.get("batch_first"):
        q, k, v = (np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (q, k, v))
    return q, k, v


def _mha_masks(rng, which, L=3, S=4, N=2, H=2):
    kpm = np.zeros((N, S), bool)
    kpm[0, 1] = kpm[1, 3] = True
    out = {}
    if "kpm_bool" in which:
        out["key_padding_mask"] = kpm
    if "kpm_float" in which:
        out["key_padding_mask"] = np.where(kpm, -1e9, 0.0).astype(np.float32)
    if "attn_float" in which and "3d" not in which:
        out["attn_mask"] = rng.standard_normal((L, S)).astype(np.float32)
    if "attn_bool" in which:
        m = rng.random((L, S)) > 0.7
        m[:, 0] = False
        out["attn_mask"] = m
    if "attn3d_float" in which:
        out["attn_mask"] = rng.standard_normal((N * H, L, S)).astype(np.float32)
    return out


@pytest.mark.parametrize("kw", MHA_CASES)
@pytest.mark.parametrize("masks", MASKS)
@pytest.mark.parametrize("need_weights,average", [(True, False), (False, True)])
def test_mha_matches_torch(kw, masks, need_weights, average):
    torch.manual_seed(0)
    tm, fm = _pair("MultiheadAttention", 8, 2, **kw)
    rng = np.random.default_rng(1)
    q, k, v = _mha_inputs(rng, kw)
    ms = _mha_masks(rng, masks)
    tin = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    fin = [fg.tensor(a, requires_grad=True) for a in (q, k, v)]
    for mode in ("train", "eval"):
        getattr(tm, mode)()
        getattr(fm, mode)()
        tm.zero_grad()
        fm.zero_grad()
        for t in tin + fin:
            t.grad = None
        to, tw = tm(*tin, need_weights=need_weights, average_attn_weights=average,
                    **{n: torch.tensor(m) for n, m in ms.items()})
        fo, fw = fm(*fin, need_weights=need_weights, average_attn_weights=average,
                    **{n: fg.tensor(m) for n, m in ms.items()})
        _close(fo, to)
        if need_weights:
            assert tuple(fw.shape) == tuple(tw.shape)
            _close(fw, tw)
        else:
            assert fw is None and tw is None
        ct = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        (to * torch.tensor(ct)).sum().backward()
        (fo * fg.tensor(ct)).sum().backward()
        for a, b in zip(fin, tin):
            _close(a.grad, b.grad, atol=1e-4)
        _cmp_grads(tm, fm)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_mha_self_attention_unbatched_and_fully_masked_rows():
    torch.manual_seed(1)
    tm, fm = _pair("MultiheadAttention", 4, 2)
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    tx, fx = torch.tensor(x), fg.tensor(x)
    kpm = np.array([False, True, False])
    _close(fm(fx, fx, fx, key_padding_mask=fg.tensor(kpm))[0], tm(tx, tx, tx, key_padding_mask=torch.tensor(kpm))[0])
    # a batch element whose keys are all masked: NaN with need_weights (softmax of -inf), 0 without (as torch)
    xb = np.random.default_rng(3).standard_normal((2, 2, 4)).astype(np.float32)
    kpm = np.array([[True, True], [False, True]])
    for nw in (True, False):
        assert tuple(fm(fx, fx, fx, need_weights=nw, average_attn_weights=True)[0].shape) == (3, 4)
        if nw:
            _close(fm(fx, fx, fx)[1], tm(tx, tx, tx)[1])  # averaged weights, unbatched (L, S)
        to = tm(*(torch.tensor(xb),) * 3, key_padding_mask=torch.tensor(kpm), need_weights=nw)[0]
        fo = fm(*(fg.tensor(xb),) * 3, key_padding_mask=fg.tensor(kpm), need_weights=nw)[0]
        np.testing.assert_allclose(_np(fo), _np(to), rtol=RTOL, atol=ATOL, equal_nan=True)


def test_mha_causal_hint():
    torch.manual_seed(2)
    tm, fm = _pair("MultiheadAttention", 4, 1, batch_first=True)
    x = np.random.default_rng(4).standard_normal((2, 5, 4)).astype(np.float32)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    fmask = nn.Transformer.generate_square_subsequent_mask(5)
    _close(fmask, tmask)
    for nw in (True, False):
        to = tm(*(torch.tensor(x),) * 3, attn_mask=tmask, is_causal=True, need_weights=nw)[0]
        fo = fm(*(fg.tensor(x),) * 3, attn_mask=fmask, is_causal=True, need_weights=nw)[0]
        _close(fo, to)


def test_mha_state_dict_and_init():
    for kw in MHA_CASES:
        t = torch.nn.MultiheadAttention(8, 2, **kw)
        f = nn.MultiheadAttention(8, 2, **kw)
        assert list(f.state_dict()) == list(t.state_dict())
        for (n, a), (_, b) in zip(t.state_dict().items(), f.state_dict().items()):
            assert tuple(a.shape) == tuple(b.shape), n
    f = nn.MultiheadAttention(8, 2)
    bound = np.sqrt(6.0 / (8 + 24))  # xavier_uniform on (3E, E)
    w = f.in_proj_weight.detach().numpy()
    assert np.all(np.abs(w) <= bound) and w.std() > 0.3 * bound
    assert not np.any(f.in_proj_bias.detach().numpy()) and not np.any(f.out_proj.bias.detach().numpy())


@pytest.mark.parametrize("case", [
    lambda m, r, d: m.MultiheadAttention(0, 2),
    lambda m, r, d: m.MultiheadAttention(5, 2),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(3, 2, 4), r(3, 2, 4), r(3, 2, 4), is_causal=True),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4), r(2, 3, 4), r(2, 3, 4), attn_mask=r(2, 3)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4), r(2, 3, 4), r(2, 3, 4), attn_mask=r(2, 3, 3)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4), r(2, 3, 4), r(2, 3, 4), attn_mask=r(2, 2, 2, 2)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4), r(2, 3, 4), r(2, 3, 4),
                                               key_padding_mask=d(2, 3, 1)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4), r(1, 3, 4), r(2, 3, 4)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 3), r(2, 3, 4), r(2, 3, 4)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 4), r(2, 3, 4), r(2, 3, 4)),
    lambda m, r, d: m.MultiheadAttention(4, 2)(r(2, 3, 4, 1), r(2, 3, 4), r(2, 3, 4)),
    lambda m, r, d: m.TransformerEncoderLayer(4, 2, activation="tanh"),
    lambda m, r, d: m.Transformer(4, 2, 1, 1, 8)(r(3, 2, 4), r(3, 3, 4)),
    lambda m, r, d: m.Transformer(4, 2, 1, 1, 8)(r(3, 2, 4), r(3, 2, 5)),
    lambda m, r, d: m.Transformer(4, 2, 1, 1, 8, batch_first=True)(r(3, 2, 4), r(4, 2, 4)),
])
def test_errors_match_torch(case):
    def tz(*s):
        return torch.zeros(*s)

    def fz(*s):
        return fg.zeros(*s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_like(lambda: case(torch.nn, torch.randn, tz), lambda: case(nn, fg.randn, fz))


def test_mha_mask_dtype_errors():
    q = fg.randn(3, 2, 4)
    m = nn.MultiheadAttention(4, 2)
    with pytest.raises(AssertionError, match="key_padding_mask"):
        m(q, q, q, key_padding_mask=fg.zeros(2, 3, dtype=fg.int64))
    with pytest.raises(AssertionError, match="attn_mask"):
        m(q, q, q, attn_mask=fg.zeros(3, 3, dtype=fg.int64))


# --- Transformer layers ----------------------------------------------------------------------------------------
def _run_pair(tm, fm, t_inputs, f_inputs, kwargs_t, kwargs_f, rng, modes=("train", "eval")):
    for mode in modes:
        getattr(tm, mode)()
        getattr(fm, mode)()
        tm.zero_grad()
        fm.zero_grad()
        to = tm(*t_inputs, **kwargs_t)
        fo = fm(*f_inputs, **kwargs_f)
        _close(fo, to, atol=1e-5)
        ct = rng.standard_normal(tuple(to.shape)).astype(np.float32)
        (to * torch.tensor(ct)).sum().backward()
        (fo * fg.tensor(ct)).sum().backward()
        _cmp_grads(tm, fm)


LAYER_CASES = [dict(), dict(batch_first=True, norm_first=True), dict(activation="gelu", bias=False),
               dict(batch_first=True, activation=None)]


def _layer_kw(kw):
    kw = dict(kw)
    tkw, fkw = dict(kw), dict(kw)
    if kw.get("activation", 1) is None:  # a callable activation
        tkw["activation"], fkw["activation"] = torch.tanh, fg.tanh
    return tkw, fkw


def _twin_modules(tm, fm):
    assert list(fm.state_dict()) == list(tm.state_dict())
    fm.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, fm


@pytest.mark.parametrize("kw", LAYER_CASES)
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_encoder_layer_and_stack(kw, masks):
    torch.manual_seed(3)
    tkw, fkw = _layer_kw(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **tkw)
        tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8))
    fl = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **fkw)
    fm = nn.TransformerEncoder(fl, 2, norm=nn.LayerNorm(8), enable_nested_tensor=False)
    _twin_modules(tl, fl)
    _twin_modules(tm, fm)
    rng = np.random.default_rng(5)
    bf = kw.get("batch_first", False)
    S, N = 5, 3
    x = rng.standard_normal((N, S, 8) if bf else (S, N, 8)).astype(np.float32)
    kt, kf = {}, {}
    if masks != "none":
        kpm = np.zeros((N, S), bool)
        kpm[1, 3:] = True
        causal = np.triu(np.ones((S, S), bool), 1)
        if masks == "bool":
            kt = dict(src_key_padding_mask=torch.tensor(kpm), mask=torch.tensor(causal))
        else:
            fm_ = np.where(causal, -np.inf, 0.0).astype(np.float32)
            kt = dict(src_key_padding_mask=torch.tensor(np.where(kpm, -np.inf, 0.0).astype(np.float32)),
                      mask=torch.tensor(fm_))
        kf = {n: fg.tensor(v.numpy()) for n, v in kt.items()}
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    lkt = {("src_mask" if n == "mask" else n): v for n, v in kt.items()}
    lkf = {("src_mask" if n == "mask" else n): v for n, v in kf.items()}
    _run_pair(tl, fl, (tx,), (fx,), lkt, lkf, rng)
    _run_pair(tm, fm, (tx,), (fx,), kt, kf, rng)


@pytest.mark.parametrize("kw", LAYER_CASES)
def test_decoder_layer_and_stack(kw):
    torch.manual_seed(4)
    tkw, fkw = _layer_kw(kw)
    tl = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **tkw)
    fl = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **fkw)
    _twin_modules(tl, fl)
    tm = torch.nn.TransformerDecoder(tl, 2)
    fm = nn.TransformerDecoder(fl, 2)
    _twin_modules(tm, fm)
    rng = np.random.default_rng(6)
    bf = kw.get("batch_first", False)
    T, S, N = 4, 5, 2
    tgt = rng.standard_normal((N, T, 8) if bf else (T, N, 8)).astype(np.float32)
    mem = rng.standard_normal((N, S, 8) if bf else (S, N, 8)).astype(np.float32)
    mkpm = np.zeros((N, S), bool)
    mkpm[0, 4] = True
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(T)
    kt = dict(tgt_mask=tmask, memory_key_padding_mask=torch.tensor(mkpm))
    kf = dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(T), memory_key_padding_mask=fg.tensor(mkpm))
    ins_t = (torch.tensor(tgt, requires_grad=True), torch.tensor(mem, requires_grad=True))
    ins_f = (fg.tensor(tgt, requires_grad=True), fg.tensor(mem, requires_grad=True))
    _run_pair(tl, fl, ins_t, ins_f, kt, kf, rng)
    _run_pair(tm, fm, ins_t, ins_f, kt, kf, rng)


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, norm_first=True, activation="gelu")])
def test_transformer_matches_torch(kw):
    torch.manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, **kw)
    fm = nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, **kw)
    _twin_modules(tm, fm)
    rng = np.random.default_rng(7)
    bf = kw.get("batch_first", False)
    S, T, N = 5, 4, 2
    src = rng.standard_normal((N, S, 8) if bf else (S, N, 8)).astype(np.float32)
    tgt = rng.standard_normal((N, T, 8) if bf else (T, N, 8)).astype(np.float32)
    kpm = np.zeros((N, S), bool)
    kpm[1, 3:] = True
    tkpm = np.zeros((N, T), bool)
    tkpm[0, 3] = True
    kt = dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(T),
              src_key_padding_mask=torch.tensor(kpm), memory_key_padding_mask=torch.tensor(kpm),
              tgt_key_padding_mask=torch.tensor(tkpm))
    kf = dict(tgt_mask=nn.Transformer.generate_square_subsequent_mask(T),
              src_key_padding_mask=fg.tensor(kpm), memory_key_padding_mask=fg.tensor(kpm),
              tgt_key_padding_mask=fg.tensor(tkpm))
    ins_t = (torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True))
    ins_f = (fg.tensor(src, requires_grad=True), fg.tensor(tgt, requires_grad=True))
    _run_pair(tm, fm, ins_t, ins_f, kt, kf, rng)
    _close(ins_f[0].grad, ins_t[0].grad, atol=1e-4)


def test_transformer_structure_and_init():
    t = torch.nn.Transformer(8, 2, 2, 3, 16)
    f = nn.Transformer(8, 2, 2, 3, 16)
    assert list(f.state_dict()) == list(t.state_dict())
    assert len(f.encoder.layers) == 2 and len(f.decoder.layers) == 3
    # independent copies, xavier-initialised matrices
    w0 = f.encoder.layers[0].linear1.weight.detach().numpy()
    w1 = f.encoder.layers[1].linear1.weight.detach().numpy()
    assert not np.allclose(w0, w1)
    bound = np.sqrt(6.0 / (8 + 16))
    assert np.all(np.abs(w0) <= bound) and w0.std() > 0.3 * bound
    m = nn.Transformer.generate_square_subsequent_mask(4, dtype=fg.float64)
    assert m.dtype == fg.float64
    np.testing.assert_array_equal(m.numpy(), torch.nn.Transformer.generate_square_subsequent_mask(4).double().numpy())
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    custom = nn.Transformer(8, 2, custom_encoder=enc, custom_decoder=nn.TransformerDecoder(
        nn.TransformerDecoderLayer(8, 2, 16), 1))
    assert custom.encoder is enc
    out = custom(fg.randn(5, 2, 8), fg.randn(3, 2, 8))
    assert tuple(out.shape) == (3, 2, 8)


def test_dropout_train_vs_eval():
    fg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = fg.randn(4, 2, 8)
    layer.eval()
    np.testing.assert_array_equal(_np(layer(x)), _np(layer(x)))
    layer.train()
    assert not np.allclose(_np(layer(x)), _np(layer(x)))


TRANSFORMER_WARNINGS = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 2, batch_first=True), 1)
    tanh = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 4, batch_first=True,
                                                                        activation=torch.nn.Tanh()), 1)
    odd = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 1, batch_first=True, activation="gelu"), 1)
    torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(16, 2, batch_first=True, norm_first=True), 1,
                                enable_nested_tensor=False)
    x = torch.randn(3, 5, 16)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5)  # float, with bool padding masks
    pad = torch.zeros(3, 5, dtype=torch.bool)
    layer = enc.layers[0]
    enc(x, mask=causal, src_key_padding_mask=pad)
    layer(x, src_mask=causal, src_key_padding_mask=pad)
    layer.self_attn(x, x, x, attn_mask=causal, key_padding_mask=pad)
    layer(x, src_mask=causal.isinf(), src_key_padding_mask=pad)  # both bool: no warning
messages = [str(w.message) for w in caught]
flags = (enc.use_nested_tensor, tanh.use_nested_tensor, [m.layers[0].activation_relu_or_gelu for m in (enc, tanh, odd)])
"""


def test_nested_tensor_and_mismatched_mask_warnings_match_torch():
    # what torch warns when an encoder cannot take its nested-tensor fast path, and when a padding mask and an
    # attention mask differ in dtype (the language-translation and word-language-model examples do both)
    ours, theirs = {"torch": fg}, {"torch": torch}
    exec(TRANSFORMER_WARNINGS, ours)  # noqa: S102
    exec(TRANSFORMER_WARNINGS, theirs)  # noqa: S102
    assert ours["messages"] == theirs["messages"]
    assert len(ours["messages"]) == 6 and ours["flags"] == theirs["flags"] == (True, False, [1, 0, 2])
