"""safetensors.flax for funcgrad Arrays (the JAX face): save/save_file/load/load_file of flat dicts."""
from __future__ import annotations

import numpy as np

from .. import numpy as jnp
from .._src.core.array import Array
from ._files import load_arrays, load_arrays_file, save_arrays, save_arrays_file

__all__ = ["save", "save_file", "load", "load_file"]


def _to_numpy(tensors: dict, op: str) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"{op}: expected a flat dict of name -> Array (flatten a pytree with "
                        f"funcgrad.tree_util / flax.traverse_util first), got {type(tensors).__name__}")
    return {k: np.asarray(v) for k, v in tensors.items()}


def _to_array(a: np.ndarray) -> Array:
    return jnp.asarray(a)


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    return save_arrays(_to_numpy(tensors, "save"), metadata)


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    save_arrays_file(_to_numpy(tensors, "save_file"), filename, metadata)


def load(data: bytes) -> dict:
    return {k: _to_array(v) for k, v in load_arrays(data).items()}


def load_file(filename) -> dict:
    return {k: _to_array(v) for k, v in load_arrays_file(filename).items()}
