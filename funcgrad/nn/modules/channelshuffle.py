"""ChannelShuffle (torch.nn.modules.channelshuffle)."""
from __future__ import annotations

from .. import functional as F
from .pixelshuffle import _Rearrangement

__all__ = ["ChannelShuffle"]


class ChannelShuffle(_Rearrangement):
    """Interleave the channels of `groups` groups (as in ShuffleNet)."""
    _fn, _setting = F.channel_shuffle, "groups"

    def __init__(self, groups: int) -> None:
        super().__init__(groups)
