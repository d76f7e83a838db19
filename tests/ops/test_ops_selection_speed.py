"""The vectorized kernels of the selection family (issue 19) against PyTorch, where a random
spec cannot reach: ties, NaN, signed zeros, integer dtypes, every dim, and the gradient
routed to the chosen index (float32 and float64; finite differences in float64).
"""
import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # the PyTorch oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
NAN, INF = float("nan"), float("inf")


def _inputs(rng, shape):
    """Ties (small integers), NaN among ties, signed zeros and infinities, random values."""
    ties = rng.integers(-2, 3, shape).astype(float)
    nans = ties.copy()
    nans.flat[rng.integers(0, max(nans.size, 1), 2 if nans.size else 0)] = NAN
    zeros = ties.copy()
    zeros[zeros == 0] = -0.0
    zeros.flat[::3] = 0.0
    extremes = np.where(rng.random(shape) < 0.5, INF, -INF)
    extremes.flat[::4] = NAN
    return [ties, nans, zeros, extremes, rng.standard_normal(shape)]


def _same(e, t):
    e, t = e.detach().numpy(), t.detach().numpy()
    np.testing.assert_array_equal(e, t)
    np.testing.assert_array_equal(np.signbit(e), np.signbit(t))


SHAPES = [(7,), (5, 6), (3, 4, 5), (1,), (6, 1), (2, 0, 3)]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_match_pytorch_at_ties_nan_and_zeros(name, dtype):
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        for dim in range(-len(shape), len(shape)):
            for data in _inputs(rng, shape):
                data = data.astype(dtype)
                e = ember.tensor(data, requires_grad=True)
                t = torch.tensor(data, requires_grad=True)
                (ev, ei), (tv, ti) = getattr(ember, name)(e, dim), getattr(torch, name)(t, dim)
                assert ei.tolist() == ti.tolist()
                _same(ev, tv)
                g = rng.standard_normal(shape).astype(dtype)
                ev.backward(ember.tensor(g))
                tv.backward(torch.tensor(g))
                np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6,
                                           atol=1e-6)


@needs_torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_of_integers_match_pytorch(name, dtype):
    data = np.random.default_rng(1).integers(0, 3, (4, 9)).astype(dtype)
    for dim in (0, 1):
        (ev, ei), (tv, ti) = (getattr(L, name)(L.tensor(data), dim) for L in (ember, torch))
        assert ei.tolist() == ti.tolist() and ev.tolist() == tv.tolist()


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremes_have_finite_difference_gradients(name):
    data = np.random.default_rng(2).permutation(24).reshape(2, 3, 4) * 0.5 - 3.0
    x = ember.tensor(data, requires_grad=True)
    for dim in (0, 1, 2):
        assert ember.autograd.gradcheck(lambda a: getattr(ember, name)(a, dim).values, [x])
        assert ember.autograd.gradgradcheck(lambda a: getattr(ember, name)(a, dim).values ** 2,
                                            [x])


def _sorted_topk(x, k, d, largest=True):
    """topk as the stable sort's first ``k``: the order the partition kernel must reproduce."""
    values, indices = x.sort(d, descending=largest, stable=True)
    return values.narrow(d, 0, k), indices.narrow(d, 0, k)


