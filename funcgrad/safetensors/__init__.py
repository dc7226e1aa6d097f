"""safetensors for both faces, on the safetensors library (the `safetensors` extra).

    from funcgrad.safetensors.torch import save_file, load_file   # Tensors, as safetensors.torch
    from funcgrad.safetensors.flax import save_file, load_file    # Arrays, as safetensors.flax (JAX)
    from funcgrad.safetensors import safe_open                    # lazy reading: get_tensor, get_slice

Files are the standard format: real `safetensors.torch.load_file` / `safetensors.numpy.load_file` read what
funcgrad writes and funcgrad reads theirs. Use safetensors to share weights (no code runs on load, any
framework reads it); `torch.save`/`torch.load` keep whole Python objects (optimizer state, nested dicts) in
torch's zip format.
"""
from __future__ import annotations

from . import flax, torch  # noqa: F401
from ._files import _library
from ._files import safe_open as _open_numpy

__all__ = ["safe_open", "torch", "flax"]

_FRAMEWORKS = {"pt": "torch", "torch": "torch", "pytorch": "torch", "flax": "flax", "jax": "flax",
               "np": "numpy", "numpy": "numpy"}


class safe_open:  # noqa: N801 (the library's name)
    """`with safe_open(path, framework="pt") as f:` reads tensors lazily: `f.keys()`, `f.metadata()`,
    `f.get_tensor(name)`, `f.get_slice(name)[rows, cols]` (only that part is read), `f.get_slice(name).get_shape()`.
    framework "pt"/"torch" gives funcgrad Tensors, "flax"/"jax" funcgrad Arrays, "numpy" NumPy arrays."""

    def __init__(self, filename, framework: str = "pt", device: str = "cpu"):
        _library()
        kind = _FRAMEWORKS.get(str(framework).lower())
        if kind is None:
            raise ValueError(f"safe_open: framework must be one of {sorted(_FRAMEWORKS)}, got {framework!r}")
        self._convert = {"torch": torch._to_tensor, "flax": flax._to_array, "numpy": lambda a: a}[kind]
        self._f = _open_numpy(filename, device=device)

    def __enter__(self):
        self._f.__enter__()
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

    def keys(self) -> list:
        return list(self._f.keys())

    def metadata(self):
        return self._f.metadata()

    def get_tensor(self, name: str):
        return self._convert(self._f.get_tensor(name))

    def get_slice(self, name: str):
        return _Slice(self._f.get_slice(name), self._convert)


class _Slice:
    def __init__(self, sl, convert):
        self._sl, self._convert = sl, convert

    def __getitem__(self, index):
        return self._convert(self._sl[index])

    def get_shape(self) -> list:
        return self._sl.get_shape()

    def get_dtype(self) -> str:
        return self._sl.get_dtype()
