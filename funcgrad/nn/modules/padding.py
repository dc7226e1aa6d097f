"""Padding layers: constant / zero / reflection / replication / circular padding (torch.nn semantics)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ['ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d',
           'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d',
           'ReplicationPad3d', 'CircularPad1d', 'CircularPad2d', 'CircularPad3d']


def _pads(padding, n):
    """An int pads every side of the last n dims; a tuple is torch's (left, right, top, bottom, ...)."""
    if isinstance(padding, (tuple, list)):
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * n)


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value: float) -> None:
        super().__init__()
        self.padding, self.value = _pads(padding, self._n), value

    def forward(self, input):
        return F.pad(input, self.padding, 'constant', self.value)

    def extra_repr(self) -> str:
        return f'padding={self.padding}, value={self.value}'


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with a constant."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with a constant."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f'{self.padding}'


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros."""
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros."""
    _n = 3


class _ModePadNd(Module):
    _n, _mode = 1, 'reflect'

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _pads(padding, self._n)

    def forward(self, input):
        if self._mode == 'circular' and input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f'expected {self._n + 1}D or {self._n + 2}D input (got {input.dim()}D input)')
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f'{self.padding}'


class ReflectionPad1d(_ModePadNd):
    """Pads the last dim with its reflection (the edge not repeated)."""
    _n, _mode = 1, 'reflect'


class ReflectionPad2d(_ModePadNd):
    """Pads the last 2 dims with their reflection."""
    _n, _mode = 2, 'reflect'


class ReflectionPad3d(_ModePadNd):
    """Pads the last 3 dims with their reflection."""
    _n, _mode = 3, 'reflect'


class ReplicationPad1d(_ModePadNd):
    """Pads the last dim by repeating its edge values."""
    _n, _mode = 1, 'replicate'


class ReplicationPad2d(_ModePadNd):
    """Pads the last 2 dims by repeating their edge values."""
    _n, _mode = 2, 'replicate'


class ReplicationPad3d(_ModePadNd):
    """Pads the last 3 dims by repeating their edge values."""
    _n, _mode = 3, 'replicate'


class CircularPad1d(_ModePadNd):
    """Pads the last dim by wrapping around."""
    _n, _mode = 1, 'circular'


class CircularPad2d(_ModePadNd):
    """Pads the last 2 dims by wrapping around."""
    _n, _mode = 2, 'circular'


class CircularPad3d(_ModePadNd):
    """Pads the last 3 dims by wrapping around."""
    _n, _mode = 3, 'circular'
