"""sinc's derivative near 0, where the closed form cancels: it must keep its relative accuracy
(the closed form gave 7x the true slope at x = -8.5e-5 in float32)."""
import numpy as np
import pytest

import ember

mpmath = pytest.importorskip("mpmath")


def _slope(x):
    """d/dx sin(pi x) / (pi x), to 60 digits (the closed form cancels ~24 of them at 1e-12)."""
    with mpmath.workdps(60):
        y = mpmath.pi * mpmath.mpf(float(x))
        if y == 0:
            return 0.0
        return float(mpmath.pi * (y * mpmath.cos(y) - mpmath.sin(y)) / (y * y))


@pytest.mark.parametrize("dtype,ulps", [(np.float32, 32), (np.float64, 64)])
def test_sinc_slope_keeps_relative_accuracy(dtype, ulps):
    # (PyTorch's closed form is off by 1e16 ulp near 0 in float64; 32 ulp is the closed form's
    # own cancellation just above the series' range in float32)
    mags = np.logspace(-12, 0.5, 300)
    xs = np.concatenate([mags, -mags, [0.15915, 0.15916, 0.5, 2.5]]).astype(dtype)
    x = ember.tensor(xs, requires_grad=True)
    ember.sinc(x).sum().backward()
    got = x.grad.numpy().astype(np.float64)
    want = np.array([_slope(v) for v in xs])
    tol = ulps * np.finfo(dtype).eps * np.abs(want) + np.finfo(dtype).tiny
    bad = np.abs(got - want) > tol
    assert not bad.any(), list(zip(xs[bad], got[bad], want[bad]))[:5]


def test_sinc_second_derivative_at_zero_and_beside():
    x = ember.tensor([0.0, 1e-3, -0.2, 0.7], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.sinc(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    with mpmath.workdps(30):
        want = [float(mpmath.diff(lambda v: mpmath.sinc(mpmath.pi * v), float(v), 2))
                for v in x.detach().numpy()]
    np.testing.assert_allclose(h.numpy(), want, rtol=1e-9)
