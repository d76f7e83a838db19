"""``Tensor.view(dtype)`` against PyTorch: a reinterpretation of the bytes sharing storage
(not a conversion), size-changing views of the last dim, no gradient, and the errors."""
import numpy as np
import pytest

import ember

from .conftest import to_np

CASES = [("float32", "int32", [1.0, -2.0]), ("float32", "float16", [1.0, -2.0]),
         ("float32", "uint8", [[1.0, -2.0], [0.5, 3.0]]), ("complex64", "float32", [1 + 2j]),
         ("float64", "int64", [3.5]), ("int16", "float32", [1, 2, 3, 4]),
         ("uint8", "bool", [0, 1]), ("int32", "int32", [5])]


@pytest.mark.parametrize("src,dst,data", CASES)
def test_matches_torch(torch, src, dst, data):
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(data, dtype=getattr(lib, src))
        y = x.view(getattr(lib, dst))
        outs.append((to_np(y), str(y.dtype), tuple(y.shape)))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1:] == outs[1][1:]


def test_shares_storage_and_never_requires_grad(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, -2.0])
        y = x.view(lib.int32)
        y[0] = 0
        assert x.tolist() == [0.0, -2.0] and x._version == 1
        a = lib.ones(2, requires_grad=True)
        v = a.view(lib.float16)
        assert not v.requires_grad and v.grad_fn is None


ERRORS = [
    lambda L: L.ones(3).view(L.float64),
    lambda L: L.ones(2, 3)[:, :2].view(L.float64),
    lambda L: L.ones(5)[1:].view(L.float64),
    lambda L: L.ones(2, 2).t().view(L.float16),
    lambda L: L.tensor(1.0).view(L.float16),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(torch, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
