"""glu's rule on NumPy floats, in blocks written into the gradient's halves (ops/nn/
activation.py): one block and many, rows longer than a block, every dim, float32 and float64,
against PyTorch and bit for bit against the rule's operations on whole arrays."""
import numpy as np
import pytest

import ember
from ember.ops import unary
from ember.ops.nn import activation

from ..conftest import to_np

CASES = [((6, 8), 1), ((706, 1412), 1), ((706, 1412), -1), ((1152, 864), 0), ((3, 140000), 1),
         ((129, 86, 86), 1), ((12, 10, 2), 2), ((8,), 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dim", CASES)
def test_glu_values_and_gradient(torch, dtype, shape, dim):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x.reshape(-1)[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30][:min(6, x.size)]
    half = list(shape)
    half[dim] //= 2
    g = rng.standard_normal(half).astype(dtype)
    out = []
    for L in (ember, torch):
        xt = L.tensor(x, requires_grad=True)
        y = L.nn.functional.glu(xt, dim)
        y.backward(L.tensor(g))
        out.append((to_np(y), to_np(xt.grad)))
    # (float32: PyTorch's sigmoid and order of products differ by a few units in the last
    # place, and 1 - s loses them where s is near 1, as the rule on whole arrays does)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, **tol)
    # bit for bit the operations on whole arrays
    a, b = activation._halves(x, dim % len(shape))
    s = unary._sigmoid_raw(np, b)
    want = np.concatenate((g * s, g * a * s * (1 - s)), axis=dim)
    np.testing.assert_array_equal(out[0][1], want)


def test_glu_rule_blocks_span_many():
    assert unary._BLOCK < 706 * 706 and unary._BLOCK < 140000
