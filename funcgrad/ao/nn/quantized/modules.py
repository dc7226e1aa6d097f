"""torch.ao.nn.quantized's modules: Quantize / DeQuantize, Linear over quantized tensors (quint8 activations,
qint8 weights per tensor or per channel, float bias) and the fused LinearReLU of torch.ao.nn.intrinsic.quantized,
batch norm, activations, FloatFunctional / QFunctional and the weight-only Embedding / EmbeddingBag (the
convolutions are in conv.py).

Linear holds its weight as torch's does, in packed params (torch.ops.quantized.linear_prepack,
funcgrad/_torch/_quantized_packed.py) and computes with the packed kernels (fbgemm's arithmetic, bit-identical
integers). State dicts use torch's keys.
"""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg
from ....nn.modules import activation as _act, batchnorm as _bn, sparse as _nnm_sparse
from ....nn.modules.container import Sequential as _Sequential
from ....nn.modules.linear import Identity as _Identity
from ....nn.modules.module import Module
from ...._torch import _quantized as _Q, _quantized_embedding as _QE, _quantized_packed as _QP
from ....nn import functional as F
from ...quantization.observer import default_float_qparams_observer
from ...._torch._quantized import (QTensor, _QParams, make_qtensor, qint8, quantize_per_channel,
                                     quantize_per_tensor, quint4x2, quint8)

__all__ = ["Quantize", "DeQuantize", "Linear", "LinearReLU", "LinearPackedParams",
           "BatchNorm2d", "BatchNorm3d", "ReLU6", "Hardswish", "LeakyReLU", "Sigmoid", "FloatFunctional",
           "FXFloatFunctional", "QFunctional", "EmbeddingPackedParams", "Embedding", "EmbeddingBag"]



class Quantize(Module):
    """Float tensor -> quint8 (or `dtype`) quantized tensor with a fixed scale and zero point."""

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", _fg.tensor([float(scale)]))
        self.register_buffer("zero_point", _fg.tensor([int(zero_point)], dtype=_fg.int64))
        self.dtype = dtype

    def forward(self, X):
        return quantize_per_tensor(X, float(self.scale.item()), int(self.zero_point.item()), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zero_point.long().item(), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"

    def _get_name(self):
        return "Quantize"


class DeQuantize(Module):
    """Quantized tensor -> float tensor."""

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()

    def _get_name(self):
        return "DeQuantize"


def _check_linear_dtype(dtype) -> None:
    if dtype is not qint8 and dtype != _fg.float16:
        raise RuntimeError(f"Unsupported dtype on dynamic quantized linear! (torch.qint8 or torch.float16, got "
                           f"{dtype})")


class LinearPackedParams(Module):
    """Holds a quantized Linear's packed (weight, bias) in `_packed_params` (torch.ops.quantized.linear_prepack,
    or linear_prepack_fp16 for dtype torch.float16); state_dict keys `dtype` and `_packed_params` (the
    (weight, bias) tuple), as torch's."""
    _version = 3

    def __init__(self, dtype=qint8):
        super().__init__()
        _check_linear_dtype(dtype)
        self.dtype = dtype
        w = (make_qtensor(np.zeros((1, 1), np.int8), _QParams(qint8, _fg.per_tensor_affine, 1.0, 0))
             if dtype is qint8 else _fg.zeros(1, 1))
        self.set_weight_bias(w, None)

    def set_weight_bias(self, weight, bias) -> None:
        _check_linear_dtype(self.dtype)
        self._packed_params = (_QP.linear_prepack(weight, bias) if self.dtype is qint8 else
                               _QP.linear_prepack_fp16(weight, bias))

    def _weight_bias(self):
        return (_QP.linear_unpack(self._packed_params) if self.dtype is qint8 else
                _QP.linear_unpack_fp16(self._packed_params))

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        if prefix + "dtype" in state_dict:
            self.dtype = state_dict.pop(prefix + "dtype")
        if prefix + "_packed_params" in state_dict:
            w, b = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(w, b)
        elif strict:
            missing_keys.append(prefix + "_packed_params")

    def __repr__(self):
        return repr(self._weight_bias())

    def _get_name(self):
        return "LinearPackedParams"


def _hide_packed_params_repr(self) -> str:
    """The module's repr without its LinearPackedParams child (as torch prints quantized Linears)."""
    lines = [self.extra_repr()] if self.extra_repr() else []
    for name, child in self._modules.items():
        if not isinstance(child, LinearPackedParams):
            lines.append(f"({name}): " + repr(child).replace("\n", "\n  "))
    if len(lines) == 1 and "\n" not in lines[0]:
        return f"{self._get_name()}({lines[0]})"
    return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)" if lines else self._get_name() + "()"


