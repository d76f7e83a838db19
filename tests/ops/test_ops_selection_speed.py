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
