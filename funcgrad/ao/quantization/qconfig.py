"""torch.ao.quantization.qconfig: QConfig (which observers / fake-quantizers watch a module's activations and
weights) and the default configurations of torch's backends ('x86', 'fbgemm', 'qnnpack', 'onednn')."""
from __future__ import annotations

from collections import namedtuple

import funcgrad._torch as _fg
from ...nn.modules.linear import Identity as _Identity
from ...nn.modules.module import Module as _Module
from ..._torch._quantized import qint8, quint8
from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_act_fake_quant, default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant, default_per_channel_weight_fake_quant,
                            default_weight_fake_quant)
from .observer import (HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver, PlaceholderObserver,
                       default_dynamic_quant_observer, default_float_qparams_observer,
                       default_float_qparams_observer_4bit, default_observer,
                       default_per_channel_weight_observer, default_placeholder_observer, default_weight_observer)

__all__ = ["QConfig", "QConfigDynamic", "default_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "float16_static_qconfig", "per_channel_dynamic_qconfig", "float_qparams_weight_only_qconfig",
           "float_qparams_weight_only_qconfig_4bit",
           "default_qat_qconfig", "default_weight_only_qconfig", "default_activation_only_qconfig",
           "default_per_channel_qconfig", "get_default_qconfig", "get_default_qat_qconfig",
           "get_default_qconfig_dict", "get_default_qat_qconfig_dict"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to observe a module: `activation` and `weight` are observer (or fake-quantize) classes or with_args
    factories, called once per module to make fresh instances."""
    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, _Module) or isinstance(weight, _Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigDynamic = QConfig

default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_fg.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=_fg.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=_fg.float16),
                                 weight=PlaceholderObserver.with_args(dtype=_fg.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
float_qparams_weight_only_qconfig_4bit = QConfig(activation=default_placeholder_observer,
                                                 weight=default_float_qparams_observer_4bit)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=_Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=_Identity)

_BACKENDS = ("fbgemm", "x86", "qnnpack", "onednn")


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of {list(_BACKENDS)}")


def get_default_qconfig(backend="x86", version=0) -> QConfig:
    """The post-training static quantization config torch uses for `backend`."""
    _check_backend(backend)
    if version != 0:
        raise AssertionError(f"Version number: {version} in get_default_qconfig is not supported. Version number "
                             "must be 0")
    if backend in ("fbgemm", "x86"):
        return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                       weight=default_per_channel_weight_observer)
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                   weight=default_per_channel_weight_observer)


def get_default_qat_qconfig(backend="x86", version=1) -> QConfig:
    """The quantization-aware training config torch uses for `backend`."""
    _check_backend(backend)
    reduce = backend in ("fbgemm", "x86")
    if version == 0:
        act = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                     reduce_range=reduce)
        wt = default_weight_fake_quant if backend == "qnnpack" else default_per_channel_weight_fake_quant
        return QConfig(activation=act, weight=wt)
    if version != 1:
        raise AssertionError(f"Version number: {version} in get_default_qat_qconfig is not supported. Version "
                             "number must be 0 or 1")
    act = FusedMovingAvgObsFakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                                  reduce_range=reduce)
    wt = default_fused_wt_fake_quant if backend == "qnnpack" else default_fused_per_channel_wt_fake_quant
    return QConfig(activation=act, weight=wt)


def get_default_qconfig_dict(backend="x86", version=0):
    return {"": get_default_qconfig(backend, version)}


def get_default_qat_qconfig_dict(backend="x86", version=1):
    return {"": get_default_qat_qconfig(backend, version)}


_ = (MinMaxObserver, default_fake_quant, default_fused_act_fake_quant, default_per_channel_weight_fake_quant,
     qint8, quint8)