def _selection_calls(rng, n):
    """name: (call, the call done by the stable sort or None: forcing the sort path)."""
    k = int(rng.integers(1, n + 1))
    return {
        "topk": (lambda x, d: x.topk(k, d), lambda x, d: _sorted_topk(x, k, d)),
        "topk_smallest": (lambda x, d: x.topk(k, d, largest=False),
                          lambda x, d: _sorted_topk(x, k, d, largest=False)),
        "topk_1": (lambda x, d: x.topk(1, d), lambda x, d: _sorted_topk(x, 1, d)),
        "topk_1_smallest": (lambda x, d: x.topk(1, d, largest=False),
                            lambda x, d: _sorted_topk(x, 1, d, largest=False)),
        "topk_all": (lambda x, d: x.topk(n, d, largest=False),
                     lambda x, d: _sorted_topk(x, n, d, largest=False)),
        "kthvalue": (lambda x, d: x.kthvalue(k, d), None),
        "kthvalue_1": (lambda x, d: x.kthvalue(1, d, keepdim=True), None),
        "median": (lambda x, d: x.median(d), None),
        "median_keepdim": (lambda x, d: x.median(d, keepdim=True), None),
    }


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16"])
def test_partition_kernels_pick_what_the_stable_sort_picks(dtype, monkeypatch):
    """topk / kthvalue / median on slices long enough for the partition kernels give the
    values and indices of the stable sort (each call is run again with the sort forced):
    ties (many, few), NaN (none, some, most), signed zeros, every dim."""
    from ember.ops.sorting import ordering

    rng = np.random.default_rng(3)
    for trial in range(40):
        n = int(rng.integers(ordering._PARTITION_FROM, 3 * ordering._PARTITION_FROM))
        shape = [int(rng.integers(1, 4)), n] if trial % 2 else [n, int(rng.integers(1, 4)), 2]
        spread = [2, 5, 1000][trial % 3]
        data = rng.integers(-spread, spread, shape).astype(float)
        if dtype.startswith("float"):
            data[rng.random(shape) < [0, 0.02, 0.7][trial // 3 % 3]] = NAN
            data[data == 0] = -0.0 if trial % 5 == 0 else 0.0
        data = data.astype(dtype)
        dim = shape.index(n)
        for name, (call, by_sort) in _selection_calls(rng, n).items():
            fast_values, fast_indices = call(ember.tensor(data), dim)
            with monkeypatch.context() as m:
                m.setattr(ordering, "_PARTITION_FROM", 10 ** 9)
                values, indices = (by_sort or call)(ember.tensor(data), dim)
            assert fast_indices.tolist() == indices.tolist(), (name, trial)
            np.testing.assert_array_equal(fast_values.numpy(), values.numpy())
            assert fast_values.dtype == values.dtype


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_partition_kernels_match_pytorch_with_gradients(dtype):
    """Distinct values (NaN included: PyTorch's choice among ties is its own algorithm's),
    values, indices and the gradient routed to the chosen elements."""
    rng = np.random.default_rng(4)
    for shape, dim in [((5, 300), 1), ((300, 4), 0), ((2, 3, 257), -1), ((1000,), 0)]:
        data = rng.permutation(np.prod(shape)).reshape(shape).astype(dtype) - 500.0
        data.flat[rng.integers(0, data.size)] = NAN
        n = shape[dim]
        for name, (call, _) in _selection_calls(rng, n).items():
            e = ember.tensor(data, requires_grad=True)
            t = torch.tensor(data, requires_grad=True)
            ev, tv = call(e, dim), call(t, dim)
            assert ev.indices.tolist() == tv.indices.tolist(), name
            np.testing.assert_array_equal(ev.values.detach().numpy(), tv.values.detach().numpy())
            g = rng.standard_normal(tv.values.shape).astype(dtype)
            ev.values.backward(ember.tensor(g))
            tv.values.backward(torch.tensor(g))
            np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


def test_partition_kernels_have_finite_difference_gradients():
    data = np.random.default_rng(5).permutation(2 * 70).reshape(2, 70) * 0.25 - 9.0
    x = ember.tensor(data, requires_grad=True)
    for f in (lambda a: a.topk(3).values, lambda a: a.kthvalue(9).values ** 2,
              lambda a: a.median(1).values.exp(), lambda a: a.topk(5, largest=False).values):
        assert ember.autograd.gradcheck(f, [x])
        assert ember.autograd.gradgradcheck(f, [x])


@pytest.mark.parametrize("with_replacement", [False, True])
def test_combination_rows_are_itertools_in_order(with_replacement):
    import itertools

    from ember.ops.shape.joins import _combination_indices

    make = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    for n in range(8):
        for r in range(1, 5):
            columns = _combination_indices(n, r, with_replacement)
            assert len(columns) == r
            assert list(zip(*(c.tolist() for c in columns))) == list(make(range(n), r))


@needs_torch
@pytest.mark.parametrize("with_replacement", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_combinations_match_pytorch_with_gradients(with_replacement, dtype):
    data = np.random.default_rng(6).standard_normal(40).astype(dtype)
    data[3] = data[7]  # equal values: their gradients stay apart
    for r in (1, 2, 3):
        e = ember.tensor(data, requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        eo = ember.combinations(e, r, with_replacement)
        to = torch.combinations(t, r, with_replacement)
        np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
        g = np.random.default_rng(r).standard_normal(tuple(to.shape)).astype(dtype)
        eo.backward(ember.tensor(g))
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)
    x = ember.tensor(data[:6].astype("float64"), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember.combinations(a, 3, with_replacement), [x])


def test_combinations_build_only_the_wanted_rows():
    """``n = 200, r = 3`` with replacement: 1.35M rows (the grid would hold 8M)."""
    out = ember.combinations(ember.arange(200.0), 3, with_replacement=True)
    assert tuple(out.shape) == (1353400, 3)
    assert out[-1].tolist() == [199.0, 199.0, 199.0]


def _index_patterns(rng, n):
    return {
        "distinct": rng.permutation(n)[: max(n - 3, 1)],
        "pairs": np.repeat(np.arange(n), 2),
        "few_repeats": rng.integers(-n, n, 3 * n),           # negative indices among them
        "few_distinct": rng.integers(0, 3, 20 * n),          # many layers, three indices
        "many_both": np.concatenate([np.arange(n), np.zeros(40, np.int64)]),  # add.at
        "empty": np.zeros(0, np.int64),
    }


@pytest.fixture
def slices_added_at_any_size(monkeypatch):
    """``_add_slices_along`` even for the small gradients of these tests."""
    from ember.ops.indexing import reading

    monkeypatch.setattr(reading, "_ADD_AT_BELOW", 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_slice_gradients_add_like_add_at(dtype, slices_added_at_any_size):
    """The backward of reading slices by an index vector (index_select, x[i]) against
    ``np.add.at``: every pattern of repeats, every dim."""
    rng = np.random.default_rng(7)
    for shape in [(6, 5), (4, 7, 3)]:
        for dim in range(len(shape)):
            for index in _index_patterns(rng, shape[dim]).values():
                x = ember.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
                out = x.index_select(dim, ember.tensor(index % shape[dim]))
                g = rng.standard_normal(tuple(out.shape)).astype(dtype)
                out.backward(ember.tensor(g))
                expected = np.zeros(shape, dtype)
                np.add.at(expected, (slice(None),) * dim + (index % shape[dim],), g)
                np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-6)
                # x[..., i] with negative indices as given
                x.grad = None
                key = (slice(None),) * dim + (ember.tensor(index),)
                x[key].backward(ember.tensor(g))
                np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


@needs_torch
def test_repeat_interleave_gradients_match_pytorch(slices_added_at_any_size):
    rng = np.random.default_rng(8)
    data = rng.standard_normal((30, 20))
    repeats, index = rng.integers(0, 4, 20), rng.integers(0, 3, 200)
    for call in (lambda L, a: a.repeat_interleave(L.tensor(2), dim=0),
                 lambda L, a: a.repeat_interleave(L.tensor(repeats), dim=1),
                 lambda L, a: a[L.tensor(index)]):
        e = ember.tensor(data, requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        eo, to = call(ember, e), call(torch, t)
        g = rng.standard_normal(tuple(to.shape))
        eo.backward(ember.tensor(g))
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_slice_gradients_have_second_derivatives(slices_added_at_any_size):
    x = ember.tensor(np.random.default_rng(9).standard_normal((5, 4)), requires_grad=True)
    index = ember.tensor([0, 0, 3, 1, 3, 3])
    assert ember.autograd.gradcheck(lambda a: a.index_select(0, index) ** 2, [x])
    assert ember.autograd.gradgradcheck(lambda a: a[:, index.remainder(4)] ** 2, [x])


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_mode_picks_what_pytorch_picks(dtype):
    """Rows of 16 elements or fewer (insertion sort) and longer ones, distinct values, ties,
    signed zeros, NaN; the gradient goes to the reported index."""
    rng = np.random.default_rng(10)
    for trial in range(60):
        n = int(rng.integers(1, 40))
        spread = [3, 10, 10 ** 6][trial % 3]
        data = rng.integers(-spread, spread, (4, n)).astype(dtype)
        if dtype != "int64":
            data[data == 0] = -0.0 if trial % 2 else 0.0
            if trial % 5 == 0:
                data[rng.random(data.shape) < 0.1] = NAN
        for dim in (0, 1):
            (ev, ei), (tv, ti) = (L.tensor(data).mode(dim) for L in (ember, torch))
            assert ei.tolist() == ti.tolist(), (trial, data)
            _same(ev, tv)
    data = rng.permutation(300).reshape(3, 100).astype("float64")
    e, t = ember.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    e.mode(1).values.sum().backward()
    t.mode(1).values.sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_expand_gradients_sum_like_numpy(dtype):
    """The backward of expand (new leading dims, size-1 dims of every position, a short or
    long last dim, empty sizes) against NumPy's sum; and by finite differences."""
    rng = np.random.default_rng(11)
    for shape, sizes in [((5, 1), (4, 5, 3)), ((5, 1), (5, 2)), ((1, 3, 1), (2, 6, 3, 9)),
                         ((2, 1, 1), (2, 4, 8)), ((3, 1), (3, 0)), ((1,), (7,)),
                         ((4, 1), (2, 4, 1))]:
        x = ember.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
        g = rng.standard_normal(sizes).astype(dtype)
        x.expand(*sizes).backward(ember.tensor(g))
        lead = len(sizes) - len(shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                          if n == 1 and sizes[lead + i] != 1)
        expected = g.sum(axis=axes, keepdims=True).reshape(shape)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-5)
    x = ember.tensor(rng.standard_normal((3, 1)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: a.expand(2, 3, 4) * ember.arange(4.0), [x])
    assert ember.autograd.gradgradcheck(lambda a: (a.expand(2, 3, 4) ** 2), [x])


@needs_torch
def test_unfold_gradients_match_pytorch():
    """Overlapping windows, gaps between them, every dim; the windows' gradients added into
    one buffer."""
    rng = np.random.default_rng(12)
    data = rng.standard_normal((7, 9, 4))
    for dim, size, step in [(0, 2, 1), (1, 3, 2), (1, 2, 4), (2, 4, 1), (0, 1, 3), (1, 9, 1)]:
        e = ember.tensor(data, requires_grad=True)
        t = torch.tensor(data, requires_grad=True)
        eo, to = e.unfold(dim, size, step), t.unfold(dim, size, step)
        g = rng.standard_normal(tuple(to.shape))
        eo.backward(ember.tensor(g))
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_running_extreme_by_doubling_equals_accumulate():
    """The doubling scan (for namespaces without ``maximum.accumulate``) on NumPy arrays
    wrapped so that the accumulate path is not taken."""
    from ember.ops.sorting.scans import _running

    class Wrapped(np.ndarray):
        pass

    rng = np.random.default_rng(13)
    for n in (1, 2, 3, 7, 64, 100):
        x = rng.integers(-3, 4, (3, n)).astype(float)
        x[rng.random(x.shape) < 0.1] = NAN
        for ufunc in (np.maximum, np.minimum):
            got = _running(np, ufunc, x.view(Wrapped))
            np.testing.assert_array_equal(np.asarray(got), ufunc.accumulate(x, axis=-1))


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_index_add_and_accumulating_index_put_by_slices_match_pytorch(
        dtype, slices_added_at_any_size):
    """``index_add`` and ``index_put(accumulate=True)`` add into a copy of the input by
    ``_add_slices_along`` too (not into zeros): every pattern of repeats, every dim."""
    rng = np.random.default_rng(9)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for shape in [(6, 5), (4, 7, 3)]:
        for dim in range(len(shape)):
            for index in _index_patterns(rng, shape[dim]).values():
                index = index % shape[dim]
                src_shape = shape[:dim] + (index.size,) + shape[dim + 1:]
                x, src = rng.standard_normal(shape), rng.standard_normal(src_shape)
                g = rng.standard_normal(shape)
                calls = [lambda L, a, b: a.index_add(dim, L.tensor(index), b, alpha=-1.5)]
                if dim == 0:
                    calls.append(lambda L, a, b: a.index_put((L.tensor(index),), b,
                                                             accumulate=True))
                for call in calls:
                    outs = []
                    for L in (ember, torch):
                        a = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
                        b = L.tensor(src, dtype=getattr(L, dtype), requires_grad=True)
                        y = call(L, a, b)
                        y.backward(L.tensor(g, dtype=y.dtype))
                        outs.append([y.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
                    for e, t in zip(*outs):
                        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


@needs_torch
def test_accumulating_index_put_of_broadcast_values_matches_pytorch():
    """Values that broadcast over the picked slices go to ``add.at`` (not the slice path)."""
    rng = np.random.default_rng(10)
    x, v = rng.standard_normal((4, 5000)), rng.standard_normal((1, 5000))
    out = []
    for L in (ember, torch):
        y = L.tensor(x).index_put((L.tensor([0, 2, 2]),), L.tensor(v), accumulate=True)
        out.append(y.numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12, atol=1e-12)
