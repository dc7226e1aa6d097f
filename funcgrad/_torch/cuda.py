"""funcgrad.cuda (torch.cuda): what scripts ask about the GPU before they start.

Without CuPy and a visible GPU every name behaves as in a CPU-only PyTorch build: `is_available()` is
False, `device_count()` 0, the memory counters 0, seeding a no-op, and calls that need a device raise
torch's errors. With CuPy and a GPU the queries report the real device (through cupy.cuda.runtime);
funcgrad tensors themselves stay on the CPU (the functional core runs on CuPy arrays).
"""
from __future__ import annotations

import collections

from . import _dtype as D

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _cp():
    from .._src.core.backend import cupy
    return cupy()


def _require():
    """The cupy module, or torch's AssertionError on a machine without CUDA."""
    cp = _cp()
    if cp is None:
        raise AssertionError(_NOT_COMPILED)
    return cp


def _index(device, optional: bool = True) -> int:
    """A cuda device index from an int, a string, a device or None (the current device)."""
    if device is None:
        return current_device() if _cp() is not None else -1
    if isinstance(device, str):
        device = D.device(device)
    if isinstance(device, D.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return device.index if device.index is not None else (current_device() if _cp() is not None else -1)
    if isinstance(device, int):
        return device
    raise ValueError(f"Expected a cuda device, but got: {device!r}")


def is_available() -> bool:
    """Whether a CUDA GPU can be used: CuPy installed and a device visible (False on a CPU-only machine)."""
    return _cp() is not None


def is_initialized() -> bool:
    """Whether CUDA has been initialised (the GPU's runtime reached through CuPy)."""
    return False


def init() -> None:
    """Initialise CUDA; raises torch's error where there is no GPU."""
    _require()


def device_count() -> int:
    """The number of visible CUDA devices (0 without CuPy or a GPU)."""
    cp = _cp()
    return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())


def current_device() -> int:
    """The index of the current CUDA device."""
    return int(_require().cuda.runtime.getDevice())


def set_device(device) -> None:
    """Make a CUDA device current (an index, 'cuda:N' or a torch.device)."""
    i = _index(device)
    if i < 0:
        return
    cp = _cp()
    if cp is None:
        raise AttributeError(f"set_device({device!r}): funcgrad.cuda has no device to select (Torch not "
                             "compiled with CUDA enabled)")
    cp.cuda.runtime.setDevice(i)


def _props(device):
    cp = _require()
    i = _index(device)
    return cp.cuda.runtime.getDeviceProperties(max(i, 0))


def get_device_name(device=None) -> str:
    """The name of a CUDA device (the current one by default)."""
    name = _props(device)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def get_device_capability(device=None) -> tuple:
    """The (major, minor) compute capability of a CUDA device."""
    p = _props(device)
    return (int(p["major"]), int(p["minor"]))


