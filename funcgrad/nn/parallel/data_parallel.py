"""torch.nn.parallel.data_parallel: DataParallel and data_parallel on a machine without GPUs."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """torch.nn.DataParallel on a machine without GPUs: calls the wrapped module (reachable as .module), so
    state_dict keys carry the 'module.' prefix as in torch."""

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = [], None, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Evaluates module(*inputs) on the one device there is."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
