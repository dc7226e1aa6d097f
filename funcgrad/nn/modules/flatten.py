"""Flatten and Unflatten."""
from __future__ import annotations

from .module import Module

__all__ = ['Flatten', 'Unflatten']


class Flatten(Module):
    """Flatten dims start_dim..end_dim (default 1..-1: all but the batch dim)."""
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dimension `dim` into `unflattened_size` (a tuple of ints, one of which may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            self._require_tuple_int(unflattened_size)
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim, self.unflattened_size = dim, unflattened_size

    @staticmethod
    def _require_tuple_int(input):
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                    f"{type(elem).__name__} at pos {idx}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}")

    def forward(self, input):
        d = self.dim % input.dim() if input.dim() else 0
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            if s != -1:
                known *= s
        total = input.shape[d]
        if sizes.count(-1) > 1 or (-1 not in sizes and known != total) or (-1 in sizes and (known == 0 or
                                                                                          total % known)):
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {self.dim} "
                               f"({total}) in the input tensor")
        return input.unflatten(self.dim, tuple(sizes))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
