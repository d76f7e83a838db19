"""``torch.utils.data``: datasets, samplers, ``DataLoader`` and ``default_collate``.

``num_workers > 0`` loads in worker *threads*, not processes as in PyTorch (see "workers"
below): the batches and their order are PyTorch's, but workers share the main process's
objects and random state. Shuffling draws from ember's generators, so a seeded
``ember.Generator`` makes the order reproducible (within ember, for any ``num_workers``).
"""
from __future__ import annotations

import collections
import collections.abc
import copy
import dataclasses
import itertools
import math
import queue
import re
import sys
import threading
import traceback
import warnings
import weakref

import numpy as np

from .. import _random
from .._creation import as_tensor, randperm, tensor
from .._random import Generator
from .._tensor import Tensor
from ..ops.shape import stack

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "DataLoader",
           "default_collate", "default_convert", "random_split", "get_worker_info"]


# ---------------------------------------------------------------------- datasets
class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is an iterable of samples (subclasses define ``__iter__``)."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are tuples ``(t[i] for t in tensors)``; all tensors share their first size."""

    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        import bisect
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if d == 0 else idx - self.cumulative_sizes[d - 1]
        return self.datasets[d][sample_idx]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random Subsets of the given lengths (or
    fractions summing to 1, whose remainders go round-robin to the first subsets)."""
    if generator is None:
        generator = _random.default_generator
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out


# ---------------------------------------------------------------------- samplers
class Sampler:
    """Base class: an iterable of dataset indices (or of index lists)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (a fresh one each epoch), or ``num_samples``
    draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement="
                            f"{self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            generator = Generator()
            generator.manual_seed(int(_random.rng(None).integers(0, 2 ** 63)))
        else:
            generator = self.generator
        rng = _random.rng(generator)
        if self.replacement:
            yield from rng.integers(0, n, size=self.num_samples).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ---------------------------------------------------------------------- collation
_np_str_obj_array_pattern = re.compile(r"[SaUO]")

_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                "lists; found {}")


def default_convert(data):
    """Turn NumPy arrays (and those inside containers) into tensors, without batching."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        if _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stack a list of samples into a batch: tensors and arrays are stacked on a new first
    dim, numbers become 1-D tensors (float64 / int64), dicts and sequences are collated
    field by field; strings are kept as lists."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic)
                                        and elem_type.__name__ not in ("str_", "string_")):
        if isinstance(elem, np.ndarray) and \
                _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return default_collate([as_tensor(b) for b in batch])
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=_float64())
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERR.format(elem_type))


def _float64():
    from .._dtypes import float64
    return float64


# ---------------------------------------------------------------------- workers
# ember's workers are threads, not processes: samples are NumPy arrays (no pickling needed),
# NumPy releases the GIL in most kernels, and the loader stays dependency-free. So a worker
# sees the main process's objects (``WorkerInfo.dataset`` IS the loader's dataset, not a copy)
# and shares its random state: workers do not reseed ``random`` / NumPy / ember.
_worker_local = threading.local()   # ``info``: the WorkerInfo of the worker thread running


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a DataLoader worker (PyTorch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Dataset
    rng: object = None
    worker_method: str = "thread"


def get_worker_info():
    """The ``WorkerInfo`` of the DataLoader worker calling it; None outside workers.

    Use it in ``IterableDataset.__iter__`` (or ``worker_init_fn``) to give each worker its own
    share of the data; without that, every worker yields the whole dataset.
    """
    return getattr(_worker_local, "info", None)


class _KeyErrorMessage(str):
    """A KeyError message that prints as is (KeyError shows the repr of its argument)."""

    def __repr__(self):
        return self


class _WorkerError:
    """The exception being handled in a worker, re-raised in the main thread as PyTorch does:
    same type, message ``Caught <type> in DataLoader worker process <id>.`` + the traceback."""

    def __init__(self, worker_id):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.msg = (f"Caught {exc_type.__name__} in DataLoader worker process {worker_id}.\n"
                    "Original " + "".join(traceback.format_exception(exc_type, exc, tb)))

    def reraise(self):
        msg = self.msg
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # the type cannot be built from one message (e.g. it takes several arguments)
            raise RuntimeError(msg) from None
        raise exception


class _Fetcher:
    """Turns one index of the loader's index sampler (a list of indices when auto-batching)
    into a batch. For an IterableDataset the index only says "one more" and samples come from
    the ``iter(dataset)`` made by ``start()``; StopIteration means it is exhausted."""

    def __init__(self, loader):
        # copies, not the loader: worker threads hold this, and must not keep the loader alive
        self.dataset = loader.dataset
        self.collate_fn = loader.collate_fn
        self.iterable = loader._iterable
        self.auto_collation = loader._auto_collation
        self.batch_size = loader.batch_size
        self.drop_last = loader.drop_last

    def start(self):
        """Begin a pass over the data (an epoch); returns self."""
        if self.iterable:
            self._it, self._ended = iter(self.dataset), False
        return self

    def __call__(self, index):
        if not self.iterable:
            if self.auto_collation:
                return self.collate_fn([self.dataset[i] for i in index])
            return self.collate_fn(self.dataset[index])
        if self.batch_size is None:
            return self.collate_fn(next(self._it))
        batch = []
        while not self._ended and len(batch) < self.batch_size:
            try:
                batch.append(next(self._it))
            except StopIteration:
                self._ended = True
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)


_EXHAUSTED = object()  # result: this worker's IterableDataset iterator has ended
_NEW_PASS = object()   # task: start a new epoch (persistent workers)
_SHUTDOWN = object()   # task: exit the thread


def _worker_loop(fetch, info, init_fn, tasks, results, done):
    """A worker thread: answers each index from ``tasks`` with a batch (or a _WorkerError) on
    ``results``, in order, until _SHUTDOWN. After its IterableDataset ends it answers once
    with _EXHAUSTED and then nothing until the next pass (the main thread stops waiting)."""
    _worker_local.info = info
    error = None
    try:
        if init_fn is not None:
            init_fn(info.id)
        fetch.start()
    except BaseException:
        error = _WorkerError(info.id)   # reported in place of every batch
    ended = False
    while True:
        task = tasks.get()
        if task is _SHUTDOWN or done.is_set():
            return
        if task is _NEW_PASS:
            ended = False
            if error is None:
                try:
                    fetch.start()
                except BaseException:
                    error = _WorkerError(info.id)
            continue
        if ended:
            continue
        if error is not None:
            results.put(error)
            continue
        try:
            data = fetch(task)
        except BaseException as e:   # all of them: a dead thread would leave the loader waiting
            if isinstance(e, StopIteration) and fetch.iterable:
                data, ended = _EXHAUSTED, True
            else:
                data = _WorkerError(info.id)
        results.put(data)


def _shutdown_workers(tasks, done):
    done.set()
    for q in tasks:
        q.put(_SHUTDOWN)


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

    def __iter__(self):
        return self

    def __next__(self):
        return self._fetch(next(self._index_iter))


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
            return data
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
