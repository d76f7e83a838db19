"""Separable linear maps as matrix products (``ember/ops/nn/_taps.py``'s ``apply_dense``):
interpolation onto or back from a few positions, adaptive average pooling of few large
windows. Against PyTorch in float32 and float64 (values, gradients), infinities and NaN
(redone by the exact paths: a product multiplies them by 0), and finite differences."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np

CASES = [  # (input shape, interpolate options)
    ((3, 4, 161), dict(size=8, mode="linear")),
    ((3, 4, 5), dict(size=70, mode="linear")),
    ((2, 3, 117, 46), dict(size=(7, 3), mode="bicubic")),
    ((2, 3, 4, 3), dict(size=(40, 30), mode="bicubic", align_corners=True)),
    ((2, 3, 50, 41), dict(size=(2, 5), mode="bilinear")),
    ((1, 2, 3, 30, 4), dict(size=(20, 2, 16), mode="trilinear")),
    ((2, 3, 60, 7), dict(size=(5, 7), mode="nearest")),
]


# A backward maps a short last dim (up to ``resampling._LAST_BY_PRODUCT``) by a product, the
# other dims by taps: down and up, every mode, the last dim just under and over the bound.
LAST_DIM_CASES = [
    ((1, 3, 32, 40), dict(scale_factor=0.6, mode="bilinear")),
    ((2, 3, 20, 30), dict(scale_factor=1.7, mode="bicubic")),
    ((2, 2, 9, 192), dict(size=(13, 115), mode="bilinear", align_corners=True)),
    ((2, 2, 9, 193), dict(size=(13, 115), mode="bilinear")),
    ((2, 3, 11, 14), dict(scale_factor=2, mode="nearest")),
    ((2, 3, 11, 14), dict(size=(17, 23), mode="nearest-exact")),
    ((3, 4, 61), dict(scale_factor=0.45, mode="linear")),
    ((1, 2, 5, 6, 7), dict(scale_factor=(1.5, 0.7, 2.2), mode="trilinear")),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("shape,kw", CASES + LAST_DIM_CASES)
def test_interpolate_matches_torch(torch, shape, kw, dtype, special):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    if special:
        x.reshape(-1)[rng.integers(0, x.size, 3)] = [np.inf, -np.inf, np.nan]
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, **kw)
        g = np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))
        if special:
            g.reshape(-1)[0] = np.inf
        y.backward(lib.tensor(g.astype(dtype)))
        res.append((to_np(y), to_np(t.grad)))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1, np.nanmax(
            np.abs(np.where(np.isfinite(b), b, 0)))))


@pytest.mark.parametrize("shape,kw", [((1, 2, 20), dict(size=3, mode="linear")),
                                      ((1, 1, 3, 2), dict(size=(18, 17), mode="bicubic")),
                                      ((1, 2, 19, 6), dict(size=(2, 3), mode="bilinear")),
                                      ((1, 2, 9, 11), dict(scale_factor=0.6, mode="bilinear")),
                                      ((1, 1, 4, 5, 6), dict(scale_factor=1.5,
                                                             mode="trilinear"))])
def test_interpolate_gradients_by_finite_differences(shape, kw):
    x = ember.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    f = lambda t: ember.nn.functional.interpolate(t, **kw)  # noqa: E731
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_adaptive_avg_few_windows_by_finite_differences():
    x = ember.tensor(np.random.default_rng(2).standard_normal((1, 2, 40, 33)),
                     requires_grad=True)
    f = lambda t: ember.nn.functional.adaptive_avg_pool2d(t, (2, 3))  # noqa: E731
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
