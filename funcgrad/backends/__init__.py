"""funcgrad.backends (torch.backends): the flags scripts set for cuDNN, cuBLAS, MPS, oneDNN and OpenMP.

funcgrad computes with NumPy on the CPU (CuPy where a GPU is present), so these flags are accepted and
remembered, and the availability queries answer truthfully; none of them changes a result.
"""
from __future__ import annotations

import types


class _FlagModule(types.ModuleType):
    """A module whose boolean flags are validated on assignment (torch.backends.cudnn.benchmark = True)."""
    _bool_flags: dict = {}

    def __setattr__(self, name, value):
        setter = self._bool_flags.get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)


from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: E402,F401

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
