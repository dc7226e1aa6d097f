"""funcgrad.sharding: JAX's sharding types for what funcgrad runs on, one device per array.

`jax.device_put(x, NamedSharding(mesh, P()))`, `x.sharding` and `lax.with_sharding_constraint` appear in
ordinary single-device JAX programs; here they describe the one device an array lives on. A sharding over
several devices (a mesh with more than one device) is refused when it would place data, since funcgrad
does not split arrays between devices. `make_mesh` and `shard_map` (funcgrad.make_mesh, funcgrad.shard_map)
work on such one-device meshes.
"""
from __future__ import annotations

import functools
import threading
from typing import Callable

import numpy as np

from .._src.core.array import ArrayBase, canonical_array
from .._src.core.backend import devices
from .._src.core.tree_util import tree_leaves, tree_map
from .._src.prims.shape import reshape as _reshape
from .._src.interpreters.batching import vmap
from .api import device_put
from .._src.core.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, Shard,  # noqa: F401
                                  Sharding, SingleDeviceSharding, default_device_sharding)

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "Mesh", "PartitionSpec", "AbstractMesh", "Shard",
           "AxisType", "reshard", "set_mesh"]


# --- meshes and shard_map ------------------------------------------------------------------------------
def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the given axis sizes and names over the devices (one device: every size must be 1); its axes
    are Explicit unless axis_types says otherwise, as JAX's."""
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
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types=axis_types)


_context = threading.local()  # the mesh set by set_mesh, per thread


class set_mesh:
    """jax.set_mesh(mesh): makes `mesh` the current one, for good or (as a context manager) for the block, so
    that a bare PartitionSpec can stand for a sharding (reshard(x, P('batch'))). `None` unsets it."""

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh: expected a jax.sharding.Mesh or None, got {type(mesh).__name__}")
        self._previous = getattr(_context, "mesh", None)
        _context.mesh = mesh

    def __enter__(self) -> None:  # (JAX's gives nothing to `as`)
        return None

    def __exit__(self, *exc) -> bool:
        _context.mesh = self._previous
        return False


def _named(sharding):
    """A sharding, a bare PartitionSpec read against the mesh set by set_mesh (JAX's error without one)."""
    if isinstance(sharding, PartitionSpec):
        mesh = getattr(_context, "mesh", None)
        if mesh is None:
            raise ValueError("Using PartitionSpec when you are not under a mesh context is not allowed. Please pass "
                             "a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got "
                             f"{sharding!r}")
        return NamedSharding(mesh, sharding)
    return sharding


def reshard(xs, out_shardings):
    """jax.sharding.reshard: each array of the pytree xs placed with its sharding (one for all, or a tree of
    them; a bare PartitionSpec needs a mesh set by set_mesh). One device: the values are unchanged."""
    if isinstance(out_shardings, (Sharding, PartitionSpec)):
        s = _named(out_shardings)
        return tree_map(lambda x: device_put(x, s), xs)
    return tree_map(lambda x, s: device_put(x, _named(s)), xs, out_shardings)


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
