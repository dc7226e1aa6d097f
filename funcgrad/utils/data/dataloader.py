"""DataLoader and default_collate / default_convert (torch.utils.data), single-process only.

num_workers > 0 raises NotImplementedError in this version (no worker processes yet); pin_memory is
accepted and ignored (there is only host memory).
"""
from __future__ import annotations

import collections.abc as cabc
import re

import numpy as np

import funcgrad as _fg

from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert"]

_np_str_obj = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_convert(data):
    """numpy arrays (and numpy scalars) become tensors, recursively through dicts, named tuples and
    sequences; everything else is returned unchanged (used when batch_size is None)."""
    if isinstance(data, _fg.Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if data.dtype.kind in "SaUO":
            return data
        return _fg.as_tensor(data)
    if isinstance(data, cabc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, cabc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Collate a list of samples into a batch, as torch's default_collate: tensors are stacked along a new
    first dimension, numpy arrays and numpy scalars become stacked tensors, Python floats a float64 tensor,
    ints an int64 tensor (bools a bool tensor), strings stay a list; dicts, named tuples, tuples and lists
    are collated field by field (tuples come back as lists, as in torch)."""
    elem = batch[0]
    if isinstance(elem, _fg.Tensor):
        return _fg.stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if _np_str_obj.search(elem.dtype.str) is not None:
            raise TypeError(_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.ndim > 0:
            return default_collate([_fg.as_tensor(b) for b in batch])
        return _fg.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return _fg.tensor(list(batch))
    if isinstance(elem, float):
        return _fg.tensor(list(batch), dtype=_fg.float64)
    if isinstance(elem, int):
        return _fg.tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, cabc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, cabc.Sequence):
        it = iter(batch)
        n = len(next(it))
        if not all(len(e) == n for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(s)) for s in transposed]
        try:
            return type(elem)([default_collate(list(s)) for s in transposed])
        except TypeError:
            return [default_collate(list(s)) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))


class DataLoader:
    """Iterates a dataset in batches (torch.utils.data.DataLoader), in the calling process."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if num_workers > 0:
            raise NotImplementedError("funcgrad's DataLoader has no worker processes yet: use num_workers=0")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. let "
                             "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(indices)
        return [self.dataset[i] for i in indices]

    def __iter__(self):
        if self._iterable:
            return self._iter_iterable()
        if self.batch_sampler is not None:
            return (self.collate_fn(self._fetch(list(b))) for b in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _iter_iterable(self):
        if self.batch_size is None:
            for x in self.dataset:
                yield self.collate_fn(x)
            return
        batch = []
        for x in self.dataset:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
