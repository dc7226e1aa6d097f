"""PixelShuffle and PixelUnshuffle: channels to space and back (torch.nn semantics)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ['PixelShuffle', 'PixelUnshuffle']


class _Rearrangement(Module):
    """A module that moves elements with the functional `_fn`, given one integer setting (the attribute
    `_setting` names; extra_repr shows it as `name=value`). Also ChannelShuffle's base."""
    _fn = None
    _setting: str

    def __init__(self, setting: int) -> None:
        super().__init__()
        setattr(self, self._setting, setting)

    def forward(self, input):
        return type(self)._fn(input, getattr(self, self._setting))

    def extra_repr(self) -> str:
        return f"{self._setting}={getattr(self, self._setting)}"


class PixelShuffle(_Rearrangement):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    _fn, _setting = F.pixel_shuffle, "upscale_factor"

    def __init__(self, upscale_factor: int) -> None:
        super().__init__(upscale_factor)


class PixelUnshuffle(_Rearrangement):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    _fn, _setting = F.pixel_unshuffle, "downscale_factor"

    def __init__(self, downscale_factor: int) -> None:
        super().__init__(downscale_factor)
