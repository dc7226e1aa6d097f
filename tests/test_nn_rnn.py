"""funcgrad.nn recurrent layers and nn.utils.rnn against torch: values, gradients, packing, errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
from funcgrad import nn
from funcgrad.nn.utils import rnn as R

torch = pytest.importorskip("torch")
TR = torch.nn.utils.rnn


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The tiny reference runs are faster on one thread (the suite shares two cores)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

RTOL, ATOL = 1e-4, 1e-5


def _np(t):
    return np.asarray(t.detach().numpy())


def _close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _twin(tmod, fmod):
    sd = {k: fg.tensor(v.detach().numpy()) for k, v in tmod.state_dict().items()}
    res = fmod.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert list(fmod.state_dict()) == list(tmod.state_dict())
    for (n1, p1), (n2, p2) in zip(fmod.named_parameters(), tmod.named_parameters()):
        assert n1 == n2 and tuple(p1.shape) == tuple(p2.shape)
    return fmod


def _pair(cls, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmod = getattr(torch.nn, cls)(*args, **kw)
    fmod = getattr(nn, cls)(*args, **kw)
    return tmod, _twin(tmod, fmod)


def _cmp_grads(tmod, fmod, rtol=RTOL, atol=1e-4):
    for (n, a), (_, b) in zip(tmod.named_parameters(), fmod.named_parameters()):
        assert b.grad is not None, n
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol, err_msg=n)


def _hidden_list(h, is_lstm):
    return list(h) if is_lstm else [h]


def _run_both(tmod, fmod, x, hx=None, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    is_lstm = isinstance(tmod, torch.nn.LSTM)
    if hx is None:
        th = fh = None
    elif is_lstm:
        th = tuple(torch.tensor(h, requires_grad=True) for h in hx)
        fh = tuple(fg.tensor(h, requires_grad=True) for h in hx)
    else:
        th, fh = torch.tensor(hx, requires_grad=True), fg.tensor(hx, requires_grad=True)
    tout, th_n = tmod(tx, th)
    fout, fh_n = fmod(fx, fh)
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else {}
    _close(fout, tout, **tol)
    for a, b in zip(_hidden_list(fh_n, is_lstm), _hidden_list(th_n, is_lstm)):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, **tol)
    # a random cotangent on every output
    touts = [tout] + _hidden_list(th_n, is_lstm)
    fouts = [fout] + _hidden_list(fh_n, is_lstm)
    cts = [rng.standard_normal(tuple(t.shape)).astype(dtype) for t in touts]
    sum((t * torch.tensor(c)).sum() for t, c in zip(touts, cts)).backward()
    sum((f * fg.tensor(c)).sum() for f, c in zip(fouts, cts)).backward()
    gtol = dict(rtol=1e-8, atol=1e-9) if dtype == np.float64 else dict(atol=1e-4)
    _close(fx.grad, tx.grad, **({"rtol": RTOL} | gtol))
    if hx is not None:
        for a, b in zip(_hidden_list(fh, is_lstm), _hidden_list(th, is_lstm)):
            _close(a.grad, b.grad, **({"rtol": RTOL} | gtol))
    _cmp_grads(tmod, fmod, **({"rtol": RTOL} | gtol))


# --- full layers ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw,with_h0", [
    ("RNN", {}, False),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, True),
    ("RNN", {"bidirectional": True, "bias": False}, True),
    ("LSTM", {}, True),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, False),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, True),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True}, True),
    ("LSTM", {"bias": False, "batch_first": True}, False),
    ("GRU", {}, True),
    ("GRU", {"num_layers": 3, "bidirectional": True}, True),
    ("GRU", {"bias": False, "batch_first": True, "bidirectional": True}, False),
])
def test_layers_match_torch(cls, kw, with_h0):
    torch.manual_seed(0)
    tmod, fmod = _pair(cls, 4, 6, **kw)
    T, B = 5, 3
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, 4) if kw.get("batch_first") else (T, B, 4)).astype(np.float32)
    hx = None
    if with_h0:
        D = 2 if kw.get("bidirectional") else 1
        L = kw.get("num_layers", 1)
        hsz = kw.get("proj_size", 0) or 6
        h0 = rng.standard_normal((L * D, B, hsz)).astype(np.float32)
        hx = (h0, rng.standard_normal((L * D, B, 6)).astype(np.float32)) if cls == "LSTM" else h0
    for mode in ("train", "eval"):
        getattr(tmod, mode)()
        getattr(fmod, mode)()
        tmod.zero_grad()
        fmod.zero_grad()
        _run_both(tmod, fmod, x, hx)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_float64_and_unbatched(cls):
    torch.manual_seed(1)
    tmod, fmod = _pair(cls, 3, 4, num_layers=2, bidirectional=True)
    tmod.double()
    fmod.double()
    _twin(tmod, fmod)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 3))  # unbatched (T, I)
    h0 = rng.standard_normal((4, 4))
    hx = (h0, rng.standard_normal((4, 4))) if cls == "LSTM" else h0
    _run_both(tmod, fmod, x, None, dtype=np.float64)
    tmod.zero_grad()
    fmod.zero_grad()
    _run_both(tmod, fmod, x, hx, dtype=np.float64)


@given(T=st.integers(1, 6), B=st.integers(1, 4), bidir=st.booleans(), cls=st.sampled_from(["RNN", "LSTM", "GRU"]))
def test_shapes_hypothesis(T, B, bidir, cls):
    torch.manual_seed(T * 10 + B)
    tmod, fmod = _pair(cls, 2, 3, bidirectional=bidir)
    x = np.random.default_rng(T + B).standard_normal((T, B, 2)).astype(np.float32)
    _run_both(tmod, fmod, x)


def test_state_dict_keys_and_init():
    for cls, kw in [("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}), ("GRU", {"num_layers": 2}),
                    ("RNN", {"bidirectional": True})]:
        t = getattr(torch.nn, cls)(3, 5, **kw)
        f = getattr(nn, cls)(3, 5, **kw)
        assert list(f.state_dict()) == list(t.state_dict())
        bound = 1 / np.sqrt(5)
        for p in f.parameters():
            v = p.detach().numpy()
            assert np.all(np.abs(v) <= bound) and v.std() > 0.1 * bound
    lstm = nn.LSTM(3, 5, num_layers=2)
    assert len(lstm.all_weights) == 2 and tuple(lstm.all_weights[1][0].shape) == (20, 5)
    assert repr(lstm) == repr(torch.nn.LSTM(3, 5, num_layers=2))


def test_dropout_between_layers_train_only():
    fg.manual_seed(0)
    m = nn.LSTM(4, 8, num_layers=2, dropout=0.5)
    x = fg.randn(5, 2, 4)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.numpy() if not a.requires_grad else a.detach().numpy(), b.detach().numpy())
    m.train()
    c, _ = m(x)
    d, _ = m(x)
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())
    # one layer: dropout has nothing to act on (torch warns)
    with pytest.warns(UserWarning):
        nn.GRU(2, 3, dropout=0.3)


# --- packed sequences -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw", [("LSTM", {"num_layers": 2, "bidirectional": True}),
                                    ("GRU", {"bidirectional": True}), ("RNN", {"num_layers": 2}),
                                    ("LSTM", {"batch_first": True, "proj_size": 2})])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input(cls, kw, enforce_sorted):
    torch.manual_seed(3)
    tmod, fmod = _pair(cls, 3, 4, **kw)
    lens = [6, 4, 4, 1] if enforce_sorted else [2, 6, 1, 4]
    bf = kw.get("batch_first", False)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6, 3) if bf else (6, 4, 3)).astype(np.float32)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    h0 = rng.standard_normal((L * D, 4, kw.get("proj_size", 0) or 4)).astype(np.float32)
    c0 = rng.standard_normal((L * D, 4, 4)).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    th = (torch.tensor(h0), torch.tensor(c0)) if cls == "LSTM" else torch.tensor(h0)
    fh = (fg.tensor(h0), fg.tensor(c0)) if cls == "LSTM" else fg.tensor(h0)
    tp = TR.pack_padded_sequence(tx, lens, bf, enforce_sorted)
    fp = R.pack_padded_sequence(fx, lens, bf, enforce_sorted)
    tout, tn = tmod(tp, th)
    fout, fn = fmod(fp, fh)
    assert isinstance(fout, R.PackedSequence)
    _close(fout.data, tout.data)
    np.testing.assert_array_equal(fout.batch_sizes.numpy(), tout.batch_sizes.numpy())
    tn = list(tn) if cls == "LSTM" else [tn]
    fn = list(fn) if cls == "LSTM" else [fn]
    for a, b in zip(fn, tn):
        _close(a, b)
    tpad, _ = TR.pad_packed_sequence(tout, bf)
    fpad, _ = R.pad_packed_sequence(fout, bf)
    _close(fpad, tpad)
    ct = rng.standard_normal(tuple(tpad.shape)).astype(np.float32)
    ((tpad * torch.tensor(ct)).sum() + sum(t.sum() for t in tn)).backward()
    ((fpad * fg.tensor(ct)).sum() + sum(f.sum() for f in fn)).backward()
    _close(fx.grad, tx.grad, atol=1e-4)
    _cmp_grads(tmod, fmod)


# --- cells ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                    ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}),
                                    ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_h", [True, False])
def test_cells(cls, kw, batched, with_h):
    torch.manual_seed(5)
    tmod, fmod = _pair(cls, 3, 5, **kw)
    rng = np.random.default_rng(6)
    bshape = (4,) if batched else ()
    x = rng.standard_normal(bshape + (3,)).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    targs, fargs = [tx], [fx]
    ths = []
    if with_h:
        hs = [rng.standard_normal(bshape + (5,)).astype(np.float32) for _ in range(2 if cls == "LSTMCell" else 1)]
        ths = [torch.tensor(h, requires_grad=True) for h in hs]
        fhs = [fg.tensor(h, requires_grad=True) for h in hs]
        targs.append(tuple(ths) if cls == "LSTMCell" else ths[0])
        fargs.append(tuple(fhs) if cls == "LSTMCell" else fhs[0])
    to, fo = tmod(*targs), fmod(*fargs)
    to = list(to) if cls == "LSTMCell" else [to]
    fo = list(fo) if cls == "LSTMCell" else [fo]
    cts = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in to]
    for a, b in zip(fo, to):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)
    sum((t * torch.tensor(c)).sum() for t, c in zip(to, cts)).backward()
    sum((f * fg.tensor(c)).sum() for f, c in zip(fo, cts)).backward()
    _close(fx.grad, tx.grad)
    if with_h:
        for a, b in zip(fhs, ths):
            _close(a.grad, b.grad)
    _cmp_grads(tmod, fmod)


# --- errors -----------------------------------------------------------------------------------------------
def _raises_like(tfn, ffn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(type(te.value)) as fe:
        ffn()
    assert str(fe.value) == str(te.value), (str(fe.value), str(te.value))


@pytest.mark.parametrize("case", [
    lambda m, x, h: m.LSTM(3, 4)(x(2, 3, 4, 5)),
    lambda m, x, h: m.LSTM(3, 4)(x(2, 3, 5)),
    lambda m, x, h: m.LSTM(3, 4)(x(2, 3, 3), (x(1, 2, 4), x(1, 3, 4))),
    lambda m, x, h: m.LSTM(3, 4)(x(2, 3, 3), (x(1, 4), x(1, 4))),
    lambda m, x, h: m.GRU(3, 4)(x(2, 3, 3), x(1, 2, 4)),
    lambda m, x, h: m.GRU(3, 4)(x(2, 3, 3), x(1, 4)),
    lambda m, x, h: m.RNN(3, 4)(x(2, 3), x(1, 1, 4)),
    lambda m, x, h: m.RNN(3, 4, nonlinearity="foo"),
    lambda m, x, h: m.RNN(3, 0),
    lambda m, x, h: m.GRU(3, 4, num_layers=0),
    lambda m, x, h: m.LSTM(3, 4, dropout=2),
    lambda m, x, h: m.LSTM(3, 4, proj_size=4),
    lambda m, x, h: m.LSTM(3, 4, proj_size=-1),
    lambda m, x, h: m.RNNCell(3, 4)(x(2, 3, 3)),
    lambda m, x, h: m.RNNCell(3, 4)(x(2, 5)),
    lambda m, x, h: m.GRUCell(3, 4)(x(2, 3), x(3, 4)),
    lambda m, x, h: m.LSTMCell(3, 4)(x(2, 3), (x(2, 5), x(2, 4))),
    lambda m, x, h: m.LSTMCell(3, 4)(x(2, 3), (x(2, 4, 1), x(2, 4))),
    lambda m, x, h: m.RNNCell(3, 4, nonlinearity="x")(x(2, 3)),
])
def test_errors_match_torch(case):
    _raises_like(lambda: case(torch.nn, torch.randn, None), lambda: case(nn, fg.randn, None))


def test_gru_proj_size_refused():
    with pytest.raises(TypeError):
        nn.GRU(3, 4, proj_size=2)  # GRU has no proj_size argument (as torch's signature)


# --- nn.utils.rnn -----------------------------------------------------------------------------------------
@given(lens=st.lists(st.integers(1, 5), min_size=1, max_size=4), batch_first=st.booleans(),
       side=st.sampled_from(["left", "right"]), trail=st.sampled_from([(), (2,), (2, 3)]))
def test_pad_sequence(lens, batch_first, side, trail):
    rng = np.random.default_rng(sum(lens))
    seqs = [rng.standard_normal((n,) + trail).astype(np.float32) for n in lens]
    fs = [fg.tensor(s, requires_grad=True) for s in seqs]
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    fo = R.pad_sequence(fs, batch_first, -2.5, side)
    to = TR.pad_sequence(ts, batch_first, -2.5, side)
    _close(fo, to)
    ct = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(ct)).sum().backward()
    (fo * fg.tensor(ct)).sum().backward()
    for a, b in zip(fs, ts):
        _close(a.grad, b.grad)


@given(lens=st.lists(st.integers(1, 6), min_size=1, max_size=5), batch_first=st.booleans(),
       total_extra=st.integers(0, 2))
def test_pack_pad_roundtrip(lens, batch_first, total_extra):
    rng = np.random.default_rng(len(lens) * 7 + sum(lens))
    T, B = max(lens), len(lens)
    x = rng.standard_normal((B, T, 2) if batch_first else (T, B, 2)).astype(np.float32)
    tx, fx = torch.tensor(x, requires_grad=True), fg.tensor(x, requires_grad=True)
    tp = TR.pack_padded_sequence(tx, torch.tensor(lens), batch_first, enforce_sorted=False)
    fp = R.pack_padded_sequence(fx, fg.tensor(lens), batch_first, enforce_sorted=False)
    _close(fp.data, tp.data)
    for a, b in zip(fp[1:], tp[1:]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    to, tl = TR.pad_packed_sequence(tp, batch_first, 9.0, T + total_extra)
    fo, fl = R.pad_packed_sequence(fp, batch_first, 9.0, T + total_extra)
    _close(fo, to)
    np.testing.assert_array_equal(fl.numpy(), tl.numpy())
    assert fl.dtype == fg.int64
    ct = rng.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(ct)).sum().backward()
    (fo * fg.tensor(ct)).sum().backward()
    _close(fx.grad, tx.grad)


def test_pack_sequence_and_unpack():
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 3)).astype(np.float32) for n in (2, 5, 3)]
    tp = TR.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    fp = R.pack_sequence([fg.tensor(s) for s in seqs], enforce_sorted=False)
    _close(fp.data, tp.data)
    for a, b in zip(fp[1:], tp[1:]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, s in zip(R.unpack_sequence(fp), seqs):
        np.testing.assert_array_equal(a.numpy(), s)
    assert fp._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    sorted_p = R.pack_sequence([fg.tensor(seqs[1]), fg.tensor(seqs[2]), fg.tensor(seqs[0])])
    assert sorted_p.sorted_indices is None and sorted_p.unsorted_indices is None
    assert sorted_p.double().data.dtype == fg.float64


def test_utils_errors_match_torch():
    x = np.zeros((4, 3, 2), np.float32)
    _raises_like(lambda: TR.pack_padded_sequence(torch.tensor(x), [2, 4, 3]),
                 lambda: R.pack_padded_sequence(fg.tensor(x), [2, 4, 3]))
    _raises_like(lambda: TR.pack_padded_sequence(torch.tensor(x), [4, 3, 0]),
                 lambda: R.pack_padded_sequence(fg.tensor(x), [4, 3, 0]))
    _raises_like(lambda: TR.pad_packed_sequence(TR.pack_padded_sequence(torch.tensor(x), [4, 3, 1]), total_length=2),
                 lambda: R.pad_packed_sequence(R.pack_padded_sequence(fg.tensor(x), [4, 3, 1]), total_length=2))
    _raises_like(lambda: TR.pad_sequence([torch.zeros(2)], padding_side="middle"),
                 lambda: R.pad_sequence([fg.zeros(2)], padding_side="middle"))


def test_dtype_mismatch_error_matches_torch():
    _raises_like(lambda: torch.nn.LSTM(3, 4)(torch.randn(2, 3, 3, dtype=torch.float64)),
                 lambda: nn.LSTM(3, 4)(fg.randn(2, 3, 3, dtype=fg.float64)))


def test_no_grad_and_functional_call_agree():
    """The recorded (autograd) path, the no-grad path and funcgrad.func.grad all give the same numbers."""
    fg.manual_seed(0)
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    x = fg.randn(5, 2, 3)
    out, _ = m(x)
    with fg.no_grad():
        out2, _ = m(x)
    np.testing.assert_allclose(out2.numpy(), out.detach().numpy(), rtol=1e-6, atol=1e-7)
    (out ** 2).sum().backward()
    from funcgrad.func import functional_call
    params = {k: v.detach() for k, v in m.named_parameters()}
    g = fg.func.grad(lambda p: (functional_call(m, p, (x,))[0] ** 2).sum())(params)
    for k, v in m.named_parameters():
        np.testing.assert_allclose(np.asarray(g[k]), v.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_repeated_calls_reuse_the_traced_step():
    from funcgrad.nn.modules import rnn as rnn_mod
    m = nn.GRU(3, 4)
    x = fg.randn(6, 2, 3)
    m(x)
    n = len(rnn_mod._JAXPRS)
    for _ in range(3):
        m(x)[0].sum().backward()
    assert len(rnn_mod._JAXPRS) == n


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_recorded_layer_runs_each_scan_once(cls, monkeypatch):
    """With parameters that require grad, the forward runs the time loop once (saving what backward
    needs) and backward runs one reverse loop: no discarded eager pass, no recomputation of the steps."""
    from funcgrad._src.control.scan import scan_p
    runs = []
    impl = scan_p.impl
    monkeypatch.setattr(scan_p, "impl", lambda *a, **k: runs.append(k["reverse"]) or impl(*a, **k))
    fg.manual_seed(0)
    layer = cls(3, 4)
    x = fg.randn(5, 2, 3)
    out, _ = layer(x)
    assert runs == [False]
    out.sum().backward()
    assert runs == [False, True]
    assert all(p.grad is not None and p.grad.shape == p.shape for p in layer.parameters())


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_one_node_equals_op_by_op(bias):
    """LSTMCell records its step as one node: its values and gradients, on every call (the node's backward is
    compiled after a few meetings), equal the op-by-op step's bit for bit and torch's; second order too."""
    torch.manual_seed(3)
    tmod, fmod = _pair("LSTMCell", 3, 5, bias=bias)
    tmod, fmod = tmod.double(), fmod.double()
    rng = np.random.default_rng(8)
    for _ in range(6):
        x, h, c, ch, cc = (rng.standard_normal(s) for s in [(4, 3), (4, 5), (4, 5), (4, 5), (4, 5)])
        fx, fh, fc = (fg.tensor(a, requires_grad=True) for a in (x, h, c))
        h2, c2 = fmod(fx, (fh, fc))
        assert type(h2.grad_fn).__name__ == "LSTMCellBackward0" and c2.grad_fn is h2.grad_fn
        fmod.zero_grad()
        ((h2 * fg.tensor(ch)).sum() + (c2 * fg.tensor(cc)).sum()).backward()
        got = [fx.grad, fh.grad, fc.grad] + [p.grad for p in fmod.parameters()]
        # the same step op by op (linear, chunk, sigmoid, tanh): the fused node's binds in the same order
        ux, uh, uc = (fg.tensor(a, requires_grad=True) for a in (x, h, c))
        ps = [p.detach().requires_grad_() for p in fmod.parameters()]
        gates = fg.nn.functional.linear(ux, ps[0], ps[2] if bias else None) + \
            fg.nn.functional.linear(uh, ps[1], ps[3] if bias else None)
        i, f, g, o = gates.chunk(4, 1)
        uc2 = fg.sigmoid(f) * uc + fg.sigmoid(i) * fg.tanh(g)
        uh2 = fg.sigmoid(o) * fg.tanh(uc2)
        ((uh2 * fg.tensor(ch)).sum() + (uc2 * fg.tensor(cc)).sum()).backward()
        want = [ux.grad, uh.grad, uc.grad] + [p.grad for p in ps]
        np.testing.assert_array_equal(_np(h2), _np(uh2))
        np.testing.assert_array_equal(_np(c2), _np(uc2))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(_np(a), _np(b))
        tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h, c))
        th2, tc2 = tmod(tx, (th, tc))
        np.testing.assert_allclose(_np(h2), _np(th2), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(_np(c2), _np(tc2), rtol=1e-12, atol=1e-14)
    # second order through the node: d/dx of |dL/dh|^2
    fx, fh, fc = (fg.tensor(a, requires_grad=True) for a in (x, h, c))
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h, c))
    outs = []
    for lib, mod, (a, b, d) in ((fg, fmod, (fx, fh, fc)), (torch, tmod, (tx, th, tc))):
        h2, c2 = mod(a, (b, d))
        (gh,) = lib.autograd.grad((h2 * c2).sum(), b, create_graph=True)
        (gx,) = lib.autograd.grad((gh * gh).sum(), a)
        outs.append(_np(gx))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-10, atol=1e-12)
