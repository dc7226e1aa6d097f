"""safetensors.torch for funcgrad Tensors: save/save_file/load/load_file, save_model/load_model."""
from __future__ import annotations

import numpy as np

from .._torch._creation import from_numpy
from .._torch._tensor import Tensor
from ._files import load_arrays, load_arrays_file, save_arrays, save_arrays_file

__all__ = ["save", "save_file", "load", "load_file", "save_model", "load_model"]


def _to_numpy(tensors: dict, op: str) -> dict:
    if not isinstance(tensors, dict):
        raise TypeError(f"{op}: expected a dict of name -> Tensor, got {type(tensors).__name__}")
    out = {}
    for k, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {k!r} is a {type(t).__name__}, not a Tensor (funcgrad.safetensors.flax "
                            f"saves Arrays)")
        if t.is_sparse:
            raise ValueError(f"{op}: {k!r} is a sparse tensor; safetensors stores dense tensors only")
        out[k] = t.detach().numpy()
    return out


def _to_tensor(a: np.ndarray) -> Tensor:
    return from_numpy(np.array(a))  # its own writable memory, as torch's load gives


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    return save_arrays(_to_numpy(tensors, "save"), metadata)


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    save_arrays_file(_to_numpy(tensors, "save_file"), filename, metadata)


def load(data: bytes) -> dict:
    return {k: _to_tensor(v) for k, v in load_arrays(data).items()}


def load_file(filename, device="cpu") -> dict:
    return {k: _to_tensor(v) for k, v in load_arrays_file(filename).items()}


def save_model(model, filename, metadata: dict | None = None, force_contiguous: bool = False) -> None:
    """Saves model.state_dict(); a tensor shared under several names (tied weights) is stored once, under
    its first name, as safetensors.torch.save_model does."""
    state, seen = {}, {}
    for k, t in model.state_dict().items():
        key = (id(t._storage()), t.storage_offset(), tuple(t.shape), tuple(t.stride()))
        if key in seen:
            continue
        seen[key] = k
        state[k] = t
    save_file(state, filename, metadata)


def load_model(model, filename, strict: bool = True, device="cpu"):
    """Loads a file written by save_model into model; returns (missing, unexpected) key lists. Tied tensors
    stored once are filled from their stored name. strict: missing or unexpected keys raise RuntimeError."""
    state = load_file(filename)
    own = model.state_dict()
    aliases = {}
    for k, t in own.items():
        aliases.setdefault((id(t._storage()), t.storage_offset(), tuple(t.shape), tuple(t.stride())), []).append(k)
    for names in aliases.values():
        stored = [n for n in names if n in state]
        for n in names:
            if n not in state and stored:
                state[n] = state[stored[0]]
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if strict and (missing or unexpected):
        raise RuntimeError(f"load_model: the file does not match the model: missing keys {missing}, "
                           f"unexpected keys {unexpected}")
    model.load_state_dict({k: v for k, v in state.items() if k in own}, strict=False)
    return missing, unexpected
