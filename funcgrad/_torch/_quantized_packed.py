"""torch's packed-weight quantized kernels (torch.ops.quantized): linear / conv with prepacked qint8 weights
(static: quint8 in and out; dynamic: float in and out, the activation quantized per call), and the row-wise
quantized embedding bags (8-bit rows with float32 scale and bias, 4-bit and 2-bit rows with float16 ones).

The packed-params objects stand in for torch's TorchScript classes (torch.classes.quantized.
LinearPackedParamsBase, Conv2dPackedParamsBase, EmbeddingPackedParamsBase): they hold the quantized weight, bias
and geometry, `unpack()` them, pickle and deepcopy. The arithmetic is fbgemm's, so results are bit-identical:

- static linear / conv (fbgemm's ReQuantizeOutput): exact int32 accumulators of (x - zx)(w - zw); with
  aw = float32(s_x s_w) and m = float32(aw / s_out), q = rint((float32(acc) + b') m) + z_out with b' =
  float32(b / aw) per channel, float32(b * float32(1 / aw)) per tensor.
- dynamic linear (ReQuantizeForFloat): x quantized to quint8 with qparams from its min/max (reduce_range halves
  the range), y = fma(float32(acc), float32(s_x s_w), b).
- row-wise embeddings: rows quantized from their min/max (fbgemm's FloatOrHalfToFused*Rowwise), bags
  accumulated in index order as acc = fma(w scale, q, acc + w bias). As torch's kernels, the bags are summed
  whatever `mode` says.
"""
from __future__ import annotations

import numpy as np

from ._quantized import (QTensor, _QParams, dynamic_qparams, make_qtensor, per_channel_affine_float_qparams,
                         per_tensor_affine, qint8, quantize_np, quint4x2, quint8)
from ._tensor import Tensor, _make

__all__ = ["LinearPackedParamsBase", "ConvPackedParamsBase", "EmbeddingPackedParamsBase", "linear_prepack",
           "linear_unpack", "q_linear", "q_linear_dynamic", "linear_prepack_fp16", "linear_unpack_fp16",
           "q_linear_dynamic_fp16", "conv_prepack", "conv_unpack", "q_conv", "conv_transpose_prepack",
           "q_conv_transpose",
           "embedding_bag_prepack", "embedding_bag_unpack", "rowwise_prepack", "rowwise_unpack",
           "q_embedding_bag_rowwise", "q_embedding_bag", "q_embedding", "OPS"]

_F32, _F64 = np.float32, np.float64


def _host(t, dtype=None) -> np.ndarray:
    a = t.detach()._host() if isinstance(t, Tensor) else t
    return np.asarray(a) if dtype is None else np.asarray(a, dtype)


def fma32(a, b, c) -> np.ndarray:
    """float32(a * b + c) rounded once, as the FMA instruction (a, b, c float32): the product is exact in float64;
    the sum's rounding error (TwoSum) settles the one case float64 rounding cannot, a sum on a float32 midpoint."""
    a, b, c = (np.asarray(v, _F32).astype(_F64) for v in (a, b, c))
    p = a * b
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    r = s.astype(_F32)
    r64 = r.astype(_F64)
    with np.errstate(over="ignore", invalid="ignore"):
        nb = np.nextafter(r, np.where(s > r64, _F32(np.inf), _F32(-np.inf)).astype(_F32))
        tie = (err != 0) & (s != r64) & ((r64 + nb.astype(_F64)) * 0.5 == s) & ((err > 0) == (s > r64))
    return np.where(tie, nb, r).astype(_F32)


# --- packed-params objects ----------------------------------------------------------------------------------
class _PackedParams:
    """Common face of the packed-params objects: torch's ScriptObject repr; pickles by its constructor args."""
    _qualname = ""

    def __repr__(self) -> str:
        return f"ScriptObject <__torch__.torch.classes.quantized.{self._qualname}>"

    def __reduce__(self):
        return (type(self), self._args())

    def __getstate__(self):
        return self._args()


class LinearPackedParamsBase(_PackedParams):
    """What quantized::linear_prepack returns: a qint8 weight (per tensor or per output channel) and a float
    bias."""
    _qualname = "LinearPackedParamsBase"

    def __init__(self, weight: QTensor, bias=None):
        self.weight, self.bias = weight, bias

    def _args(self):
        return (self.weight, self.bias)

    def unpack(self):
        return (self.weight, self.bias)


class ConvPackedParamsBase(_PackedParams):
    """What quantized::conv{1,2,3}d_prepack and conv_transpose{1,2,3}d_prepack return (Conv2dPackedParamsBase /
    Conv3dPackedParamsBase): the qint8 weight, float bias and the convolution's geometry (torch's accessor methods
    stride() ... transpose(); a 1-D convolution's read as the 2-D one torch runs it as, with a leading unit
    dimension)."""

    def __init__(self, weight: QTensor, bias, stride, padding, dilation, groups: int, n: int, output_padding=None,
                 transposed: bool = False):
        self.weight, self.bias, self.n, self.transposed = weight, bias, n, bool(transposed)
        self._geom = (tuple(stride), tuple(padding), tuple(dilation), int(groups))
        self.output_padding_ = tuple(output_padding) if output_padding is not None else (0,) * n
        self._qualname = "Conv3dPackedParamsBase" if n == 3 else "Conv2dPackedParamsBase"

    def _args(self):
        return (self.weight, self.bias, *self._geom, self.n, self.output_padding_, self.transposed)

    def unpack(self):
        return (self.weight, self.bias)

    def _as2d(self, v, fill: int) -> list:
        return [fill, *v] if self.n == 1 else list(v)

    def stride(self) -> list:
        return self._as2d(self._geom[0], 1)

    def padding(self) -> list:
        return self._as2d(self._geom[1], 0)

    def dilation(self) -> list:
        return self._as2d(self._geom[2], 1)

    def groups(self) -> int:
        return self._geom[3]

    def output_padding(self) -> list:
        return self._as2d(self.output_padding_, 0)

    def transpose(self) -> bool:
        return self.transposed


