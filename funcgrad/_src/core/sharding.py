"""The sharding types (jax.sharding's classes) for what funcgrad runs on, one device per array.

They live in the engine because every Array answers `x.sharding` with a SingleDeviceSharding; the public
module funcgrad.sharding (funcgrad/_jax/sharding.py) re-exports them with make_mesh and shard_map.
"""
from __future__ import annotations

import enum

import numpy as np

from .backend import Device, local_devices
from .props import fixed_property

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "Mesh", "PartitionSpec", "AbstractMesh", "Shard"]


class Sharding:
    """How an array is laid out over devices (here: all of it on one device)."""

    @property
    def device_set(self) -> set:
        return set(self._devices())

    def _devices(self) -> list:
        raise NotImplementedError

    # one device holds all of an array
    is_fully_replicated = is_fully_addressable = fixed_property(True)
    memory_kind = fixed_property(None)

    def single_device(self, what: str) -> Device:
        """The one device data placed with this sharding goes to (several devices: NotImplementedError)."""
        devs = self._devices()
        if len(devs) != 1:
            raise NotImplementedError(f"{what}: a sharding over {len(devs)} devices; funcgrad keeps each array "
                                      "on one device (use a one-device mesh, or pmap/vmap for batches)")
        return devs[0]


class Shard:
    """One piece of an array (JAX's jax.Shard): its device, its `index` (slices into the whole array),
    `replica_id`, and `data` (the piece as an array). A funcgrad array is one shard, the whole of it."""

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"


class SingleDeviceSharding(Sharding):
    """All of an array on `device`."""

    def __init__(self, device: Device, *, memory_kind=None):
        if not isinstance(device, Device):
            raise TypeError(f"SingleDeviceSharding: expected a Device, got {type(device).__name__}")
        self.device = device

    def _devices(self) -> list:
        return [self.device]

    def __eq__(self, other) -> bool:
        return isinstance(other, SingleDeviceSharding) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("single", self.device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r})"


class PartitionSpec(tuple):
    """How each array dimension maps to mesh axes (None: not split), e.g. PartitionSpec('data', None)."""

    def __new__(cls, *parts):
        return super().__new__(cls, parts)

    def __repr__(self) -> str:
        return f"P{tuple.__repr__(self)}"  # (as JAX prints it: P('batch', None))

    def __eq__(self, other) -> bool:  # as a tuple's with tuples; False for anything else, never raising
        return tuple.__eq__(self, other) if isinstance(other, tuple) else False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


class AxisType(enum.Enum):
    """How arrays are sharded along a mesh axis (jax.sharding.AxisType): by the compiler (Auto), by the
    program's types (Explicit) or by hand inside shard_map (Manual). funcgrad's meshes have one device, so
    every kind computes the same; the mesh keeps it for what the program reads back."""
    Auto = 1
    Explicit = 2
    Manual = 3

    def __repr__(self) -> str:
        return self.name


class Mesh:
    """Devices arranged in a named grid: Mesh(devices, ('data',)). Usable as a context manager."""

    def __init__(self, devices, axis_names, *, axis_types=None):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh: {self.devices.ndim}-dimensional devices array for "
                             f"{len(self.axis_names)} axis names {self.axis_names}")
        types = (AxisType.Auto,) * len(self.axis_names) if axis_types is None else (
            (axis_types,) if isinstance(axis_types, AxisType) else tuple(axis_types))
        if len(types) != len(self.axis_names) or not all(isinstance(t, AxisType) for t in types):
            raise ValueError(f"Mesh: axis_types must be one jax.sharding.AxisType per axis name "
                             f"{self.axis_names}, got {axis_types!r}")
        self.axis_types = types

    @property
    def shape(self) -> dict:
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self) -> str:
        return f"Mesh({', '.join(f'{k!r}: {v}' for k, v in self.shape.items())})"

    def _key(self) -> tuple:
        return (self.axis_names, self.devices.shape, tuple(self.devices.flat))

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


AbstractMesh = Mesh


class NamedSharding(Sharding):
    """An array laid out over `mesh` as `spec` says."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec = PartitionSpec(), *, memory_kind=None):
        for axis in (a for p in spec if p is not None for a in ((p,) if isinstance(p, str) else p)):
            if axis not in mesh.axis_names:
                raise ValueError(f"NamedSharding: axis {axis!r} of {spec} is not one of the mesh's axes "
                                 f"{mesh.axis_names}")
        self.mesh, self.spec = mesh, spec

    def _devices(self) -> list:
        return list(self.mesh.devices.flat)

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and tuple(self.spec) == tuple(other.spec)

    def __hash__(self) -> int:
        return hash(("named", self.mesh, tuple(self.spec)))


def default_device_sharding() -> SingleDeviceSharding:
    return SingleDeviceSharding(local_devices()[0])
