"""torch.nn.utils.memory_format: convert_conv2d/3d_weight_memory_format."""
from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Tensors here are always contiguous: returns module unchanged."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Tensors here are always contiguous: returns module unchanged."""
    return module
