"""funcgrad.backends.openmp (torch.backends.openmp)."""
from __future__ import annotations


def is_available() -> bool:
    return False
