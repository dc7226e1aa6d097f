"""Quantized tensors, as torch's (dtypes torch.quint8 / qint8 / qint32, qschemes per-tensor and per-channel
affine): `quantize_per_tensor`, `quantize_per_channel`, `quantize_per_tensor_dynamic`, `dequantize`, the
`Tensor.q_*` / `int_repr` / `qscheme` methods, torch's repr, and `fake_quantize_per_tensor_affine` /
`fake_quantize_per_channel_affine` with torch's straight-through gradient.

A quantized tensor is a `QTensor` (a Tensor subclass) whose buffer `_v` holds the integer representation
(uint8 / int8 / int32) and whose `__dict__["_q"]` holds the quantizer (`_QParams`). Its `dtype` is the
quantized dtype; `is_quantized` is True. It supports what torch's QuantizedCPU tensors are used for between
quantized modules: dequantize / int_repr, the shape ops (reshape, view, flatten, indexing, transpose, permute,
squeeze, unsqueeze, contiguous, clone, detach) on per-tensor tensors, relu, save/load and deepcopy. Other
operations refuse with NotImplementedError (torch's error class): dequantize() first.

The arithmetic is torch's CPU kernels' (fbgemm's), so integer representations are bit-identical:
quantize q = clamp(rint(fma(x, float32(1 / float32(scale)), zero_point))) in float32 (per-channel:
multiply and add rounded separately; qint32, whose kernel differs, may differ by one at rare ties); per-tensor
dequantize (q - zp) * float32(scale) in float32, per-channel in float64 then rounded to float32.
"""
from __future__ import annotations

import types
import warnings

import numpy as np

from . import _dtype as D
from .ops import selection as _selection
from ._creation import tensor as _tensor
from . import overrides as _overrides
from ._tensor import Tensor, _make, _make_as
from ._printing import _body, _add_suffixes
from .ops.shape import detach as _detach

__all__ = ["qscheme", "per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
           "per_channel_affine_float_qparams", "quint8", "qint8", "qint32", "quint4x2", "quint2x4",
           "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize",
           "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]

quint8, qint8, qint32, quint4x2, quint2x4 = D.quint8, D.qint8, D.qint32, D.quint4x2, D.quint2x4
# each quantized dtype's integer range
QRANGE = {quint8: (0, 255), qint8: (-128, 127), qint32: (-2 ** 31, 2 ** 31 - 1), quint4x2: (0, 15),
          quint2x4: (0, 3)}
_Q_OF_NP = {np.dtype(np.uint8): quint8, np.dtype(np.int8): qint8, np.dtype(np.int32): qint32}


class qscheme:
    """How a quantized tensor maps integers to reals (torch.qscheme): torch.per_tensor_affine, ..."""
    __slots__ = ("name",)
    _instances: dict = {}

    def __init__(self, name: str):
        self.name = name
        qscheme._instances[name] = self

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self):
        return (_qscheme_by_name, (self.name,))


def _qscheme_by_name(name: str) -> qscheme:
    return qscheme._instances[name]


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)

_warned = [False]


def _deprecation(stacklevel: int = 3) -> None:
    """torch 2.13's once-per-process warning that quantized tensor creation is deprecated."""
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("torch.quantize_per_tensor, torch.quantize_per_channel and other quantized tensor creation "
                      "functions that produce tensors with dtype torch.quint8, torch.qint8, and torch.qint32 are "
                      "deprecated and will be removed in a future PyTorch release. Please see "
                      "https://github.com/pytorch/pytorch/issues/184982 for more information.", UserWarning,
                      stacklevel=stacklevel)


class _QParams:
    """A quantized tensor's quantizer: dtype, scheme, scale(s), zero point(s) and (per-channel) axis."""
    __slots__ = ("dtype", "scheme", "scale", "zero_point", "axis")

    def __init__(self, dtype, scheme, scale, zero_point, axis=None):
        self.dtype, self.scheme, self.scale, self.zero_point, self.axis = dtype, scheme, scale, zero_point, axis

    @property
    def per_channel(self) -> bool:
        return self.scheme in _PER_CHANNEL


