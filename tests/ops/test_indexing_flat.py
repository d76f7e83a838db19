"""The large-array paths of gather's read and of the index-add behind its gradient and
``index_put_(..., accumulate=True)`` (``ops/indexing/reading.py``: flat positions, one
``take``, one ``bincount``), against PyTorch: duplicates, negative indices, both float
dtypes, and out-of-range indices raising as PyTorch does."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_large_gather_and_its_gradient_match_pytorch(dtype, dim):
    r = np.random.default_rng(dim)
    x = r.standard_normal((6, 40, 50)).astype(dtype)
    shape = [6, 40, 50]
    shape[dim] = 70  # more reads than entries: every gradient entry sums duplicates
    index = r.integers(0, x.shape[dim], shape)
    g = r.standard_normal(shape).astype(dtype)
    out = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = t.gather(dim, lib.tensor(index))
        y.backward(lib.tensor(g))
        out.append((y.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    tol = 1e-5 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_large_accumulating_index_put_matches_pytorch(dtype):
    r = np.random.default_rng(1)
    base = r.standard_normal((30, 40)).astype(dtype)
    rows = r.integers(-30, 30, 20000)  # negative indices too, many repeats
    cols = r.integers(-40, 40, 20000)
    values = r.standard_normal(20000).astype(dtype)
    got = ember.tensor(base).index_put_((ember.tensor(rows), ember.tensor(cols)),
                                        ember.tensor(values), accumulate=True)
    want = torch.tensor(base).index_put_((torch.tensor(rows), torch.tensor(cols)),
                                         torch.tensor(values), accumulate=True)
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


def test_large_accumulating_index_put_out_of_range_raises_as_pytorch():
    rows = np.zeros(20000, np.int64)
    rows[-1] = 30
    for lib in (ember, torch):
        x = lib.zeros(30, 40)
        with pytest.raises(IndexError):
            x.index_put_((lib.tensor(rows), lib.tensor(rows * 0)), lib.ones(20000),
                         accumulate=True)
        if lib is ember:  # (PyTorch has added the entries before the bad one)
            assert x.sum().item() == 0  # left as it was