class EmbeddingPackedParamsBase(_PackedParams):
    """What quantized::embedding_bag_prepack returns: the quint8 / quint4x2 weight with per-row float qparams,
    and each row's (scale, bias = -zero_point * scale) as fbgemm packs them (float32 for 8 bits, float16 for 4)."""
    _qualname = "EmbeddingPackedParamsBase"

    def __init__(self, weight: QTensor):
        qp = weight._qp() if weight.__class__ is QTensor else None
        if qp is None or qp.scheme is not per_channel_affine_float_qparams or qp.axis != 0 or weight.ndim != 2:
            raise RuntimeError("quantized::embedding_bag_prepack: expected a 2-D torch.quint8 / torch.quint4x2 "
                               "weight quantized per row with float qparams (qscheme "
                               "torch.per_channel_affine_float_qparams, axis 0), as float_qparams_weight_only_qconfig "
                               "makes it")
        if qp.dtype not in (quint8, quint4x2):
            raise RuntimeError(f"qembedding_bag_prepack currently only supports quint8 and quint4x2 weights, got "
                               f"{qp.dtype}")
        self.weight = weight
        self.bit_rate = 8 if qp.dtype is quint8 else 4
        scale = np.asarray(qp.scale, _F32)
        bias = (np.asarray(qp.zero_point, _F32) * scale * _F32(-1)).astype(_F32)
        if self.bit_rate == 4:   # (stored as float16)
            scale, bias = scale.astype(np.float16).astype(_F32), bias.astype(np.float16).astype(_F32)
        self.scale, self.bias = scale, bias

    def _args(self):
        return (self.weight,)

    def unpack(self) -> QTensor:
        return self.weight

    @property
    def ints(self) -> np.ndarray:
        return self.weight._v


def _packed(p, cls, op: str):
    if not isinstance(p, cls):
        raise TypeError(f"quantized::{op}: expected the packed params quantized::{op.split('_')[0]}_prepack returns "
                        f"(torch.classes.quantized.{cls._qualname or 'Conv2dPackedParamsBase'}), got "
                        f"{type(p).__name__}")
    return p


# --- linear ---------------------------------------------------------------------------------------------------
def _check_bias(bias, n: int, op: str):
    if bias is None:
        return None
    if not isinstance(bias, Tensor) or bias.dtype.name != "float32":
        raise RuntimeError(f"quantized::{op}: the bias must be a float32 tensor, got "
                           f"{getattr(bias, 'dtype', type(bias).__name__)}")
    if bias.ndim != 1 or bias.shape[0] != n:
        raise RuntimeError(f"quantized::{op}: bias should be a vector (1D Tensor) of size {n} (the output "
                           f"channels), got shape {list(bias.shape)}")
    return bias


def _check_weight(weight, ndim: int, op: str) -> _QParams:
    if weight.__class__ is not QTensor or weight._qp().dtype is not qint8:
        raise RuntimeError(f"quantized::{op}: expected a torch.qint8 quantized weight (torch.quantize_per_tensor / "
                           f"quantize_per_channel with dtype=torch.qint8), got "
                           f"{getattr(weight, 'dtype', type(weight).__name__)}")
    if weight.ndim != ndim:
        raise RuntimeError(f"quantized::{op}: expected a {ndim}-D weight, got shape {list(weight.shape)}")
    qp = weight._qp()
    if qp.per_channel and qp.axis != 0:
        raise RuntimeError(f"quantized::{op}: a per-channel weight must be quantized along axis 0 (the output "
                           f"channels), got axis {qp.axis}")
    return qp


def linear_prepack(W, B=None) -> LinearPackedParamsBase:
    """torch.ops.quantized.linear_prepack: the packed (out_features, in_features) qint8 weight and float bias."""
    _check_weight(W, 2, "linear_prepack")
    return LinearPackedParamsBase(W, _check_bias(B, W.shape[0], "linear_prepack"))


def linear_unpack(packed) -> tuple:
    """torch.ops.quantized.linear_unpack: (weight, bias)."""
    return _packed(packed, LinearPackedParamsBase, "linear_unpack").unpack()


def _weight_ints(w: QTensor):
    """(w - zero point as int64, float32 scale per output channel, per_channel)."""
    qp = w._qp()
    v = w._v.astype(np.int64)
    n = v.shape[0]
    if qp.per_channel:
        z = np.asarray(qp.zero_point, np.int64).reshape((-1,) + (1,) * (v.ndim - 1))
        return v - z, np.asarray(qp.scale, _F64).astype(_F32), True
    return v - int(qp.zero_point), np.full(n, _F32(qp.scale), _F32), False


def _input_qp(x, op: str) -> _QParams:
    if x.__class__ is not QTensor:
        raise NotImplementedError(f"Could not run 'quantized::{op}' with arguments from the 'CPU' backend: {op} takes "
                                  "a quantized tensor (torch.quantize_per_tensor, or a QuantStub before it)")
    qp = x._qp()
    if qp.per_channel or qp.dtype is not quint8:
        raise RuntimeError(f"quantized::{op}: expected a per-tensor torch.quint8 input, got {qp.dtype} {qp.scheme}")
    return qp


