"""What runs inside a DataLoader worker process, and the pieces both sides of the queues share.

Protocol (as torch's): the main process puts `(send_idx, index)` on a worker's own index queue; the worker
fetches and collates, and puts `(send_idx, batch)` (or `(send_idx, ExceptionWrapper)`) on the single result
queue. `None` on an index queue tells the worker to exit; `_ResumeIteration` (persistent workers) restarts
its fetcher and is echoed back; an exhausted IterableDataset answers `_IterableDatasetStopIteration`.
A batch that cannot be pickled is answered with the pickling error in its place (`ResultQueue`).
"""
from __future__ import annotations

import multiprocessing.queues
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ..._torch import manual_seed as _manual_seed

# How often a waiting worker / main process re-checks that its peer is still alive (seconds).
MP_STATUS_CHECK_INTERVAL = 5.0
# Batches smaller than this travel by value through the result pipe; larger ones through shared memory.
SHARE_MIN_BYTES = 1 << 18

_worker_info = None


class WorkerInfo:
    """Describes the current DataLoader worker: id, num_workers, seed and its copy of the dataset."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process: its WorkerInfo (id, num_workers, seed, dataset); else None."""
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError shows the traceback text readably."""

    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried by type and formatted traceback (picklable)."""

    def __init__(self, exc_info=None, where: str = "in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise exc_type("Caught X <where>.\\nOriginal Traceback ..."), or RuntimeError if that fails."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class ResultQueue(multiprocessing.queues.Queue):
    """The workers' result queue. A plain Queue pickles in a feeder thread and, when pickling fails, prints
    the error and drops the item, so the main process would wait forever for that batch (torch's does).
    Here the error is sent in the batch's place, as an ExceptionWrapper naming the worker, and re-raised
    by the main process as for an error raised by the dataset."""

    worker_id = None  # set by the worker process that uses the queue

    def _on_queue_feeder_error(self, e, obj):
        if not (isinstance(obj, tuple) and len(obj) == 2):
            return super()._on_queue_feeder_error(e, obj)
        idx, data = obj
        what = "its exception" if isinstance(data, ExceptionWrapper) else "the batch"
        err = ExceptionWrapper(where=f"in DataLoader worker process {self.worker_id} while sending {what} "
                                     f"to the main process{_UNSENDABLE}")
        if isinstance(data, ExceptionWrapper):  # (its exception type is not importable here, say)
            err.exc_type = RuntimeError  # which always travels: this cannot fail twice
            err.exc_msg = f"{data.exc_msg}\nwhich could not be sent:\n{err.exc_msg}"
        self.put((idx, err))


_UNSENDABLE = (": it cannot be pickled. A DataLoader worker sends what the dataset and collate_fn return to the "
               "main process by pickling; return arrays, tensors, numbers, strings, or lists / tuples / dicts "
               "of them (not lambdas, generators, open files, locks, ...)")


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if getitems:
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    """Pulls len(index) samples (auto-collation) or one sample per fetch; StopIteration once exhausted."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.it))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.it)
        return self.collate_fn(data)


def make_fetcher(iterable: bool, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _numpy_seed(base_seed: int, worker_id: int):
    """A numpy.random seed distinct per (base_seed, worker_id) and unrelated to `base_seed + worker_id`
    (which seeds `random` and funcgrad), so the three generators do not share a stream."""
    return np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]).generate_state(4)


def _seed_worker(base_seed: int, worker_id: int) -> int:
    seed = base_seed + worker_id
    random.seed(seed)
    _manual_seed(seed)
    np.random.seed(_numpy_seed(base_seed, worker_id))
    return seed


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers, persistent_workers):
    """Body of a worker process (see the module docstring for the protocol)."""
    global _worker_info
    try:
        from ...multiprocessing import reductions
        reductions.MIN_SHARE_BYTES = SHARE_MIN_BYTES
        parent = os.getppid()
        if isinstance(data_queue, ResultQueue):
            data_queue.worker_id = worker_id
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=where)
        ended = False
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                ended = False
                try:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_error = ExceptionWrapper(where=where)
                continue
            if r is None:
                break
            if done_event.is_set() or ended:
                continue
            idx, index = r
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        ended = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
