"""The gradient of broadcasting (``_broadcast.sum_to``): its short-tail path adds slices where
NumPy would sum a short trailing block row by row; the bits must be NumPy's sum's. Its
short-head path (``sum_head``, also ``ember.sum`` over leading dims) sums blocks of rows:
at least as close to the exact sum as NumPy's, with NumPy's infinities, NaNs and zeros."""
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


HEAD_SHAPES = [  # (shape, leading axes summed)
    ((5000, 3), 1), ((4099, 2, 5), 1), ((4099, 2, 5), 2), ((333, 127), 1), ((10000, 1), 1),
    ((2, 3, 1000, 4), 3), ((8191, 3), 1), ((8193, 1), 1),
    # up to 1024 rows: one product with ones (a Linear's bias gradient)
    ((512, 27), 1), ((512, 64), 1), ((32, 16, 27), 2), ((1024, 4), 1), ((1025, 4), 1)]


@pytest.mark.parametrize("shape,m", HEAD_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_head_is_at_least_as_close_as_numpys_sum(shape, m, dtype):
    from ember._broadcast import sum_head

    rng = np.random.default_rng(shape[0])
    g = (rng.standard_normal(shape) * 100 + 30).astype(dtype)
    got = sum_head(g, tuple(range(m)))
    want = g.sum(axis=tuple(range(m)), keepdims=True)
    assert got is not None and got.shape == want.shape and got.dtype == want.dtype
    exact = g.astype(np.longdouble).sum(axis=tuple(range(m)), keepdims=True)
    bound = 4 * np.finfo(dtype).eps * np.abs(g).astype(np.longdouble).sum(
        axis=tuple(range(m)), keepdims=True)
    assert np.all(np.abs(got - exact) <= np.abs(want - exact) + bound)
    sums = sum_to(np, g, shape[m:])
    assert np.array_equal(sums, got.reshape(shape[m:]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_head_special_values_as_numpy(dtype):
    from ember._broadcast import sum_head

    g = np.ones((6000, 5), dtype)
    g[:, 0] = -0.0                      # a column of negative zeros
    g[17, 1] = np.inf                   # one infinity
    g[5, 2], g[5999, 2] = np.inf, -np.inf  # both: NaN
    g[4000, 3] = np.nan
    g[:, 4] = 0.0
    got, want = sum_head(g, (0,)), g.sum(axis=0, keepdims=True)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_head_of_few_rows_special_values_as_numpy(dtype):
    """The product with ones (up to 1024 rows): NumPy's infinities, NaNs and zeros too."""
    from ember._broadcast import sum_head

    g = np.ones((700, 9), dtype)
    g[:, 0] = -0.0
    g[17, 1] = np.inf
    g[5, 2], g[699, 2] = np.inf, -np.inf
    g[400, 3] = np.nan
    g[:, 4] = 0.0
    g[3, 5] = -np.inf
    g[:, 6] = np.finfo(dtype).max / 400  # overflows to inf, as NumPy's sum does
    got, want = sum_head(g, (0,)), g.sum(axis=0, keepdims=True)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_sum_head_leaves_other_cases_to_numpy():
    from ember._broadcast import sum_head

    g = np.ones((5000, 3), np.float32)
    assert sum_head(g, (1,)) is None                       # a trailing axis
    assert sum_head(g, (0, 1)) is None                     # everything
    assert sum_head(g.T.copy().T, (0,)) is None            # not C-contiguous
    assert sum_head(np.ones((5000, 128), np.float32), (0,)) is None  # a long tail
    assert sum_head(np.ones((5000, 3), np.int64), (0,)) is None
    assert sum_head(np.ones((100, 3), np.float32), (0,)) is None     # small


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), ((0, 1), True), ((0, 1), False)])
def test_sum_over_leading_dims_against_torch(dtype, dim, keepdim):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((3000, 4, 5))
    w = np.random.default_rng(4).standard_normal((3000, 4, 5))
    outs = []
    for lib in (ember, torch):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        y = t.sum(dim, keepdim=keepdim)
        (y * lib.tensor(w, dtype=t.dtype).sum(dim, keepdim=keepdim)).sum().backward()
        outs.append((y.detach().numpy(), t.grad.numpy()))
    (ye, ge), (yt, gt) = outs
    assert ye.shape == yt.shape and ye.dtype == yt.dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ye, yt, rtol=tol, atol=tol * np.abs(yt).max())
    np.testing.assert_allclose(ge, gt, rtol=tol, atol=tol * np.abs(gt).max())
