"""``torch.utils.data.dataloader``: ``DataLoader`` and its worker threads.

``num_workers > 0`` loads in worker *threads*, not processes as in PyTorch (see "workers"
below): the batches and their order are PyTorch's, but workers share the main process's
objects and random state. Shuffling draws from ember's generators, so a seeded
``ember.Generator`` makes the order reproducible (within ember, for any ``num_workers``).
"""
from __future__ import annotations

import collections
import copy
import itertools
import math
import queue
import threading
import weakref

from ... import _random
from ._utils.collate import default_collate, default_convert
from ._utils.pin_memory import pinner
from ._utils.worker import (
    _EXHAUSTED,
    _NEW_PASS,
    WorkerInfo,
    _Fetcher,
    _shutdown_workers,
    _worker_loop,
    _WorkerError,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]



def _base_seed(loader):
    """Draw the workers' base seed from the loader's generator, as PyTorch does on every new
    iterator (num_workers=0 too, so a seeded shuffle gives the same order for any
    num_workers)."""
    return int(_random.rng(loader.generator).integers(0, 2 ** 63))


class _SingleProcessIter:
    """``num_workers=0``: batches are loaded in the calling thread."""

    def __init__(self, loader):
        if loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        _base_seed(loader)
        self._index_iter = iter(loader._index_sampler)
        self._fetch = _Fetcher(loader).start()
        self._pin = pinner(loader)

    def __iter__(self):
        return self

    def __next__(self):
        data = self._fetch(next(self._index_iter))
        return data if self._pin is None else self._pin(data)


class _WorkerThreadsIter:
    """``num_workers > 0``: batch k goes to worker thread k % num_workers (skipping workers
    whose IterableDataset has ended), at most ``num_workers * prefetch_factor`` batches in
    flight, and batches are returned in order. The threads stop when the pass ends (unless
    persistent) or when this iterator is dropped, e.g. by leaving a loop early."""

    def __init__(self, loader):
        if loader.prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        n = self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._pin = pinner(loader)
        self._max_tasks = n * loader.prefetch_factor
        self._persistent = loader.persistent_workers
        # one task and one result queue per worker: each answers its tasks in order
        self._tasks = [queue.SimpleQueue() for _ in range(n)]
        self._results = [queue.SimpleQueue() for _ in range(n)]
        done = threading.Event()
        seed, fetch = _base_seed(loader), _Fetcher(loader)
        self._threads = []
        for i in range(n):
            info = WorkerInfo(id=i, num_workers=n, seed=seed + i, dataset=loader.dataset)
            args = (copy.copy(fetch), info, loader.worker_init_fn, self._tasks[i],
                    self._results[i], done)
            self._threads.append(threading.Thread(target=_worker_loop, args=args, daemon=True,
                                                  name=f"ember DataLoader worker {i}"))
            self._threads[-1].start()
        # the threads hold no reference to self, so dropping the iterator ends them
        self._shutdown = weakref.finalize(self, _shutdown_workers, self._tasks, done)
        self._start_pass(loader)

    def _start_pass(self, loader):
        self._index_iter = iter(loader._index_sampler)
        self._active = [True] * self._num_workers   # False once its IterableDataset ended
        self._pending = collections.deque()   # the worker of each batch in flight, oldest first
        self._next_worker = itertools.cycle(range(self._num_workers))
        for _ in range(self._max_tasks):
            self._put_task()

    def _reset(self, loader):
        """A new epoch with the same (persistent) threads: let the last one's batches in
        flight arrive and drop them, then have every worker start over."""
        while self._pending:
            worker = self._pending.popleft()
            if self._active[worker]:
                self._receive(worker)
        for q in self._tasks:
            q.put(_NEW_PASS)
        self._start_pass(loader)

    def _put_task(self):
        try:
            index = next(self._index_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._next_worker)
            if self._active[worker]:
                self._tasks[worker].put(index)
                self._pending.append(worker)
                return

    def _receive(self, worker):
        try:
            data = self._results[worker].get(timeout=self._timeout or None)
        except queue.Empty:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
        if data is _EXHAUSTED:
            self._active[worker] = False
        return data

    def __iter__(self):
        return self

    def __next__(self):
        while self._pending:
            worker = self._pending[0]
            # a worker that has ended skips the tasks it was sent meanwhile: nothing will come
            data = self._receive(worker) if self._active[worker] else _EXHAUSTED
            self._pending.popleft()
            self._put_task()
            if data is _EXHAUSTED:
                continue
            if isinstance(data, _WorkerError):
                data.reraise()
            return data if self._pin is None else self._pin(data)
        if not self._persistent:
            self._shutdown()
        raise StopIteration


def _check_multiprocessing_context(context, num_workers):
    """PyTorch's checks; the context is then unused (ember's workers are threads)."""
    import multiprocessing
    if context is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context={context!r}")
        context = multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={context}")
    return context


# ---------------------------------------------------------------------- loader
class DataLoader:
    """Iterate over ``dataset`` in (optionally shuffled) batches, collated by ``collate_fn``.

    ``num_workers > 0`` loads with that many worker *threads* (PyTorch uses processes): same
    batches in the same order, ``get_worker_info()``, ``worker_init_fn``, ``prefetch_factor``,
    ``timeout``, ``persistent_workers`` and worker errors behave as in PyTorch, but workers
    share the main process's objects and random state instead of getting copies, and
    ``in_order=False`` still returns batches in order.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
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
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation or (
                self._iterable and batch_size is not None) else default_convert
        self.collate_fn = collate_fn
        self.multiprocessing_context = _check_multiprocessing_context(multiprocessing_context,
                                                                      num_workers)
        self.persistent_workers = persistent_workers
        self._iterator = None   # the persistent workers' iterator, reused every epoch

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What yields the fetcher's indices: an IterableDataset's are placeholders."""
        if self._iterable:
            return itertools.repeat(None)
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _WorkerThreadsIter(self)
        if self._iterator is None:
            self._iterator = _WorkerThreadsIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)
