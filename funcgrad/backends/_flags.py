"""The module type of torch.backends' flag modules (cudnn): a module of its own below the package, so that
funcgrad.backends and its submodules import it without importing each other."""
from __future__ import annotations

import types


class _FlagModule(types.ModuleType):
    """A module whose boolean flags are validated on assignment (torch.backends.cudnn.benchmark = True)."""
    _bool_flags: dict = {}

    def __setattr__(self, name, value):
        setter = self._bool_flags.get(name)
        if setter is not None and not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        super().__setattr__(name, value)
