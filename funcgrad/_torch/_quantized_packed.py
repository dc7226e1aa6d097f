"""torch's packed-weight quantized kernels (torch.ops.quantized): linear / conv / transposed conv with prepacked
qint8 weights (static: quint8 in and out; dynamic: float in and out, the activation quantized per call), and
linear with float16 weights (linear_dynamic_fp16). The embedding kernels are in _quantized_embedding.py.

The packed-params objects stand in for torch's TorchScript classes (torch.classes.quantized.
LinearPackedParamsBase, Conv2dPackedParamsBase, Conv3dPackedParamsBase, EmbeddingPackedParamsBase): they hold
the weight, bias and geometry, `unpack()` them, pickle and deepcopy. The arithmetic is fbgemm's, so results are
bit-identical:

- static linear / conv / transposed conv (fbgemm's ReQuantizeOutput): exact int32 accumulators of (x - zx)(w - zw); with
  aw = float32(s_x s_w) and m = float32(aw / s_out), q = rint((float32(acc) + b') m) + z_out with b' =
  float32(b / aw) per channel, float32(b * float32(1 / aw)) per tensor.
- dynamic linear (ReQuantizeForFloat): x quantized to quint8 with qparams from its min/max (reduce_range halves
  the range), y = fma(float32(acc), float32(s_x s_w), b).
- float16 linear (cblas_gemm_compute): the weight rounded to float16, each output one float32 FMA chain over k
  (see gemm_fp16_np), then + bias.
"""
from __future__ import annotations

import numpy as np

from ._quantized import (QTensor, _QParams, dynamic_qparams, make_qtensor, per_channel_affine_float_qparams,
                         per_tensor_affine, qint8, quantize_np, quint4x2, quint8)
from ._tensor import Tensor, _make

__all__ = ["LinearPackedParamsBase", "ConvPackedParamsBase", "EmbeddingPackedParamsBase", "linear_prepack",
           "linear_unpack", "q_linear", "q_linear_dynamic", "linear_prepack_fp16", "linear_unpack_fp16",
           "q_linear_dynamic_fp16", "gemm_fp16_np", "conv_prepack", "conv_unpack", "q_conv", "conv_transpose_prepack",
           "q_conv_transpose", "OPS"]

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


def _stored_weight(w: QTensor) -> QTensor:
    """The weight as fbgemm stores it: a per-tensor scale kept as float32 (what unpack returns); per-channel
    scales stay as given."""
    qp = w._qp()
    if qp.per_channel or float(np.float32(qp.scale)) == float(qp.scale):
        return w
    return make_qtensor(w._v, _QParams(qp.dtype, qp.scheme, float(np.float32(qp.scale)), qp.zero_point))


def linear_prepack(W, B=None) -> LinearPackedParamsBase:
    """torch.ops.quantized.linear_prepack: the packed (out_features, in_features) qint8 weight and float bias."""
    _check_weight(W, 2, "linear_prepack")
    return LinearPackedParamsBase(_stored_weight(W), _check_bias(B, W.shape[0], "linear_prepack"))


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
    return ConvPackedParamsBase(_stored_weight(weight), _check_bias(bias, weight.shape[0], op),
                                _tuple(stride, n, "stride", op),
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
                           "quantize the weight per tensor (torch.quantize_per_tensor, or a per-tensor weight "
                           "observer)")
    g = int(groups)
    if g < 1 or weight.shape[0] % g:
        raise RuntimeError(f"quantized::{op}: the input channels ({weight.shape[0]}) must be divisible by groups "
                           f"({g})")
    st, dl = _tuple(stride, n, "stride", op), _tuple(dilation, n, "dilation", op)
    op_ = _tuple(output_padding, n, "output_padding", op)
    if any(o >= s and o >= d for o, s, d in zip(op_, st, dl)):
        raise RuntimeError(f"quantized::{op}: output padding must be smaller than either stride or dilation, got "
                           f"output_padding={list(op_)}, stride={list(st)}, dilation={list(dl)}")
    return ConvPackedParamsBase(_stored_weight(weight), _check_bias(bias, weight.shape[1] * g, op), st,
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
    acc = np.zeros((M, N), _F32)
    fringe = None                                   # the fringe columns' sum of the finished k blocks
    for k in range(K):
        if k and k % _FP16_K_BLOCK == 0 and N > main:
            fringe = acc[:, main:].copy() if fringe is None else (fringe + acc[:, main:]).astype(_F32)
            acc[:, main:] = 0
        acc = fma32(x[:, k:k + 1], w16[None, :, k], acc)
    if fringe is not None:
        acc[:, main:] = fringe + acc[:, main:]
    return acc


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
