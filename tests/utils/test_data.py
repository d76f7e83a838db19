"""ember.utils.data against torch.utils.data: batches, collation, shuffling, splits, and
loading with worker threads (num_workers > 0)."""
import collections
import dataclasses
import gc
import threading
import time

import numpy as np
import pytest

import ember
from ember.utils import data as edata

from ..oracle import assert_same_tensor


def _is_torch_tensor(x):
    return type(x).__module__ == "torch" and type(x).__name__ == "Tensor"


def _same(a, b):
    """Recursively compare an ember structure with a torch one (types, dtypes, values)."""
    if _is_torch_tensor(b):
        assert isinstance(a, ember.Tensor)
        assert_same_tensor(a, b)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            _same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _tensor_ds(lib):
    x = lib.arange(30, dtype=lib.float32).reshape(10, 3)
    y = lib.arange(10)
    return lib.utils.data.TensorDataset(x, y)


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False),
                                                  (4, True), (20, False), (None, False)])
def test_tensor_dataset_batches(torch, batch_size, drop_last):
    tdata = torch.utils.data
    le = edata.DataLoader(_tensor_ds(ember), batch_size=batch_size, drop_last=drop_last)
    lt = tdata.DataLoader(_tensor_ds(torch), batch_size=batch_size, drop_last=drop_last)
    assert len(le) == len(lt)
    be, bt = list(le), list(lt)
    assert len(be) == len(bt) == len(lt)
    for a, b in zip(be, bt):
        _same(a, b)


Point = collections.namedtuple("Point", ["x", "y"])


class _Samples:
    def __init__(self, kind):
        self.kind = kind

    def __len__(self):
        return 7

    def __getitem__(self, i):
        arr = np.arange(4, dtype=np.float32) * i
        return {
            "numbers": (i, float(i) / 2, bool(i % 2)),
            "dict": {"a": arr, "label": i, "name": f"s{i}"},
            "np_scalar": np.float64(i) * 1.5,
            "np_int": np.int32(i),
            "list": [i, [float(i), 2.0]],
            "namedtuple": Point(i, float(i)),
            "nested_tensor": {"t": self.kind.full((2, 2), float(i)), "l": [self.kind.ones(1)]},
        }[self.kind_name]


@pytest.mark.parametrize("kind", ["numbers", "dict", "np_scalar", "np_int", "list",
                                  "namedtuple", "nested_tensor"])
@pytest.mark.parametrize("batch_size", [3, None])
def test_default_collate_matches_torch(torch, kind, batch_size):
    out = []
    for lib, mod in ((ember, edata), (torch, torch.utils.data)):
        ds = _Samples(lib)
        ds.kind_name = kind
        out.append(list(mod.DataLoader(ds, batch_size=batch_size)))
    assert len(out[0]) == len(out[1])
    for a, b in zip(*out):
        _same(a, b)


def test_collate_errors(torch):
    for bad in ([object(), object()], [[1, 2], [1]], [np.array(["a"]), np.array(["b"])]):
        errs = []
        for fn in (edata.default_collate, torch.utils.data.default_collate):
            with pytest.raises((TypeError, RuntimeError)) as info:
                fn(bad)
            errs.append((info.type, str(info.value)))
        assert errs[0] == errs[1]


def _orders(generator_seed, epochs=3, **kw):
    g = ember.Generator().manual_seed(generator_seed)
    loader = edata.DataLoader(_tensor_ds(ember), batch_size=4, shuffle=True, generator=g, **kw)
    return [[b[1].tolist() for b in loader] for _ in range(epochs)]


def test_shuffle_is_deterministic_and_a_permutation():
    a, b, c = _orders(0), _orders(0), _orders(1)
    assert a == b
    assert a != c
    for epoch in a:
        flat = [i for batch in epoch for i in batch]
        assert sorted(flat) == list(range(10))
        assert [len(x) for x in epoch] == [4, 4, 2]
    assert a[0] != a[1]  # a fresh permutation each epoch
    for epoch in _orders(0, drop_last=True):
        assert [len(x) for x in epoch] == [4, 4]


def test_shuffle_follows_global_seed():
    def run():
        ember.manual_seed(123)
        loader = edata.DataLoader(_tensor_ds(ember), batch_size=10, shuffle=True)
        return next(iter(loader))[1].tolist()
    assert run() == run()


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33],
                                     [10], [1.0]])