def _quantize_weight(weight, observer):
    """The quantized weight a from_float makes with the weight observer's qparams."""
    scale, zp = observer.calculate_qparams()
    w = weight.detach().float()
    if observer.qscheme is _fg.per_channel_affine_float_qparams:
        return quantize_per_channel(w, scale.float(), zp.float(), observer.ch_axis, observer.dtype)
    if observer.qscheme in (_fg.per_channel_affine, _fg.per_channel_symmetric):
        return quantize_per_channel(w, scale.double(), zp.long(), getattr(observer, "ch_axis", 0), observer.dtype)
    return quantize_per_tensor(w, float(scale.item()), int(zp.item()), observer.dtype)


def _observed(mod, kind, inner):
    """(weight observer / fake-quant, activation observer) of a prepared float or QAT module."""
    act = getattr(mod, "activation_post_process", None)
    if act is None:
        raise AssertionError(f"{kind}.from_float: the module has no activation_post_process observer; run "
                             "torch.ao.quantization.prepare and calibrate before convert")
    wpp = getattr(mod, "weight_fake_quant", None)
    if wpp is None:
        wpp = mod.qconfig.weight()
        wpp(inner.weight)
    return wpp, act


def _converted(q, inner, wpp, act):
    """Quantized module `q` given the float module `inner`'s weight (quantized with the weight observer `wpp`),
    bias, and the activation observer's output qparams."""
    q.set_weight_bias(_quantize_weight(inner.weight, wpp), None if inner.bias is None else inner.bias.detach().clone())
    scale, zp = act.calculate_qparams()
    q.scale, q.zero_point = float(scale.item()), int(zp.item())
    return q


class _OutputQParams(Module):
    """A quantized module whose output scale and zero point are Python attributes, saved in its state_dict as
    the tensors `scale` and `zero_point` (torch's keys)."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = _fg.tensor(self.scale)
        destination[prefix + "zero_point"] = _fg.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


class Linear(_OutputQParams):
    """A quantized Linear: quint8 input -> quint8 output (scale, zero_point), qint8 weight, float bias."""
    _relu = False
    _version = 3

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bias = _fg.zeros(out_features) if bias_ else None
        _check_linear_dtype(dtype)
        qweight = (make_qtensor(np.zeros((out_features, in_features), np.int8),
                                _QParams(qint8, _fg.per_tensor_affine, 1.0, 0)) if dtype is qint8 else
                   _fg.zeros(out_features, in_features))
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedLinear" + ("ReLU" if self._relu else "")

    def extra_repr(self):
        w = self.weight()
        qs = w.qscheme()
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={qs}")

    def weight(self):
        return self._weight_bias()[0]

    __repr__ = _hide_packed_params_repr

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def forward(self, x):
        return _QP.q_linear(x, self._packed_params._packed_params, self.scale, self.zero_point, self._relu)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        lin = mod[0] if isinstance(mod, _Sequential) else mod
        wpp, act = _observed(mod, cls.__name__, lin)
        return _converted(cls(lin.in_features, lin.out_features, dtype=wpp.dtype), lin, wpp, act)


class LinearReLU(Linear):
    """torch.ao.nn.intrinsic.quantized.LinearReLU: Linear then ReLU, fused in the requantization."""
    _relu = True


def _output_qparams(mod):
    """(scale, zero_point) of a prepared module's activation observer, as Python numbers."""
    if getattr(mod, "activation_post_process", None) is None:
        raise AssertionError(f"{type(mod).__name__}: no activation_post_process observer; run "
                             "torch.ao.quantization.prepare and calibrate before convert")
    scale, zp = mod.activation_post_process.calculate_qparams()
    return float(scale.item()), int(zp.item())


# --- batch norm and activations (torch.ao.nn.quantized.modules.batchnorm / .activation) ----------------------
class _QBatchNorm:
    """Quantized batch norm: quantized input -> quantized output (buffers scale, zero_point), the float affine
    parameters and running statistics folded per channel (torch.ops.quantized.batch_norm)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True)
        self.register_buffer("scale", _fg.tensor(1.0))
        self.register_buffer("zero_point", _fg.tensor(0))

    def forward(self, input):
        self._check_input_dim(input)
        return _Q.q_batch_norm(input, self.weight, self.bias, self.running_mean, self.running_var, self.eps,
                               float(self.scale), int(self.zero_point))

    def _get_name(self):
        return "Quantized" + type(self).__name__

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _output_qparams(mod)
        new = cls(mod.num_features, mod.eps)
        new.weight, new.bias = mod.weight, mod.bias
        new.running_mean, new.running_var = mod.running_mean, mod.running_var
        new.scale, new.zero_point = _fg.tensor(scale), _fg.tensor(zp)
        return new


class BatchNorm2d(_QBatchNorm, _bn.BatchNorm2d):
    """torch.ao.nn.quantized.BatchNorm2d: (N, C, H, W) quantized input."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")