class _DeviceProperties:
    """The few fields of torch.cuda.get_device_properties that scripts read."""

    def __init__(self, p):
        name = p["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(p["major"]), int(p["minor"])
        self.total_memory = int(p["totalGlobalMem"])
        self.multi_processor_count = int(p["multiProcessorCount"])

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _DeviceProperties:
    """A CUDA device's properties (name, total_memory, major, minor, multi_processor_count)."""
    return _DeviceProperties(_props(device))


def get_arch_list() -> list:
    """The CUDA architectures this build has kernels for (none: funcgrad compiles no CUDA kernels ahead of time)."""
    return []


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current CUDA device supports bfloat16."""
    cp = _cp()
    return cp is not None and get_device_capability()[0] >= 8


def synchronize(device=None) -> None:
    """Wait for every kernel on the CUDA device to finish."""
    _require().cuda.runtime.deviceSynchronize()


def empty_cache() -> None:
    """Release the unused blocks of CuPy's memory pool to the driver."""
    cp = _cp()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def _pool():
    cp = _cp()
    return None if cp is None else cp.get_default_memory_pool()


def memory_allocated(device=None) -> int:
    """Bytes of GPU memory in use by tensors (CuPy's pool; 0 without a GPU)."""
    p = _pool()
    return 0 if p is None else int(p.used_bytes())


def memory_reserved(device=None) -> int:
    """Bytes of GPU memory held by the caching allocator (CuPy's pool; 0 without a GPU)."""
    p = _pool()
    return 0 if p is None else int(p.total_bytes())


max_memory_allocated = memory_allocated
max_memory_reserved = memory_reserved


def memory_cached(device=None) -> int:
    """Deprecated name of memory_reserved (warns)."""
    import warnings
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def memory_stats(device=None) -> "collections.OrderedDict":
    """The allocator's statistics as an OrderedDict (the current allocated and reserved bytes)."""
    p = _pool()
    if p is None:
        return collections.OrderedDict()
    return collections.OrderedDict([("allocated_bytes.all.current", int(p.used_bytes())),
                                    ("reserved_bytes.all.current", int(p.total_bytes()))])


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the CUDA device's memory."""
    free, total = _require().cuda.runtime.memGetInfo()
    return (int(free), int(total))


def reset_peak_memory_stats(device=None) -> None:
    """Reset the peak memory counters (raises where there are none, as a CPU-only torch build)."""
    if _cp() is None:
        raise AttributeError("reset_peak_memory_stats: no CUDA memory statistics (Torch not compiled with CUDA "
                             "enabled)")


reset_max_memory_allocated = reset_peak_memory_stats


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Cap this process's share of a CUDA device's memory (needs a GPU)."""
    _require()


def ipc_collect() -> None:
    """Free GPU memory held for inter-process sharing (needs a GPU)."""
    _require()


# --- seeding: the GPU has no generator of its own here; these are no-ops as on a CPU-only build ------------

default_generators: tuple = ()


def manual_seed(seed) -> None:
    """Seed the current GPU's generator (no separate GPU generator here: a no-op, as on a CPU-only build)."""
    int(seed)


def manual_seed_all(seed) -> None:
    """Seed every GPU's generator (a no-op here, as on a CPU-only build)."""
    int(seed)


def seed() -> None:
    """Seed the current GPU's generator randomly (a no-op here)."""
    pass


def seed_all() -> None:
    """Seed every GPU's generator randomly (a no-op here)."""
    pass


def initial_seed() -> int:
    """The current GPU generator's initial seed (needs a GPU)."""
    _require()
    from ._creation import default_generator
    return default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The GPU generator's state as a ByteTensor (needs a GPU)."""
    _require()
    from ._creation import default_generator
    return default_generator.get_state()


def set_rng_state(new_state, device="cuda") -> None:
    """Set the GPU generator's state."""
    if _cp() is not None:
        from ._creation import default_generator
        default_generator.set_state(new_state)


def get_rng_state_all() -> list:
    """The generator states of every GPU."""
    return [get_rng_state() for _ in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Set the generator states of every GPU."""
    for s in new_states:
        set_rng_state(s)


# --- devices, streams and events ----------------------------------------------------------------------

class device:
    """Context manager selecting the current CUDA device (torch.cuda.device)."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return
        cp = _cp()
        if cp is None:
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            cp.cuda.runtime.setDevice(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0 and self.prev_idx != self.idx:
            _cp().cuda.runtime.setDevice(self.prev_idx)
        return False


class device_of(device):
    """Context manager selecting the device of a tensor (a no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(-1 if not getattr(obj, "is_cuda", False) else obj.get_device())


class Stream:
    """A CUDA stream (cupy.cuda.Stream when a GPU is present)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        cp = _cp()
        if cp is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        self = super().__new__(cls)
        self._stream = cp.cuda.Stream(non_blocking=True)
        return self

    def synchronize(self) -> None:
        self._stream.synchronize()

    def wait_stream(self, stream) -> None:
        self._stream.wait_event(stream._stream.record())

    def query(self) -> bool:
        return self._stream.done

    def __enter__(self):
        self._stream.__enter__()
        return self

    def __exit__(self, *exc):
        return self._stream.__exit__(*exc)


class Event:
    """A CUDA event (cupy.cuda.Event when a GPU is present)."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        cp = _cp()
        if cp is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self = super().__new__(cls)
        self._event = cp.cuda.Event(block=blocking, disable_timing=not enable_timing)
        return self

    def record(self, stream=None) -> None:
        self._event.record(None if stream is None else stream._stream)

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        return self._event.done

    def elapsed_time(self, end_event) -> float:
        return float(_cp().cuda.get_elapsed_time(self._event, end_event._event))


class StreamContext:
    """Context manager making `stream` current (a no-op for None, as torch's)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def stream(stream) -> StreamContext:
    """A context manager making `stream` the current stream (None: a no-op)."""
    return StreamContext(stream)


def current_stream(device=None) -> Stream:
    """The current CUDA stream of a device."""
    cp = _require()
    s = Stream.__new__(Stream)
    s._stream = cp.cuda.get_current_stream()
    return s


default_stream = current_stream


def is_current_stream_capturing() -> bool:
    """Whether a CUDA graph capture is under way on the current stream (never, here)."""
    if _cp() is None:
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return False


def _legacy_cuda_type(name):
    def ctor(*args, **kwargs):
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA enabled.")
    ctor.__name__ = name
    ctor.__doc__ = f"torch.cuda.{name}: the legacy CUDA tensor type (raises: tensors live on the CPU here)."
    return ctor


for _n in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"):
    globals()[_n] = _legacy_cuda_type(_n)
del _n
