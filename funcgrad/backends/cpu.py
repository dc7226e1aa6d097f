"""funcgrad.backends.cpu (torch.backends.cpu)."""
from __future__ import annotations


def get_cpu_capability() -> str:
    return "DEFAULT"
