"""torch.ao.quantization (also torch.quantization): eager-mode quantization -- observers, fake quantization,
QConfigs, QuantStub / DeQuantStub, and prepare / convert / quantize_dynamic / prepare_qat / fuse_modules.

Not here: FX graph mode (prepare_fx / convert_fx) and PT2E export quantization, reference (is_reference)
modules, ELU, normalization layers other than BatchNorm, dynamically quantized GRU / RNN
cells and convolutions, QAT for Conv1d / Conv3d / ConvTranspose. (Pooling runs on quantized tensors through
torch.nn.functional.)"""
from . import fake_quantize, observer, qconfig, quantize, stubs  # noqa: F401
from .fake_quantize import *  # noqa: F401,F403
from .observer import *  # noqa: F401,F403
from .qconfig import *  # noqa: F401,F403
from .quantize import *  # noqa: F401,F403
from .stubs import *  # noqa: F401,F403
import sys as _sys
from .observer import UniformQuantizationObserverBase  # noqa: F401

_quantize_mod = _sys.modules[__name__ + ".quantize"]  # (the module; `quantize` is the function, as in torch)

__all__ = sorted(set(fake_quantize.__all__) | set(observer.__all__) | set(qconfig.__all__) |
                 set(_quantize_mod.__all__) | set(stubs.__all__))
