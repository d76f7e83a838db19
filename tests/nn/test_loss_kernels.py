"""The regression losses' kernels (ops/nn/loss.py): smooth L1 with ``beta != 1`` bit for bit
PyTorch's two branches (also just under the kink), the reduced losses summed block by block,
and the mean's gradient scaled in one pass; against PyTorch and in float64."""
import numpy as np
import pytest

import ember

from ..conftest import to_np

DTYPES = [np.float32, np.float64]
BETAS = [0.7, 0.5, 2.5, 1e-3, 3.0, 123.4, 1e-10, 1e-30, 1e20]


def _values(dtype, beta, n=300_000, seed=0):
    """Random differences around ``beta`` and the awkward ones: the kink and its neighbours,
    0, tiny and huge, infinities and NaN."""
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 2 * beta).astype(dtype)
    b = np.zeros(n, dtype)
    b[: n // 2] = rng.standard_normal(n // 2).astype(dtype)
    beta_ = dtype(beta)
    special = [beta_, -beta_, np.nextafter(beta_, dtype(0)), np.nextafter(beta_, dtype(np.inf)),
               0.0, -0.0, 1e-40, 3e-45, 1e30, -1e30, np.inf, -np.inf, np.nan]
    a[-len(special) * 10:] = np.resize(np.array(special, dtype), len(special) * 10)
    b[-len(special) * 10:] = 0
    # just under the kink, where the rounded line can exceed the rounded parabola
    a[:20000] = beta_ - np.arange(1, 20001).astype(dtype) * np.spacing(beta_)
    b[:20000] = 0
    return a, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("beta", BETAS)
def test_smooth_l1_bit_for_bit_pytorch(torch, dtype, beta):
    a, b = _values(dtype, beta)
    for size in (a.size, 100, 1):  # the blocks and the small path
        got, want = (to_np(L.nn.functional.smooth_l1_loss(
            L.tensor(a[-size:]), L.tensor(b[-size:]), reduction="none", beta=beta))
            for L in (ember, torch))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok].view(f"u{got.itemsize}"),
                                      want[ok].view(f"u{want.itemsize}"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("name, kw", [("smooth_l1_loss", dict(beta=0.7)),
                                      ("smooth_l1_loss", {}), ("huber_loss", dict(delta=1.5)),
                                      ("smooth_l1_loss", dict(beta=0.0))])
def test_reduced_losses_in_blocks(torch, dtype, reduction, name, kw):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((578, 866)).astype(dtype) for _ in range(2))
    ga = rng.standard_normal(()).astype(dtype)
    out = []
    for L in (ember, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        loss = getattr(L.nn.functional, name)(x, y, reduction=reduction, **kw)
        (loss * L.tensor(ga)).backward()
        out.append((loss, x.grad, y.grad))
    tol = dict(rtol=2e-5, atol=0) if dtype == np.float32 else dict(rtol=1e-12, atol=0)
    for e, t in zip(*out):
        np.testing.assert_allclose(to_np(e), to_np(t), **tol)
    # the sum against the exact one, in float64 (the blocks' sums keep the pairwise accuracy)
    elementwise = to_np(getattr(ember.nn.functional, name)(
        ember.tensor(a), ember.tensor(b), reduction="none", **kw)).astype(np.float64)
    exact = elementwise.sum() / (elementwise.size if reduction == "mean" else 1)
    np.testing.assert_allclose(to_np(out[0][0]), exact, rtol=1e-6 if dtype == np.float32
                               else 1e-14)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [0.7, 1.0, 2.5])
def test_smooth_l1_gradients_by_finite_differences(reduction, beta):
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.standard_normal((4, 5)) * 2, requires_grad=True)
    b = ember.tensor(rng.standard_normal((4, 5)), requires_grad=True)

    def f(a, b):
        return ember.nn.functional.smooth_l1_loss(a, b, reduction=reduction, beta=beta)
    assert ember.autograd.gradcheck(f, (a, b))
    assert ember.autograd.gradgradcheck(f, (a, b))


@pytest.mark.parametrize("name", ["smooth_l1_loss", "mse_loss", "huber_loss"])
def test_mean_of_empty_losses_backward(torch, name):
    """The one-pass scale of the mean's gradient leaves an empty gradient alone (1 / 0)."""
    for L in (ember, torch):
        x = L.zeros((0,), dtype=L.float64, requires_grad=True)
        loss = getattr(L.nn.functional, name)(x, L.zeros((0,), dtype=L.float64))
        loss.backward(L.tensor(2.5, dtype=L.float64))
        assert x.grad.shape == (0,)
