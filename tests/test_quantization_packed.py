"""Packed-weight quantized kernels (funcgrad/_torch/_quantized_packed.py, _quantized_embedding.py): linear / conv /
transposed conv prepack, unpack and the static and dynamic (qint8 and float16) products, the row-wise quantized
embedding bags (8, 4 and 2 bits; optimized_qparams, pruned weights) and the modules holding packed params
(nn.quantized Linear / Conv2d / EmbeddingBag with quint4x2, quantize_dynamic with qint8 and float16). Checked
against exact arithmetic and against torch 2.13's fbgemm kernels: integers (and dynamic float outputs)
bit-identical."""
from __future__ import annotations

import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.ao.nn.quantized as fgnnq
from funcgrad._torch import _quantized_embedding as QE, _quantized_packed as QP
from funcgrad.ao import quantization as fgq

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
fq = fg.ops.quantized


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    torch.backends.quantized.engine = "fbgemm"   # (x86 hands symmetric-weight convolutions to oneDNN on VNNI CPUs)
    return torch


def _qt(ints, scale, zp, dtype):
    return fg._torch._quantized.make_qtensor(np.asarray(ints).astype(dtype.dtype),
                                              fg._torch._quantized._QParams(dtype, fg.per_tensor_affine, scale, zp))


# --- exact arithmetic ------------------------------------------------------------------------------------------
def test_fma32_rounds_once():
    a, b = np.float32(24929 / 2 ** 15), np.float32(673 / 2 ** 9)    # a * b = 1 + 2**-24, a float32 midpoint
    c = np.float32(2.0 ** -60)
    # a single rounding of 1 + 2**-24 + 2**-60 goes up; rounding through float64 would land on the tie and go down
    assert QP.fma32(a, b, c) == np.float32(1 + 2 ** -23)
    assert QP.fma32(a, b, -c) == np.float32(1)
    assert QP.fma32(a, b, np.float32(0)) == np.float32(1)              # the tie itself: to even
    x = np.float32([1.5, -2.25, 3.0])
    assert QP.fma32(x, x, x).tolist() == [3.75, 2.8125, 12.0]


def test_linear_requantization_exact():
    x = _qt([[12, 8, 10]], 0.5, 10, fg.quint8)                          # integers 2, -2, 0: values 1, -1, 0
    w = _qt([[2, 4, 7], [-6, 0, 1]], 0.25, 0, fg.qint8)                  # rows 0.5, 1, 1.75 and -1.5, 0, 0.25
    p = fq.linear_prepack(w, fg.tensor([0.25, 0.0]))
    # acc = (4 - 8, -12) = (-4, -12); s_x s_w = 0.125: (acc + b / 0.125) * 0.125 / s_out + zp
    out = fq.linear(x, p, 0.125, 50)
    assert out.int_repr().tolist() == [[48, 38]] and (out.q_scale(), out.q_zero_point()) == (0.125, 50)
    assert fq.linear_relu(x, p, 0.125, 50).int_repr().tolist() == [[50, 50]]
    assert fq.linear(x, p, 0.5, 50).int_repr().tolist() == [[50, 47]]      # -2 / 4 = -0.5 -> 0 (to even)
    w2, b2 = fq.linear_unpack(p)
    assert w2 is w and b2.tolist() == [0.25, 0.0]
    # dynamic: x = [1, -1, 0] quantized with scale 2/255 (min -1, max 1); exact products of those integers
    y = fq.linear_dynamic(fg.tensor([[1.0, -1.0, 0.0]]), p)
    np.testing.assert_allclose(y.numpy(), [[-0.5 + 0.25, -1.5]], atol=2e-2)


def test_conv_exact_against_integer_loops():
    rng = np.random.default_rng(0)
    xi, wi = rng.integers(0, 256, (1, 4, 5, 6)), rng.integers(-128, 128, (6, 2, 3, 2))
    x, w = _qt(xi, 0.02, 100, fg.quint8), _qt(wi, 0.01, 0, fg.qint8)
    p = fq.conv2d_prepack(w, None, [2, 1], [1, 0], [1, 2], 2)
    assert (p.stride(), p.padding(), p.dilation(), p.groups(), p.transpose()) == ([2, 1], [1, 0], [1, 2], 2, False)
    acc = QP._conv_acc(xi - 100, wi, (2, 1), (1, 0), (1, 2), 2)
    xp = np.pad(xi - 100, [(0, 0), (0, 0), (1, 1), (0, 0)])
    want = np.zeros(acc.shape, np.int64)
    for o in range(6):
        g = o // 3
        for i in range(acc.shape[2]):
            for j in range(acc.shape[3]):
                patch = xp[0, 2 * g:2 * g + 2, 2 * i:2 * i + 3, j:j + 3:2]
                want[0, o, i, j] = (patch * wi[o]).sum()
    np.testing.assert_array_equal(acc, want)
    out = fq.conv2d(x, p, 0.5, 7)
    m = np.float32(np.float32(0.02) * np.float32(0.01)) / np.float32(0.5)
    np.testing.assert_array_equal(out.int_repr().numpy(), np.clip(np.rint(want.astype(np.float32) * m) + 7, 0, 255))
    with pytest.raises(RuntimeError, match="the input has 4 channels, the weight expects 6"):
        fq.conv2d(x, fq.conv2d_prepack(w, None, 1, 0, 1, 3), 0.5, 7)


