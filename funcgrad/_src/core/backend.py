"""Backends (NumPy on the CPU, CuPy on the GPU) and the Device objects users see."""
from __future__ import annotations

import numpy as np

from . import processes

# JAX numbers the CPU devices of a multi-process job process_index * 2048 + local index (measured, jax 0.10)
CPU_ID_STRIDE = 2048


class Device:
    """Where an array's buffer lives: `cpu` (NumPy) or `cuda:N` (CuPy); in a multi-process job, also
    the CPU of another process (`process_index`), which holds no buffers here."""
    __slots__ = ("platform", "id", "xp", "process_index")

    def __init__(self, platform: str, id: int, xp, process_index: int = 0):
        self.platform, self.id, self.xp, self.process_index = platform, id, xp, process_index

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})" if self.platform == "cpu" else f"CudaDevice(id={self.id})"

    def __str__(self) -> str:
        return "cpu" if self.platform == "cpu" else f"cuda:{self.id}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)

    def __hash__(self) -> int:
        # a CPU's id changes when its process joins a job: its hash must not
        return hash("cpu") if self.platform == "cpu" else hash((self.platform, self.id))


class _LocalCpu(Device):
    """This process's CPU: its id and process_index follow the job record (id 0 in a single process)."""
    __slots__ = ()

    def __init__(self):
        self.platform, self.xp = "cpu", np

    id = property(lambda self: processes.index() * CPU_ID_STRIDE)
    process_index = property(lambda self: processes.index())


CPU = _LocalCpu()
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


def local_devices(platform: str | None = None) -> list[Device]:
    """This process's devices: the CPU, then the GPUs CuPy sees."""
    out = [CPU] if platform in (None, "cpu") else []
    if platform in (None, "gpu", "cuda"):
        cp = cupy()
        if cp is not None:
            out += [Device("cuda", i, cp, processes.index()) for i in range(cp.cuda.runtime.getDeviceCount())]
    return out


def devices(platform: str | None = None) -> list[Device]:
    """Every device of the job (jax.devices): in a multi-process job, each process's CPU in process order
    (this process's GPUs after them); otherwise this process's devices."""
    n = processes.count()
    if n == 1 or platform not in (None, "cpu"):
        return local_devices(platform)
    me = processes.index()
    cpus = [CPU if p == me else Device("cpu", p * CPU_ID_STRIDE, np, p) for p in range(n)]
    return cpus + (local_devices("gpu") if platform is None else [])


def backend_devices(backend) -> list:
    """The devices of `backend` ('cpu', 'gpu'/'cuda' or a Device-like with .platform); None: the default
    backend's (the GPUs when CuPy sees any, else the CPU)."""
    if backend is None:
        ds = local_devices()
        gpus = [d for d in ds if d.platform != "cpu"]
        return gpus or [CPU]
    name = backend if isinstance(backend, str) else getattr(backend, "platform", str(backend))
    if name not in ("cpu", "gpu", "cuda"):
        raise RuntimeError(f"Unknown backend {name!r}; funcgrad has 'cpu' and 'gpu' (CUDA via CuPy)")
    ds = local_devices(name)
    if not ds:
        raise RuntimeError(f"Backend {name!r} failed to initialize: no such devices are visible")
    return ds
