"""torch.utils.hooks: RemovableHandle, the one handle class every register_*hook returns."""
from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle"]
