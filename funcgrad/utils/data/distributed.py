"""DistributedSampler (torch.utils.data.distributed): each of num_replicas ranks gets its own slice.

Index layout as torch's: the (optionally shuffled) index list is padded by repeating its head up to a
multiple of num_replicas (or truncated, with drop_last), then rank r takes every num_replicas-th index
from position r. Shuffling uses a generator seeded with seed + epoch, so every rank draws the same
permutation and set_epoch() reshuffles; the permutation is funcgrad's randperm stream, not PyTorch's.
num_replicas and rank may be given explicitly, with no process group.
"""
from __future__ import annotations

import math

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _dist():
    try:
        from ... import distributed as dist
    except ImportError:
        return None
    return dist if getattr(dist, "is_available", lambda: False)() else None


class DistributedSampler(Sampler):
    """Restricts sampling to this rank's share of the dataset (see the module docstring)."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False):
        if num_replicas is None:
            dist = _dist()
            if dist is None:
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            dist = _dist()
            if dist is None:
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = _fg.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _fg.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size "
                                 f"({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not match num_samples "
                                 f"({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch; with shuffle=True the next iteration uses the permutation for seed + epoch."""
        self.epoch = epoch
