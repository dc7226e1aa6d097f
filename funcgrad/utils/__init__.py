"""torch.utils: data loading (funcgrad.utils.data), activation checkpointing (funcgrad.utils.checkpoint) and
DLPack exchange (funcgrad.utils.dlpack)."""
from . import checkpoint, data, dlpack  # noqa: F401
