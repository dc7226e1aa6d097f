"""torch.distributed.elastic.multiprocessing: only its `errors` submodule (the `record` decorator)."""
from . import errors  # noqa: F401
