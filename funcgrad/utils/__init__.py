"""torch.utils: data loading (funcgrad.utils.data), activation checkpointing (funcgrad.utils.checkpoint) and
DLPack exchange (funcgrad.utils.dlpack)."""
from . import checkpoint, data, dlpack, hooks  # noqa: F401
