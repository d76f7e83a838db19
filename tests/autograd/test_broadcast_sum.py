"""The gradient of broadcasting (``_broadcast.sum_to``): its short-tail path adds slices where
NumPy would sum a short trailing block row by row; the bits must be NumPy's sum's."""
import numpy as np
import pytest

import ember
from ember._broadcast import sum_to

SHAPES = [
    ((5000, 2), (5000, 1)),
    ((1000, 10, 3), (10, 1)),         # a kept dim, a leading dim summed as well
    ((1000, 10, 3), (1,)),            # everything summed: NumPy's own flat sum
    ((30, 100, 7), (30, 1, 1)),       # a trailing block of 700: NumPy's
    ((300, 2, 3), (300, 1, 1)),       # a trailing block of 6 over two axes
    ((300, 2, 3, 4), (300, 1, 1, 4)),  # the short axes are not the last: NumPy's
    ((4096, 7), (4096, 1)),
    ((4096, 8), (4096, 1)),           # 8: NumPy's pairwise sum, not slices
    ((8, 600, 2), (600, 1)),
]


def _numpy_sum_to(g, shape):
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return np.sum(g, axis=axes, keepdims=True).reshape(shape)


@pytest.mark.parametrize("gshape,shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64, np.complex64])
def test_sum_to_is_numpys_sum_bit_for_bit(gshape, shape, dtype):
    rng = np.random.default_rng(len(gshape) + gshape[-1])
    g = (rng.standard_normal(gshape) * 100).astype(dtype)
    if dtype != np.int64:
        g.flat[:gshape[-1]] = -0.0  # a row of negative zeros sums to +0.0 in NumPy
        g.flat[-1] = np.inf
    got, want = sum_to(np, g, shape), _numpy_sum_to(g, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got.real), np.signbit(want.real))


def test_sum_to_of_a_transposed_gradient():
    g = np.random.default_rng(0).standard_normal((3, 5000)).astype(np.float32).T
    assert np.array_equal(sum_to(np, g, (5000, 1)), g.sum(axis=1, keepdims=True))


def test_broadcast_gradient_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5000, 1)), rng.standard_normal((5000, 3))
    w = rng.standard_normal((5000, 3))
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        ((x * y) * lib.tensor(w)).sum().backward()
        grads.append(np.asarray(x.grad.detach().numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=0)
