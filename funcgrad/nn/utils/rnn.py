"""nn.utils.rnn: pad_sequence, pack_padded_sequence, pad_packed_sequence, PackedSequence."""
from __future__ import annotations

__all__: list[str] = []