def test_conv_transpose_exact_against_integer_loops():
    rng = np.random.default_rng(1)
    xi, wi = rng.integers(0, 256, (2, 4, 3, 4)), rng.integers(-128, 128, (4, 3, 2, 3))    # groups 2: 6 outputs
    st, pd, op, dl = (2, 1), (1, 0), (1, 0), (1, 2)
    x, w = _qt(xi, 0.02, 100, fg.quint8), _qt(wi, 0.01, 3, fg.qint8)
    p = fq.conv_transpose2d_prepack(w, None, st, pd, op, dl, 2)
    assert (p.stride(), p.padding(), p.output_padding(), p.dilation(), p.groups(), p.transpose()) == \
        ([2, 1], [1, 0], [1, 0], [1, 2], 2, True)
    H = (3 - 1) * 2 - 2 + 1 * (2 - 1) + 1 + 1
    W = (4 - 1) * 1 - 0 + 2 * (3 - 1) + 0 + 1
    want = np.zeros((2, 6, H, W), np.int64)
    for n in range(2):
        for c in range(4):
            g = c // 2
            for o in range(3):
                for i in range(3):
                    for j in range(4):
                        for ki in range(2):
                            for kj in range(3):
                                y, z = i * 2 - 1 + ki, j + 2 * kj
                                if 0 <= y < H and 0 <= z < W:
                                    want[n, g * 3 + o, y, z] += (xi[n, c, i, j] - 100) * (wi[c, o, ki, kj] - 3)
    out = fq.conv_transpose2d(x, p, 0.5, 7)
    m = np.float32(np.float32(0.02) * np.float32(0.01)) / np.float32(0.5)
    np.testing.assert_array_equal(out.int_repr().numpy(), np.clip(np.rint(want.astype(np.float32) * m) + 7, 0, 255))
    w2 = fq.conv_transpose2d_unpack(p)[0]      # (fbgemm keeps a per-tensor scale as float32, as unpack shows)
    assert w2.int_repr().tolist() == wi.tolist() and w2.q_scale() == float(np.float32(0.01)) != 0.01
    wc = fg.quantize_per_channel(fg.ones(4, 3, 1, 1), fg.tensor([0.1] * 4), fg.tensor([0] * 4), 0, fg.qint8)
    with pytest.raises(RuntimeError, match="Per Channel Quantization is currently disabled for transposed conv"):
        fq.conv_transpose2d_prepack(wc, None, 1, 0, 0, 1, 1)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        fq.conv_transpose2d_prepack(w, None, 1, 0, 1, 1, 2)
    with pytest.raises(RuntimeError, match="Output dimension is zero for 0 axis"):
        fq.conv_transpose1d(_qt(np.ones((1, 2, 1)), 0.1, 0, fg.quint8),
                            fq.conv_transpose1d_prepack(_qt(np.ones((2, 1, 1)), 0.1, 0, fg.qint8), None, 1, 1, 0, 1, 1),
                            0.1, 0)
    with pytest.raises(RuntimeError, match="the packed weight is a convolution's"):
        fq.conv_transpose2d(x, fq.conv2d_prepack(_qt(np.ones((6, 2, 1, 1)), 0.1, 0, fg.qint8), None, 1, 0, 1, 2),
                            0.5, 7)


def test_fp16_linear_summation_order_exact():
    # one float32 FMA chain over k for the whole column blocks; the fringe columns add 512-long block sums
    rng = np.random.default_rng(2)
    K, N = 1100, 37
    x, w = rng.standard_normal((3, K)).astype(np.float32), rng.standard_normal((N, K)).astype(np.float32)
    w16 = w.astype(np.float16).astype(np.float32)
    chain = np.zeros((3, N), np.float32)
    blocks = []
    for k in range(K):
        if k % 512 == 0:
            blocks.append(np.zeros((3, N), np.float32))
        chain = QP.fma32(x[:, k:k + 1], w16[None, :, k], chain)
        blocks[-1] = QP.fma32(x[:, k:k + 1], w16[None, :, k], blocks[-1])
    fringe = blocks[0]
    for b in blocks[1:]:
        fringe = (fringe + b).astype(np.float32)
    got = QP.gemm_fp16_np(x, w16)
    np.testing.assert_array_equal(got[:, :32], chain[:, :32])
    np.testing.assert_array_equal(got[:, 32:], fringe[:, 32:])
    assert not np.array_equal(chain[:, 32:], fringe[:, 32:])         # (the two orders do differ here)
    with pytest.warns(UserWarning, match="outside float16's range"):
        p = fq.linear_prepack_fp16(fg.tensor([[1e6, -3.0]]), fg.tensor([0.5]))
    ww, bb = fq.linear_unpack_fp16(p)
    assert ww.tolist() == [[65504.0, -3.0]] and bb.tolist() == [0.5]
    assert fq.linear_dynamic_fp16(fg.tensor([[0.0, 1.0]]), p).tolist() == [[-2.5]]
    assert fq.linear_relu_dynamic_fp16(fg.tensor([[0.0, 1.0]]), p).tolist() == [[0.0]]
    with pytest.raises(RuntimeError, match="float16 one .* call quantized.linear_dynamic_fp16"):
        fq.linear_dynamic(fg.ones(1, 2), p)
    with pytest.raises(RuntimeError, match="expected scalar type Float"):
        fq.linear_dynamic_fp16(fg.ones(1, 2, dtype=fg.float64), p)


