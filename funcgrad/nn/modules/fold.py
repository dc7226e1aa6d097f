"""Fold and Unfold: sliding local blocks to columns and back (torch.nn semantics)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ['Fold', 'Unfold']


class Fold(Module):
    """Sums (N, C*prod(kernel_size), L) columns of blocks into an (N, C, *output_size) tensor."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ('output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, padding={padding}, '
                'stride={stride}').format(**self.__dict__)


class Unfold(Module):
    """Extracts sliding local blocks of (N, C, H, W) as columns (N, C*prod(kernel_size), L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ('kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}'
                .format(**self.__dict__))