def requantize(acc: np.ndarray, x_scale: float, w_scale: np.ndarray, per_channel: bool, bias, out_scale: float,
               out_zp: int, relu: bool, axis: int) -> np.ndarray:
    """fbgemm's ReQuantizeOutput with a float bias: int accumulators `acc` (output channels along `axis`) to quint8
    integers."""
    shape = [1] * acc.ndim
    shape[axis] = -1
    aw = (_F32(x_scale) * w_scale).astype(_F32)
    mult = (aw / _F32(out_scale)).astype(_F32).reshape(shape)
    raw = acc.astype(_F32)
    if bias is not None:
        b = _host(bias, _F32)
        b = (b / aw if per_channel else b * (1.0 / aw.astype(_F64)).astype(_F32)).astype(_F32)
        raw = raw + b.reshape(shape)
    q = np.rint(raw * mult) + out_zp
    return np.clip(q, out_zp if relu else 0, 255).astype(np.uint8)


def _out(ints, scale, zp) -> QTensor:
    return make_qtensor(ints, _QParams(quint8, per_tensor_affine, float(scale), int(zp)))


def q_linear(X, W_prepack, Y_scale_i, Y_zero_point_i, relu: bool = False) -> QTensor:
    """torch.ops.quantized.linear (linear_relu with relu=True): quint8 X (..., in) -> quint8 (..., out) with the
    given output qparams."""
    op = "linear_relu" if relu else "linear"
    p = _packed(W_prepack, LinearPackedParamsBase, op)
    qp = _input_qp(X, op)
    wv, sw, pc = _weight_ints(p.weight)
    if X.ndim == 0 or X.shape[-1] != wv.shape[1]:
        raise RuntimeError(f"quantized::{op}: the input's last dimension ({X.shape[-1] if X.ndim else '()'}) must "
                           f"equal the weight's in_features ({wv.shape[1]})")
    acc = (X._v.astype(np.int64) - int(qp.zero_point)) @ wv.T
    return _out(requantize(acc, qp.scale, sw, pc, p.bias, Y_scale_i, Y_zero_point_i, relu, acc.ndim - 1),
                Y_scale_i, Y_zero_point_i)


def linear_dynamic_np(x: np.ndarray, weight: QTensor, bias, reduce_range: bool, relu: bool = False) -> np.ndarray:
    """float32 x (..., in) @ W.T + b as fbgemm's dynamic linear computes it (see the module docstring)."""
    x = np.asarray(x, _F32)
    sx, zx = dynamic_qparams(x, quint8, reduce_range)
    xq = quantize_np(x, sx, zx, quint8).astype(np.int64) - zx
    wv, sw, _ = _weight_ints(weight)
    acc = (xq @ wv.T).astype(_F32)
    mult = (_F32(sx) * sw).astype(_F32)
    out = acc * mult if bias is None else fma32(acc, mult, _host(bias, _F32))
    return np.maximum(out, _F32(0)) if relu else out.astype(_F32)


def q_linear_dynamic(X, W_prepack, reduce_range: bool = False, relu: bool = False) -> Tensor:
    """torch.ops.quantized.linear_dynamic (linear_relu_dynamic with relu=True): float32 X -> float32."""
    op = "linear_relu_dynamic" if relu else "linear_dynamic"
    p = _packed(W_prepack, LinearPackedParamsBase, op)
    if not isinstance(p.weight, QTensor):
        raise RuntimeError(f"quantized::{op}: the packed weight is a float16 one (linear_prepack_fp16); call "
                           "quantized.linear_dynamic_fp16")
    if not isinstance(X, Tensor) or X.is_quantized or X.dtype.name != "float32":
        raise RuntimeError(f"quantized::{op}: expected a float32 input tensor, got "
                           f"{getattr(X, 'dtype', type(X).__name__)}")
    if X.ndim == 0 or X.shape[-1] != p.weight.shape[1]:
        raise RuntimeError(f"quantized::{op}: the input's last dimension must equal the weight's in_features "
                           f"({p.weight.shape[1]}), got shape {list(X.shape)}")
    return _make(linear_dynamic_np(_host(X, _F32), p.weight, p.bias, bool(reduce_range), relu))


# --- convolution ----------------------------------------------------------------------------------------------
def _tuple(v, n: int, what: str, op: str) -> tuple:
    t = tuple(int(e) for e in v) if isinstance(v, (list, tuple)) else (int(v),) * n
    if len(t) == 1 and n > 1:
        t = t * n
    if len(t) != n:
        raise RuntimeError(f"quantized::{op}: {what} should contain {n} elements for {n}D convolution, got {list(t)}")
    return t


def conv_prepack(n: int, weight, bias, stride, padding, dilation, groups) -> ConvPackedParamsBase:
    """quantized::conv{n}d_prepack: a (out, in / groups, *kernel) qint8 weight, float bias and the geometry."""
    op = f"conv{n}d_prepack"
    _check_weight(weight, n + 2, op)
    g = int(groups)
    if g < 1 or weight.shape[0] % g:
        raise RuntimeError(f"quantized::{op}: the output channels ({weight.shape[0]}) must be divisible by groups "
                           f"({g})")
    return ConvPackedParamsBase(weight, _check_bias(bias, weight.shape[0], op), _tuple(stride, n, "stride", op),
                                _tuple(padding, n, "padding", op), _tuple(dilation, n, "dilation", op), g, n)


