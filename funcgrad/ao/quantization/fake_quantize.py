"""torch.ao.quantization.fake_quantize: FakeQuantize, the module quantization-aware training inserts: it observes
its input (an observer) and returns it quantized-then-dequantized in floating point, with the straight-through
gradient of torch.fake_quantize_per_tensor_affine / _per_channel_affine."""
from __future__ import annotations

import funcgrad._torch as _fg
from ...nn.modules.module import Module
from ..._torch._quantized import (fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine,
                                   per_channel_affine, per_channel_symmetric, per_tensor_symmetric, qint8, quint8)
from .observer import (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, ResizableBuffers,
                       _with_args)

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize", "default_fake_quant",
           "default_weight_fake_quant", "default_per_channel_weight_fake_quant", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant", "disable_fake_quant",
           "enable_fake_quant", "disable_observer", "enable_observer"]


class FakeQuantizeBase(Module):
    """Base of the fake-quantize modules: fake_quant_enabled / observer_enabled switches (uint8 buffers)."""

    with_args = classmethod(_with_args)

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", _fg.tensor([1], dtype=_fg.uint8))
        self.register_buffer("observer_enabled", _fg.tensor([1], dtype=_fg.uint8))

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)


class FakeQuantize(ResizableBuffers, FakeQuantizeBase):
    """Observe x (when enabled), then fake-quantize it with the observer's current qparams (when enabled)."""
    _resizable = ("scale", "zero_point")

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise ValueError("quant_min must be less than or equal to quant_max")
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        self.register_buffer("scale", _fg.tensor([1.0], dtype=_fg.float32))
        self.register_buffer("zero_point", _fg.tensor([0], dtype=_fg.int32))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        self.is_per_channel = self.qscheme in (per_channel_symmetric, per_channel_affine)
        self.is_symmetric_quant = self.qscheme in (per_channel_symmetric, per_tensor_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0].item() == 1:
            self.activation_post_process(X.detach())
            s, z = self.calculate_qparams()
            if self.scale.shape != s.shape:
                self.scale = _fg.zeros(s.shape, dtype=_fg.float32)
                self.zero_point = _fg.zeros(z.shape, dtype=_fg.int32)
            self.scale.copy_(s)
            self.zero_point.copy_(z.to(_fg.int32))
        if self.fake_quant_enabled[0].item() == 1:
            if self.is_per_channel:
                X = fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis, self.quant_min,
                                                     self.quant_max)
            else:
                X = fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, self.quant_min, self.quant_max)
        return X

    def extra_repr(self):
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={self.quant_min}, quant_max={self.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")



class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """torch's fused observer + fake-quantize (one kernel there); here the same computation as FakeQuantize with
    a moving-average observer."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)


def _for_fake_quants(method: str, doc: str):
    """A function for model.apply that calls `method` on every FakeQuantize it is given."""
    def f(mod):
        if isinstance(mod, FakeQuantizeBase):
            getattr(mod, method)()
    f.__name__ = f.__qualname__ = method
    f.__doc__ = doc
    return f


disable_fake_quant = _for_fake_quants("disable_fake_quant", "model.apply(disable_fake_quant): turn fake "
                                      "quantization off in every FakeQuantize.")
enable_fake_quant = _for_fake_quants("enable_fake_quant", "model.apply(enable_fake_quant): turn it back on.")
disable_observer = _for_fake_quants("disable_observer", "model.apply(disable_observer): freeze every "
                                    "FakeQuantize's qparams.")
enable_observer = _for_fake_quants("enable_observer", "model.apply(enable_observer): let them follow the data "
                                   "again.")


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=quint8, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric,
                                                   reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric)