def test_rowwise_prepack_layouts_exact():
    w = fg.tensor([[10.0, 20.0], [30.0, 40.0]])
    p = fq.embedding_bag_byte_prepack(w).numpy()
    assert p.shape == (2, 10) and p[:, :2].tolist() == [[0, 255], [0, 255]]
    sb = p[:, 2:].copy().view(np.float32)
    assert sb[:, 1].tolist() == [10.0, 30.0] and sb[:, 0].tolist() == [np.float32(10) / np.float32(255)] * 2
    row = (np.arange(16, dtype=np.float32) * 0.5 + 1)[None]              # min 1, scale 7.5 / 15 = 0.5: q = 0..15
    p4 = fq.embedding_bag_4bit_prepack(fg.tensor(row)).numpy()
    assert p4.shape == (1, 12)
    assert p4[0, :8].tolist() == [k | (k + 1) << 4 for k in range(0, 16, 2)]
    assert p4[0, 8:].copy().view(np.float16).tolist() == [0.5, 1.0]
    np.testing.assert_array_equal(fq.embedding_bag_4bit_unpack(fg.tensor(p4)).numpy(), row)
    p2 = fq.embedding_bag_2bit_prepack(fg.tensor([[0.0, 1.0, 2.0, 3.0]])).numpy()
    assert p2[0, 0] == 0 | 1 << 2 | 2 << 4 | 3 << 6 and p2[0, 1:].view(np.float16).tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="multiple of 2"):
        fq.embedding_bag_4bit_prepack(fg.ones(2, 3))
    with pytest.raises(RuntimeError, match="multiple of 4"):
        fq.embedding_bag_2bit_prepack(fg.ones(2, 6))


def test_rowwise_bags_exact():
    row = np.arange(16, dtype=np.float32) * 0.5 + 1
    w = np.stack([row, row[::-1], row * 0 + 1, row + 7.5]).astype(np.float32)   # all exact in 4 bits
    p4 = fq.embedding_bag_4bit_prepack(fg.tensor(w))
    out = fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0, 1, 3, 2]), fg.tensor([0, 2, 2]))
    np.testing.assert_array_equal(out.numpy(), np.stack([w[0] + w[1], 0 * row, w[3] + w[2]]))
    out = fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0, 1, 3, 2]), fg.tensor([0, 2, 4]),
                                                per_sample_weights=fg.tensor([2.0, 0.5, 1.0, -1.0]),
                                                include_last_offset=True)
    np.testing.assert_array_equal(out.numpy(), np.stack([2 * w[0] + 0.5 * w[1], w[3] - w[2]]))
    # mode is not read (torch's kernels sum); 2-D indices are bags of equal length
    out = fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([[0, 1], [3, 3]]), None, False, 1)
    np.testing.assert_array_equal(out.numpy(), np.stack([w[0] + w[1], 2 * w[3]]))
    with pytest.raises(RuntimeError, match="Index 1 is out of bounds: 4, range 0 to 4"):
        fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0, 4]), fg.tensor([0]))
    with pytest.raises(RuntimeError, match="Expect 32 or 64 bit indices, but found Float"):
        fq.embedding_bag_byte_rowwise_offsets(fq.embedding_bag_byte_prepack(fg.tensor(w)), fg.tensor([0.0]),
                                              fg.tensor([0]))


def test_packed_params_pickle_and_errors():
    w = _qt([[1, -2], [3, 4]], 0.1, 0, fg.qint8)
    p = fq.linear_prepack(w, fg.tensor([0.5, -0.5]))
    assert repr(p) == "ScriptObject <__torch__.torch.classes.quantized.LinearPackedParamsBase>"
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        qw, qb = fq.linear_unpack(q)
        assert qw.int_repr().tolist() == [[1, -2], [3, 4]] and qb.tolist() == [0.5, -0.5]
    c = fq.conv2d_prepack(_qt(np.ones((2, 1, 1, 1)), 0.1, 0, fg.qint8), None, [1, 1], [0, 0], [1, 1], 1)
    c2 = pickle.loads(pickle.dumps(c))
    assert repr(c2) == "ScriptObject <__torch__.torch.classes.quantized.Conv2dPackedParamsBase>"
    assert c2.padding() == [0, 0] and fq.conv2d_unpack(c2)[1] is None
    with pytest.raises(RuntimeError, match="expected a torch.qint8 quantized weight"):
        fq.linear_prepack(fg.ones(2, 2))
    with pytest.raises(RuntimeError, match="bias should be a vector"):
        fq.linear_prepack(w, fg.ones(3))
    with pytest.raises(NotImplementedError, match="takes a quantized tensor"):
        fq.linear(fg.ones(1, 2), p, 0.1, 0)
    with pytest.raises(RuntimeError, match="last dimension"):
        fq.linear_dynamic(fg.ones(1, 3), p)


