"""torch.distributed.algorithms: DDP's communication hooks (`ddp_comm_hooks`)."""
from . import ddp_comm_hooks  # noqa: F401

__all__ = ["ddp_comm_hooks"]
