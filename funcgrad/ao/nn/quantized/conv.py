"""torch.ao.nn.quantized's convolutions (torch/ao/nn/quantized/modules/conv.py): Conv1d / Conv2d / Conv3d and
ConvTranspose1d / 2d / 3d over quint8 tensors, with the fused ConvReLU1d / 2d / 3d of
torch.ao.nn.intrinsic.quantized.

Each holds its qint8 weight (per tensor or per output channel; per tensor only for the transposed ones, as
fbgemm) and float bias in packed params (quantized::conv{n}d_prepack / conv_transpose{n}d_prepack,
funcgrad/_torch/_quantized_packed.py) and computes with the packed kernels (fbgemm's arithmetic, bit-identical
integers). State dicts, repr, from_float / from_reference and pickling follow torch's.
"""
from __future__ import annotations

import numpy as np

import funcgrad._torch as _fg
from ....nn.modules import conv as _nn_conv
from ....nn.modules.container import Sequential as _Sequential
from ...._torch import _quantized_packed as _QP
from ...._torch._quantized import QTensor, _QParams, make_qtensor, qint8
from .modules import _OutputQParams, _quantize_weight

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "ConvReLU1d",
           "ConvReLU2d", "ConvReLU3d"]

_SUPPORTED_PADDING = ("zeros", "reflect")


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(_OutputQParams):
    """Shared state of the quantized convolutions: geometry, packed weight, output (scale, zero_point)."""
    _n = 2
    _transposed = False
    _relu = False
    _name = "Conv"

    def _init(self, in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups, bias,
              padding_mode) -> None:
        super().__init__()
        n = self._n
        if out_channels <= 0:
            raise ValueError(f"out_channels must be greater than 0, got {out_channels}")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _SUPPORTED_PADDING:
            raise ValueError(f"'padding_mode' {padding_mode} is not supported by quantized convolution")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding, self.dilation = _ntuple(padding, n), _ntuple(dilation, n)
        self.transposed, self.output_padding = self._transposed, _ntuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        shape = [in_channels, out_channels // groups] if self._transposed else [out_channels, in_channels // groups]
        qweight = make_qtensor(np.zeros(shape + list(self.kernel_size), np.int8),
                               _QParams(qint8, _fg.per_tensor_affine, 1.0, 0))
        self.set_weight_bias(qweight, _fg.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        kind = "ConvTranspose" if self._transposed else ("ConvReLU" if self._relu else "Conv")
        return f"Quantized{kind}{self._n}d"

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
             f"scale={self.scale}, zero_point={self.zero_point}")
        n = self._n
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s

    def set_weight_bias(self, w, b) -> None:
        n = self._n
        if self._transposed:
            self._packed_params = _QP.conv_transpose_prepack(n, w, b, self.stride, self.padding, self.output_padding,
                                                             self.dilation, self.groups)
        else:
            padding = self.padding if self.padding_mode == "zeros" else (0,) * n
            self._packed_params = _QP.conv_prepack(n, w, b, self.stride, padding, self.dilation, self.groups)

    def _weight_bias(self):
        return self._packed_params.unpack()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def forward(self, input):
        n = self._n
        if len(input.shape) != n + 2:
            raise ValueError("Input shape must be `(N, C, " + ("L" if n == 1 else "H, W" if n == 2 else
                                                               ("T, H, W" if self._transposed else "D, H, W")) + ")`!")
        if self._transposed:
            return _QP.q_conv_transpose(n, input, self._packed_params, self.scale, self.zero_point)
        if self.padding_mode != "zeros":
            input = _reflect_pad(input, self.padding)
        return _QP.q_conv(n, input, self._packed_params, self.scale, self.zero_point, self._relu)

    # --- serialization: the unpacked (weight, bias) under torch's keys ------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"], destination[prefix + "bias"] = self._weight_bias()
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def _check_float(cls, mod, float_types):
        if type(mod) not in float_types:
            raise AssertionError(f"nnq.{cls.__name__}.from_float only works for {float_types[0].__name__} but got: "
                                 f"{type(mod).__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined.")

    @classmethod
    def _qconv(cls, conv, wpp, act):
        """torch's get_qconv: the weight quantized with the weight observer's qparams, the output's from the
        activation observer (none, or a float one: dynamic, scale 1 and zero point 0 kept)."""
        wpp(conv.weight)
        if wpp.dtype is not qint8:
            raise AssertionError(f"Weight observer must have a dtype of qint8, got {wpp.dtype}")
        qweight = _quantize_weight(conv.weight.float(), wpp)
        q = cls(*cls._ctor_args(conv))
        q.set_weight_bias(qweight, None if conv.bias is None else conv.bias.detach().clone())
        if act is not None and act.dtype != _fg.float32:
            scale, zp = act.calculate_qparams()
            q.scale, q.zero_point = float(scale.item()), int(zp.item())
        return q

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized convolution of a prepared (observed and calibrated) float, fused or QAT module."""
        if hasattr(mod, "weight_fake_quant"):
            if not hasattr(mod, "activation_post_process"):
                raise AssertionError("Input QAT module must have observer attached")
            return cls._qconv(mod, mod.weight_fake_quant, mod.activation_post_process)
        cls._check_float(mod, cls._float_types())
        act = getattr(mod, "activation_post_process", None)
        conv = mod[0] if isinstance(mod, _Sequential) else mod
        wpp = conv.qconfig.weight() if getattr(conv, "qconfig", None) is not None else mod.qconfig.weight()
        return cls._qconv(conv, wpp, act)

    @classmethod
    def from_reference(cls, ref_qconv, output_scale, output_zero_point):
        """The quantized convolution of a reference quantized one (its get_quantized_weight() and bias)."""
        q = cls(*cls._ctor_args(ref_qconv))
        q.set_weight_bias(ref_qconv.get_quantized_weight(), ref_qconv.bias)
        q.scale, q.zero_point = float(output_scale), int(output_zero_point)
        return q

    @classmethod
    def _float_types(cls) -> tuple:
        return (getattr(_nn_conv, f"Conv{cls._n}d"),)

    @staticmethod
    def _ctor_args(conv) -> tuple:
        return (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                conv.groups, conv.bias is not None, conv.padding_mode)


def _reflect_pad(qx, padding) -> QTensor:
    """A quantized (N, C, *S) tensor reflect-padded by `padding` on each side of each spatial dimension (the
    integers moved, the qparams kept), as F.pad(mode='reflect') on a quantized tensor."""
    if not isinstance(qx, QTensor):
        raise NotImplementedError("quantized convolution takes a quantized tensor (torch.quantize_per_tensor, or a "
                                  "QuantStub before it)")
    v = np.pad(qx._v, [(0, 0), (0, 0)] + [(p, p) for p in padding], mode="reflect")
    return make_qtensor(v, qx._qp())


class Conv1d(_ConvNd):
    """Quantized 1-D convolution: quint8 (N, C, L) -> quint8 (N, O, L')."""
    _n = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        self._init(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias, padding_mode)


class Conv2d(_ConvNd):
    """Quantized 2-D convolution: quint8 (N, C, H, W) -> quint8 (N, O, H', W')."""
    _n = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        self._init(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias, padding_mode)


class Conv3d(_ConvNd):
    """Quantized 3-D convolution: quint8 (N, C, D, H, W) -> quint8 (N, O, D', H', W')."""
    _n = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        if padding_mode == "reflect":
            raise AssertionError("Conv3d does not support reflection padding")
        self._init(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias, padding_mode)


class _ConvReLU:
    """torch.ao.nn.intrinsic.quantized.ConvReLU{n}d: the convolution then ReLU, fused in the requantization
    (integers clamped at the output zero point)."""
    _relu = True

    @classmethod
    def _float_types(cls) -> tuple:
        from ..intrinsic import ConvReLU1d, ConvReLU2d, ConvReLU3d
        return ({1: ConvReLU1d, 2: ConvReLU2d, 3: ConvReLU3d}[cls._n],)


class ConvReLU1d(_ConvReLU, Conv1d):
    __doc__ = _ConvReLU.__doc__


class ConvReLU2d(_ConvReLU, Conv2d):
    __doc__ = _ConvReLU.__doc__


class ConvReLU3d(_ConvReLU, Conv3d):
    __doc__ = _ConvReLU.__doc__


class _ConvTransposeNd(_ConvNd):
    """Quantized transposed convolution: quint8 (N, C, *S) -> quint8 (N, O, *S'); a per-tensor qint8 weight of
    shape (in, out / groups, *kernel); zero padding only."""
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self._init(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups, bias,
                   padding_mode)

    def _input_padding(self, kernel_size, dilation, padding) -> list:
        return [d * (k - 1) - p for k, d, p in zip(kernel_size, dilation, padding)]

    @classmethod
    def _float_types(cls) -> tuple:
        return (getattr(_nn_conv, f"ConvTranspose{cls._n}d"),)

    @staticmethod
    def _ctor_args(conv) -> tuple:
        return (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                conv.output_padding, conv.groups, conv.bias is not None, conv.dilation, conv.padding_mode)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized transposed convolution of a prepared float module (weights observed per tensor)."""
        if type(mod) not in cls._float_types():
            raise AssertionError(f" nnq.{cls.__name__}.from_float only works for {cls._float_types()[0].__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined.")
        return cls._qconv(mod, mod.qconfig.weight(), getattr(mod, "activation_post_process", None))


class ConvTranspose1d(_ConvTransposeNd):
    """Quantized 1-D transposed convolution: quint8 (N, C, L) -> quint8 (N, O, L')."""
    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Quantized 2-D transposed convolution: quint8 (N, C, H, W) -> quint8 (N, O, H', W')."""
    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Quantized 3-D transposed convolution: quint8 (N, C, T, H, W) -> quint8 (N, O, T', H', W')."""
    _n = 3
