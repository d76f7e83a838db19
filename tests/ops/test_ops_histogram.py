"""``torch.histogram`` against PyTorch: counts, weights, densities, explicit edges and range,
degenerate ranges, dtypes, the return type, and the errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np

X = [1.0, 2, 1, 4, 2.5, 3, 0.25]
CASES = [
    (X, 3, {}), (X, 4, dict(range=(0.0, 3.0))), ([2.0, 2, 2], 4, {}), ([], 2, {}),
    (X, [0.0, 1.5, 2.0, 5.0], dict(density=True)),
    (X, 3, dict(weight=[1.0, 2, 3, 4, 5, 6, 7])), (X, 5, dict(density=True, range=(-1.0, 6.0))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("data,bins,kwargs", CASES)
def test_matches_torch(torch, data, bins, kwargs, dtype):
    outs = []
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        kw = dict(kwargs)
        if "weight" in kw:
            kw["weight"] = lib.tensor(kw["weight"], dtype=dt)
        b = lib.tensor(bins, dtype=dt) if isinstance(bins, list) else bins
        r = lib.histogram(lib.tensor(data, dtype=dt), b, **kw)
        outs.append(r)
    assert type(outs[0]).__name__ == "histogram" and repr(outs[0]) == repr(outs[1])
    for a, b in zip(outs[0], outs[1]):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-6)


def test_random_data_and_method_match_torch(torch):
    data = np.random.default_rng(0).standard_normal(1000)
    for dtype in ("float32", "float64"):
        ours = ember.tensor(data, dtype=getattr(ember, dtype)).histogram(7)
        theirs = torch.tensor(data, dtype=getattr(torch, dtype)).histogram(7)
        np.testing.assert_array_equal(to_np(ours.hist), to_np(theirs.hist))
        np.testing.assert_allclose(to_np(ours.bin_edges), to_np(theirs.bin_edges), rtol=1e-6)


ERRORS = [
    (NotImplementedError, lambda L: L.histogram(L.tensor([1, 2]), 2)),
    (RuntimeError, lambda L: L.histogram(L.tensor([1.0, 2.0]), 0)),
    (RuntimeError, lambda L: L.histogram(L.tensor([1.0, 2.0]), 2, range=(3.0, 1.0))),
    (RuntimeError, lambda L: L.histogram(L.tensor([1.0, 2.0]), 2, range=(0.0, float("inf")))),
    (RuntimeError, lambda L: L.histogram(L.tensor([1.0, 2.0]), 2, weight=L.ones(3))),
]


@pytest.mark.parametrize("kind,make", ERRORS)
def test_errors_match_torch(torch, kind, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(kind) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