def _np_float(x) -> np.ndarray:
    """A float input's values as a float32 array (torch quantizes float32; other floats are converted)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"quantize: expected a Tensor, got {type(x).__name__}")
    if x.is_quantized:
        raise RuntimeError("quantize: the input is already quantized; dequantize() it first")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {x.dtype}")
    return np.asarray(x.detach()._host(), np.float32)


def quantize_np(x: np.ndarray, scale, zero_point, qdtype, axis=None) -> np.ndarray:
    """The integer representation of float32 `x` (fbgemm's arithmetic): scale/zero_point are numbers, or 1-D
    arrays along `axis`."""
    lo, hi = QRANGE[qdtype]
    if axis is not None:
        bshape = [1] * x.ndim
        bshape[axis] = -1
        scale = np.asarray(scale, np.float64).reshape(bshape)
        zero_point = np.asarray(zero_point).reshape(bshape)
    inv = np.float32(1) / np.asarray(scale, np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        if axis is not None:   # (ATen's per-channel kernel: multiply, then add, each rounded to float32)
            q = np.rint(x * inv + np.asarray(zero_point, np.float32))
        else:   # fbgemm's fused multiply-add, x * inv + zp rounded once to float32 (exact product in float64)
            q = np.rint((x.astype(np.float64) * inv.astype(np.float64) + np.asarray(zero_point, np.float64))
                        .astype(np.float32))
        q = np.clip(np.nan_to_num(q, nan=0.0), lo, hi)
    return q.astype(qdtype.dtype)


def dequantize_np(v: np.ndarray, qp: _QParams) -> np.ndarray:
    """The float32 values of a quantized tensor's integer representation `v`."""
    if not qp.per_channel:
        return (v.astype(np.float32) - np.float32(qp.zero_point)) * np.float32(qp.scale)
    bshape = [1] * v.ndim
    bshape[qp.axis] = -1
    s = np.asarray(qp.scale, np.float64).reshape(bshape)
    z = np.asarray(qp.zero_point).reshape(bshape)
    if qp.scheme is per_channel_affine_float_qparams:
        return ((v.astype(np.float32) - z.astype(np.float32)) * s.astype(np.float32)).astype(np.float32)
    return ((v.astype(np.float64) - z) * s).astype(np.float32)


def make_qtensor(ints: np.ndarray, qp: _QParams) -> "QTensor":
    t = _make_as(QTensor, ints)
    t.__dict__["_q"] = qp
    return t


def _no_quantized_kernel(op: str):
    return NotImplementedError(f"Could not run '{op}' with arguments from the 'QuantizedCPU' backend: funcgrad's "
                               "quantized tensors support dequantize(), int_repr(), the q_* accessors, shape ops, "
                               "relu and the torch.ao.nn.quantized modules; call .dequantize() first")


class QTensor(Tensor):
    """A quantized tensor (see the module docstring): integer representation plus quantizer."""
    __slots__ = ()

    @property
    def dtype(self):
        return self.__dict__["_q"].dtype

    @property
    def is_quantized(self) -> bool:
        return True

    def _arr(self):
        raise _no_quantized_kernel("aten::op")

    def _qp(self) -> _QParams:
        return self.__dict__["_q"]

    def element_size(self) -> int:
        return self._v.itemsize

    # --- accessors ----------------------------------------------------------------------------------------
    def qscheme(self) -> qscheme:
        """The quantization scheme (torch.per_tensor_affine, torch.per_channel_affine, ...)."""
        return self._qp().scheme

    def _per_tensor(self, what, instead) -> _QParams:
        qp = self._qp()
        if qp.per_channel:
            raise RuntimeError("Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  "
                               f"({what} of a per-channel quantized tensor: use {instead}())")
        return qp

    def q_scale(self) -> float:
        """The scale of a per-tensor quantized tensor (a Python float)."""
        return float(self._per_tensor("q_scale", "q_per_channel_scales").scale)

    def q_zero_point(self) -> int:
        """The zero point of a per-tensor quantized tensor (a Python int)."""
        return int(self._per_tensor("q_zero_point", "q_per_channel_zero_points").zero_point)

    def _per_channel(self, what) -> _QParams:
        qp = self._qp()
        if not qp.per_channel:
            raise RuntimeError(f"Expected quantizer->qscheme() == kPerChannelAffine to be true, but got false.  "
                               f"({what} of a per-tensor quantized tensor: use q_scale() / q_zero_point())")
        return qp

    def q_per_channel_scales(self) -> Tensor:
        """The per-channel scales of a per-channel quantized tensor (float64; float32 with float zero points)."""
        qp = self._per_channel("q_per_channel_scales")
        return _make(np.array(qp.scale, np.float32 if qp.scheme is per_channel_affine_float_qparams else np.float64))

    def q_per_channel_zero_points(self) -> Tensor:
        """The per-channel zero points of a per-channel quantized tensor."""
        qp = self._per_channel("q_per_channel_zero_points")
        return _make(np.array(qp.zero_point))

    def q_per_channel_axis(self) -> int:
        """The dimension a per-channel quantized tensor's scales run along."""
        return int(self._per_channel("q_per_channel_axis").axis)

    def int_repr(self) -> Tensor:
        """The integers a quantized tensor stores (uint8 for quint8, int8 for qint8, int32 for qint32); for
        quint4x2 / quint2x4 torch's flat packed bytes (element k in bits k*b.. of byte k*b // 8, low bits first)."""
        qp = self._qp()
        if qp.dtype in (quint4x2, quint2x4):
            bits = 4 if qp.dtype is quint4x2 else 2
            per = 8 // bits
            flat = np.zeros(-(-self._v.size // per) * per, np.uint8)
            flat[:self._v.size] = self._v.reshape(-1)
            parts = flat.reshape(-1, per) << (np.arange(per, dtype=np.uint8) * bits)
            return _make(np.bitwise_or.reduce(parts, axis=1).astype(np.uint8))
        return _make(np.array(self._v))

    def dequantize(self) -> Tensor:
        """The float32 values a quantized tensor stands for: (q - zero_point) * scale."""
        return _make(dequantize_np(self._v, self._qp()))

    def numpy(self, *, force=False):
        raise TypeError(f"Got unsupported ScalarType {self.dtype.name.capitalize().replace('int', 'Int')}")

    # --- shape ops: the same integers, the same quantizer -----------------------------------------------
    def _same(self, op: str, fn, per_channel_ok: bool = False) -> "QTensor":
        qp = self._qp()
        if qp.per_channel and not per_channel_ok:
            raise _no_quantized_kernel(f"aten::{op}' on a per-channel tensor ('{op}")
        return make_qtensor(fn(self._v), qp)

    def clone(self, *, memory_format=None) -> "QTensor":
        return self._same("clone", np.array, True)

    def contiguous(self, memory_format=None) -> "QTensor":
        return self if self._v.flags.c_contiguous else self._same("contiguous", np.ascontiguousarray, True)

    def detach(self) -> "QTensor":
        return self._same("detach", lambda v: v, True)

    def reshape(self, *shape) -> "QTensor":
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._same("reshape", lambda v: v.reshape(shape))

    def view(self, *shape) -> "QTensor":
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if not self._v.flags.c_contiguous:
            raise RuntimeError("view size is not compatible with input tensor's size and stride; use .reshape(...)")
        return self._same("view", lambda v: v.reshape(shape))

    def flatten(self, start_dim=0, end_dim=-1) -> "QTensor":
        nd = max(self.ndim, 1)
        s, e = start_dim % nd, end_dim % nd
        shp = self.shape if self.ndim else (1,)
        new = tuple(shp[:s]) + (int(np.prod(shp[s:e + 1])),) + tuple(shp[e + 1:])
        return self.reshape(new)

    def __getitem__(self, idx) -> "QTensor":
        if isinstance(idx, Tensor):
            idx = idx._host()
        return self._same("index", lambda v: v[idx])

    def transpose(self, dim0, dim1) -> "QTensor":
        return self._same("transpose", lambda v: np.swapaxes(v, dim0, dim1))

    def permute(self, *dims) -> "QTensor":
        dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self._same("permute", lambda v: np.transpose(v, dims))

    def t(self) -> "QTensor":
        return self._same("t", lambda v: v.T)

    def squeeze(self, dim=None) -> "QTensor":
        return self._same("squeeze", lambda v: np.squeeze(v) if dim is None else
                          (np.squeeze(v, dim) if v.shape[dim] == 1 else v))

    def unsqueeze(self, dim) -> "QTensor":
        return self._same("unsqueeze", lambda v: np.expand_dims(v, dim % (v.ndim + 1)))

    # --- relu: integers below the zero point become the zero point -------------------------------------
    def relu(self) -> "QTensor":
        qp = self._qp()
        if qp.per_channel:
            raise _no_quantized_kernel("aten::relu' on a per-channel tensor ('relu")
        return make_qtensor(np.maximum(self._v, np.asarray(qp.zero_point, self._v.dtype)), qp)

    def mean(self, dim=None, keepdim: bool = False, *, dtype=None) -> "QTensor":
        """The mean over `dim` (all by default) with the input's qparams, as torch's QuantizedCPU kernel: over the
        innermost dimensions of a contiguous tensor round-half-even(float32(sum of integers) / count), else the
        float mean of the dequantized values quantized again."""
        qp = self._per_tensor("mean", "dequantize().mean")
        if dtype is not None and dtype is not qp.dtype:
            raise RuntimeError(f"mean: a quantized tensor's mean keeps its dtype {qp.dtype}, got dtype={dtype}")
        nd = self.ndim
        dims = tuple(range(nd)) if dim is None or (isinstance(dim, (list, tuple)) and not len(dim)) else \
            tuple(sorted({int(d) % max(nd, 1) for d in (dim if isinstance(dim, (list, tuple)) else (dim,))}))
        v = self._v
        if v.flags.c_contiguous and dims == tuple(range(nd - len(dims), nd)):
            count = int(np.prod([v.shape[d] for d in dims]))
            total = v.reshape(v.shape[:nd - len(dims)] + (-1,)).astype(np.int64).sum(-1)
            ints = np.rint(total.astype(np.float32) / np.float32(count)).astype(v.dtype)
            if keepdim:
                ints = ints.reshape(ints.shape + (1,) * len(dims))
            return make_qtensor(ints, qp)
        values = dequantize_np(v, qp).mean(axis=dims, keepdims=keepdim, dtype=np.float32)
        return make_qtensor(quantize_np(np.asarray(values, np.float32), qp.scale, qp.zero_point, qp.dtype), qp)

    def sigmoid(self) -> "QTensor":
        """torch.sigmoid of a quantized tensor: output scale 1/256 (see q_sigmoid)."""
        return q_sigmoid(self)

    def relu_(self) -> "QTensor":
        qp = self._qp()
        np.maximum(self._v, np.asarray(qp.zero_point, self._v.dtype), out=self._v)
        self._bump()
        return self

    def __repr__(self) -> str:
        return _qrepr(self)

    def __reduce_ex__(self, proto):
        qp = self._qp()
        return (_rebuild_q, (np.array(self._v), qp.dtype.name, qp.scheme.name, qp.scale, qp.zero_point, qp.axis))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = make_qtensor(np.array(self._v), self._qp())
        return memo[id(self)]


# Tensor methods a quantized tensor keeps (metadata, autograd flags, Python protocol); every other public method
# and operator of Tensor raises NotImplementedError on it, as torch's missing QuantizedCPU kernels do, rather than
# computing on the integer representation.
_Q_KEEP = {"size", "dim", "ndimension", "numel", "nelement", "is_floating_point", "is_complex", "is_contiguous",
           "stride", "storage_offset", "data_ptr", "get_device", "requires_grad_", "cpu", "type", "register_hook",
           "retain_grad", "untyped_storage", "is_pinned", "is_shared", "share_memory_", "is_set_to", "__new__",
           "__repr__", "__format__", "__reduce_ex__", "__deepcopy__", "__hash__", "__len__", "__setstate__",
           "__bool__", "__iter__", "__contains__", "__array__", "__funcgrad_array__"}


def _refuse(name):
    def method(self, *args, **kwargs):
        raise _no_quantized_kernel(f"aten::{name.strip('_')}")
    method.__name__ = name
    return method


def _seal(cls) -> None:
    for base in Tensor.__mro__[:-1]:
        for name, v in base.__dict__.items():
            if name in cls.__dict__ or name in _Q_KEEP or (name.startswith("_") and not name.startswith("__")):
                continue
            if isinstance(v, types.FunctionType):
                setattr(cls, name, _refuse(name))
    cls.__array__ = cls.__funcgrad_array__ = _refuse("numpy")
    cls.__contains__ = cls.__iter__ = _refuse("unbind")
    cls.__bool__ = _refuse("is_nonzero")
    cls.data = property(lambda self: self.detach())


def _rebuild_q(ints, dtype_name, scheme_name, scale, zero_point, axis) -> QTensor:
    return make_qtensor(ints, _QParams(D._NAMES[dtype_name], qscheme._instances[scheme_name], scale, zero_point,
                                       axis))


def _qrepr(q: QTensor) -> str:
    qp = q._qp()
    suffixes = [f"size={tuple(q.shape)}", f"dtype={qp.dtype}", f"quantization_scheme={qp.scheme}"]
    if qp.per_channel:
        suffixes += [f"scale={q.q_per_channel_scales()!r}", f"zero_point={q.q_per_channel_zero_points()!r}",
                     f"axis={qp.axis}"]
    else:
        suffixes += [f"scale={float(qp.scale)}", f"zero_point={int(qp.zero_point)}"]
    v = dequantize_np(q._v, qp)
    body = _body(v, 7) if v.size else "[]"
    return _add_suffixes("tensor(" + body, suffixes, 7)


# --- creation -----------------------------------------------------------------------------------------------
def _qdtype(dtype, op: str):
    if dtype not in QRANGE or dtype in (quint4x2, quint2x4) and op != "quantize_per_channel":
        raise RuntimeError(f"{op}: dtype must be torch.quint8, torch.qint8 or torch.qint32, got {dtype}")
    return dtype


def _scalar(v, kind):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise RuntimeError(f"quantize_per_tensor: expected a one-element {kind} tensor, got shape {list(v.shape)}")
        v = v.item()
    return v


def quantize_per_tensor(input, scale, zero_point, dtype) -> QTensor:
    """A quantized tensor of `input` with one scale and zero point (numbers or one-element tensors); a list of
    tensors with tensors of scales and zero points gives a list of quantized tensors."""
    _deprecation()
    if isinstance(input, (list, tuple)):
        sc, zp = np.asarray(scale._host() if isinstance(scale, Tensor) else scale, np.float32), \
            np.asarray(zero_point._host() if isinstance(zero_point, Tensor) else zero_point)
        return tuple(quantize_per_tensor(x, float(s), int(z), dtype) for x, s, z in zip(input, sc, zp))
    dtype = _qdtype(dtype, "quantize_per_tensor")
    if isinstance(scale, Tensor):   # (a tensor scale is read as float32, as torch's tensor overload does)
        scale = float(np.float32(_scalar(scale, "scale")))
    scale, zero_point = float(scale), int(_scalar(zero_point, "zero_point"))
    x = _np_float(input)
    return make_qtensor(quantize_np(x, scale, zero_point, dtype), _QParams(dtype, per_tensor_affine, scale, zero_point))


def quantize_per_channel(input, scales, zero_points, axis, dtype) -> QTensor:
    """A quantized tensor of `input` with one scale and zero point per index along `axis`."""
    _deprecation()
    dtype = _qdtype(dtype, "quantize_per_channel")
    x = _np_float(input)
    axis = int(axis)
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise IndexError(f"quantize_per_channel: axis {axis} is out of range for a {x.ndim}-D tensor")
    axis %= max(x.ndim, 1)
    s = np.array(scales._host() if isinstance(scales, Tensor) else scales, np.float64).reshape(-1)
    z = np.array(zero_points._host() if isinstance(zero_points, Tensor) else zero_points)
    if s.shape[0] != x.shape[axis] or z.shape[0] != x.shape[axis]:
        raise RuntimeError(f"quantize_per_channel: expected {x.shape[axis]} scales and zero points (size of axis "
                           f"{axis}), got {s.shape[0]} and {z.shape[0]}")
    if z.dtype.kind == "f":
        scheme = per_channel_affine_float_qparams
        lo, hi = QRANGE[dtype]
        bshape = [1] * x.ndim
        bshape[axis] = -1
        inv = np.float32(1) / s.astype(np.float32).reshape(bshape)
        q = np.clip(np.rint(x * inv + z.astype(np.float32).reshape(bshape)), lo, hi).astype(dtype.dtype)
        return make_qtensor(q, _QParams(dtype, scheme, s, z.astype(np.float32), axis))
    z = z.astype(np.int64)
    return make_qtensor(quantize_np(x, s, z, dtype, axis), _QParams(dtype, per_channel_affine, s, z, axis))


_SMALL_SCALE = float(np.float32(6.1e-5))


def choose_qparams(lo: float, hi: float, qmin: int, qmax: int, reduce_range: bool = False,
                   preserve_sparsity: bool = False) -> tuple[float, int]:
    """(scale, zero_point) for values in [lo, hi] (torch's quant_utils::ChooseQuantizationParams, as its dynamic
    quantization computes them: double intermediates, the range extended to hold 0)."""
    f32 = np.float32
    lo, hi = f32(lo), f32(hi)
    if lo > hi:
        raise RuntimeError(f"`min` should be less than or equal to `max`, got {lo} and {hi}")
    if reduce_range:
        qmin, qmax = int(qmin / 2), int(qmax / 2)
    if lo < 0 and hi > 0 and preserve_sparsity:
        symmetric_qmin, symmetric_qmax = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(lo / symmetric_qmin), abs(hi / symmetric_qmax))
        lo, hi = f32(max_scale * symmetric_qmin), f32(max_scale * symmetric_qmax)
    lo, hi = min(lo, f32(0)), max(hi, f32(0))
    scale = (float(hi) - float(lo)) / (qmax - qmin)
    with np.errstate(divide="ignore", over="ignore"):
        if f32(scale) == 0 or np.isinf(f32(1) / f32(scale)):
            scale = 0.1
    if scale < _SMALL_SCALE:
        org = scale
        scale = _SMALL_SCALE
        if lo == 0:
            hi = f32(f32(_SMALL_SCALE) * f32(qmax - qmin))
        elif hi == 0:
            lo = f32(-f32(_SMALL_SCALE) * f32(qmax - qmin))
        else:
            amp = f32(_SMALL_SCALE / org)
            lo, hi = f32(lo * amp), f32(hi * amp)
    zp_min, zp_max = qmin - float(lo) / scale, qmax - float(hi) / scale
    err_min = abs(qmin) - abs(float(lo) / scale)
    err_max = abs(qmax) - abs(float(hi) / scale)
    zp = zp_min if err_min < err_max else zp_max
    if lo < 0 and hi > 0 and preserve_sparsity:
        zp = (qmin + qmax) / 2
    zp = qmin if zp < qmin else qmax if zp > qmax else int(np.rint(zp))
    return scale, int(zp)


def dynamic_qparams(x: np.ndarray, qdtype, reduce_range: bool) -> tuple[float, int]:
    """The scale and zero point dynamic quantization picks for float32 `x` (its min and max)."""
    lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    qmin, qmax = (-128, 127) if qdtype is qint8 else (0, 255)
    return choose_qparams(lo, hi, qmin, qmax, reduce_range)


def quantize_per_tensor_dynamic(input, dtype, reduce_range) -> QTensor:
    """quantize_per_tensor with the scale and zero point chosen from input's min and max."""
    _deprecation()
    if dtype not in (quint8, qint8):
        raise RuntimeError(f"quantize_per_tensor_dynamic: dtype must be torch.quint8 or torch.qint8, got {dtype}")
    x = _np_float(input)
    scale, zp = dynamic_qparams(x, dtype, bool(reduce_range))
    return make_qtensor(quantize_np(x, scale, zp, dtype), _QParams(dtype, per_tensor_affine, scale, zp))


def dequantize(tensor):
    """The float values of a quantized tensor (a list of tensors gives a list); a float tensor is returned as
    is."""
    if isinstance(tensor, (list, tuple)):
        return [dequantize(t) for t in tensor]
    return tensor.dequantize()


def _float_dequantize(self) -> Tensor:
    """Tensor.dequantize of a non-quantized tensor: itself when floating, as torch."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"dequantize: expected a quantized or floating-point tensor, got {self.dtype}")
    return self


def _not_quantized(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'CPU' backend: {name}() "
                                  "needs a quantized tensor (torch.quantize_per_tensor / quantize_per_channel)")
    method.__name__ = name
    return method


# --- fake quantization: quantize then dequantize, with the straight-through gradient -----------------------
def _fake_quant(input, scale, zero_point, quant_min, quant_max, axis, op):
    if not isinstance(input, Tensor) or not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point tensor input")
    if quant_min > quant_max:
        raise RuntimeError(f"`quant_min` should be less than or equal to `quant_max`, got {quant_min} and "
                           f"{quant_max} ({op})")
    x = np.asarray(input.detach()._host(), np.float32)
    s = np.asarray(scale._host() if isinstance(scale, Tensor) else scale, np.float32)
    z = np.asarray(zero_point._host() if isinstance(zero_point, Tensor) else zero_point)
    if axis is not None:
        bshape = [1] * x.ndim
        bshape[axis] = -1
        s, z = s.reshape(bshape), z.reshape(bshape)
    s = s.reshape(()) if axis is None and s.size == 1 else s
    z = z.reshape(()) if axis is None and z.size == 1 else z
    inv = np.float32(1) / s
    with np.errstate(invalid="ignore", over="ignore"):
        if z.dtype.kind == "f":   # (float zero points: the learnable / float-qparams kernels)
            q = np.rint(x * inv + z.astype(np.float32))
            zf = z.astype(np.float32)
        else:
            q = np.rint(x * inv).astype(np.float64) + z.astype(np.float64)
            zf = z.astype(np.float32)
        keep = (q >= quant_min) & (q <= quant_max)
        fq = ((np.clip(q, quant_min, quant_max).astype(np.float32) - zf) * s).astype(np.float32)
    fq = fq.astype(input._np_dtype())
    out = _tensor(fq)
    if not input.requires_grad:
        return out
    # straight-through: d out / d input = 1 where the value was within [quant_min, quant_max], else 0
    # (composed of where and detach, whose derivatives are on their cards; input - input.detach() is exactly 0)
    return _selection.where(_tensor(keep), input - _detach(input) + out, out)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max) -> Tensor:
    """Quantize and dequantize `input` in floating point (torch's fake quantization); the gradient passes straight
    through where the value lies in [quant_min, quant_max] and is 0 elsewhere."""
    return _fake_quant(input, scale, zero_point, quant_min, quant_max, None, "fake_quantize_per_tensor_affine")


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max) -> Tensor:
    """fake_quantize_per_tensor_affine with one scale and zero point per index along `axis`."""
    axis = int(axis) % max(input.ndim, 1)
    return _fake_quant(input, scale, zero_point, quant_min, quant_max, axis, "fake_quantize_per_channel_affine")


def methods() -> dict:
    """Tensor's quantization methods for non-quantized tensors (QTensor overrides them): dequantize, and the
    quantizer accessors raising NotImplementedError (a table for _methods.install)."""
    table = {"dequantize": _float_dequantize}
    for name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
                 "q_per_channel_axis", "qscheme"):
        m = _not_quantized(name)
        m.__doc__ = QTensor.__dict__[name].__doc__ + " Raises NotImplementedError on a non-quantized tensor."
        table[name] = m
    return table


def seal() -> None:
    """QTensor refuses the Tensor methods it has no kernel for (called once Tensor's methods are installed)."""
    _seal(QTensor)


# torch functions whose fast paths read a tensor's buffer directly: given a quantized tensor they would compute on
# its integer representation, so they take QTensor's method instead (a quantized kernel, or torch's refusal),
# through QTensor.__torch_function__ (no cost for plain tensors)
_METHOD_FORMS = ("adjoint", "clamp", "clamp_max", "clamp_min", "clip", "diagonal", "diff", "flatten", "moveaxis",
                 "movedim", "permute", "ravel", "reshape", "select", "squeeze", "swapaxes", "swapdims", "t",
                 "transpose", "unsqueeze", "view", "unique", "unique_consecutive", "bernoulli", "histc", "fill",
                 "narrow", "expand", "unflatten", "chunk", "split", "unbind", "flip", "roll", "contiguous",
                 "sigmoid", "mean", "relu")


_METHOD_SET = frozenset(_METHOD_FORMS)
_JOINS = frozenset(("cat", "concat", "concatenate", "stack"))


def _q_torch_function(cls, func, types, args=(), kwargs=None):
    """QTensor.__torch_function__: a torch function given a quantized tensor. Those of _METHOD_FORMS call QTensor's
    method of their name (its own kernel, or torch's refusal where it has none), cat/stack join the integer
    representations (q_cat), and every other function runs as on a plain tensor with dispatch off (where a
    quantized input meets torch's errors)."""
    kwargs = dict(kwargs or {})
    if _overrides._space(func) != "torch":  # nn.functional's, linalg's, ...: their code, whose torch calls come here
        return _overrides._skip_one_hop(func, args, kwargs)
    name = func.__name__
    if name in _JOINS:
        return _q_join(func, name == "stack", *args, **kwargs)
    if name in _METHOD_SET:
        x, rest = (args[0], args[1:]) if args else (kwargs.pop("input", None), ())
        if x.__class__ is QTensor:
            m = QTensor.__dict__.get(name)
            if m is None:
                raise _no_quantized_kernel(f"aten::{name}")
            return m.__get__(x)(*rest, **kwargs)
    return _overrides._disabled_torch_function_impl(cls, func, types, args, kwargs)


def _q_join(f, stack: bool, tensors, dim=0, *, out=None, **kwargs):
    if not all(t.__class__ is QTensor for t in tensors):
        raise NotImplementedError("Could not run 'aten::qscheme' with arguments from the 'CPU' backend: "
                                  f"torch.{f.__name__} of quantized and float tensors; quantize or "
                                  "dequantize them all first")
    if any(t._qp().per_channel for t in tensors):
        raise RuntimeError(f"Only per-tensor quantization is supported in '{f.__name__}'!")
    dim = int(kwargs.pop("axis", dim))
    if stack:
        tensors = [t.unsqueeze(dim % (t.ndim + 1)) for t in tensors]
    return q_cat(tensors, dim)


QTensor.__torch_function__ = classmethod(_q_torch_function)


# --- quantized kernels: torch's QuantizedCPU operators, as integer math on the representation ----------------
# Each takes per-tensor quantized inputs and returns a quantized tensor whose integers are those torch's CPU
# kernels write (their float32 arithmetic reproduced): requantizing ops dequantize, compute in float32 and
# quantize with fbgemm's fused multiply-add (quantize_np); pooling and batch norm follow ATen's formulas.
def _per_tensor(x, op: str) -> _QParams:
    if x.__class__ is not QTensor:
        raise NotImplementedError(f"Could not run 'quantized::{op}' with arguments from the 'CPU' backend: {op} "
                                  "takes a quantized tensor (torch.quantize_per_tensor, or a QuantStub before it)")
    qp = x._qp()
    if qp.per_channel or qp.dtype not in (quint8, qint8):
        raise RuntimeError(f"quantized::{op}: expected a per-tensor torch.quint8 or torch.qint8 input, got "
                           f"{qp.dtype} {qp.scheme}")
    return qp


def _vec_dequantize(v: np.ndarray, qp: _QParams) -> np.ndarray:
    """ATen's Vectorized dequantize: fma(q, scale, -zero_point * scale) rounded once to float32 (exact in
    float64 before the rounding)."""
    s = np.float32(qp.scale)
    return (v.astype(np.float64) * np.float64(s) + np.float64(np.float32(-np.float32(qp.zero_point) * s))) \
        .astype(np.float32)


def _requant(values: np.ndarray, dtype, scale, zero_point) -> QTensor:
    """float32 `values` quantized as ATen's Vectorized quantize: rint(x * float32(1 / scale)) + zero_point."""
    lo, hi = QRANGE[dtype]
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.rint(np.asarray(values, np.float32) * (np.float32(1) / np.float32(scale))) + int(zero_point)
    return make_qtensor(np.clip(np.nan_to_num(q), lo, hi).astype(dtype.dtype),
                        _QParams(dtype, per_tensor_affine, float(scale), int(zero_point)))


def _binary(x, y, scale, zero_point, op: str, fn, relu: bool = False) -> QTensor:
    qx, qy = _per_tensor(x, op), _per_tensor(y, op)
    if qx.dtype is not qy.dtype:
        raise RuntimeError(f"quantized::{op}: both inputs must have the same quantized dtype, got {qx.dtype} and "
                           f"{qy.dtype}")
    out = fn(_vec_dequantize(x._v, qx), _vec_dequantize(y._v, qy)).astype(np.float32)
    return _requant(np.maximum(out, np.float32(0)) if relu else out, qx.dtype, scale, zero_point)


def q_add(qa, qb, scale, zero_point) -> QTensor:
    """torch.ops.quantized.add: qa + qb requantized to (scale, zero_point)."""
    return _binary(qa, qb, scale, zero_point, "add", np.add)


def q_add_relu(qa, qb, scale, zero_point) -> QTensor:
    """torch.ops.quantized.add_relu: relu(qa + qb) requantized to (scale, zero_point)."""
    return _binary(qa, qb, scale, zero_point, "add_relu", np.add, True)


def _int_mul(qa, qb, scale, zero_point, op: str, relu: bool) -> QTensor:
    """ATen's qmul kernel: the integer product (a - za)(b - zb) requantized with one float32 multiplier
    float32(sa sb float32(1 / scale)), rint, + zero_point (clamped to it with relu)."""
    qx, qy = _per_tensor(qa, op), _per_tensor(qb, op)
    if qx.dtype is not qy.dtype:
        raise RuntimeError(f"quantized::{op}: both inputs must have the same quantized dtype, got {qx.dtype} and "
                           f"{qy.dtype}")
    c = (qa._v.astype(np.int64) - int(qx.zero_point)) * (qb._v.astype(np.int64) - int(qy.zero_point))
    mult = np.float32(float(qx.scale) * float(qy.scale) * float(np.float32(1.0 / float(scale))))
    lo, hi = QRANGE[qx.dtype]
    q = np.rint(c.astype(np.float32) * mult) + int(zero_point)
    ints = np.clip(q, int(zero_point) if relu else lo, hi).astype(qx.dtype.dtype)
    return make_qtensor(ints, _QParams(qx.dtype, per_tensor_affine, float(scale), int(zero_point)))


def q_mul(qa, qb, scale, zero_point) -> QTensor:
    """torch.ops.quantized.mul: qa * qb requantized to (scale, zero_point)."""
    return _int_mul(qa, qb, scale, zero_point, "mul", False)


def q_mul_relu(qa, qb, scale, zero_point) -> QTensor:
    """torch.ops.quantized.mul_relu: relu(qa * qb) requantized to (scale, zero_point)."""
    return _int_mul(qa, qb, scale, zero_point, "mul_relu", True)


def q_add_scalar(qa, b) -> QTensor:
    """torch.ops.quantized.add_scalar: the zero point shifted by round(b / scale) while it stays in range (the
    integers unchanged); past the range the scale widens and the integers are requantized, as torch's."""
    qp = _per_tensor(qa, "add_scalar")
    lo, hi = QRANGE[qp.dtype]
    s, z = float(qp.scale), int(qp.zero_point)
    cq = int(np.rint(float(b) / s))
    zn = z - cq
    if lo <= zn <= hi:
        return make_qtensor(np.array(qa._v), _QParams(qp.dtype, per_tensor_affine, s, zn))
    s_out, z_out = ((hi - zn) / (hi - lo) * s, lo) if zn < lo else ((zn - lo) / (hi - lo) * s, hi)
    mult = np.float32(np.float32(s) * (np.float32(1) / np.float32(s_out)))
    acc = (qa._v.astype(np.int64) - z + cq).astype(np.float32)
    ints = np.clip(np.rint(acc * mult) + z_out, lo, hi).astype(qp.dtype.dtype)
    return make_qtensor(ints, _QParams(qp.dtype, per_tensor_affine, s_out, z_out))


def q_mul_scalar(qa, b) -> QTensor:
    """torch.ops.quantized.mul_scalar: the same integers with the scale times |b| (b < 0 mirrors the integers and
    the zero point within the range; b == 0 gives zeros with scale 1)."""
    qp = _per_tensor(qa, "mul_scalar")
    lo, hi = QRANGE[qp.dtype]
    b = float(b)
    if b == 0:
        return make_qtensor(np.zeros_like(qa._v), _QParams(qp.dtype, per_tensor_affine, 1.0, 0))
    ints, z = np.array(qa._v), int(qp.zero_point)
    if b < 0:
        ints, z = (hi - (ints.astype(np.int64) - lo)).astype(ints.dtype), hi - (z - lo)
    return make_qtensor(ints, _QParams(qp.dtype, per_tensor_affine, float(qp.scale) * abs(b), z))


def q_cat(tensors, dim: int = 0, scale=None, zero_point=None) -> QTensor:
    """torch.ops.quantized.cat (and torch.cat of quantized tensors): the inputs requantized to (scale,
    zero_point), by default the first input's, then concatenated."""
    qps = [_per_tensor(t, "cat") for t in tensors]
    s = float(qps[0].scale) if scale is None else float(scale)
    z = int(qps[0].zero_point) if zero_point is None else int(zero_point)
    parts = [t._v if (float(qp.scale), int(qp.zero_point)) == (s, z) else
             quantize_np(dequantize_np(t._v, qp), s, z, qp.dtype) for t, qp in zip(tensors, qps)]
    return make_qtensor(np.concatenate(parts, int(dim)), _QParams(qps[0].dtype, per_tensor_affine, s, z))


def q_relu6(qx, inplace: bool = False) -> QTensor:
    """torch.ops.quantized.relu6: integers clamped to [zero_point, q(6)]."""
    qp = _per_tensor(qx, "relu6")
    six = quantize_np(np.float32([6.0]), float(qp.scale), int(qp.zero_point), qp.dtype)[0]
    ints = np.clip(qx._v, np.asarray(qp.zero_point, qx._v.dtype), six)
    if inplace:
        qx._v[...] = ints
        qx._bump()
        return qx
    return make_qtensor(ints, qp)


def _unary(qx, op: str, fn, scale=None, zero_point=None) -> QTensor:
    qp = _per_tensor(qx, op)
    s = qp.scale if scale is None else float(scale)
    z = qp.zero_point if zero_point is None else int(zero_point)
    return _requant(fn(_vec_dequantize(qx._v, qp)), qp.dtype, s, z)


def q_hardswish(qx, scale=None, zero_point=None) -> QTensor:
    """torch.ops.quantized.hardswish: x * clamp(x + 3, 0, 6) / 6 in float32, requantized."""
    f32 = np.float32
    return _unary(qx, "hardswish", lambda x: x * np.clip(x + f32(3), f32(0), f32(6)) / f32(6), scale, zero_point)


def q_leaky_relu(qx, negative_slope=0.01, inplace=False, scale=None, zero_point=None) -> QTensor:
    """torch.ops.quantized.leaky_relu: x or x * negative_slope in float32, requantized."""
    slope = np.float32(negative_slope)
    return _unary(qx, "leaky_relu", lambda x: np.where(x > 0, x, x * slope), scale, zero_point)


def q_sigmoid(qx, output_scale=None, output_zero_point=None) -> QTensor:
    """torch.ops.quantized.sigmoid; by default (torch.sigmoid of a quantized tensor) the output qparams are
    fixed, 1/256 and 0 for quint8 (1/256 and -128 for qint8), as torch's."""
    qp = _per_tensor(qx, "sigmoid")
    if output_scale is None:
        output_scale, output_zero_point = 1.0 / 256, (0 if qp.dtype is quint8 else -128)
    f32 = np.float32
    return _unary(qx, "sigmoid", lambda x: f32(1) / (f32(1) + np.exp(-x)), output_scale, output_zero_point)


def q_batch_norm(qx, weight, bias, mean, var, eps, output_scale, output_zero_point, relu=False) -> QTensor:
    """torch.ops.quantized.batch_norm{1,2,3}d: per channel (dim 1) y = (q - zp) * alpha + beta with torch's
    float32 alpha = w / sqrt(var + eps) * s_in / s_out, beta = (b - mean w / sqrt(var + eps)) / s_out."""
    qp = _per_tensor(qx, "batch_norm")
    f32 = np.float32
    host = (lambda t, d: np.full(qx.shape[1], f32(d)) if t is None else np.asarray(t.detach()._host(), f32))
    w, b, m, v = host(weight, 1), host(bias, 0), host(mean, 0), host(var, 1)
    inv = f32(1) / np.sqrt(v + f32(eps))
    alpha = inv * w * (f32(qp.scale) / f32(output_scale))
    beta = (b - m * inv * w) / f32(output_scale)
    shape = (1, -1) + (1,) * (qx.ndim - 2)
    y = (qx._v.astype(f32) - f32(qp.zero_point)) * alpha.reshape(shape) + beta.reshape(shape)
    lo, hi = QRANGE[qp.dtype]
    ints = np.clip(np.rint(y) + int(output_zero_point), int(output_zero_point) if relu else lo, hi)
    return make_qtensor(ints.astype(qp.dtype.dtype), _QParams(qp.dtype, per_tensor_affine, float(output_scale),
                                                              int(output_zero_point)))


# --- pooling on quantized tensors ---------------------------------------------------------------------------
def _out_len(size, k, s, p, d, ceil_mode) -> int:
    """ATen's pooling_output_shape."""
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= size + p else o


def _windows(v: np.ndarray, ks, ss, ps, ds, ceil_mode, fill, rim=None) -> np.ndarray:
    """The pooling windows of the last len(ks) dims of v: shape (..., *out, *ks); positions in the padding read
    `fill`, and those past it (ceil mode's last window) read `rim` (default `fill`)."""
    n = len(ks)
    outs = [_out_len(L, k, s, p, d, ceil_mode) for L, k, s, p, d in zip(v.shape[-n:], ks, ss, ps, ds)]
    if min(outs) <= 0:
        raise RuntimeError(f"Given input size: {tuple(v.shape)}. Calculated output size: {tuple(outs)}. Output "
                           "size is too small")
    extra = [max(0, (o - 1) * s + d * (k - 1) + 1 - L - 2 * p) for L, o, k, s, p, d in
             zip(v.shape[-n:], outs, ks, ss, ps, ds)]
    lead = [(0, 0)] * (v.ndim - n)
    a = np.pad(v, lead + [(p, p) for p in ps], constant_values=fill)
    a = np.pad(a, lead + [(0, e) for e in extra], constant_values=fill if rim is None else rim)
    w = np.lib.stride_tricks.sliding_window_view(a, [d * (k - 1) + 1 for k, d in zip(ks, ds)],
                                                 axis=tuple(range(v.ndim - n, v.ndim)))
    sl = tuple(slice(0, o * s, s) for o, s in zip(outs, ss)) + tuple(slice(None, None, d) for d in ds)
    return w[(Ellipsis,) + sl]


def _geom(n, kernel_size, stride, padding, dilation=1):
    tup = (lambda v: tuple(int(e) for e in v) * (n if len(v) == 1 else 1) if isinstance(v, (tuple, list))
           else (int(v),) * n)
    ks = tup(kernel_size)
    return ks, (tup(stride) if stride not in (None, [], ()) else ks), tup(padding), tup(dilation)


def q_max_pool(qx, n: int, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False) -> QTensor:
    """quantized max_pool{1,2,3}d: the largest integer of each window (padding ignored), the input's qparams."""
    qp = _per_tensor(qx, f"max_pool{n}d")
    ks, ss, ps, ds = _geom(n, kernel_size, stride, padding, dilation)
    w = _windows(qx._v, ks, ss, ps, ds, ceil_mode, QRANGE[qp.dtype][0])
    return make_qtensor(np.ascontiguousarray(w.max(axis=tuple(range(-n, 0)))), qp)


def q_avg_pool(qx, n: int, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> QTensor:
    """quantized avg_pool{2,3}d (ATen's avg_pool2d_out_frame): round(float32(sum - size zp) * float32(1 /
    divisor) + zp) over each window's in-bounds integers; the input's qparams."""
    qp = _per_tensor(qx, f"avg_pool{n}d")
    ks, ss, ps, _ = _geom(n, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    ones = np.ones(qx.shape[-n:], np.int64)
    axes = tuple(range(-n, 0))
    total = _windows(qx._v.astype(np.int64), ks, ss, ps, (1,) * n, ceil_mode, 0).sum(axes)
    size = _windows(ones, ks, ss, ps, (1,) * n, ceil_mode, 0).sum(axes)
    if divisor_override is not None:
        div = np.asarray(divisor_override, np.float64)
    else:
        div = _windows(ones, ks, ss, ps, (1,) * n, ceil_mode, 1, 0).sum(axes) if count_include_pad else size
    z = int(qp.zero_point)
    mult = (1.0 / np.asarray(div, np.float64)).astype(np.float32)
    lo, hi = QRANGE[qp.dtype]
    y = np.rint((total - size * z).astype(np.float32) * mult + np.float32(z))
    return make_qtensor(np.clip(y, lo, hi).astype(qp.dtype.dtype), qp)


def q_adaptive_avg_pool(qx, n: int, output_size) -> QTensor:
    """quantized adaptive_avg_pool{2,3}d (ATen's adaptive_avg_pool_single_out_frame): round(sum * r) over each
    bin's integers with r = float32(1 / k_1) / k_2 / ... in float32; the input's qparams."""
    qp = _per_tensor(qx, f"adaptive_avg_pool{n}d")
    sizes = qx.shape[-n:]
    outs = tuple(L if o is None else int(o) for L, o in zip(sizes, output_size)) \
        if isinstance(output_size, (tuple, list)) else (int(output_size),) * n
    # summed-area table: the sum of a bin is an alternating sum of its corners
    sat = qx._v.astype(np.int64)
    for ax in range(-n, 0):
        sat = np.cumsum(sat, ax)
        sat = np.concatenate([np.zeros_like(np.take(sat, [0], ax)), sat], ax)
    f32 = np.float32
    bounds, r = [], None
    for i, (L, o) in enumerate(zip(sizes, outs)):
        j = np.arange(o)
        start = np.floor((j * L).astype(f32) / f32(o)).astype(np.int64)
        end = np.ceil(((j + 1) * L).astype(f32) / f32(o)).astype(np.int64)
        bounds.append((start, end))
        k = (end - start).reshape((-1,) + (1,) * (n - 1 - i)).astype(f32)
        r = (np.float64(1.0) / k).astype(f32) if r is None else (r / k).astype(f32)
    total = 0
    for corner in np.ndindex(*(2,) * n):
        idx = np.ix_(*[b[c] for b, c in zip(bounds, corner)])
        sign = (-1) ** (n - sum(corner))
        total = total + sign * sat[(Ellipsis,) + idx]
    lo, hi = QRANGE[qp.dtype]
    y = np.rint(np.asarray(total, np.int64).astype(f32) * r)
    return make_qtensor(np.clip(y, lo, hi).astype(qp.dtype.dtype), qp)
