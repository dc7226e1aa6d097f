"""funcgrad.backends.mkldnn (torch.backends.mkldnn): oneDNN is not used; NumPy's BLAS is."""
from __future__ import annotations

enabled = True


def is_available() -> bool:
    return False
