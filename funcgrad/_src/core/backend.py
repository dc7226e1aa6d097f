"""Backends (NumPy on the CPU, CuPy on the GPU) and the Device objects users see."""
from __future__ import annotations

import numpy as np


class Device:
    """Where an array's buffer lives: `cpu` (NumPy) or `cuda:N` (CuPy)."""
    __slots__ = ("platform", "id", "xp")

    def __init__(self, platform: str, id: int, xp):
        self.platform, self.id, self.xp = platform, id, xp

    def __repr__(self) -> str:
        return "CpuDevice(id=0)" if self.platform == "cpu" else f"CudaDevice(id={self.id})"

    def __str__(self) -> str:
        return "cpu" if self.platform == "cpu" else f"cuda:{self.id}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)

    def __hash__(self) -> int:
        return hash((self.platform, self.id))


CPU = Device("cpu", 0, np)
_cupy = None


def cupy():
    """The cupy module, or None when it is not installed or no GPU is visible."""
    global _cupy
    if _cupy is None:
        try:
            import cupy as cp
            cp.cuda.runtime.getDeviceCount()
            _cupy = cp
        except Exception:
            _cupy = False
    return _cupy or None


def device_of(buf) -> Device:
    if type(buf) is np.ndarray or isinstance(buf, (np.ndarray, np.generic)):
        return CPU
    cp = cupy()
    if cp is not None and isinstance(buf, cp.ndarray):
        return Device("cuda", buf.device.id, cp)
    raise TypeError(f"{type(buf).__name__} is not a backend buffer (numpy.ndarray or cupy.ndarray)")


def xp_of(buf):
    """The array module (numpy or cupy) that owns `buf`."""
    return np if isinstance(buf, (np.ndarray, np.generic)) else device_of(buf).xp


def devices(platform: str | None = None) -> list[Device]:
    """The devices funcgrad can run on: the CPU, then each CUDA device CuPy sees (platform "cpu" or
    "gpu"/"cuda" keeps one kind), as jax.devices."""
    out = []
    if platform in (None, "cpu"):
        out.append(CPU)
    if platform in (None, "gpu", "cuda"):
        cp = cupy()
        if cp is not None:
            out += [Device("cuda", i, cp) for i in range(cp.cuda.runtime.getDeviceCount())]
    return out


def backend_devices(backend) -> list:
    """The devices of `backend` ('cpu', 'gpu'/'cuda' or a Device-like with .platform); None: the default
    backend's (the GPUs when CuPy sees any, else the CPU)."""
    if backend is None:
        ds = devices()
        gpus = [d for d in ds if d.platform != "cpu"]
        return gpus or [CPU]
    name = backend if isinstance(backend, str) else getattr(backend, "platform", str(backend))
    if name not in ("cpu", "gpu", "cuda"):
        raise RuntimeError(f"Unknown backend {name!r}; funcgrad has 'cpu' and 'gpu' (CUDA via CuPy)")
    ds = devices(name)
    if not ds:
        raise RuntimeError(f"Backend {name!r} failed to initialize: no such devices are visible")
    return ds
