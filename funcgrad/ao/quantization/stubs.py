"""torch.ao.quantization.stubs: QuantStub / DeQuantStub mark where a model's quantized region begins and ends
(convert swaps them for quantize / dequantize modules); QuantWrapper wraps a module between the two."""
from __future__ import annotations

from ...nn.modules.module import Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class _Stub(Module):
    """An identity marking a boundary of the quantized region (an optional qconfig of its own)."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Before calibration an identity (an observer is attached by prepare); convert makes it nnq.Quantize."""


class DeQuantStub(_Stub):
    """An identity until convert makes it nnq.DeQuantize."""


class QuantWrapper(Module):
    """module between a QuantStub and a DeQuantStub."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        return self.dequant(self.module(self.quant(X)))
