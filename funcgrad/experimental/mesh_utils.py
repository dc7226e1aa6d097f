"""funcgrad.experimental.mesh_utils: device grids for Mesh (as jax.experimental.mesh_utils)."""
from __future__ import annotations

import numpy as np
from .._src.core.backend import devices as _all

__all__ = ["create_device_mesh"]


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False):
    """An object array of shape mesh_shape holding devices (all of funcgrad's by default)."""
    devs = list(_all() if devices is None else devices)
    mesh_shape = tuple(int(s) for s in mesh_shape)
    n = int(np.prod(mesh_shape, dtype=np.int64))
    if n != len(devs):
        raise ValueError(f"create_device_mesh: mesh shape {mesh_shape} needs {n} devices, got {len(devs)}")
    grid = np.empty(n, dtype=object)
    for i, d in enumerate(devs):
        grid[i] = d
    return grid.reshape(mesh_shape)