def test_random_split(torch, lengths):
    ds = _tensor_ds(ember)
    parts = edata.random_split(ds, lengths, generator=ember.Generator().manual_seed(5))
    again = edata.random_split(ds, lengths, generator=ember.Generator().manual_seed(5))
    tparts = torch.utils.data.random_split(_tensor_ds(torch), lengths,
                                           generator=torch.Generator().manual_seed(5))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    for p in parts:
        assert isinstance(p, edata.Subset)
        for k in range(len(p)):
            assert int(p[k][1]) == p.indices[k]


def test_random_split_errors(torch):
    for lengths in ([3, 3], [0.5, 0.6], [-0.5, 1.5]):
        errs = []
        for lib, mod in ((ember, edata), (torch, torch.utils.data)):
            with pytest.raises(ValueError) as info:
                mod.random_split(_tensor_ds(lib), lengths)
            errs.append(str(info.value))
        assert errs[0] == errs[1]


def test_subset_and_concat():
    ds = _tensor_ds(ember)
    sub = edata.Subset(ds, [9, 0, 4])
    assert len(sub) == 3 and sub[0][1].item() == 9 and sub[2][1].item() == 4
    cat = ds + sub
    assert len(cat) == 13 and cat[10][1].item() == 9 and cat[-1][1].item() == 4
    batches = list(edata.DataLoader(sub, batch_size=2))
    assert batches[0][1].tolist() == [9, 0]


def test_dataset_base_and_tensor_dataset_errors(torch):
    with pytest.raises(NotImplementedError):
        edata.Dataset()[0]
    msgs = []
    for lib, mod in ((ember, edata), (torch, torch.utils.data)):
        with pytest.raises(AssertionError) as info:
            mod.TensorDataset(lib.zeros(3), lib.zeros(4))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_iterable_dataset():
    class Stream(edata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in edata.DataLoader(Stream(), batch_size=3)] == \
        [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("kwargs", [
    dict(shuffle=True, sampler=[0, 1]),
    dict(batch_size=None, drop_last=True),
    dict(batch_size=0),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="bogus"),
])
def test_loader_argument_errors(torch, kwargs):
    errs = []
    for lib, mod in ((ember, edata), (torch, torch.utils.data)):
        with pytest.raises(ValueError) as info:
            mod.DataLoader(_tensor_ds(lib), **kwargs)
        errs.append(str(info.value))
    assert errs[0] == errs[1]


def test_custom_collate_and_samplers():
    loader = edata.DataLoader(_tensor_ds(ember), batch_size=5, collate_fn=lambda b: len(b))
    assert list(loader) == [5, 5]
    loader = edata.DataLoader(_tensor_ds(ember), batch_sampler=[[1, 2], [7]])
    assert [b[1].tolist() for b in loader] == [[1, 2], [7]]
    loader = edata.DataLoader(_tensor_ds(ember), sampler=[3, 1], batch_size=2)
    assert [b[1].tolist() for b in loader] == [[3, 1]]


# ---------------------------------------------------------------------- worker threads
# ember's workers are threads, PyTorch's processes: the batches, their order and the errors
# must agree. PyTorch's worker processes take ~0.1 s each to start, so few loaders use them.
_MANY_WORKERS = "ignore:This DataLoader will create"   # PyTorch's warning on a 2-CPU machine


class _WhoLoads:
    """Sample i is (i, id of the worker loading it), -1 outside workers."""

    def __init__(self, mod, n=10):
        self.get_worker_info, self.n = mod.get_worker_info, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = self.get_worker_info()
        return i, -1 if info is None else info.id


def _split(batch):
    """(indices, worker ids) of a _WhoLoads batch, auto-batched or not."""
    i, w = batch
    return (i.tolist(), w.tolist()) if isinstance(i, ember.Tensor) else ([i], [w])


def _wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.001)


@pytest.mark.parametrize("num_workers,batch_size,drop_last", [(2, 3, False), (3, 4, True),
                                                              (2, None, False)])
@pytest.mark.filterwarnings(_MANY_WORKERS)
def test_workers_map_style_match_torch(torch, num_workers, batch_size, drop_last):
    kw = dict(batch_size=batch_size, drop_last=drop_last, num_workers=num_workers)
    got = list(edata.DataLoader(_WhoLoads(edata), **kw))
    want = list(torch.utils.data.DataLoader(_WhoLoads(torch.utils.data), **kw))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        _same(a, b)


@pytest.mark.parametrize("num_workers", [1, 2, 3])
@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                dict(batch_size=None), dict(batch_size=2, in_order=False),
                                dict(batch_size=3, prefetch_factor=1)])
