"""The torch face's cache of signatures by op (funcgrad._torch._dispatch._SIG_OF_OP): a node of several binds
is pruned from the NodeSig its op's earlier record had when node_record.match finds the new record of that
signature. The cache's key (fn's code, op name, differentiable positions) is coarse on purpose: records of one
key with other constants, params, shapes or dtypes must get their own NodeSig, and their gradients stay
torch's; the values a node keeps are the same as node_record.prune's."""
import gc
import tracemalloc

import numpy as np
import pytest

import funcgrad as fg
from funcgrad._src.core.array import Array
from funcgrad._src.core.primitive import record_eager
from funcgrad._src.prims import elementwise as ew
from funcgrad._torch import _dispatch
from funcgrad.autograd import node_record

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _match_from_the_first_record(monkeypatch):
    """Records are matched from the first one met again (_MATCH_AFTER: normally after many, through
    node_record.prune until then), so that the loops below go through the cache. Each test starts from an
    empty cache: the counts below would not grow where earlier tests in the process filled an op's list."""
    monkeypatch.setattr(_dispatch, "_MATCH_AFTER", 1)
    monkeypatch.setattr(_dispatch, "_SIG_OF_OP", {})


def _sigs(name):
    """The signatures cached for op `name` (every key of that op name), as a list of lists."""
    return [v for k, v in _dispatch._SIG_OF_OP.items() if k[1] == name]


