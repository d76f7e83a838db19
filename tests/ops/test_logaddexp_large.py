"""logaddexp and logaddexp2 of large arrays, which ember computes with PyTorch's formula in
vectorised passes (``ops/binary_math.py``'s ``_log_add_fast``): values and gradients against
PyTorch and NumPy, infinities of both signs (equal and not), NaN, huge and equal inputs."""
import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

SPECIAL = [(np.inf, np.inf), (-np.inf, -np.inf), (np.inf, -np.inf), (-np.inf, np.inf),
           (np.nan, 1.0), (1.0, np.nan), (np.inf, 3.0), (-np.inf, 3.0), (0.0, 0.0), (5.0, 5.0),
           (1e30, -1e30), (-1e30, -1e30), (88.0, 88.5), (-100.0, -100.0)]


def _inputs(dtype):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-30, 30, (2, 6000))
    a[:len(SPECIAL)], b[:len(SPECIAL)] = zip(*SPECIAL)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_values_large(name, dtype):
    a, b = _inputs(dtype)
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(b)).numpy()
    assert got.dtype == a.dtype
    want = getattr(np, name)(a, b)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(got, want, equal_nan=True, **tol)
    np.testing.assert_array_equal(got[:len(SPECIAL)][~np.isfinite(want[:len(SPECIAL)])],
                                  want[:len(SPECIAL)][~np.isfinite(want[:len(SPECIAL)])])
    if torch is not None:
        x, y = (ember.tensor(v, requires_grad=True) for v in (a[20:], b[20:]))
        tx, ty = (torch.tensor(v, requires_grad=True) for v in (a[20:], b[20:]))
        getattr(ember, name)(x, y).sum().backward()
        getattr(torch, name)(tx, ty).sum().backward()
        np.testing.assert_allclose(got, getattr(torch, name)(torch.tensor(a), torch.tensor(b)),
                                   equal_nan=True, **tol)
        for e, t in ((x, tx), (y, ty)):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("shapes", [((300, 400), (1, 400)), ((1, 400), (300, 400)),
                                    ((300, 1), (300, 400))])
def test_broadcast_in_blocks_of_rows(name, dtype, shapes):
    """Operands that broadcast take the blocked kernels by rows (several blocks), forward
    and both rules, with the special values among them."""
    rng = np.random.default_rng(1)
    a = rng.uniform(-30, 30, shapes[0]).astype(dtype)
    b = rng.uniform(-30, 30, shapes[1]).astype(dtype)
    flat = a.reshape(-1)
    flat[:len(SPECIAL)] = [s[0] for s in SPECIAL]
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(b)).numpy()
    want = getattr(np, name)(a, b)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(got, want, equal_nan=True, **tol)
    if torch is not None:
        g = rng.uniform(-1, 1, want.shape).astype(dtype)
        x, y = (ember.tensor(v, requires_grad=True) for v in (a, b))
        tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
        getattr(ember, name)(x, y).backward(ember.tensor(g))
        getattr(torch, name)(tx, ty).backward(torch.tensor(g))
        for e, t in ((x, tx), (y, ty)):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), equal_nan=True,
                                       rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-5)
