"""torch.optim.sparse_adam's module path, which torch pickles name classes by: re-exports."""
from .adafactor_sparse import SparseAdam  # noqa: F401

__all__ = ["SparseAdam"]
