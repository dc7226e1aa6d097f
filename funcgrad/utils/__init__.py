"""torch.utils: data loading (funcgrad.utils.data) and activation checkpointing (funcgrad.utils.checkpoint)."""
from . import checkpoint, data  # noqa: F401
