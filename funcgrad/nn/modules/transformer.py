"""MultiheadAttention and the Transformer family."""
from __future__ import annotations

__all__: list[str] = []