def _pair(shape=(8, 10), dtype=np.float32, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return fg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _grads(fn_fg, fn_t, *pairs):
    """fn on the funcgrad and torch tensors of pairs; the output and every input gradient compared."""
    out = fn_fg(*[p[0] for p in pairs])
    ref = fn_t(*[p[1] for p in pairs])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(tuple(ref.shape)).astype(ref.detach().numpy().dtype)
    out.backward(fg.tensor(g))
    ref.backward(torch.tensor(g))
    for f, t in pairs:
        np.testing.assert_allclose(f.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
        f.grad = None
        t.grad = None


def test_same_key_other_constants_get_their_own_signature():
    """addmm's fn is one code object for every beta and alpha: alpha != 1 adds a bind (another signature);
    calls alternating between them must each be differentiated as their own (alpha's factor in the
    gradients), and the op keeps both signatures."""
    c, a, w = _pair((8, 10)), _pair((8, 10), seed=2), _pair((10, 10), seed=3)
    for _ in range(3):
        for alpha in (1, 2.5):
            _grads(lambda c, a, w: fg.addmm(c, a, w, alpha=alpha), lambda c, a, w: torch.addmm(c, a, w, alpha=alpha),
                   c, a, w)
    assert max(len(s) for s in _sigs("Addmm")) >= 2


def test_same_signature_other_constant_values():
    """lerp(a, b, w) by a number: w is a 0-d constant operand, so 0.3 and 0.2 share one signature; each record's
    backward must read its own constant (w's value in the gradients), not the first record's."""
    a, b = _pair(), _pair(seed=4)
    for _ in range(2):
        for w in (0.3, 0.2, 0.3):
            _grads(lambda a, b: fg.lerp(a, b, w), lambda a, b: torch.lerp(a, b, w), a, b)


def test_other_params_get_their_own_signature():
    """std_mean over dim 1 and dim 0 of one input: one fn code, params (the reduction's axes, the broadcast's
    dimensions) differ, so the signatures differ; gradients are torch's for both, alternating."""
    a = _pair((6, 5))
    for _ in range(3):
        for dim in (1, 0):
            _grads(lambda a: fg.std_mean(a, dim)[0] + 2 * fg.std_mean(a, dim)[1],
                   lambda a: torch.std_mean(a, dim)[0] + 2 * torch.std_mean(a, dim)[1], a)
    assert max(len(s) for s in _sigs("StdMean")) >= 2


@pytest.mark.parametrize("shape, dtype", [((8, 10), np.float64), ((3, 10), np.float32), ((8, 1), np.float32)])
def test_changed_shape_or_dtype_misses(shape, dtype):
    """addcmul on (8, 10) float32, then on another shape or dtype (broadcast (8, 1) too): a new signature
    each, the gradients torch's."""
    base = [_pair((8, 10), seed=s) for s in (5, 6, 7)]
    other = [_pair(shape, dtype, seed=s) for s in (5, 6, 7)]
    before = sum(len(s) for s in _sigs("Addcmul"))
    for _ in range(2):
        for ps in (base, other):
            _grads(lambda x, y, z: fg.addcmul(x, y, z, value=0.5), lambda x, y, z: torch.addcmul(x, y, z, value=0.5),
                   *ps)
    assert sum(len(s) for s in _sigs("Addcmul")) >= before + 1


def _sig_of(fn, *args):
    """(sig, ins, binds, outs) of fn's eager record on Arrays args (the first differentiable), pruned."""
    ins = [args[0]]
    out, binds = record_eager(fn, list(args))
    rec = node_record.Recorded(list(ins), list(binds), [out])
    node_record.prune(rec)
    assert rec.sig is not None
    return rec.sig, ins, binds, [out]


def test_match_compares_param_types_and_operand_identity():
    """node_record.match accepts exactly the records of its signature's key: params equal in value but not in type
    (2 and 2.0 and True; 0.0 and -0.0) or operands of another identity (a constant used twice) miss."""
    x = Array(np.array([1.0, -2.0, 3.0], np.float32))
    c, d = Array(np.array([2.0, 2.0, 2.0], np.float32)), Array(np.array([3.0, 3.0, 3.0], np.float32))
    sig, ins, binds, outs = _sig_of(lambda x, c, d: ew.mul(ew.add(x, c), d), x, c, d)
    assert node_record.match(sig, ins, binds, outs) is not None
    (p0, pa0, args0, ans0), (p1, pa1, args1, ans1) = binds
    assert node_record.match(sig, ins, [(p0, pa0, args0, ans0), (p1, pa1, (ans0, c), ans1)], outs) is None  # c twice
    assert node_record.match(sig, ins, [(p0, pa0, args0, ans0), (p1, pa1, (ans0, x), ans1)], outs) is None  # input
    assert node_record.match(sig, ins, [(p1, pa0, args0, ans0), (p1, pa1, args1, ans1)], outs) is None  # primitive
    assert node_record.match(sig, ins, binds, [ans0]) is None  # another output
    d64 = Array(np.array([3.0, 3.0, 3.0]))
    assert node_record.match(sig, ins, [binds[0], (p1, pa1, (ans0, d64), ans1)], outs) is None  # a constant's dtype
    for a, b in ((2, 2.0), (2, True), (0.0, -0.0), (1.0, 1)):
        sig = node_record.NodeSig(1, ((p0, {"k": a}, (0, 1), 2, False),), (2,), (
            (x._buf.shape, x._buf.dtype, False), (c._buf.shape, c._buf.dtype, False), None))
        assert node_record.match(sig, ins, [(p0, {"k": a}, (x, c), ans0)], [ans0]) is not None
        assert node_record.match(sig, ins, [(p0, {"k": b}, (x, c), ans0)], [ans0]) is None, (a, b)


def test_matched_node_keeps_only_what_backward_reads():
    """A chain of addmm nodes recorded through the cache: each keeps its input h (read by the product's rule)
    and not the product (read by no rule), as node_record.prune's nodes do; the gradients are torch's."""
    rng = np.random.default_rng(0)
    B, H, STEPS = 64, 128, 30
    row = B * H * 8
    w0 = rng.standard_normal((H, H)) / np.sqrt(H)
    W, b = fg.tensor(w0, requires_grad=True), fg.tensor(rng.standard_normal(H) * 0.1, requires_grad=True)
    h0 = fg.tensor(rng.standard_normal((B, H)))

    def run(steps):
        h = h0
        for _ in range(steps):
            h = fg.tanh(fg.addmm(b, h, W))
        return h
    run(2).sum().backward()  # (the signature cached)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = run(STEPS).sum()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held < 1.3 * STEPS * row, (held / row, STEPS)  # one (B, H) value a step: tanh's output
    assert held > 0.9 * STEPS * row, (held / row, STEPS)
    W.grad = None
    b.grad = None
    loss.backward()
    tW, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b.detach().numpy(), requires_grad=True)
    h = torch.tensor(h0.numpy())
    for _ in range(STEPS):
        h = torch.tanh(torch.addmm(tb, h, tW))
    h.sum().backward()
    np.testing.assert_allclose(W.grad.numpy(), tW.grad.numpy(), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-9, atol=1e-10)


def test_matched_node_drops_constant_tensor_inputs():
    """addcmul(c, a, b) with only c requiring grad: a and b are constants no rule reads; a node made through
    the cache keeps neither (their buffers are freed once the tensors go) and its next_functions are torch's."""
    import weakref
    rng = np.random.default_rng(3)
    c0, a0, b0 = (rng.standard_normal((8, 10)).astype(np.float32) for _ in range(3))
    for _ in range(3):
        c = fg.tensor(c0, requires_grad=True)
        a, b = fg.tensor(a0.copy()), fg.tensor(b0.copy())
        refs = [weakref.ref(a._v), weakref.ref(b._v)]
        y = fg.addcmul(c, a, b, value=0.5)
        del a, b
        gc.collect()
        assert [r() for r in refs] == [None, None]
        tc = torch.tensor(c0, requires_grad=True)
        ty = torch.addcmul(tc, torch.tensor(a0), torch.tensor(b0), value=0.5)
        assert [None if f is None else f.name() for f, _ in y.grad_fn.next_functions] == \
            [None if f is None else f.name() for f, _ in ty.grad_fn.next_functions]
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(c.grad.numpy(), tc.grad.numpy())


def test_signature_matched_after_a_few_records(monkeypatch):
    """A signature's check (compiled code) is made once the op has met it _MATCH_AFTER times; records before
    go through node_record.prune, with the same gradients."""
    monkeypatch.setattr(_dispatch, "_MATCH_AFTER", 4)
    a, b = _pair((7, 3)), _pair((7, 3), seed=9)
    made = []
    for _ in range(6):
        _grads(lambda a, b: fg.lerp(a, b, 0.7), lambda a, b: torch.lerp(a, b, 0.7), a, b)
        made.append([s.matcher is not None for sigs in _sigs("Lerp") for s in sigs if s.avals[0][0] == (7, 3)])
    assert made[:3] == [[False]] * 3 and made[-1] == [True], made


def test_record_eager_reasons_balanced_nested_failing_and_threaded():
    """record_eager adds one reason to hooks.active while it runs and removes it after, also when fn raises and
    when recordings nest (the outer one lists the inner one's binds) or run in several threads at once (the
    reasons are a list, appended and popped without a lock); each thread's records are its own."""
    import threading
    from funcgrad._src.core.primitive import hooks
    x = Array(np.array([0.5, -1.0], np.float32))
    assert not hooks.active
    with pytest.raises(ZeroDivisionError):
        record_eager(lambda a: 1 / 0, [x])
    assert not hooks.active
    out, binds = record_eager(lambda a: ew.exp(record_eager(lambda b: ew.neg(b), [a])[0]), [x])
    assert [b[0].name for b in binds] == ["neg", "exp"] and not hooks.active
    np.testing.assert_allclose(np.asarray(out._buf), np.exp(-np.array([0.5, -1.0], np.float32)))
    errors = []

    def work(seed):
        try:
            for _ in range(100):
                a, b = _pair((4, 3), seed=seed), _pair((4, 3), seed=seed + 1)
                w = 0.1 * (seed % 7)
                _grads(lambda a, b: fg.lerp(a, b, w), lambda a, b: torch.lerp(a, b, w), a, b)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and not hooks.active