def conv_unpack(packed) -> tuple:
    """quantized::conv{1,2,3}d_unpack: (weight, bias)."""
    return _packed(packed, ConvPackedParamsBase, "conv_unpack").unpack()


def _conv_acc(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups: int) -> np.ndarray:
    """The exact integer convolution of (N, C, *S) by (O, C / groups, *K), x and w int64 (zero points removed)."""
    n = len(stride)
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    K = w.shape[2:]
    span = [d * (k - 1) + 1 for k, d in zip(K, dilation)]
    if any(s > L for s, L in zip(span, x.shape[2:])):
        raise RuntimeError(f"quantized::conv{n}d: the padded input {list(x.shape[2:])} is smaller than the "
                           f"dilated kernel {span}")
    win = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(2, 2 + n)))
    win = win[(Ellipsis,) + tuple(slice(None, None, s) for s in stride) + tuple(slice(None, None, d) for d in dilation)]
    N, C = x.shape[:2]
    cg, og = C // groups, w.shape[0] // groups
    outs = []
    ax = list(range(2 + n, 2 + 2 * n))
    for g in range(groups):
        xg = win[:, g * cg:(g + 1) * cg].astype(_F64)       # (N, cg, *out, *K)
        wg = w[g * og:(g + 1) * og].astype(_F64)            # (og, cg, *K)
        outs.append(np.tensordot(xg, wg, axes=([1] + ax, [1] + list(range(2, 2 + n)))))   # (N, *out, og)
    acc = np.concatenate(outs, -1) if groups > 1 else outs[0]
    return np.rint(np.moveaxis(acc, -1, 1)).astype(np.int64)


def q_conv(n: int, qx, packed_weight, output_scale, output_zero_point, relu: bool = False) -> QTensor:
    """quantized::conv{n}d (conv{n}d_relu with relu=True): quint8 (N, C, *S) -> quint8 (N, O, *S'); zero padding
    (the input's zero point)."""
    op = f"conv{n}d" + ("_relu" if relu else "")
    p = _packed(packed_weight, ConvPackedParamsBase, op)
    qp = _input_qp(qx, op)
    if qx.ndim != n + 2:
        raise ValueError(f"quantized::{op}: expected a {n + 2}-D (N, C, {', '.join('DHW'[3 - n:])}) input, got "
                         f"shape {list(qx.shape)}")
    wv, sw, pc = _weight_ints(p.weight)
    stride, padding, dilation, groups = p._geom
    if qx.shape[1] != wv.shape[1] * groups:
        raise RuntimeError(f"quantized::{op}: the input has {qx.shape[1]} channels, the weight expects "
                           f"{wv.shape[1] * groups} (in_channels / groups = {wv.shape[1]}, groups = {groups})")
    acc = _conv_acc(qx._v.astype(np.int64) - int(qp.zero_point), wv, stride, padding, dilation, groups)
    return _out(requantize(acc, qp.scale, sw, pc, p.bias, output_scale, output_zero_point, relu, 1),
                output_scale, output_zero_point)


def conv_transpose_prepack(n: int, weight, bias, stride, padding, output_padding, dilation,
                           groups) -> ConvPackedParamsBase:
    """quantized::conv_transpose{n}d_prepack: an (in, out / groups, *kernel) qint8 weight quantized per tensor
    (fbgemm has no per-channel transposed convolution), float bias and the geometry."""
    op = f"conv_transpose{n}d_prepack"
    qp = _check_weight(weight, n + 2, op)
    if qp.per_channel:
        raise RuntimeError(f"quantized::{op}: Per Channel Quantization is currently disabled for transposed conv; "
                           "quantize the weight per tensor (torch.quantize_per_tensor, or a per-tensor weight observer)")
    g = int(groups)
    if g < 1 or weight.shape[0] % g:
        raise RuntimeError(f"quantized::{op}: the input channels ({weight.shape[0]}) must be divisible by groups "
                           f"({g})")
    st, dl = _tuple(stride, n, "stride", op), _tuple(dilation, n, "dilation", op)
    op_ = _tuple(output_padding, n, "output_padding", op)
    if any(o >= s and o >= d for o, s, d in zip(op_, st, dl)):
        raise RuntimeError(f"quantized::{op}: output padding must be smaller than either stride or dilation, got "
                           f"output_padding={list(op_)}, stride={list(st)}, dilation={list(dl)}")
    return ConvPackedParamsBase(weight, _check_bias(bias, weight.shape[1] * g, op), st,
                                _tuple(padding, n, "padding", op), dl, g, n, op_, True)


