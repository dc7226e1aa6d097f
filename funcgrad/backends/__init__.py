"""funcgrad.backends (torch.backends): the flags scripts set for cuDNN, cuBLAS, MPS, oneDNN and OpenMP.

funcgrad computes with NumPy on the CPU (CuPy where a GPU is present), so these flags are accepted and
remembered, and the availability queries answer truthfully; none of them changes a result.
"""
from __future__ import annotations

from . import cpu, cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
