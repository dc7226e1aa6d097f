"""torch.quantization: the older name of torch.ao.quantization (the same objects)."""
import sys as _sys

from .ao.quantization import *  # noqa: F401,F403
from .ao.quantization import __all__  # noqa: F401
from .ao.quantization import fake_quantize, observer, qconfig, quantize, stubs  # noqa: F401

for _m in ("fake_quantize", "observer", "qconfig", "quantize", "stubs"):
    _sys.modules[__name__ + "." + _m] = _sys.modules["funcgrad.ao.quantization." + _m]
