"""``torch.utils.data._utils.worker``: ``WorkerInfo``, ``get_worker_info`` and the loop each
worker thread runs."""
from __future__ import annotations

import dataclasses
import sys
import threading
import traceback

__all__ = ["WorkerInfo", "get_worker_info"]


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
    dataset: object
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
