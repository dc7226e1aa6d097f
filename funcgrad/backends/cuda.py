"""funcgrad.backends.cuda (torch.backends.cuda): cuBLAS flags (matmul.allow_tf32, ...), remembered only."""
from __future__ import annotations

import warnings

from .._torch.cuda import is_available as _gpu

_PRECISION = ["highest"]  # torch.get_float32_matmul_precision


def is_built() -> bool:
    """Whether funcgrad can reach CUDA (through CuPy)."""
    return _gpu()


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32 mirrors get_float32_matmul_precision() != 'highest'."""
    _FLAGS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
              "allow_fp16_accumulation")

    def __init__(self):
        d = self.__dict__
        d["allow_fp16_reduced_precision_reduction"] = True
        d["allow_bf16_reduced_precision_reduction"] = True
        d["allow_fp16_accumulation"] = False

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _PRECISION[0] != "highest"
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _PRECISION[0] = "high" if value else "highest"
        elif name in self._FLAGS:
            self.__dict__[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (remembered; NumPy always computes float32 matmuls in full precision)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    """The precision set by set_float32_matmul_precision ('highest' by default)."""
    return _PRECISION[0]


def preferred_linalg_library(backend=None):
    return "default"


_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _SDP["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _SDP["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _SDP["math"]


def enable_flash_sdp(enabled: bool) -> None:
    _SDP["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _SDP["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _SDP["math"] = bool(enabled)
