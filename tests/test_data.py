"""ember.utils.data against torch.utils.data: batches, collation, shuffling, splits."""
import collections

import numpy as np
import pytest

import ember
from ember.utils import data as edata

torch = pytest.importorskip("torch")
from torch.utils import data as tdata  # noqa: E402


def _same(a, b):
    """Recursively compare an ember structure with a torch one (types, dtypes, values)."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, ember.Tensor)
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
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
    return lib.utils.data.TensorDataset(x, y) if lib is ember else tdata.TensorDataset(x, y)


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False),
                                                  (4, True), (20, False), (None, False)])
def test_tensor_dataset_batches(batch_size, drop_last):
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
def test_default_collate_matches_torch(kind, batch_size):
    out = []
    for lib, mod in ((ember, edata), (torch, tdata)):
        ds = _Samples(lib)
        ds.kind_name = kind
        out.append(list(mod.DataLoader(ds, batch_size=batch_size)))
    assert len(out[0]) == len(out[1])
    for a, b in zip(*out):
        _same(a, b)


def test_collate_errors():
    for bad in ([object(), object()], [[1, 2], [1]], [np.array(["a"]), np.array(["b"])]):
        errs = []
        for fn in (edata.default_collate, tdata.default_collate):
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
def test_random_split(lengths):
    ds = _tensor_ds(ember)
    parts = edata.random_split(ds, lengths, generator=ember.Generator().manual_seed(5))
    again = edata.random_split(ds, lengths, generator=ember.Generator().manual_seed(5))
    tparts = tdata.random_split(_tensor_ds(torch), lengths,
                                generator=torch.Generator().manual_seed(5))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert sorted(i for p in parts for i in p.indices) == list(range(10))
    for p in parts:
        assert isinstance(p, edata.Subset)
        for k in range(len(p)):
            assert int(p[k][1]) == p.indices[k]


def test_random_split_errors():
    for lengths in ([3, 3], [0.5, 0.6], [-0.5, 1.5]):
        errs = []
        for lib, mod in ((ember, edata), (torch, tdata)):
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


def test_dataset_base_and_tensor_dataset_errors():
    with pytest.raises(NotImplementedError):
        edata.Dataset()[0]
    msgs = []
    for lib, mod in ((ember, edata), (torch, tdata)):
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
])
def test_loader_argument_errors(kwargs):
    errs = []
    for lib, mod in ((ember, edata), (torch, tdata)):
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