def test_quantized_modules_hold_packed_params_and_round_trip():
    lin = fgnnq.Linear(3, 2)
    lin.set_weight_bias(_qt([[1, 2, 3], [-1, 0, 1]], 0.1, 0, fg.qint8), fg.tensor([0.1, 0.2]))
    lin.scale, lin.zero_point = 0.05, 10
    assert isinstance(lin._packed_params._packed_params, QP.LinearPackedParamsBase)
    sd = lin.state_dict()
    assert list(sd) == ["scale", "zero_point", "_packed_params.dtype", "_packed_params._packed_params"]
    buf = io.BytesIO()
    fg.save(lin, buf)
    buf.seek(0)
    back = fg.load(buf, weights_only=False)
    x = _qt([[100, 120, 140]], 0.02, 110, fg.quint8)
    assert back(x).int_repr().tolist() == lin(x).int_repr().tolist()
    conv = fgnnq.Conv2d(2, 2, 1)
    conv.load_state_dict(conv.state_dict())
    assert isinstance(conv._packed_params, QP.ConvPackedParamsBase)
    assert list(conv.state_dict()) == ["weight", "bias", "scale", "zero_point"]


# --- against torch ------------------------------------------------------------------------------------------------
def _pair_x(torch, x, scale, zp):
    return (torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, torch.quint8),
            fg.quantize_per_tensor(fg.tensor(x), scale, zp, fg.quint8))


def _pair_w(torch, rng, w, per_channel, symmetric):
    n = w.shape[0]
    if per_channel:
        s = rng.uniform(0.005, 0.02, n)
        z = np.zeros(n, np.int64) if symmetric else rng.integers(-3, 4, n)
        return (torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(s), torch.from_numpy(z), 0,
                                           torch.qint8),
                fg.quantize_per_channel(fg.tensor(w), fg.tensor(s), fg.tensor(z), 0, fg.qint8))
    z = 0 if symmetric else 3
    return (torch.quantize_per_tensor(torch.from_numpy(w), 0.01, z, torch.qint8),
            fg.quantize_per_tensor(fg.tensor(w), 0.01, z, fg.qint8))


def _same(a, b):
    if a.is_quantized:
        assert (a.q_scale(), a.q_zero_point()) == (b.q_scale(), b.q_zero_point())
        a, b = a.int_repr(), b.int_repr()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("symmetric", [False, True])
