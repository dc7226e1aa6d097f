"""jax.experimental.multihost_utils: values combined across the processes of a job (funcgrad.distributed)."""
from ..distributed.multiprocess import (assert_equal, broadcast_one_to_all, process_allgather,  # noqa: F401
                                        sync_global_devices)

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices", "assert_equal"]