def _conv_transpose_acc(x: np.ndarray, w: np.ndarray, stride, padding, output_padding, dilation,
                        groups: int) -> np.ndarray:
    """The exact integer transposed convolution of (N, C, *S) by (C, O / groups, *K) (zero points removed): each
    kernel tap scatters x (times its weight) into the strided output grid, which is then cropped by `padding`."""
    n = len(stride)
    N, C, S = x.shape[0], x.shape[1], x.shape[2:]
    K = w.shape[2:]
    og, cg = w.shape[1], C // groups
    full = [(L - 1) * s + d * (k - 1) + 1 + o for L, s, d, k, o in zip(S, stride, dilation, K, output_padding)]
    out_sz = [(L - 1) * s - 2 * p + d * (k - 1) + o + 1
              for L, s, p, d, k, o in zip(S, stride, padding, dilation, K, output_padding)]
    for ax, v in enumerate(out_sz):
        if v <= 0:
            raise RuntimeError(f"quantized::conv_transpose{n}d: Output dimension is zero for {ax} axis; kernel: "
                               f"{K[ax]}, stride: {stride[ax]}, input padding: {padding[ax]}, output padding: "
                               f"{output_padding[ax]}, dilation: {dilation[ax]} (input size {S[ax]})")
    acc = np.zeros((N, og * groups, *full), _F64)
    xf = x.astype(_F64)
    for g in range(groups):
        xg = xf[:, g * cg:(g + 1) * cg]                               # (N, cg, *S)
        wg = w[g * cg:(g + 1) * cg].astype(_F64)                      # (cg, og, *K)
        for tap in np.ndindex(*K):
            contrib = np.moveaxis(np.tensordot(xg, wg[(slice(None), slice(None)) + tap], axes=([1], [0])), -1, 1)
            sl = tuple(slice(t * d, t * d + (L - 1) * s + 1, s) for t, d, L, s in zip(tap, dilation, S, stride))
            acc[(slice(None), slice(g * og, (g + 1) * og)) + sl] += contrib
    crop = tuple(slice(p, p + o) for p, o in zip(padding, out_sz))
    return np.rint(acc[(Ellipsis,) + crop]).astype(np.int64)


def q_conv_transpose(n: int, qx, packed_weight, output_scale, output_zero_point) -> QTensor:
    """quantized::conv_transpose{n}d: quint8 (N, C, *S) -> quint8 (N, O, *S') with fbgemm's requantization (as
    the convolutions')."""
    op = f"conv_transpose{n}d"
    p = _packed(packed_weight, ConvPackedParamsBase, op)
    if not p.transposed:
        raise RuntimeError(f"quantized::{op}: the packed weight is a convolution's; pack it with "
                           f"quantized.conv_transpose{n}d_prepack")
    qp = _input_qp(qx, op)
    if qx.ndim != n + 2:
        raise ValueError(f"quantized::{op}: expected a {n + 2}-D (N, C, {', '.join('DHW'[3 - n:])}) input, got "
                         f"shape {list(qx.shape)}")
    stride, padding, dilation, groups = p._geom
    wq = p.weight._qp()
    if qx.shape[1] != p.weight.shape[0]:
        raise RuntimeError(f"quantized::{op}: the input has {qx.shape[1]} channels, the weight expects "
                           f"{p.weight.shape[0]} (in_channels)")
    wv = p.weight._v.astype(np.int64) - int(wq.zero_point)
    acc = _conv_transpose_acc(qx._v.astype(np.int64) - int(qp.zero_point), wv, stride, padding, p.output_padding_,
                              dilation, groups)
    sw = np.full(acc.shape[1], _F32(wq.scale), _F32)
    return _out(requantize(acc, qp.scale, sw, False, p.bias, output_scale, output_zero_point, False, 1),
                output_scale, output_zero_point)


# --- float16 dynamic linear ---------------------------------------------------------------------------------------
_FP16_MAX = 65504.0
_FP16_K_BLOCK = 512      # fbgemm's PackedGemmMatrixFP16 row (k) block
_FP16_COL_BLOCK = 32     # its column block on AVX-512 (2 x 16 lanes; 16 on AVX2)


def linear_prepack_fp16(W, B=None) -> LinearPackedParamsBase:
    """torch.ops.quantized.linear_prepack_fp16: the (out_features, in_features) float weight stored as float16
    (values past float16's range saturate to +-65504, with a warning) and the float bias."""
    if not isinstance(W, Tensor) or W.is_quantized or W.dtype.name != "float32" or W.ndim != 2:
        raise RuntimeError(f"quantized::linear_prepack_fp16: expected a 2-D float32 weight, got "
                           f"{getattr(W, 'dtype', type(W).__name__)} of shape {list(getattr(W, 'shape', ()))}")
    w = _host(W, _F32)
    if np.any(np.abs(w) > _FP16_MAX):
        import warnings
        warnings.warn("quantized::linear_prepack_fp16: found weight values outside float16's range "
                      f"[-{_FP16_MAX:g}, {_FP16_MAX:g}]; they are saturated to it", stacklevel=2)
    w16 = np.clip(w, -_FP16_MAX, _FP16_MAX).astype(np.float16).astype(_F32)
    return LinearPackedParamsBase(_make(w16), _check_bias(B, w.shape[0], "linear_prepack_fp16"))


def linear_unpack_fp16(packed) -> tuple:
    """torch.ops.quantized.linear_unpack_fp16: (the float16-rounded weight as float32, bias)."""
    return _packed(packed, LinearPackedParamsBase, "linear_unpack_fp16").unpack()


def gemm_fp16_np(x: np.ndarray, w16: np.ndarray) -> np.ndarray:
    """x (M, K) @ w16.T as fbgemm's float16 GEMM sums it: per output, one float32 FMA chain over k; the columns
    past the last whole column block restart the chain every 512 k's and add the block sums."""
    M, K = x.shape
    N = w16.shape[0]
    main = N // _FP16_COL_BLOCK * _FP16_COL_BLOCK
    out = np.zeros((M, N), _F32)
    part = np.zeros((M, N - main), _F32)
    for k in range(K):
        if k and k % _FP16_K_BLOCK == 0 and N > main:
            out[:, main:] = (out[:, main:] + part) if k > _FP16_K_BLOCK else part
            part = np.zeros_like(part)
        prod = fma32(x[:, k:k + 1], w16[None, :, k], np.concatenate([out[:, :main], part], 1))
        out[:, :main], part = prod[:, :main], prod[:, main:]
    if N > main:
        out[:, main:] = (out[:, main:] + part) if K > _FP16_K_BLOCK else part
    return out