def test_linear_static_and_dynamic_match_torch(per_channel, symmetric):
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(10 + 2 * per_channel + symmetric)
    for trial in range(12):
        M, K, N = (int(v) for v in rng.integers(1, 40, 3))
        x = (rng.standard_normal((2, M, K)) * 2).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(N) * 3).astype(np.float32) if trial % 3 else None
        tw, fw = _pair_w(torch, rng, w, per_channel, symmetric)
        tp = tq.linear_prepack(tw, None if b is None else torch.from_numpy(b))
        fp = fq.linear_prepack(fw, None if b is None else fg.tensor(b))
        tx, fx = _pair_x(torch, x, 0.03, int(rng.integers(0, 256)))
        for name in ("linear", "linear_relu"):
            _same(getattr(tq, name)(tx, tp, 0.05, 100), getattr(fq, name)(fx, fp, 0.05, 100))
        for rr in (False, True):
            for name in ("linear_dynamic", "linear_relu_dynamic"):
                _same(getattr(tq, name)(torch.from_numpy(x), tp, rr), getattr(fq, name)(fg.tensor(x), fp, rr))
        uw, ub = tq.linear_unpack(tp)
        vw, vb = fq.linear_unpack(fp)
        np.testing.assert_array_equal(uw.int_repr().numpy(), vw.int_repr().numpy())
        assert (ub is None) == (vb is None)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_matches_torch(n):
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(20 + n)
    for trial in range(10):
        C, O, g = [(3, 4, 1), (4, 6, 2), (6, 6, 3)][trial % 3]
        k = int(rng.integers(1, 4))
        S = [int(rng.integers(k, k + 5)) for _ in range(n)]
        st, pd, dl = int(rng.integers(1, 3)), int(rng.integers(0, 2)), int(rng.integers(1, 3))
        if any(s + 2 * pd < dl * (k - 1) + 1 for s in S):
            continue
        x = rng.standard_normal((2, C, *S)).astype(np.float32)
        w = (rng.standard_normal((O, C // g) + (k,) * n) * 0.3).astype(np.float32)
        b = rng.standard_normal(O).astype(np.float32) if trial % 4 else None
        tw, fw = _pair_w(torch, rng, w, trial % 2, (trial // 2) % 2)
        geom = ([st] * n, [pd] * n, [dl] * n, g)
        tp = getattr(tq, f"conv{n}d_prepack")(tw, None if b is None else torch.from_numpy(b), *geom)
        fp = getattr(fq, f"conv{n}d_prepack")(fw, None if b is None else fg.tensor(b), *geom)
        tx, fx = _pair_x(torch, x, 0.02, int(rng.integers(0, 256)))
        for name in (f"conv{n}d", f"conv{n}d_relu"):
            _same(getattr(tq, name)(tx, tp, 0.04, 60), getattr(fq, name)(fx, fp, 0.04, 60))
        tw2, _ = getattr(tq, f"conv{n}d_unpack")(tp)
        fw2, _ = getattr(fq, f"conv{n}d_unpack")(fp)
        np.testing.assert_array_equal(tw2.int_repr().numpy(), fw2.int_repr().numpy())


def test_pruned_bags_and_optimized_qparams_exact():
    row = np.arange(16, dtype=np.float32) * 0.5 + 1
    w = np.stack([row, row[::-1], row + 7.5]).astype(np.float32)         # all exact in 4 bits
    p4 = fq.embedding_bag_4bit_prepack(fg.tensor(w))
    mapping = fg.tensor(np.array([2, -1, 0, 1, -1], np.int32))            # 5 original rows, 3 kept
    out = fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0, 1, 2, 4, 3]), fg.tensor([0, 3, 4]), False, 0, True,
                                                None, mapping)
    np.testing.assert_array_equal(out.numpy(), np.stack([w[2] + w[0], 0 * row, w[1]]))
    with pytest.raises(RuntimeError, match="Index 1 is out of bounds: 5, range 0 to 5"):
        fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0, 5]), fg.tensor([0]), False, 0, True, None, mapping)
    with pytest.raises(RuntimeError, match="needs compressed_indices_mapping"):
        fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0]), fg.tensor([0]), False, 0, True)
    with pytest.raises(RuntimeError, match="expected scalar type Int but found Long"):
        fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0]), fg.tensor([0]), False, 0, True, None,
                                              fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"compressed_indices_mapping\[1\] = 3 is not a row"):
        fq.embedding_bag_4bit_rowwise_offsets(p4, fg.tensor([0]), fg.tensor([0]), False, 0, True, None,
                                              fg.tensor(np.array([0, 3], np.int32)))
    # the greedy search narrows the range by steps of 10 / 200 while it spans more than int(200 * 0.84) steps and
    # keeps a narrower range only where it lowers the loss; a row already on the 2-bit grid keeps its range
    x = np.float32([[0.0, 0.1, 0.2, 0.3, 0.15, 0.25, 0.05, 10.0]])
    hi, lo = QE.choose_qparams_optimized_np(x, 200, 0.16, 2)
    assert hi[0] - lo[0] < 10.0 and hi[0] - lo[0] >= 168 * np.float32(0.05) - 1e-5
    assert QE._quant_loss(x, lo, hi, 2)[0] < QE._quant_loss(x, x.min(1), x.max(1), 2)[0]
    hi, lo = QE.choose_qparams_optimized_np(np.float32([[0.0, 1.0, 2.0, 3.0]]), 200, 0.16, 2)
    assert (lo[0], hi[0]) == (0.0, 3.0)


