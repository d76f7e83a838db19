"""log_softmax's NumPy kernels over blocks of the leading dim (ops/reduction/sums.py): arrays
of one block and of many, rows longer than a block, every dim, float32 and float64, rows
with infinities; values and gradients against PyTorch (also a gradient broadcast from a sum,
and under reduced precision), and by finite differences."""
import numpy as np
import pytest

import ember
from ember.ops.reduction import sums

from ..conftest import to_np

DTYPES = [np.float32, np.float64]
# (shape, dim): one block, many blocks of short and of long rows, a row longer than a block,
# the first dim (one block), a middle dim
CASES = [((512, 27), 1), ((6000, 27), 1), ((1291, 774), 1), ((3, 70000), 1), ((6000, 27), 0),
         ((60, 104, 39), 1), ((60, 104, 39), 2), ((60, 104, 39), -3), ((33,), 0)]


def _close(a, b, dtype, tol=None):
    tol = tol or (1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


def _exact(x, g, dim):
    """log_softmax and its gradient for ``g``, in float64 from the inputs."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    y = x - x.max(dim, keepdims=True)
    y -= np.log(np.exp(y).sum(dim, keepdims=True))
    return y, g - np.exp(y) * g.sum(dim, keepdims=True)


def test_the_cases_span_several_blocks():
    x = np.zeros((1291, 774), np.float32)
    assert len(sums._blocks(x, 1)) > 1 and len(sums._blocks(np.zeros((3, 70000)), 1)) == 3


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim", CASES)
def test_log_softmax_values_and_gradients(torch, dtype, shape, dim):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    out = []
    for L in (ember, torch):
        xt = L.tensor(x, requires_grad=True)
        y = L.log_softmax(xt, dim)
        y.backward(L.tensor(g))
        grad = to_np(xt.grad)
        xt.grad = None
        L.log_softmax(xt, dim).sum().backward()  # a gradient broadcast from the sum
        out.append((y, grad, xt.grad))
    # (PyTorch's float32 sums of rows of 70000 are further off: 8e-4 against the exact;
    # ember's sums along the first dim add row after row, 2e-5 off at 6000 rows)
    long = dtype == np.float32 and max(shape) > 10000
    for a, b in zip(*out):
        _close(a, b, dtype, 2e-3 if long else None)
    for a, b in zip(out[0], _exact(x, g, dim) + _exact(x, np.ones(shape), dim)[1:]):
        _close(a, b, dtype, 1e-4 if dtype == np.float32 else None)


@pytest.mark.parametrize("dtype", DTYPES)
def test_log_softmax_rows_with_infinities(torch, dtype):
    x = np.random.default_rng(1).standard_normal((3000, 20)).astype(dtype)
    x[5, 3] = np.inf
    x[7] = -np.inf   # a row of -inf: NaN, as PyTorch
    x[9, :4] = -np.inf
    x[11, 0] = np.nan
    got, want = (to_np(L.log_softmax(L.tensor(x), 1)) for L in (ember, torch))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    _close(np.nan_to_num(got), np.nan_to_num(want), dtype)


def test_log_softmax_in_bfloat16_keeps_its_rounding(torch):
    x = np.random.default_rng(2).standard_normal((3000, 40)).astype(np.float32)
    got, want = (to_np(L.log_softmax(L.tensor(x, dtype=L.bfloat16), 1).float())
                 for L in (ember, torch))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, dim", [((3, 5), 1), ((4, 3, 2), 1), ((2, 3), 0)])
def test_log_softmax_by_finite_differences(shape, dim, monkeypatch):
    monkeypatch.setattr(sums, "_ROWS_BYTES", 16)  # a block a row: several blocks here too
    x = ember.tensor(np.random.default_rng(3).standard_normal(shape), requires_grad=True)
    assert len(sums._blocks(x._data, dim)) == (1 if dim == 0 else shape[0])
    assert ember.autograd.gradcheck(lambda x: ember.log_softmax(x, dim), (x,))
    assert ember.autograd.gradgradcheck(lambda x: ember.log_softmax(x, dim), (x,))