def q_linear_dynamic_fp16(X, W_prepack, relu: bool = False) -> Tensor:
    """torch.ops.quantized.linear_dynamic_fp16 (linear_relu_dynamic_fp16 with relu=True): float32 X (..., in) times
    the float16 weight (fbgemm's float16 GEMM), plus the bias in float32."""
    op = "linear_relu_dynamic_fp16" if relu else "linear_dynamic_fp16"
    p = _packed(W_prepack, LinearPackedParamsBase, op)
    if isinstance(p.weight, QTensor):
        raise RuntimeError(f"quantized::{op}: the packed weight is a qint8 one (linear_prepack); pack a float weight "
                           "with quantized.linear_prepack_fp16, or call quantized.linear_dynamic")
    if not isinstance(X, Tensor) or X.is_quantized or X.dtype.name != "float32":
        raise RuntimeError(f"quantized::{op}: expected scalar type Float, got {getattr(X, 'dtype', type(X).__name__)}")
    w16 = _host(p.weight, _F32)
    if X.ndim == 0 or X.shape[-1] != w16.shape[1]:
        raise RuntimeError(f"quantized::{op}: the input's last dimension must equal the weight's in_features "
                           f"({w16.shape[1]}), got shape {list(X.shape)}")
    x = _host(X, _F32)
    out = gemm_fp16_np(x.reshape(-1, x.shape[-1]), w16)
    if p.bias is not None:
        out = (out + _host(p.bias, _F32)).astype(_F32)
    if relu:
        out = np.maximum(out, _F32(0))
    return _make(out.reshape(x.shape[:-1] + (w16.shape[0],)))


