"""The embedding gradients at sizes past ``bincount``'s (``_segment_sum``'s sorted-runs path):
every mix of run lengths (a few long runs, many short ones, both, one index throughout, no
index), padding_idx and scale_grad_by_freq, float32 and float64, ``embedding_bag``, against
PyTorch and against an exact float64 sum."""
import numpy as np
import pytest

import ember
from ember.ops.nn import sparse

from ..conftest import to_np


def _indices(kind, n, num, rng):
    if kind == "few":  # long runs only
        return rng.integers(0, 5, n)
    if kind == "many":  # short runs only
        return rng.integers(0, num, n)
    if kind == "zipf":  # a few long runs among many short ones
        return (rng.zipf(1.5, n) - 1) % num
    if kind == "one":  # a single run
        return np.full(n, num - 1)
    return np.zeros(0, np.int64)


KINDS = ["few", "many", "zipf", "one", "empty"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_segment_sum_is_the_exact_sum(kind, dtype):
    rng = np.random.default_rng(0)
    num, n, d = 300, 4000, 24
    index = _indices(kind, n, num, rng)
    rows = rng.standard_normal((index.size, d)).astype(dtype)
    assert index.size * d > sparse._SMALL or kind == "empty"  # the sorted path
    got = sparse._segment_sum(np, rows, index, num)
    want = np.zeros((num, d))
    np.add.at(want, index, rows.astype(np.float64))
    assert got.dtype == dtype and got.shape == (num, d)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(rows).max(initial=1))
    # Tables of more than 2**16 rows sort the indices as they are (no 16-bit keys).
    big = sparse._segment_sum(np, rows, index * 300, num * 300)
    np.testing.assert_array_equal(big[::300], got)
    assert not big.reshape(num, 300, d)[:, 1:].any()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("kw", [{}, dict(padding_idx=3), dict(scale_grad_by_freq=True),
                                dict(padding_idx=0, scale_grad_by_freq=True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_grad_matches_torch_at_large_sizes(torch, kind, kw, dtype):
    rng = np.random.default_rng(1)
    num, d = 400, 40
    index = _indices(kind, 3000, num, rng).reshape(-1, 100)
    w = rng.standard_normal((num, d))
    v = rng.standard_normal(index.shape + (d,))
    grads = []
    for lib, dt in ((ember, dtype), (torch, dtype), (torch, "float64")):
        weight = lib.tensor(w, dtype=getattr(lib, dt), requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(index), weight, **kw)
        (out * lib.tensor(v, dtype=getattr(lib, dt))).sum().backward()
        grads.append(to_np(weight.grad))
    if dtype == "float64":
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
    else:  # float32 sums of up to 3000 terms: within float32 rounding of the exact sum
        absum = np.zeros_like(w)
        np.add.at(absum, index.reshape(-1), np.abs(v).reshape(-1, d))
        assert (np.abs(grads[0] - grads[2]) <= 1e-5 * np.abs(grads[2]) + 1e-6 * absum).all()
        assert (np.abs(grads[1] - grads[2]) <= 1e-5 * np.abs(grads[2]) + 1e-6 * absum).all()


def test_double_backward_at_large_sizes(torch):
    """The weight gradient's own derivative in the output gradient (create_graph=True)."""
    rng = np.random.default_rng(2)
    index = rng.integers(0, 50, (60, 30))
    w, v, u = (rng.standard_normal(s) for s in ((50, 40), (60, 30, 40), (50, 40)))
    outs = []
    for lib in (ember, torch):
        weight = lib.tensor(w, requires_grad=True)
        grad_out = lib.tensor(v, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(index), weight, padding_idx=2)
        (g,) = lib.autograd.grad(out, weight, grad_out, create_graph=True)
        (g * lib.tensor(u)).sum().backward()
        outs += [to_np(g), to_np(grad_out.grad)]
    np.testing.assert_allclose(outs[0], outs[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(outs[1], outs[3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_bag_matches_torch_at_large_sizes(torch, mode, dtype):
    rng = np.random.default_rng(3)
    n, num, d = 5000, 200, 30
    index = rng.integers(0, num, n)
    offsets = np.sort(rng.choice(np.arange(1, n), 150, replace=False))
    offsets = np.concatenate([[0, 0], offsets[:40], offsets[40:40], offsets[40:]])  # empties
    w, v = rng.standard_normal((num, d)), rng.standard_normal((offsets.size, d))
    results = []
    for lib in (ember, torch):
        weight = lib.tensor(w, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(index), weight, lib.tensor(offsets),
                                              mode=mode, padding_idx=7)
        (out * lib.tensor(v, dtype=getattr(lib, dtype))).sum().backward()
        results += [to_np(out), to_np(weight.grad)]
    tol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(results[0], results[2], rtol=tol, atol=tol)
    np.testing.assert_allclose(results[1], results[3], rtol=tol, atol=tol)


def test_a_few_indices_into_a_large_table_match_torch(torch):
    """A scalar index (or a handful) into a table of 1M elements: the sorted path too, whose
    table is zeros in the weight's dtype rather than bincount's float64."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((1200, 900)).astype(np.float32)
    for index in (np.array(7), np.array([5, 1199, 5, 0])):
        grads = []
        for lib in (ember, torch):
            weight = lib.tensor(w, requires_grad=True)
            out = lib.nn.functional.embedding(lib.tensor(index), weight)
            (out * 1.5).sum().backward()
            grads.append(to_np(weight.grad))
        np.testing.assert_array_equal(grads[0], grads[1])


def test_the_op_takes_the_sorted_path(monkeypatch):
    """The rules hand the kernel ember's NumPy namespace, not the numpy module: the sorted
    path must be taken all the same (bincount would give the same values, only slower)."""
    calls = []
    monkeypatch.setattr(sparse.np, "bincount", lambda *a, **k: calls.append(1))
    w = ember.randn(300, 40, requires_grad=True)
    ember.nn.functional.embedding(ember.arange(3000) % 300, w).sum().backward()
    assert not calls and to_np(w.grad).shape == (300, 40)
