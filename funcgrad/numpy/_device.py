"""The Array API's `device=` keywords and `to_device`: which device a result lives on."""
from __future__ import annotations

from .._src.core.array import Array, ArrayBase, wrap
from .._src.core.backend import CPU, Device, local_devices as devices  # (this process's: arrays live there)


def resolve(device, op: str) -> Device | None:
    """`device` (None, a Device, or a name such as 'cpu' / 'cuda:0') as a Device; ValueError if unknown."""
    if device is None or device is CPU:
        return device
    if isinstance(device, Device) and device in devices():
        return device
    if isinstance(device, str):
        for d in devices():
            if device in (str(d), d.platform, f"{d.platform}:{d.id}") or (device == "gpu" and d.platform == "cuda"):
                return d
    raise ValueError(f"{op}: unknown device {device!r}; available: {', '.join(str(d) for d in devices())}")


def put(x, device, op: str):
    """x on `device` (x itself when it is already there; transfers only concrete Arrays)."""
    d = resolve(device, op)
    if d is None or not isinstance(x, Array) or x.device == d:
        return x
    buf = x._buf
    if d.platform == "cpu":
        return wrap(buf.get(), x.weak_type)
    with d.xp.cuda.Device(d.id):
        return wrap(d.xp.asarray(buf), x.weak_type)


def placed(device, op: str):
    """A function putting a freshly created array on `device` (validated once, here)."""
    d = resolve(device, op)
    if d is None or d is CPU:
        return _same
    return lambda x: put(x, d, op) if isinstance(x, ArrayBase) else x


def _same(x):
    return x
