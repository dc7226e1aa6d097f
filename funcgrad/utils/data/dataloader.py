"""DataLoader (torch.utils.data.DataLoader): batches from a dataset, in this process or in worker processes.

With num_workers > 0, each iterator starts that many worker processes (see ._worker for the protocol):
indices go out on one queue per worker, round robin, at most prefetch_factor * num_workers at a time;
results come back on one queue and are reordered so that batches arrive in sampler order (unless
in_order=False). Large batches travel through shared memory (funcgrad.multiprocessing). Workers end when
the iterator is exhausted (unless persistent_workers), garbage collected, or fails (timeout, a worker
dying); an exception raised by the dataset in a worker, or a batch that cannot be pickled, is re-raised
here with the worker's traceback. While waiting for a batch the main process watches the workers'
process sentinels beside the result queue, so a worker that dies is reported at once (torch learns of it
from SIGCHLD), whatever the timeout.
pin_memory is accepted and, with no accelerator, ignored with torch's warning.
"""
from __future__ import annotations

import itertools
import multiprocessing as _pymp
import os
import queue
import signal
import time
import warnings
from multiprocessing import connection as _connection

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes

from ... import multiprocessing as _mp
from ...multiprocessing import reductions as _red
from . import _worker
from ._collate import default_collate, default_convert
from ._worker import ExceptionWrapper, get_worker_info  # noqa: F401
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _InfiniteConstantSampler(Sampler):
    """The index stream of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _draw_base_seed(generator) -> int:
    return int(_fg.empty((), dtype=_fg.int64).random_(generator=generator).item())


class DataLoader:
    """Iterates a dataset in batches (torch.utils.data.DataLoader); see the module docstring.

    shuffle draws from `generator` (or the default generator) as torch does, so the same seed gives torch's
    order; num_workers > 0 loads in worker processes.

    Examples:
        >>> import funcgrad as torch
        >>> from funcgrad.utils.data import DataLoader, TensorDataset
        >>> data = TensorDataset(torch.arange(5.0), torch.arange(5))
        >>> for x, y in DataLoader(data, batch_size=2):
        ...     print(x, y)
        tensor([0., 1.]) tensor([0, 1])
        tensor([2., 3.]) tensor([2, 3])
        tensor([4.]) tensor([4])
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device="", in_order=True):
        if not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise AssertionError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
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
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._IterableDataset_len_called = None
        self._iterator = None
        self.__initialized = True
        self._check_worker_number_rationality()

    # --- configuration -----------------------------------------------------------------------------------
    @property
    def multiprocessing_context(self):
        return self.__mp_ctx

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                valid = _pymp.get_all_start_methods()
                if ctx not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={ctx!r}")
                ctx = _pymp.get_context(ctx)
            elif not isinstance(ctx, _pymp.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={ctx}")
        self.__mp_ctx = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is "
                             f"initialized")
        super().__setattr__(attr, val)

    def _check_worker_number_rationality(self):
        if self.num_workers == 0:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. Our "
                          f"suggested max number of worker in current system is {cpus}, which is smaller than "
                          f"what this DataLoader is going to create. Please be aware that excessive worker "
                          f"creation might get DataLoader running slow or even freeze, lower the worker number "
                          f"to avoid potential slowness/freeze if necessary.", UserWarning, stacklevel=3)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    # --- iteration ---------------------------------------------------------------------------------------
    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._iterable:
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader: DataLoader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._len_called = loader._IterableDataset_len_called
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", UserWarning, stacklevel=4)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_base_seed(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._len_called is not None and self._num_yielded > self._len_called:
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be {self._len_called} (when "
                          f"accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ",
                          UserWarning, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessIter(_BaseIter):
    """Worker processes feeding one result queue; see the module docstring."""

    def __init__(self, loader):
        super().__init__(loader)
        self._shutdown = True  # until the workers exist
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        ctx = loader.multiprocessing_context or _mp.get_context()
        self._worker_result_queue = _worker.ResultQueue(ctx=ctx.get_context())
        self._workers_done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        self._worker_pids = []
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()
                w = ctx.Process(target=_worker.worker_loop, daemon=True,
                                args=(self._iterable, self._dataset, iq, self._worker_result_queue,
                                      self._workers_done_event, self._auto_collation, self._collate_fn,
                                      self._drop_last, self._base_seed, loader.worker_init_fn, i,
                                      self._num_workers, self._persistent_workers))
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
                self._shutdown = False
        except BaseException:
            self._shutdown_workers()
            raise
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    # --- receiving -----------------------------------------------------------------------------------
    def _try_get_data(self, timeout):
        """(True, item) from the result queue, or (False, None) after `timeout` seconds without one. Waits
        on the queue's pipe and on the sentinels of the workers that should be alive together, so that a
        worker's death raises as soon as it happens (after any results it sent are read)."""
        reader = self._worker_result_queue._reader
        deadline = time.monotonic() + timeout
        while True:
            live = [w.sentinel for i, w in enumerate(self._workers) if self._workers_status[i]]
            try:
                ready = _connection.wait([reader, *live], max(deadline - time.monotonic(), 0.0))
            except Exception:
                self._shutdown_workers()
                raise
            if reader in ready:
                _red._local.keep_fd = False
                try:
                    return True, self._worker_result_queue.get(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
                except queue.Empty:
                    continue
                except Exception:
                    self._shutdown_workers()
                    raise
                finally:
                    _red._local.keep_fd = True
            if ready:
                self._raise_worker_failure([s for s in live if s in ready])
            if time.monotonic() >= deadline:
                return False, None

    def _raise_worker_failure(self, sentinels):
        """Raise torch's RuntimeError for workers that died, from the reason (signal or exit code)."""
        failed = [w for w in self._workers if w.sentinel in sentinels]
        for w in failed:
            w.join(1.0)  # (the sentinel fires as the process exits, a moment before it can be reaped)
        pids = ", ".join(str(w.pid) for w in failed)
        cause = None
        w = failed[0]
        code = w.exitcode
        if code is not None and code < 0:
            try:
                name = signal.strsignal(-code) or f"signal {-code}"
            except ValueError:
                name = f"signal {-code}"
            msg = f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. "
            if -code == getattr(signal, "SIGBUS", None):
                msg += ("It is possible that dataloader's workers are out of shared memory. Please try to raise "
                        "your shared memory limit.")
            cause = RuntimeError(msg)
        elif code:
            cause = RuntimeError(f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code {code}. "
                                 f"Details are lost due to multiprocessing. Rerunning with num_workers=0 may "
                                 f"give better error trace.")
        self._shutdown_workers()
        raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from cause

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(_worker.MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    # sent to a worker whose IterableDataset ran out: no answer will come
                    del self._task_info[self._rcvd_idx]
                    self._tasks_outstanding -= 1
                self._rcvd_idx += 1   # (None: already delivered out of order)
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # --- sending -------------------------------------------------------------------------------------
    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_queue_idx_cycle)
            if self._workers_status[w]:
                break
        else:
            return  # every worker has run out of data
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    # --- shutting down -------------------------------------------------------------------------------
    def _shutdown_workers(self):
        """Stop and join every worker (terminating stragglers) and close the queues; idempotent."""
        if self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for i, q in enumerate(self._index_queues):
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            for w in self._workers:
                w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(1.0)
                if w.is_alive():
                    w.kill()
                    w.join()

    def __del__(self):
        if not getattr(self, "_shutdown", True):
            try:
                self._shutdown_workers()
            except Exception:  # interpreter shutdown: daemonic workers are reaped by multiprocessing
                pass
