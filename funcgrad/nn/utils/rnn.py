"""nn.utils.rnn: pad_sequence, pack_padded_sequence, pad_packed_sequence, PackedSequence.

Every conversion is one gather (`index_select`) with an index map computed on the host from the lengths,
so autograd flows through packing and padding with no per-element Python work."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: object
    batch_sizes: object
    sorted_indices: object
    unsorted_indices: object


class PackedSequence(_PackedSequenceBase):
    """Variable-length sequences packed time-major: `data` holds, for each step t, the batch_sizes[t]
    sequences (in sorted order) still running at t."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _replace_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._replace_data(data)

    def cpu(self):
        return self

    def double(self):
        return self._replace_data(self.data.double())

    def float(self):
        return self._replace_data(self.data.float())

    def half(self):
        return self._replace_data(self.data.half())

    def long(self):
        return self._replace_data(self.data.long())

    def int(self):
        return self._replace_data(self.data.int())

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _invert_permutation(perm):
    if perm is None:
        return None
    p = np.asarray(perm.numpy() if isinstance(perm, _fg.Tensor) else perm, dtype=np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=np.int64)
    return _fg.from_numpy(inv)


def _host_lengths(lengths) -> np.ndarray:
    if isinstance(lengths, _fg.Tensor):
        return np.asarray(lengths.detach().numpy(), dtype=np.int64).reshape(-1)
    return np.asarray([int(v) for v in lengths], dtype=np.int64).reshape(-1)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right"):
    """Stack tensors of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), filling with padding_value."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, _fg.Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    lens = np.array([s.shape[0] if s.dim() > 0 else 1 for s in sequences], dtype=np.int64)
    trail = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trail:
            raise RuntimeError(f"pad_sequence: the trailing dimensions of every sequence must match, got "
                               f"{list(sequences[0].shape)} and {list(s.shape)}")
    T, B, total = int(lens.max()), len(sequences), int(lens.sum())
    flat = _fg.cat([s.reshape((-1,) + trail) for s in sequences], 0)
    pad = _fg.full((1,) + trail, padding_value, dtype=flat.dtype)
    flat = _fg.cat([flat, pad], 0)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    t = np.arange(T)[None, :]
    shift = (T - lens)[:, None] if padding_side == "left" else np.zeros((B, 1), np.int64)
    src = t - shift
    valid = (src >= 0) & (src < lens[:, None])
    idx = np.where(valid, starts[:, None] + src, total)  # (B, T)
    if not batch_first:
        idx = idx.T
    out = flat.index_select(0, _fg.from_numpy(np.ascontiguousarray(idx).reshape(-1)))
    return out.reshape(idx.shape + trail)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False):
    """Split a padded batch back into a list of tensors of the given lengths."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(_host_lengths(lengths))]


def _pack_index(lens_sorted: np.ndarray, T: int, batch_first: bool, B: int, order: np.ndarray):
    """Flat indices into a (T, B) (or (B, T)) padded batch of the packed rows, and batch_sizes."""
    t = np.arange(T)[:, None]
    mask = t < lens_sorted[None, :]  # (T, B) in sorted batch order
    tt, bb = np.nonzero(mask)  # row-major: time-major, sorted order within a step
    b = order[bb]
    flat = b * T + tt if batch_first else tt * B + b
    batch_sizes = mask.sum(1).astype(np.int64)
    return flat, batch_sizes


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True):
    """Pack a padded batch (T, B, *) (or (B, T, *)) of sequences with the given lengths."""
    lens = _host_lengths(lengths)
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                               "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                               "pack_sequence to sidestep this requirement if you do not need ONNX "
                               "exportability.")
        order = np.arange(lens.size, dtype=np.int64)
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable").astype(np.int64)
        sorted_indices = _fg.from_numpy(order)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    bdim = 0 if batch_first else 1
    B, T = input.shape[bdim], input.shape[1 - bdim]
    if lens.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={B})")
    if lens.size and lens.max() > T:
        raise RuntimeError(f"pack_padded_sequence: a length {int(lens.max())} exceeds the padded sequence "
                           f"length {T}")
    flat, batch_sizes = _pack_index(lens[order], T, batch_first, B, order)
    trail = tuple(input.shape[2:])
    data = input.reshape((T * B,) + trail).index_select(0, _fg.from_numpy(flat))
    return PackedSequence(data, _fg.from_numpy(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None):
    """Inverse of pack_padded_sequence: returns (padded, lengths), batch in the original order."""
    data, bs = sequence.data, _host_lengths(sequence.batch_sizes)
    T, B = int(bs.size), int(bs[0]) if bs.size else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in "
                             f"input, but got total_length={total_length} and max sequence length being {T}")
        T_out = int(total_length)
    else:
        T_out = T
    lens_sorted = (np.arange(B)[:, None] < bs[None, :]).sum(1).astype(np.int64)
    order = (np.asarray(sequence.sorted_indices.numpy(), np.int64) if sequence.sorted_indices is not None
             else np.arange(B, dtype=np.int64))
    flat, _ = _pack_index(lens_sorted, T_out, batch_first, B, order)
    n = data.shape[0]
    index = np.full(T_out * B, n, dtype=np.int64)
    index[flat] = np.arange(n)
    trail = tuple(data.shape[1:])
    ext = _fg.cat([data, _fg.full((1,) + trail, padding_value, dtype=data.dtype)], 0)
    shape = (B, T_out) if batch_first else (T_out, B)
    out = ext.index_select(0, _fg.from_numpy(index)).reshape(shape + trail)
    lengths = np.empty(B, np.int64)
    lengths[order] = lens_sorted
    return out, _fg.from_numpy(lengths)


def pack_sequence(sequences, enforce_sorted: bool = True):
    """Pack a list of tensors of shape (L_i, *) (pad then pack)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Inverse of pack_sequence: the list of tensors, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
