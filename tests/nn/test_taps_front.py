"""Separable tap maps run with the last dim moved first (``_taps._front_last``: inputs of
32K elements and more whose last dim has weighted taps onto at least as many positions) against
PyTorch, and the neighbouring cases that stay in place: interpolation modes, average pooling;
values and gradients in float64 and float32, and a second derivative."""
import numpy as np
import pytest

import ember
from ember.ops.nn import _taps

from ..conftest import to_np

CASES = [
    ((4, 6, 1400), "interpolate", dict(mode="linear", scale_factor=1.7, align_corners=True)),
    ((4, 6, 1400), "interpolate", dict(mode="linear", size=1000)),
    ((4, 6, 1400), "interpolate", dict(mode="linear", size=2100)),
    ((2, 3, 90, 120), "interpolate", dict(mode="bilinear", scale_factor=0.6)),
    ((2, 3, 90, 120), "interpolate", dict(mode="bicubic", size=(100, 150))),
    ((1, 2, 20, 30, 40), "interpolate", dict(mode="trilinear", scale_factor=1.5)),
    ((2, 3, 90, 120), "avg_pool2d", dict(kernel_size=3, stride=1, padding=1,
                                         count_include_pad=False)),
    ((2, 3, 90, 120), "interpolate", dict(mode="area", size=(60, 80))),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,name,kwargs", CASES)
def test_matches_torch(torch, shape, name, kwargs, dtype):
    assert np.prod(shape) >= _taps._FRONT_MIN
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(t, **kwargs)
        w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(dtype))
        (y * w).sum().backward()
        res.append((to_np(y), to_np(t.grad)))
    tol = 1e-10 if dtype == np.float64 else 1e-4
    for a, b in zip(*res):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_double_backward(torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 70, 130))
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, scale_factor=1.3, mode="bilinear")
        (g,) = lib.autograd.grad((y * y).sum(), t, create_graph=True)
        (g * g).sum().backward()
        res.append((to_np(g), to_np(t.grad)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
