"""Embedding and EmbeddingBag layers."""
from __future__ import annotations

from ...autograd import no_grad as _no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module, _changed_settings
from .linear import _empty

__all__ = ['Embedding', 'EmbeddingBag']


def _check_padding_idx(padding_idx, num_embeddings):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
            padding_idx = num_embeddings + padding_idx
    return padding_idx


class _EmbeddingBase(Module):
    def _init_weight(self, num_embeddings, embedding_dim, _weight, _freeze, dtype):
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with _no_grad():
                self.weight[self.padding_idx].fill_(0)

    def _repr_common(self, **first) -> str:
        """The table's sizes, then its settings that are not their defaults (torch's order: those in `first`,
        name=default, before max_norm, norm_type and scale_grad_by_freq)."""
        return f"{self.num_embeddings}, {self.embedding_dim}" + _changed_settings(
            self, {**first, "max_norm": None, "norm_type": 2, "scale_grad_by_freq": False})


class Embedding(_EmbeddingBase):
    """A lookup table of num_embeddings vectors of size embedding_dim, initialised from N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self._init_weight(num_embeddings, embedding_dim, _weight, _freeze, dtype)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        return self._repr_common(padding_idx=None) + _changed_settings(self, {"sparse": False})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is (a parameter over) the given 2D tensor, frozen by default."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(_EmbeddingBase):
    """Sums, means or maxes of bags of embeddings, without materialising the per-index embeddings' graph."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self._init_weight(num_embeddings, embedding_dim, _weight, False, dtype)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        return self._repr_common() + f", mode={self.mode!r}" + _changed_settings(self, {"padding_idx": None})

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
