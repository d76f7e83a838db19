"""Random samplers and the datasets that go with them (``ember.utils.data``) against PyTorch:
laziness (an endless sampler costs nothing up front), ``generator=`` everywhere, the
distributions drawn, and PyTorch's argument errors."""
import itertools
import tracemalloc

import numpy as np
import pytest

import ember
import ember.utils.data as edata

from ..oracle import raised


def test_an_endless_random_sampler_draws_lazily():
    """minGPT's and makemore's "infinite" sampler: replacement with num_samples=1e10."""
    sampler = edata.RandomSampler(range(50), replacement=True, num_samples=10 ** 10)
    assert len(sampler) == 10 ** 10
    tracemalloc.start()
    try:
        first = list(itertools.islice(iter(sampler), 1000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000 and all(0 <= i < 50 for i in first)
    loader = edata.DataLoader(range(50), batch_size=8, sampler=sampler)
    batch = next(iter(loader))
    assert batch.shape == (8,) and batch.dtype is ember.int64


def test_random_sampler_with_replacement_is_uniform_and_reproducible():
    g = ember.Generator().manual_seed(0)
    draws = list(edata.RandomSampler(range(5), replacement=True, num_samples=50001,
                                     generator=g))
    assert len(draws) == 50001
    counts = np.bincount(draws, minlength=5)
    assert (((counts - 50001 / 5) ** 2) / (50001 / 5)).sum() < 30  # 4 dof
    again = list(edata.RandomSampler(range(5), replacement=True, num_samples=50001,
                                     generator=ember.Generator().manual_seed(0)))
    assert draws == again


def test_random_sampler_without_replacement_chains_permutations():
    g = ember.Generator().manual_seed(1)
    draws = list(edata.RandomSampler(range(6), num_samples=15, generator=g))
    assert sorted(draws[:6]) == sorted(draws[6:12]) == list(range(6))
    assert len(set(draws[12:])) == 3
    epochs = [list(edata.RandomSampler(range(20), generator=g)) for _ in range(2)]
    assert epochs[0] != epochs[1] and sorted(epochs[0]) == list(range(20))


def test_without_a_generator_the_passes_follow_manual_seed():
    def two_passes():
        ember.manual_seed(3)
        s = edata.RandomSampler(range(30))
        return list(s), list(s)
    a, b = two_passes()
    assert a != b and (a, b) == two_passes()


def test_subset_random_sampler_permutes_the_given_indices():
    g = ember.Generator().manual_seed(2)
    sampler = edata.SubsetRandomSampler([10, 11, 12, 13, 14], generator=g)
    orders = [list(sampler) for _ in range(20)]
    assert all(sorted(o) == [10, 11, 12, 13, 14] for o in orders)
    assert len(set(map(tuple, orders))) > 1 and len(sampler) == 5


def test_weighted_random_sampler_follows_the_weights():
    g = ember.Generator().manual_seed(4)
    sampler = edata.WeightedRandomSampler([1.0, 0.0, 3.0], 40000, generator=g)
    assert sampler.weights.dtype is ember.float64 and len(sampler) == 40000
    counts = np.bincount(list(sampler), minlength=3)
    assert counts[1] == 0 and abs(counts[2] / 40000 - 0.75) < 0.01
    once = list(edata.WeightedRandomSampler([1.0, 2.0, 3.0, 0.5], 4, replacement=False,
                                            generator=g))
    assert sorted(once) == [0, 1, 2, 3]


WEIGHTED = {
    "zero_samples": lambda D: D.WeightedRandomSampler([1.0, 2.0], 0),
    "bool_samples": lambda D: D.WeightedRandomSampler([1.0, 2.0], True),
    "float_samples": lambda D: D.WeightedRandomSampler([1.0, 2.0], 2.0),
    "int_replacement": lambda D: D.WeightedRandomSampler([1.0, 2.0], 2, replacement=1),
    "2d_weights": lambda D: D.WeightedRandomSampler([[1.0, 2.0]], 2),
    "too_many_without_replacement": lambda D: list(D.WeightedRandomSampler([1.0, 2.0], 3,
                                                                           replacement=False)),
    "negative_weight": lambda D: list(D.WeightedRandomSampler([1.0, -2.0], 3)),
    "random_sampler_bad_replacement": lambda D: D.RandomSampler(range(3), replacement=1),
    "random_sampler_bad_num_samples": lambda D: D.RandomSampler(range(3), num_samples=0),
}


@pytest.mark.parametrize("name", sorted(WEIGHTED))
def test_sampler_errors_like_pytorch(torch, name):
    import torch.utils.data as tdata

    assert raised(WEIGHTED[name], edata) == raised(WEIGHTED[name], tdata) is not None


def test_sampler_module_exports_pytorchs_names(torch):
    import torch.utils.data.dataset as tdataset
    import torch.utils.data.sampler as tsampler

    from ember.utils.data import dataset, sampler
    assert sorted(sampler.__all__) == sorted(tsampler.__all__)
    assert sorted(dataset.__all__) == sorted(tdataset.__all__)


def test_dataloader_shuffle_draws_from_its_generator():
    def epoch(g):
        loader = edata.DataLoader(list(range(12)), batch_size=4, shuffle=True, generator=g)
        return [b.tolist() for b in loader]
    g = ember.Generator().manual_seed(5)
    first, second = epoch(g), epoch(g)
    assert first != second
    g2 = ember.Generator().manual_seed(5)
    assert (epoch(g2), epoch(g2)) == (first, second)
    state = ember.get_rng_state()
    epoch(ember.Generator().manual_seed(5))
    assert ember.equal(ember.get_rng_state(), state)  # the default generator is left alone


def test_random_split_takes_a_generator():
    parts = edata.random_split(range(10), [0.3, 0.7], generator=ember.Generator().manual_seed(6))
    again = edata.random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(6))
    assert [list(p) for p in parts] == [list(p) for p in again]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))


class _Stream(edata.IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_chain_and_stack_datasets_like_pytorch(torch):
    import torch.utils.data as tdata

    class TStream(tdata.IterableDataset):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            return iter(self.items)

        def __len__(self):
            return len(self.items)

    chained = edata.ChainDataset([_Stream([1, 2]), _Stream([3])])
    tchained = tdata.ChainDataset([TStream([1, 2]), TStream([3])])
    assert (list(chained), len(chained)) == (list(tchained), len(tchained))
    for D in (edata, tdata):
        with pytest.raises(AssertionError, match="^ChainDataset only supports IterableDataset$"):
            list(D.ChainDataset([[1, 2]]))
    for args, kwargs in (((range(3), "abc"), {}), ((), {"x": range(3), "y": "abc"})):
        e, t = edata.StackDataset(*args, **kwargs), tdata.StackDataset(*args, **kwargs)
        assert (e[1], len(e), e.__getitems__([0, 2])) == (t[1], len(t), t.__getitems__([0, 2]))
    for bad in (lambda D: D.StackDataset(range(3), x=range(3)), lambda D: D.StackDataset(),
                lambda D: D.StackDataset(range(3), range(4))):
        got = []
        for D in (edata, tdata):
            with pytest.raises(ValueError) as info:
                bad(D)
            got.append(str(info.value))
        assert got[0] == got[1]
    loader = edata.DataLoader(edata.StackDataset(ember.arange(6), ember.arange(6) * 10),
                              batch_size=3)
    assert [[t.tolist() for t in b] for b in loader] == [[[0, 1, 2], [0, 10, 20]],
                                                         [[3, 4, 5], [30, 40, 50]]]