class BatchNorm3d(_QBatchNorm, _bn.BatchNorm3d):
    """torch.ao.nn.quantized.BatchNorm3d: (N, C, D, H, W) quantized input."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError("Input shape must be `(N, C, H, W)`!")


class ReLU6(_act.ReLU):
    """Quantized ReLU6: integers clamped to [zero_point, q(6)], the input's qparams."""

    def forward(self, input):
        return _Q.q_relu6(input, self.inplace)

    def _get_name(self):
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU6(mod.inplace)


class Hardswish(_act.Hardswish):
    """Quantized Hardswish, requantized to the output's (scale, zero_point) buffers."""

    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self.register_buffer("scale", _fg.tensor(scale))
        self.register_buffer("zero_point", _fg.tensor(zero_point))

    def forward(self, input):
        return _Q.q_hardswish(input, float(self.scale), int(self.zero_point))

    def _get_name(self):
        return "QuantizedHardswish"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return Hardswish(*_output_qparams(mod))


class LeakyReLU(_act.LeakyReLU):
    """Quantized LeakyReLU, requantized to the output's (scale, zero_point) buffers."""

    def __init__(self, scale, zero_point, negative_slope=1e-2, inplace=False, device=None, dtype=None):
        super().__init__(negative_slope, inplace)
        self.register_buffer("scale", _fg.tensor(scale))
        self.register_buffer("zero_point", _fg.tensor(zero_point))

    def forward(self, input):
        return _Q.q_leaky_relu(input, self.negative_slope, self.inplace, float(self.scale), int(self.zero_point))

    def _get_name(self):
        return "QuantizedLeakyReLU"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(*_output_qparams(mod), mod.negative_slope, mod.inplace)