def test_workers_give_the_single_process_batches(num_workers, kw):
    ds = _WhoLoads(edata, 11)
    single = [_split(b) for b in edata.DataLoader(ds, **{k: v for k, v in kw.items()
                                                          if k != "prefetch_factor"})]
    assert all(w == [-1] * len(w) for _, w in single)   # get_worker_info() is None in main
    batches = [_split(b) for b in edata.DataLoader(ds, num_workers=num_workers, **kw)]
    assert [i for i, _ in batches] == [i for i, _ in single]
    for k, (_, workers) in enumerate(batches):
        assert workers == [k % num_workers] * len(workers)   # batch k: worker k % num_workers


def test_workers_follow_the_seeded_shuffle():
    def epochs(**kw):
        loader = edata.DataLoader(_WhoLoads(edata, 11), batch_size=4, shuffle=True,
                                  generator=ember.Generator().manual_seed(7), **kw)
        return [[_split(b)[0] for b in loader] for _ in range(3)]

    single = epochs()
    assert single[0] != single[1]
    assert epochs(num_workers=2) == single
    assert epochs(num_workers=3, prefetch_factor=1) == single
    # persistent workers draw their base seed once, as PyTorch's do: only epoch 1 agrees
    persistent = epochs(num_workers=2, persistent_workers=True)
    assert persistent[0] == single[0]
    for epoch in persistent:
        assert sorted(i for batch in epoch for i in batch) == list(range(11))


def _stream_iter(self):
    info = self.get_worker_info()
    if info is None or self.mode == "all":
        return iter(range(7))
    if self.mode == "shard":
        return iter(range(info.id, 7, info.num_workers))
    return iter(range(100 * info.id, 100 * info.id + info.id + 1))   # worker w: w + 1 samples


def _stream(mod, mode):
    """An IterableDataset of ``mod`` whose workers yield all of 0..6 ("all"), their share of
    it ("shard"), or different numbers of samples ("uneven")."""
    ds = type("Stream", (mod.IterableDataset,), {"__iter__": _stream_iter})()
    ds.get_worker_info, ds.mode = mod.get_worker_info, mode
    return ds


def _plain(batch):
    return batch.tolist() if hasattr(batch, "tolist") else batch


@pytest.mark.parametrize("mode,num_workers,batch_size,drop_last", [
    ("all", 2, None, False), ("all", 3, 2, True), ("shard", 3, 3, False),
    ("shard", 2, 3, True), ("uneven", 3, 2, False)])
@pytest.mark.filterwarnings(_MANY_WORKERS)
def test_iterable_dataset_workers_match_torch(torch, mode, num_workers, batch_size, drop_last):
    kw = dict(batch_size=batch_size, drop_last=drop_last, num_workers=num_workers)
    got = [_plain(b) for b in edata.DataLoader(_stream(edata, mode), **kw)]
    want = [_plain(b) for b in torch.utils.data.DataLoader(_stream(torch.utils.data, mode), **kw)]
    assert got == want
    if mode == "all":   # every worker iterates the whole dataset, round-robin
        single = [_plain(b) for b in edata.DataLoader(_stream(edata, mode),
                                                       batch_size=batch_size, drop_last=drop_last)]
        assert got == [b for b in single for _ in range(num_workers)]


class _Info:
    def __init__(self, mod):
        self.get_worker_info = mod.get_worker_info

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = self.get_worker_info()
        return info.id, info.num_workers, info.dataset is self, info.seed - info.id


