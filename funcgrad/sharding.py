"""funcgrad.sharding: JAX's sharding types for what funcgrad runs on, one device per array.

`jax.device_put(x, NamedSharding(mesh, P()))`, `x.sharding` and `lax.with_sharding_constraint` appear in
ordinary single-device JAX programs; here they describe the one device an array lives on. A sharding over
several devices (a mesh with more than one device) is refused when it would place data, since funcgrad
does not split arrays between devices. `make_mesh` and `shard_map` (funcgrad.make_mesh, funcgrad.shard_map)
work on such one-device meshes.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ._src.core.array import ArrayBase, canonical_array
from ._src.core.backend import Device, devices
from ._src.core.tree_util import tree_leaves, tree_map
from ._src.prims.shape import reshape as _reshape
from ._src.interpreters.batching import vmap

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "Mesh", "PartitionSpec", "AbstractMesh", "Shard"]


class Sharding:
    """How an array is laid out over devices (here: all of it on one device)."""

    @property
    def device_set(self) -> set:
        return set(self._devices())

    def _devices(self) -> list:
        raise NotImplementedError

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def memory_kind(self):
        return None

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
        return f"PartitionSpec{tuple.__repr__(self)}"

    def __eq__(self, other) -> bool:  # as a tuple's with tuples; False for anything else, never raising
        return tuple.__eq__(self, other) if isinstance(other, tuple) else False

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


class Mesh:
    """Devices arranged in a named grid: Mesh(devices, ('data',)). Usable as a context manager."""

    def __init__(self, devices, axis_names, *, axis_types=None):
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh: {self.devices.ndim}-dimensional devices array for "
                             f"{len(self.axis_names)} axis names {self.axis_names}")

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
    return SingleDeviceSharding(devices()[0])


# --- meshes and shard_map ------------------------------------------------------------------------------
def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the given axis sizes and names over the devices (one device: every size must be 1)."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"make_mesh: {len(axis_shapes)} axis sizes for {len(axis_names)} axis names")
    devs = list(_all_devices() if devices is None else devices)
    n = int(np.prod(axis_shapes, dtype=np.int64))
    if n > len(devs):
        raise ValueError(f"make_mesh: a mesh of shape {axis_shapes} needs {n} devices, but only {len(devs)} "
                         "are available (funcgrad's meshes have one device: use sizes of 1)")
    grid = np.empty(n, dtype=object)
    for i in range(n):
        grid[i] = devs[i]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types=axis_types)


_all_devices = devices  # (make_mesh's `devices` argument shadows the function)


class _Infer:
    def __repr__(self):
        return "Infer"


Infer = _Infer()


def _spec_axes(spec) -> list:
    out = []
    for p in spec:
        if p is None:
            continue
        out.extend((p,) if isinstance(p, str) else tuple(p))
    return out


def _check_specs(what, specs, values, mesh):
    def is_spec(s):
        return s is None or isinstance(s, PartitionSpec)
    try:
        # specs is a pytree prefix of values: map over specs, pairing each spec with its subtree
        tree_map(lambda s, sub: _check_one(what, s, sub, mesh), specs, values, is_leaf=is_spec)
    except ValueError as e:
        if "shard_map" in str(e):
            raise
        raise ValueError(f"shard_map: {what} {specs!r} does not match the structure of the "
                         f"{'arguments' if what == 'in_specs' else 'outputs'}") from None


def _check_one(what, spec, sub, mesh):
    if spec is None:
        return None
    for axis in _spec_axes(spec):
        if axis not in mesh.axis_names:
            raise ValueError(f"shard_map: {what} names mesh axis {axis!r}, not one of {mesh.axis_names}")
    for leaf in tree_leaves(sub):
        ndim = np.ndim(leaf) if not hasattr(leaf, "ndim") else leaf.ndim
        if len(spec) > ndim:
            raise ValueError(f"shard_map: {what} {spec!r} has {len(spec)} entries for an array of rank {ndim}")
    return None


def shard_map(f: Callable | None = None, /, mesh=None, in_specs=Infer, out_specs=None, *, axis_names=frozenset(),
              check_vma: bool = True, check_rep: bool | None = None):
    """Run f on the shards of its arguments over `mesh`. funcgrad's meshes have one device, so each shard is
    the whole array: f runs once on the full arguments, with every mesh axis bound as a named axis of size 1
    (so lax.psum(x, 'data') and friends work). in_specs / out_specs are checked against the mesh and the
    values' ranks."""
    if f is None:
        return functools.partial(shard_map, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                                 axis_names=axis_names, check_vma=check_vma, check_rep=check_rep)
    if mesh is None:
        raise ValueError("shard_map: a mesh is required (funcgrad has no ambient mesh)")
    if out_specs is None:
        raise TypeError("shard_map: out_specs is required")
    if mesh.size != 1:
        raise NotImplementedError(f"shard_map: a mesh of {mesh.size} devices; funcgrad keeps each array on one "
                                  "device (use a mesh whose axes all have size 1)")

    @functools.wraps(f)
    def run(*args):
        if in_specs is not Infer:
            specs = tuple(in_specs) if isinstance(in_specs, list) else in_specs
            _check_specs("in_specs", specs, tuple(args), mesh)
        g = f
        for name in reversed(mesh.axis_names):
            g = vmap(g, axis_name=name)
        lifted = tree_map(lambda a: _expand(a, len(mesh.axis_names)), args)
        out = g(*lifted)
        out = tree_map(lambda a: _squeeze(a, len(mesh.axis_names)), out)
        _check_specs("out_specs", out_specs, out, mesh)
        return out
    return run


def _expand(a, k):
    a = a if isinstance(a, ArrayBase) else canonical_array(a)
    return _reshape(a, (1,) * k + tuple(a.shape))


def _squeeze(a, k):
    a = a if isinstance(a, ArrayBase) else canonical_array(a)
    return _reshape(a, tuple(a.shape[k:]))
