"""funcgrad.nn.attention (torch.nn.attention): the `SDPBackend` names and the `sdpa_kernel` context manager.

funcgrad's `scaled_dot_product_attention` has one implementation (the math one, written with funcgrad
operations), so choosing kernels has no effect: `sdpa_kernel` checks its argument as torch does and otherwise
does nothing. `current_backends()` tells which backends the innermost `sdpa_kernel` named.
"""
from __future__ import annotations

import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """A scaled-dot-product-attention kernel. Only MATH exists in funcgrad; the others are names."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"


_ALL = [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_stack = [list(_ALL)]


def current_backends():
    """The backends allowed by the innermost active `sdpa_kernel` (all of them outside one)."""
    return list(_stack[-1])


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Restrict scaled_dot_product_attention to `backends` (an SDPBackend or a list of them) inside the block.

    No effect on computation in funcgrad: its scaled_dot_product_attention has a single (math)
    implementation, used whatever is chosen here. As in torch, anything but an SDPBackend or a list raises
    AssertionError."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    _stack.append([backends] if isinstance(backends, SDPBackend) else list(backends))
    try:
        yield {}
    finally:
        _stack.pop()