def test_get_worker_info_matches_torch(torch):
    out = []
    for mod in (edata, torch.utils.data):
        assert mod.get_worker_info() is None
        rows = list(mod.DataLoader(_Info(mod), batch_size=None, num_workers=2))
        assert len({row[3] for row in rows}) == 1   # seed: one base seed + the worker id
        out.append([row[:3] for row in rows])
    assert out[0] == out[1] == [[0, 2, True], [1, 2, True], [0, 2, True], [1, 2, True]]
    # same fields, repr and immutability as PyTorch's WorkerInfo (whose method may be "thread")
    twi = torch.utils.data._utils.worker.WorkerInfo
    assert [f.name for f in dataclasses.fields(edata._utils.worker.WorkerInfo)] == \
        [f.name for f in dataclasses.fields(twi)]
    seen = []
    ds = type("Repr", (), {"__len__": lambda self: 1,
                           "__getitem__": lambda self, i: seen.append(edata.get_worker_info())})()
    list(edata.DataLoader(ds, batch_size=None, num_workers=1, collate_fn=lambda x: x))
    (info,) = seen
    assert repr(info) == repr(twi(id=0, num_workers=1, seed=info.seed, dataset=ds,
                                  worker_method="thread"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.id = 3


def test_worker_init_fn_runs_once_in_each_worker_before_loading():
    calls = []

    class Checked(_WhoLoads):
        def __getitem__(self, i):
            assert edata.get_worker_info().id in [c[0] for c in calls]
            return super().__getitem__(i)

    def init(worker_id):
        info = edata.get_worker_info()
        calls.append((worker_id, info.id, info.num_workers))

    batches = list(edata.DataLoader(Checked(edata), batch_size=2, num_workers=3,
                                    worker_init_fn=init))
    assert len(batches) == 5
    assert sorted(calls) == [(0, 0, 3), (1, 1, 3), (2, 2, 3)]
    calls.clear()
    loader = edata.DataLoader(Checked(edata), batch_size=2, num_workers=2, worker_init_fn=init)
    assert [_split(b) for b in loader] == [_split(b) for b in loader]
    assert sorted(calls) == [(0, 0, 2), (0, 0, 2), (1, 1, 2), (1, 1, 2)]   # once per epoch
    calls.clear()
    loader = edata.DataLoader(Checked(edata), batch_size=2, num_workers=2, worker_init_fn=init,
                              persistent_workers=True)
    assert [_split(b) for b in loader] == [_split(b) for b in loader]
    assert sorted(calls) == [(0, 0, 2), (1, 1, 2)]   # persistent workers: once


class _TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class _Faulty:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"bad index {i}")
        if i == 5:
            raise KeyError("k")
        if i == 6:
            raise _TwoArgError(1, 2)   # cannot be rebuilt from one message: a RuntimeError
        return i


def _next_all(it):
    """What each next(it) gives until the end: a value, or an error's type and lines 1, 2
    and last (its traceback in between differs)."""
    out = []
    while True:
        try:
            out.append(next(it))
        except StopIteration:
            return out
        except Exception as e:
            lines = str(e).splitlines()
            out.append((type(e).__name__, lines[0], lines[1], lines[-1]))


def test_worker_errors_match_torch(torch):
    got, want = (_next_all(iter(mod.DataLoader(_Faulty(), batch_size=None, num_workers=2)))
                 for mod in (edata, torch.utils.data))
    assert got == want
    assert got[3] == ("ValueError", "Caught ValueError in DataLoader worker process 1.",
                      "Original Traceback (most recent call last):", "ValueError: bad index 3")
    assert got[4] == 4 and got[7] == 7   # the loader goes on after an error


def test_worker_init_fn_error_matches_torch(torch):
    def init(worker_id):
        if worker_id == 1:
            raise RuntimeError("init failed")

    # (run to the end: PyTorch's loader takes 10 s to shut down when left after this error)
    got, want = (_next_all(iter(mod.DataLoader(list(range(4)), batch_size=None, num_workers=2,
                                               worker_init_fn=init)))
                 for mod in (edata, torch.utils.data))
    failed = ("RuntimeError", "Caught RuntimeError in DataLoader worker process 1.",
              "Original Traceback (most recent call last):", "RuntimeError: init failed")
    assert got[:3] == want[:3] == [0, failed, 2]
    # PyTorch's worker then fails on an UnboundLocalError of its own; ember's repeats the error
    assert got[3] == failed


class _Gated:
    """Sample 0 waits for ``gate`` (at most ``wait`` s: PyTorch's worker has its own copy)."""

    def __init__(self, wait):
        self.gate, self.wait = threading.Event(), wait

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 0:
            self.gate.wait(self.wait)
        return i


@pytest.mark.slow
def test_timeout(torch):
    msgs = []
    for mod in (edata, torch.utils.data):
        ds = _Gated(5 if mod is edata else 0.3)
        it = iter(mod.DataLoader(ds, batch_size=None, num_workers=2, timeout=0.05))
        with pytest.raises(RuntimeError) as info:
            next(it)
        msgs.append(str(info.value))
        ds.gate.set()
        # PyTorch's loader left after a timeout takes 10 s to shut down if collected later
        del it, info
        gc.collect()
    assert msgs[0] == msgs[1] == "DataLoader timed out after 0.05 seconds"
    # a batch that comes late is not lost: the next call waits for it again
    ds = _Gated(5)
    it = iter(edata.DataLoader(ds, batch_size=None, num_workers=2, timeout=0.25))
    with pytest.raises(RuntimeError, match="timed out after 0.25 seconds"):
        next(it)
    ds.gate.set()
    assert list(it) == [0, 1, 2, 3]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # PyTorch's
def test_iteration_errors_match_torch(torch):   # half-made iterator fails in its __del__
    for kw, err in ((dict(timeout=1), AssertionError),
                    (dict(num_workers=1, prefetch_factor=0), AssertionError),
                    (dict(num_workers=1, multiprocessing_context=5), TypeError)):
        msgs = []
        for mod in (edata, torch.utils.data):
            with pytest.raises(err) as info:
                iter(mod.DataLoader(list(range(4)), **kw))
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]