class Sigmoid(_act.Sigmoid):
    """Quantized Sigmoid with the given output scale and zero point."""

    def __init__(self, output_scale: float, output_zero_point: int):
        super().__init__()
        self.output_scale, self.output_zero_point = output_scale, output_zero_point

    def forward(self, input):
        return _Q.q_sigmoid(input, self.output_scale, self.output_zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(*_output_qparams(mod))


# --- FloatFunctional / QFunctional (torch.ao.nn.quantized.modules.functional_modules) ------------------------
class FloatFunctional(Module):
    """Float add / mul / cat / add_relu / matmul whose results pass through `activation_post_process` (an
    Identity until prepare puts an observer there), so convert can swap in QFunctional with those qparams;
    add_scalar / mul_scalar are not observed (their quantized ops derive their own qparams)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = _Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def _observe(self, r):
        return self.activation_post_process(r)

    def add(self, x, y):
        return self._observe(_fg.add(x, y))

    def add_scalar(self, x, y):
        return _fg.add(x, y)

    def mul(self, x, y):
        return self._observe(_fg.mul(x, y))

    def mul_scalar(self, x, y):
        return _fg.mul(x, y)

    def cat(self, x, dim=0):
        return self._observe(_fg.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self._observe(F.relu(_fg.add(x, y)))

    def matmul(self, x, y):
        return self._observe(_fg.matmul(x, y))


class FXFloatFunctional(FloatFunctional):
    """FloatFunctional without its own observer (FX graph mode puts observers in the graph)."""

    def _observe(self, r):
        return r


class QFunctional(_OutputQParams):
    """The quantized ops FloatFunctional's are converted to (torch.ops.quantized.add, ...), requantizing to
    (scale, zero_point)."""

    def __init__(self):
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = _Identity()

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(_Q.q_add(x, y, self.scale, self.zero_point))

    def add_scalar(self, x, y):
        return _Q.q_add_scalar(x, y)

    def mul(self, x, y):
        return self.activation_post_process(_Q.q_mul(x, y, self.scale, self.zero_point))

    def mul_scalar(self, x, y):
        return _Q.q_mul_scalar(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(_Q.q_cat(x, dim, self.scale, self.zero_point))

    def add_relu(self, x, y):
        return self.activation_post_process(_Q.q_add_relu(x, y, self.scale, self.zero_point))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not FloatFunctional:
            raise AssertionError(f"QFunctional.from_float expects an instance of FloatFunctional, got "
                                 f"{type(mod).__name__}")
        new = cls()
        new.scale, new.zero_point = _output_qparams(mod)
        return new


# --- weight-only quantized embeddings (torch.ao.nn.quantized.modules.embedding_ops) -------------------------
def _empty_embedding_weight(num_embeddings, embedding_dim, dtype) -> QTensor:
    """The placeholder weight torch's constructor makes: per-row float qparams (scale 1, zero point 0)."""
    if dtype not in (quint8, quint4x2):
        raise NotImplementedError(f"Unsupported dtype on quantized embedding! Supports quint8 and quint4x2. Got "
                                  f"dtype: {dtype}")
    return make_qtensor(np.zeros((num_embeddings, embedding_dim), np.uint8),
                        _QParams(dtype, _fg.per_channel_affine_float_qparams, np.ones(num_embeddings, np.float32),
                                 np.zeros(num_embeddings, np.float32), 0))


class EmbeddingPackedParams(Module):
    """Holds a quantized embedding's packed weight (quantized::embedding_bag_prepack); state_dict keys `dtype`
    and `_packed_weight` (the quantized weight), as torch's."""
    _version = 1

    def __init__(self, num_embeddings, embedding_dim, dtype=quint8):
        super().__init__()
        self.dtype = dtype
        self.set_weight(_empty_embedding_weight(num_embeddings, embedding_dim, dtype))

    def set_weight(self, weight) -> None:
        self._packed_weight = _QE.embedding_bag_prepack(weight)

    def _weight(self):
        return _QE.embedding_bag_unpack(self._packed_weight)

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_weight"] = self._weight()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight(state_dict.pop(prefix + "_packed_weight"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return repr(self._weight())


def _float_qparams_observer(mod, cls, float_cls):
    """The weight observer from_float quantizes an embedding's weight with (torch's checks)."""
    if hasattr(mod, "weight_fake_quant"):
        return mod.weight_fake_quant
    if type(mod) is not float_cls:
        raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {float_cls.__name__}")
    if not hasattr(mod, "qconfig"):
        raise AssertionError(f"{cls.__name__} input float module must have qconfig defined")
    if mod.qconfig is not None and mod.qconfig.weight is not None:
        obs = mod.qconfig.weight()
    else:   # (float_qparams_weight_only_qconfig's weight observer)
        obs = default_float_qparams_observer()
    if obs.qscheme is not _fg.per_channel_affine_float_qparams:
        raise AssertionError(f"{cls.__name__} quantization is only supported with float_qparams_weight_only_qconfig.")
    if obs.dtype not in (quint8, _fg.quint4x2):
        raise AssertionError(f"The only supported dtype for nnq.{cls.__name__} is torch.quint8 and torch.quint4x2, "
                             f"got {obs.dtype}")
    obs(mod.weight)
    return obs


class Embedding(Module):
    """A quantized Embedding: quint8 weight with per-row float scale and zero point (weight-only: float rows
    out, torch.ops.quantized.embedding_byte)."""
    _version = 1

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, dtype=quint8):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.dtype = num_embeddings, embedding_dim, dtype
        if _weight is not None and list(_weight.shape) != [num_embeddings, embedding_dim]:
            raise AssertionError(f"Shape of weight does not match num_embeddings and embedding_dim: expected "
                                 f"{[num_embeddings, embedding_dim]}, got {list(_weight.shape)}")
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, dtype)
        if _weight is not None:
            self._packed_params.set_weight(_weight)

    def forward(self, indices):
        return _QE.q_embedding(self._bits(), self._packed_params._packed_weight, indices)

    def _bits(self) -> int:
        return 4 if self._packed_params.dtype is quint4x2 else 8

    def _get_name(self):
        return "QuantizedEmbedding"

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"

    def extra_repr(self):
        return (f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, "
                f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}")

    def set_weight(self, w) -> None:
        self._packed_params.set_weight(w)

    def weight(self):
        return self._packed_params._weight()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        obs = _float_qparams_observer(mod, cls, _nnm_sparse.Embedding)
        q = Embedding(mod.num_embeddings, mod.embedding_dim)
        q.set_weight(_quantize_weight(mod.weight, obs))
        return q


class EmbeddingBag(Embedding):
    """A quantized EmbeddingBag (torch.ops.quantized.embedding_bag_byte). As torch's, the bags are summed
    whatever `mode` says (the kernel is called with mode 0)."""
    _version = 1

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="sum", sparse=False, _weight=None, include_last_offset=False,
                 dtype=quint8):
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        self.mode, self.pruned_weights, self.include_last_offset = mode, False, include_last_offset

    def forward(self, indices, offsets=None, per_sample_weights=None, compressed_indices_mapping=None):
        return _QE.q_embedding_bag(self._bits(), self._packed_params._packed_weight, indices, offsets, False, 0,
                                   self.pruned_weights, per_sample_weights, compressed_indices_mapping,
                                   self.include_last_offset)

    def _get_name(self):
        return "QuantizedEmbeddingBag"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        obs = _float_qparams_observer(mod, cls, _nnm_sparse.EmbeddingBag)
        q = EmbeddingBag(mod.num_embeddings, mod.embedding_dim, max_norm=mod.max_norm, norm_type=mod.norm_type,
                         scale_grad_by_freq=mod.scale_grad_by_freq, mode=mod.mode, sparse=mod.sparse,
                         include_last_offset=mod.include_last_offset, dtype=obs.dtype)
        q.set_weight(_quantize_weight(mod.weight, obs))
        return q