@pytest.mark.parametrize("bits,name", [(8, "byte"), (4, "4bit"), (2, "2bit")])
def test_rowwise_embedding_bags_match_torch(bits, name):
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(30 + bits)
    for trial in range(8):
        R, D = int(rng.integers(1, 30)), 4 * int(rng.integers(1, 18))      # (past fbgemm's 32-column blocks)
        w = (rng.standard_normal((R, D)) * rng.uniform(0.01, 5)).astype(np.float32)
        if trial == 0:
            w[0] = 1.5                                                      # a constant row: range 0
        tp = getattr(tq, f"embedding_bag_{name}_prepack")(torch.from_numpy(w))
        fp = getattr(fq, f"embedding_bag_{name}_prepack")(fg.tensor(w))
        _same(tp, fp)
        _same(getattr(tq, f"embedding_bag_{name}_unpack")(tp), getattr(fq, f"embedding_bag_{name}_unpack")(fp))
        L = int(rng.integers(0, 60))
        idx = rng.integers(0, R, L)
        cuts = np.sort(rng.integers(0, L + 1, 5))
        cuts[0] = 0
        psw = rng.random(L).astype(np.float32)
        for ilo in (False, True):
            offs = np.append(cuts, L) if ilo else cuts
            for ps in (None, psw):
                op = f"embedding_bag_{name}_rowwise_offsets"
                a = getattr(tq, op)(tp, torch.from_numpy(idx), torch.from_numpy(offs), False, 0, False,
                                    None if ps is None else torch.from_numpy(ps), None, ilo)
                b = getattr(fq, op)(fp, fg.tensor(idx), fg.tensor(offs), False, 0, False,
                                    None if ps is None else fg.tensor(ps), None, ilo)
                _same(a, b)
    if bits == 8:   # (byte prepack takes batches of tables)
        w3 = rng.standard_normal((2, 3, 5)).astype(np.float32)
        _same(tq.embedding_bag_byte_prepack(torch.from_numpy(w3)), fq.embedding_bag_byte_prepack(fg.tensor(w3)))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_transpose_matches_torch(n):
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(40 + n)
    done = 0
    for trial in range(10):
        C, O, g = [(3, 4, 1), (4, 6, 2), (6, 6, 3)][trial % 3]
        k = int(rng.integers(1, 4))
        S = [int(rng.integers(1, 5)) for _ in range(n)]
        st, pd, dl = int(rng.integers(1, 3)), int(rng.integers(0, 2)), int(rng.integers(1, 3))
        opd = int(rng.integers(0, max(st, dl)))
        if any((s - 1) * st - 2 * pd + dl * (k - 1) + opd + 1 <= 0 for s in S):
            continue
        x = rng.standard_normal((2, C, *S)).astype(np.float32)
        w = (rng.standard_normal((C, O // g) + (k,) * n) * 0.3).astype(np.float32)
        b = rng.standard_normal(O).astype(np.float32) if trial % 2 else None
        tw, fw = _pair_w(torch, rng, w, False, trial % 2)
        geom = ([st] * n, [pd] * n, [opd] * n, [dl] * n, g)
        tp = getattr(tq, f"conv_transpose{n}d_prepack")(tw, None if b is None else torch.from_numpy(b), *geom)
        fp = getattr(fq, f"conv_transpose{n}d_prepack")(fw, None if b is None else fg.tensor(b), *geom)
        assert (fp.stride(), fp.padding(), fp.output_padding(), fp.dilation(), fp.groups(), fp.transpose()) == \
            (tp.stride(), tp.padding(), tp.output_padding(), tp.dilation(), tp.groups(), tp.transpose())
        tx, fx = _pair_x(torch, x, 0.02, int(rng.integers(0, 256)))
        op = f"conv_transpose{n}d"
        _same(getattr(tq, op)(tx, tp, 0.04, 60), getattr(fq, op)(fx, fp, 0.04, 60))
        unpack = "conv_transpose1d_unpack" if n == 1 else f"conv{n}d_unpack"
        _same(getattr(tq, unpack)(tp)[0], getattr(fq, unpack)(fp)[0])
        done += 1
    assert done >= 5


def test_linear_fp16_matches_torch():
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(50)
    # past 512 (fbgemm's k block) only whole 32-column blocks: the fringe columns' order depends on the CPU's
    # vector width (16 columns a block on AVX2, 32 on AVX-512)
    for K, N in [(3, 5), (17, 37), (300, 70), (512, 19), (600, 64), (1100, 32)]:
        x = rng.standard_normal((2, 3, K)).astype(np.float32)
        w = rng.standard_normal((N, K)).astype(np.float32)
        for b in (None, rng.standard_normal(N).astype(np.float32)):
            tp = tq.linear_prepack_fp16(torch.from_numpy(w), None if b is None else torch.from_numpy(b))
            fp = fq.linear_prepack_fp16(fg.tensor(w), None if b is None else fg.tensor(b))
            _same(tq.linear_unpack_fp16(tp)[0], fq.linear_unpack_fp16(fp)[0])
            for name in ("linear_dynamic_fp16", "linear_relu_dynamic_fp16"):
                _same(getattr(tq, name)(torch.from_numpy(x), tp), getattr(fq, name)(fg.tensor(x), fp))


@pytest.mark.parametrize("bits,name", [(8, "byte"), (4, "4bit"), (2, "2bit")])
def test_pruned_and_optimized_embedding_bags_match_torch(bits, name):
    torch = _torch()
    tq = torch.ops.quantized
    rng = np.random.default_rng(60 + bits)
    for trial in range(5):
        R, D = int(rng.integers(2, 30)), 4 * int(rng.integers(1, 12))
        w = (rng.standard_normal((R, D)) * rng.uniform(0.01, 5, (R, 1))).astype(np.float32)
        if trial == 0:
            w[0] = 1.5
            w[1] = np.resize(np.float32([0.0, 0.1, 0.2, 0.3, 0.15, 0.25, 0.05, 10.0]), D)   # (an outlier to clip)
        prep = f"embedding_bag_{name}_prepack"
        if bits != 8:
            for nbins, ratio in ((200, 0.16), (50, 0.3), (20, 0.5)):
                _same(getattr(tq, prep)(torch.from_numpy(w), True, nbins, ratio),
                      getattr(fq, prep)(fg.tensor(w), True, nbins, ratio))
        tp, fp = getattr(tq, prep)(torch.from_numpy(w)), getattr(fq, prep)(fg.tensor(w))
        U = R + int(rng.integers(0, 10))                         # original rows: R kept, the rest pruned
        mapping = np.full(U, -1, np.int32)
        mapping[rng.permutation(U)[:R]] = rng.permutation(R)
        L = int(rng.integers(0, 40))
        idx = rng.integers(0, U, L)
        cuts = np.sort(rng.integers(0, L + 1, 4))
        cuts[0] = 0
        psw = rng.random(L).astype(np.float32)
        for ilo in (False, True):
            offs = np.append(cuts, L) if ilo else cuts
            for ps in (None, psw):
                op = f"embedding_bag_{name}_rowwise_offsets"
                a = getattr(tq, op)(tp, torch.from_numpy(idx), torch.from_numpy(offs), False, 0, True,
                                    None if ps is None else torch.from_numpy(ps), torch.from_numpy(mapping), ilo)
                b = getattr(fq, op)(fp, fg.tensor(idx), fg.tensor(offs), False, 0, True,
                                    None if ps is None else fg.tensor(ps), fg.tensor(mapping), ilo)
                _same(a, b)
    x = torch.randn(3, 40)
    for r in x:
        hi, lo = torch.choose_qparams_optimized(r, 40, 200, 0.16, 2 if bits == 8 else bits)
        fhi, flo = QE.choose_qparams_optimized_np(r.numpy()[None], 200, 0.16, 2 if bits == 8 else bits)
        assert (hi.item(), lo.item()) == (fhi[0], flo[0])


def test_quint4x2_embedding_bag_module_matches_torch(tmp_path):
    torch = _torch()
    rng = np.random.default_rng(5)
    R, D = 40, 18
    wv = (rng.standard_normal((R, D)) * rng.random((R, 1)) * 3).astype(np.float32)
    idx, psw, offs = rng.integers(0, R, 64), rng.random(64).astype(np.float32), [0, 5, 5, 17, 40]
    fe, te = fg.nn.EmbeddingBag(R, D, mode="sum"), torch.nn.EmbeddingBag(R, D, mode="sum")
    for e, lib, q in ((fe, fg, fgq), (te, torch, torch.ao.quantization)):
        with lib.no_grad():
            e.weight.copy_(lib.tensor(wv))
        e.qconfig = q.float_qparams_weight_only_qconfig_4bit
    fm, tm = fgnnq.EmbeddingBag.from_float(fe), torch.ao.nn.quantized.EmbeddingBag.from_float(te)
    assert repr(fm) == repr(tm)
    fw, tw = fm.weight(), tm.weight()
    assert fw.dtype is fg.quint4x2 and repr(fw) == repr(tw)
    np.testing.assert_array_equal(fw.int_repr().numpy(), tw.int_repr().numpy())     # (torch's packed bytes)
    for kw in ({}, {"per_sample_weights": psw}):
        got = fm(fg.tensor(idx), fg.tensor(offs), **{k: fg.tensor(v) for k, v in kw.items()})
        want = tm(torch.tensor(idx), torch.tensor(offs), **{k: torch.tensor(v) for k, v in kw.items()})
        _same(want, got)
    assert list(fm.state_dict()) == list(tm.state_dict())
    _same(tm(torch.tensor(idx), torch.tensor(offs)), pickle.loads(pickle.dumps(fm))(fg.tensor(idx), fg.tensor(offs)))


def test_quantize_dynamic_linear_bit_identical_and_torch_state_dict_loads(tmp_path):
    torch = _torch()
    torch.backends.quantized.engine = "x86"      # (the default engine: its dynamic linear is fbgemm's)

    def build(T):
        return T.nn.Sequential(T.nn.Linear(12, 20), T.nn.ReLU(), T.nn.Linear(20, 5))
    torch.manual_seed(0)
    m, f = build(torch), build(fg)
    f.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    qm = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)
    qf = fgq.quantize_dynamic(f, {fg.nn.Linear}, dtype=fg.qint8)
    assert repr(qm) == repr(qf)
    x = np.random.default_rng(1).standard_normal((7, 12)).astype(np.float32)
    np.testing.assert_array_equal(qm(torch.from_numpy(x)).numpy(), qf(fg.tensor(x)).numpy())
    # a state_dict torch saved (the (weight, bias) tuples under _packed_params._packed_params) loads here
    torch.save(qm.state_dict(), tmp_path / "q.pt")
    fresh = fgq.quantize_dynamic(build(fg), {fg.nn.Linear}, dtype=fg.qint8)
    fresh.load_state_dict(fg.load(tmp_path / "q.pt", weights_only=True))
    np.testing.assert_array_equal(fresh(fg.tensor(x)).numpy(), qm(torch.from_numpy(x)).numpy())


def test_quantize_dynamic_float16_linear_matches_torch(tmp_path):
    torch = _torch()
    torch.backends.quantized.engine = "x86"      # (the default engine: its float16 linear is fbgemm's)

    def build(T):
        return T.nn.Sequential(T.nn.Linear(12, 40), T.nn.ReLU(), T.nn.Linear(40, 5))
    torch.manual_seed(0)
    m, f = build(torch), build(fg)
    f.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    qm = torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.float16)
    qf = fgq.quantize_dynamic(f, {fg.nn.Linear}, dtype=fg.float16)
    assert repr(qm) == repr(qf) and "dtype=torch.float16)" in repr(qf)
    assert repr(qf) == repr(fgq.quantize_dynamic(f, dtype=fg.float16))         # (the default spec: nn.Linear)
    x = np.random.default_rng(1).standard_normal((7, 12)).astype(np.float32)
    np.testing.assert_array_equal(qm(torch.from_numpy(x)).detach().numpy(), qf(fg.tensor(x)).numpy())
    assert list(qm.state_dict()) == list(qf.state_dict())
    tw, fw = qm[0].weight(), qf[0].weight()
    assert fw.dtype == fg.float32 and not fw.is_quantized
    np.testing.assert_array_equal(tw.numpy(), fw.numpy())
    # state dicts load both ways
    torch.save(qm.state_dict(), tmp_path / "t.pt")
    fresh = fgq.quantize_dynamic(build(fg), {fg.nn.Linear}, dtype=fg.float16)
    fresh.load_state_dict(fg.load(tmp_path / "t.pt", weights_only=True))
    np.testing.assert_array_equal(fresh(fg.tensor(x)).numpy(), qm(torch.from_numpy(x)).detach().numpy())
    fg.save(qf.state_dict(), tmp_path / "f.pt")
    tfresh = torch.ao.quantization.quantize_dynamic(build(torch), {torch.nn.Linear}, dtype=torch.float16)
    tfresh.load_state_dict(torch.load(tmp_path / "f.pt", weights_only=True))
    np.testing.assert_array_equal(tfresh(torch.from_numpy(x)).detach().numpy(), qf(fg.tensor(x)).numpy())
    back = pickle.loads(pickle.dumps(qf))
    np.testing.assert_array_equal(back(fg.tensor(x)).numpy(), qf(fg.tensor(x)).numpy())
    # an LSTM too: float16 GEMMs in its cells (the gates' float32 sigmoid / tanh differ from torch's in the last bit)
    torch.manual_seed(1)
    tl, fl = torch.nn.LSTM(5, 7, num_layers=2, bidirectional=True), fg.nn.LSTM(5, 7, num_layers=2, bidirectional=True)
    fl.load_state_dict({k: fg.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    tl = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(tl), dtype=torch.float16)
    fl = fgq.quantize_dynamic(fg.nn.Sequential(fl), dtype=fg.float16)
    assert repr(tl) == repr(fl)
    xs = np.random.default_rng(2).standard_normal((6, 4, 5)).astype(np.float32)
    (to, (th, tc)), (fo, (fh, fc)) = tl(torch.from_numpy(xs)), fl(fg.tensor(xs))
    for a, b in ((to, fo), (th, fh), (tc, fc)):
        np.testing.assert_allclose(b.numpy(), a.detach().numpy(), rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="Don't know how to quantize with default settings for torch.qint32"):
        fgq.quantize_dynamic(f, dtype=fg.qint32)


def test_quantize_dynamic_embeddings_and_pruned_embedding_bag_match_torch():
    torch = _torch()
    rng = np.random.default_rng(8)
    wv = rng.standard_normal((10, 8)).astype(np.float32)

    def build(T):
        m = T.nn.Sequential(T.nn.Embedding(10, 8), T.nn.EmbeddingBag(10, 8, mode="sum"))
        with T.no_grad():
            m[0].weight.copy_(T.tensor(wv))
            m[1].weight.copy_(T.tensor(wv[::-1].copy()))
        return m
    qm = torch.ao.quantization.quantize_dynamic(build(torch), dtype=torch.quint8)
    qf = fgq.quantize_dynamic(build(fg), dtype=fg.quint8)
    assert repr(qm) == repr(qf)
    idx, offs = rng.integers(0, 10, 12), np.array([0, 3, 3, 8])
    _same(qm[0](torch.tensor(idx)), qf[0](fg.tensor(idx)))
    _same(qm[1](torch.tensor(idx), torch.tensor(offs)), qf[1](fg.tensor(idx), fg.tensor(offs)))
    # pruned: the module's table holds the kept rows; compressed_indices_mapping maps 14 original rows onto them
    mapping = np.full(14, -1, np.int32)
    mapping[rng.permutation(14)[:10]] = rng.permutation(10)
    idx = rng.integers(0, 14, 20)
    offs = np.array([0, 4, 4, 11])
    for mod in (qm[1], qf[1]):
        mod.pruned_weights = True
    _same(qm[1](torch.tensor(idx), torch.tensor(offs), compressed_indices_mapping=torch.from_numpy(mapping)),
          qf[1](fg.tensor(idx), fg.tensor(offs), compressed_indices_mapping=fg.tensor(mapping)))
    with pytest.raises(RuntimeError, match="pruned_weights=True needs a compressed_indices_mapping"):
        fq.embedding_byte(qf[0]._packed_params._packed_weight, fg.tensor([0]), True)