# --- row-wise quantized embeddings ------------------------------------------------------------------------------
def _float16_bytes(v: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(v.astype(np.float16)).view(np.uint8).reshape(v.shape + (2,))


def _pack_bits(q: np.ndarray, bits: int) -> np.ndarray:
    """(rows, cols) integers < 2**bits -> (rows, ceil(cols * bits / 8)) bytes, element k in bits k*bits.. of its
    byte (the low bits first), as fbgemm packs them."""
    per = 8 // bits
    rows, cols = q.shape
    padded = np.zeros((rows, -(-cols // per) * per), np.uint8)
    padded[:, :cols] = q
    parts = padded.reshape(rows, -1, per).astype(np.uint8) << (np.arange(per, dtype=np.uint8) * bits)
    return np.bitwise_or.reduce(parts, axis=2).astype(np.uint8)


def _unpack_bits(b: np.ndarray, bits: int, cols: int) -> np.ndarray:
    per = 8 // bits
    q = (b[..., None] >> (np.arange(per, dtype=np.uint8) * bits)) & np.uint8((1 << bits) - 1)
    return q.reshape(b.shape[:-1] + (-1,))[..., :cols]


def rowwise_prepack(weight, bits: int, optimized_qparams: bool = False) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_prepack: each row (last dim) quantized from its min and max and
    fused with its scale and bias (float32 for 8 bits; float16 for 4 and 2 bits) into one uint8 row."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    if not isinstance(weight, Tensor) or weight.dtype.name not in ("float32", "float16"):
        raise RuntimeError(f"'embedding_bag_{name}_prepack' only support float32 or float16.")
    if optimized_qparams:
        raise NotImplementedError(f"quantized::embedding_bag_{name}_prepack: funcgrad has no optimized_qparams "
                                  "(greedy range search); use optimized_qparams=False")
    w = _host(weight, _F32)
    if w.ndim < 1 or bits != 8 and w.ndim != 2:
        raise RuntimeError(f"quantized::embedding_bag_{name}_prepack: expected a "
                           f"{'weight of at least 1 dimension' if bits == 8 else '2-D weight'}, got shape "
                           f"{list(w.shape)}")
    if w.shape[-1] % (8 // bits):
        raise RuntimeError(f"qembeddingbag_{name}_prepack only works for the number of columns a multiple of "
                           f"{8 // bits}")
    lead, cols = w.shape[:-1], w.shape[-1]
    w = w.reshape(-1, cols)
    lo = w.min(axis=1) if cols else np.zeros(w.shape[0], _F32)
    hi = w.max(axis=1) if cols else np.zeros(w.shape[0], _F32)
    if bits == 8:
        rng = (hi - lo).astype(_F32)
        inv = (_F32(255) / (rng + _F32(1e-8))).astype(_F32)
        q = np.clip(np.rint((w - lo[:, None]) * inv[:, None]), 0, 255).astype(np.uint8)
        tail = np.stack([(rng / _F32(255)).astype(_F32), lo], 1).view(np.uint8)
        out = np.concatenate([q, tail], 1)
    else:
        lo = lo.astype(np.float16).astype(_F32)
        rng = (hi - lo).astype(_F32)
        with np.errstate(divide="ignore", over="ignore"):
            scale = np.where(rng == 0, _F32(1), rng / _F32((1 << bits) - 1)).astype(np.float16).astype(_F32)
            scale = np.where(scale == 0, _F32(1), scale)
            inv = (_F32(1) / scale).astype(_F32)
        bad = np.isinf(inv)
        scale, inv = np.where(bad, _F32(1), scale), np.where(bad, _F32(1), inv)
        q = np.clip(np.rint((w - lo[:, None]) * inv[:, None]), 0, (1 << bits) - 1).astype(np.uint8)
        out = np.concatenate([_pack_bits(q, bits), _float16_bytes(scale), _float16_bytes(lo)], 1)
    return _make(out.reshape(lead + (out.shape[1],)))


def _rows(packed: np.ndarray, bits: int):
    """(integers (rows, cols), float32 scale, float32 bias) of a fused row-wise packed weight."""
    if bits == 8:
        ints = packed[:, :-8]
        sb = np.ascontiguousarray(packed[:, -8:]).view(_F32)
    else:
        ints = _unpack_bits(packed[:, :-4], bits, (packed.shape[1] - 4) * (8 // bits))
        sb = np.ascontiguousarray(packed[:, -4:]).view(np.float16).astype(_F32)
    return ints, sb[:, 0], sb[:, 1]


def rowwise_unpack(packed, bits: int) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_unpack: the float32 rows scale * q + bias."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    p = _host(packed)
    if p.dtype != np.uint8 or p.ndim < 1 or bits != 8 and p.ndim != 2 or p.shape[-1] < (8 if bits == 8 else 4):
        raise RuntimeError(f"quantized::embedding_bag_{name}_unpack: expected the uint8 rows "
                           f"embedding_bag_{name}_prepack returns, got {p.dtype} of shape {list(p.shape)}")
    lead = p.shape[:-1]
    ints, scale, bias = _rows(p.reshape(-1, p.shape[-1]), bits)
    out = fma32(ints.astype(_F32), scale[:, None], bias[:, None])
    return _make(out.reshape(lead + (out.shape[-1],)))


def _index_array(t, what: str) -> np.ndarray:
    idx = _host(t)
    if idx.dtype not in (np.int32, np.int64):
        names = {"f": {4: "Float", 8: "Double", 2: "Half"}, "i": {1: "Char", 2: "Short"}, "u": {1: "Byte"}}
        name = names.get(idx.dtype.kind, {}).get(idx.dtype.itemsize, "Bool" if idx.dtype.kind == "b" else str(idx.dtype))
        raise RuntimeError(f"Expect 32 or 64 bit {what}, but found {name} instead.")
    return idx.astype(np.int64)


def _bags(ints, scale, bias, indices, offsets, mode, per_sample_weights, include_last_offset, op: str,
          bag: bool = True) -> np.ndarray:
    """fbgemm's EmbeddingSpMDM over row-wise quantized rows: per bag, acc = fma(w s, q, acc + w b) in index order
    (`mode` is not read: torch's quantized kernels sum). Without `bag`, one row per index (embedding_byte /
    _4bit)."""
    rows = ints.shape[0]
    idx = _index_array(indices, "indices")
    bad = (idx < 0) | (idx >= rows)
    if bad.any():
        raise RuntimeError(f"Index {int(np.argmax(bad.ravel()))} is out of bounds: {int(idx.ravel()[bad.ravel()][0])}, "
                           f"range 0 to {rows}")
    D = ints.shape[1]
    if not bag:
        flat = idx.reshape(-1)
        out = fma32(ints[flat].astype(_F32), scale[flat, None], bias[flat, None])
        return out.reshape(idx.shape + (D,))
    n = idx.size
    if idx.ndim == 2:
        starts = np.arange(idx.shape[0]) * idx.shape[1]
        ends = starts + idx.shape[1]
        idx = idx.reshape(-1)
    elif offsets is None:
        raise RuntimeError(f"{op} expects offsets to be set for 1D indices.")
    else:
        offs = _index_array(offsets, "offsets").reshape(-1)
        if include_last_offset:
            starts, ends = offs[:-1], offs[1:]
        else:
            starts, ends = offs, np.append(offs[1:], n)
    wts = None if per_sample_weights is None else _host(per_sample_weights, _F32).reshape(-1)
    out = np.zeros((starts.size, D), _F32)
    lengths = ends - starts
    for k in range(int(lengths.max()) if lengths.size else 0):
        live = np.nonzero(lengths > k)[0]
        pos = starts[live] + k
        r = idx[pos]
        sc, bi = scale[r], bias[r]
        if wts is not None:
            sc, bi = (wts[pos] * sc).astype(_F32), (wts[pos] * bi).astype(_F32)
        out[live] = fma32(sc[:, None], ints[r].astype(_F32), out[live] + bi[:, None])
    return out


def q_embedding_bag_rowwise(bits: int, weight, indices, offsets=None, scale_grad_by_freq: bool = False,
                            mode: int = 0, pruned_weights: bool = False, per_sample_weights=None,
                            compressed_indices_mapping=None, include_last_offset: bool = False) -> Tensor:
    """quantized::embedding_bag_{byte,4bit,2bit}_rowwise_offsets: bags over the fused row-wise packed `weight`
    (what embedding_bag_*_prepack returns)."""
    name = {8: "byte", 4: "4bit", 2: "2bit"}[bits]
    op = f"embedding_bag_{name}_rowwise_offsets"
    if pruned_weights:
        raise NotImplementedError(f"quantized::{op}: funcgrad has no pruned weights (compressed_indices_mapping)")
    w = _host(weight)
    if w.dtype != np.uint8 or w.ndim != 2:
        raise RuntimeError(f"quantized::{op}: expected the 2-D uint8 rows embedding_bag_{name}_prepack returns, "
                           f"got {w.dtype} of shape {list(w.shape)}")
    ints, scale, bias = _rows(w, bits)
    return _make(_bags(ints, scale, bias, indices, offsets, int(mode), per_sample_weights, include_last_offset, op))


# --- the same over EmbeddingPackedParamsBase (the nn.quantized Embedding / EmbeddingBag modules) -------------------
def embedding_bag_prepack(weight) -> EmbeddingPackedParamsBase:
    """torch.ops.quantized.embedding_bag_prepack: a quint8 / quint4x2 weight quantized per row with float qparams,
    packed for the embedding kernels."""
    return EmbeddingPackedParamsBase(weight)


def embedding_bag_unpack(packed) -> QTensor:
    """torch.ops.quantized.embedding_bag_unpack: the quantized weight back."""
    return _packed(packed, EmbeddingPackedParamsBase, "embedding_bag_unpack").unpack()


def _bits(packed, bits, op) -> EmbeddingPackedParamsBase:
    p = _packed(packed, EmbeddingPackedParamsBase, op)
    if p.bit_rate != bits:
        raise RuntimeError(f"quantized::{op}: expected a {bits}-bit packed weight "
                           f"({'torch.quint8' if bits == 8 else 'torch.quint4x2'}), got {p.bit_rate} bits")
    return p


def q_embedding_bag(bits: int, weight, indices, offsets=None, scale_grad_by_freq: bool = False, mode: int = 0,
                    pruned_weights: bool = False, per_sample_weights=None, compressed_indices_mapping=None,
                    include_last_offset: bool = False) -> Tensor:
    """quantized::embedding_bag_byte / embedding_bag_4bit over an EmbeddingPackedParamsBase."""
    op = "embedding_bag_byte" if bits == 8 else "embedding_bag_4bit"
    p = _bits(weight, bits, op)
    return _make(_bags(p.ints, p.scale, p.bias, indices, offsets, int(mode), per_sample_weights, include_last_offset,
                       op))


def q_embedding(bits: int, weight, indices, pruned_weights: bool = False) -> Tensor:
    """quantized::embedding_byte / embedding_4bit: the float32 rows scale * q + bias of `indices` (any shape; a
    trailing embedding dimension is added)."""
    op = "embedding_byte" if bits == 8 else "embedding_4bit"
    p = _bits(weight, bits, op)
    return _make(_bags(p.ints, p.scale, p.bias, indices, None, 0, None, False, op, bag=False))


# --- torch.ops.quantized's entries for these kernels (name -> (function, overloads)) ----------------------------
def _bind(f, *head):
    def call(*args, **kwargs):
        return f(*head, *args, **kwargs)
    call.__name__ = call.__qualname__ = getattr(f, "__name__", "op")
    call.__doc__ = f.__doc__
    return call


OPS: dict = {
    "linear_prepack": (linear_prepack, ["default"]), "linear_unpack": (linear_unpack, ["default"]),
    "linear": (q_linear, ["default"]),
    "linear_relu": (lambda X, W_prepack, Y_scale_i, Y_zero_point_i: q_linear(X, W_prepack, Y_scale_i, Y_zero_point_i,
                                                                             True), ["default"]),
    "linear_dynamic": (q_linear_dynamic, ["default"]),
    "linear_relu_dynamic": (lambda X, W_prepack, reduce_range=False: q_linear_dynamic(X, W_prepack, reduce_range,
                                                                                        True), ["default"]),
    "linear_prepack_fp16": (linear_prepack_fp16, ["default"]),
    "linear_unpack_fp16": (linear_unpack_fp16, ["default", "legacy"]),
    "linear_dynamic_fp16": (q_linear_dynamic_fp16, ["default"]),
    "linear_relu_dynamic_fp16": (lambda X, W_prepack: q_linear_dynamic_fp16(X, W_prepack, True), ["default"]),
    "embedding_bag_prepack": (embedding_bag_prepack, ["default"]),
    "embedding_bag_unpack": (embedding_bag_unpack, ["default"]),
    "embedding_byte": (_bind(q_embedding, 8), ["default"]), "embedding_4bit": (_bind(q_embedding, 4), ["default"]),
    "embedding_bag_byte": (_bind(q_embedding_bag, 8), ["default"]),
    "embedding_bag_4bit": (_bind(q_embedding_bag, 4), ["default"]),
}
for _n in (1, 2, 3):
    OPS[f"conv{_n}d_prepack"] = (_bind(conv_prepack, _n), ["default"])
    OPS[f"conv{_n}d_unpack"] = (conv_unpack, ["default"])
    _ovs = ["default"] if _n == 1 else ["default", "new"]
    OPS[f"conv{_n}d"] = (_bind(q_conv, _n), _ovs)
    OPS[f"conv{_n}d_relu"] = (_bind(lambda n, qx, w, s, z: q_conv(n, qx, w, s, z, True), _n), _ovs)
    OPS[f"conv_transpose{_n}d_prepack"] = (_bind(conv_transpose_prepack, _n), ["default"])
    OPS[f"conv_transpose{_n}d_unpack"] = (conv_unpack, ["default"])
    OPS[f"conv_transpose{_n}d"] = (_bind(q_conv_transpose, _n), ["default"])
for _bits_, _name in ((8, "byte"), (4, "4bit"), (2, "2bit")):
    OPS[f"embedding_bag_{_name}_prepack"] = (
        _bind(lambda bits, weight, optimized_qparams=False, nbins=200, ratio=0.16:
              rowwise_prepack(weight, bits, optimized_qparams), _bits_) if _bits_ != 8 else
        _bind(lambda bits, weight: rowwise_prepack(weight, bits), 8), ["default"])
    OPS[f"embedding_bag_{_name}_unpack"] = (_bind(lambda bits, packed: rowwise_unpack(packed, bits), _bits_),
                                            ["default"])
    OPS[f"embedding_bag_{_name}_rowwise_offsets"] = (_bind(q_embedding_bag_rowwise, _bits_), ["default"])
