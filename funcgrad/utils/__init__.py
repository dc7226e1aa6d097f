"""torch.utils: data loading (funcgrad.utils.data)."""
from . import data  # noqa: F401