class _Recording:
    def __init__(self, n=20):
        self.n, self.loaded = n, []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.loaded.append(i)
        return i


@pytest.mark.parametrize("num_workers,prefetch_factor", [(2, None), (3, 1)])
def test_prefetch_is_bounded(num_workers, prefetch_factor):
    ds = _Recording()
    it = iter(edata.DataLoader(ds, batch_size=None, num_workers=num_workers,
                               prefetch_factor=prefetch_factor))
    cap = num_workers * (prefetch_factor or 2)
    for consumed in range(3):
        _wait_for(lambda: len(ds.loaded) == cap + consumed)
        time.sleep(0.02)   # give the workers the time to (wrongly) load more
        assert sorted(ds.loaded) == list(range(cap + consumed))
        assert next(it) == consumed


def _new_workers(before):
    """The DataLoader worker threads alive now that were not in ``before``."""
    return {t for t in threading.enumerate()
            if t.name.startswith("ember DataLoader worker") and t not in before}


def _assert_ended(threads):
    for t in threads:
        t.join(timeout=5)
        assert not t.is_alive()


@pytest.mark.slow
def test_worker_threads_end():
    loader = edata.DataLoader(_WhoLoads(edata, 40), batch_size=None, num_workers=3)
    # leaving a loop early drops its iterator, which stops the threads
    before = set(threading.enumerate())
    for _ in loader:
        threads = _new_workers(before)
        break
    assert len(threads) == 3 and all(t.daemon for t in threads)
    _assert_ended(threads)
    # so does the end of a pass, while the iterator is still referenced
    before = set(threading.enumerate())
    it = iter(loader)
    threads = _new_workers(before)
    assert len(threads) == 3 and len(list(it)) == 40
    _assert_ended(threads)
    # persistent workers outlive their passes and end with their loader
    loader = edata.DataLoader(_stream(edata, "all"), num_workers=2, persistent_workers=True)
    before = set(threading.enumerate())
    it = iter(loader)
    threads = _new_workers(before)
    next(it)
    del it
    assert len(list(loader)) == 14 and len(list(loader)) == 14
    assert len(threads) == 2 and all(t.is_alive() for t in threads)
    del loader
    gc.collect()
    _assert_ended(threads)


@pytest.mark.parametrize("mode", ["map", "all", "uneven"])
def test_persistent_workers_restart_after_a_partial_epoch(mode):
    ds, plain = (_WhoLoads(edata, 9), _split) if mode == "map" else (_stream(edata, mode), _plain)
    fresh = [plain(b) for b in edata.DataLoader(ds, batch_size=2, num_workers=3)]
    loader = edata.DataLoader(ds, batch_size=2, num_workers=3, persistent_workers=True)
    assert plain(next(iter(loader))) == fresh[0]
    for _ in range(2):
        assert [plain(b) for b in loader] == fresh


@pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_pin_memory_without_an_accelerator_warns_and_gives_the_batches(torch, num_workers):
    """PyTorch's warning, once per iterator, and the batches unpinned."""
    got = {}
    for lib in (ember, torch):
        data = lib.utils.data.TensorDataset(lib.arange(6.0).reshape(3, 2), lib.arange(3))
        loader = lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True,
                                           num_workers=num_workers)
        with pytest.warns(UserWarning) as caught:
            batches = list(loader)
        got[lib] = ([str(w.message) for w in caught],
                    [[t.tolist() for t in b] for b in batches], batches[0][0].is_pinned())
    assert got[ember] == got[torch]
    assert got[ember][0] == ["'pin_memory' argument is set as true but no accelerator is "
                             "found, then device pinned memory won't be used."]


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")
def test_pin_memory_pins_every_tensor_of_a_batch():
    Pair = collections.namedtuple("Pair", "x y")
    data = [Pair(ember.ones(2), {"y": [ember.zeros(1), "label"]}) for _ in range(4)]
    batch = next(iter(edata.DataLoader(data, batch_size=2, pin_memory=True)))
    assert isinstance(batch, Pair) and batch.x.is_pinned() and batch.y["y"][0].is_pinned()
    assert batch.y["y"][1] == ["label", "label"]
