"""funcgrad.backends.mps (torch.backends.mps): Apple's Metal backend is not part of funcgrad."""
from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")
