"""Adaptive pooling by window tables and neighbour-pair trees (``ember/ops/nn/_windows.py``)
against PyTorch: windows that tile the dim (a reshape) or overlap (a gather, repeats masked),
more outputs than inputs, kept dims, 1-, 2- and 3-d, ties, NaN, infinities and signed zeros
(the index PyTorch returns, bit-exact values), float32 and float64; gradients by finite
differences in float64 and second derivatives."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np

CASES = [  # (input spatial size, output size)
    ((12,), 3), ((13,), 4), ((5,), 7), ((64,), 2), ((41,), 5), ((1,), 3),
    ((8, 6), (4, 3)), ((9, 13), (4, 5)), ((7, 5), (7, 2)), ((3, 4), (5, 6)),
    ((46, 65), (3, 4)), ((6, 7), (None, 3)), ((5, 5), (5, 5)),
    ((4, 6, 8), (2, 3, 4)), ((5, 7, 9), (2, 3, 2)), ((3, 4, 5), (4, 4, 5)), ((6, 5, 4), (6, 2, 4)),
    # few large windows (each reduced on its own): overlapping, kept dims between and after
    ((70,), 3), ((33, 41), (None, 2)), ((40, 9, 33), (2, 9, 3)), ((45, 37), (2, 37)),
    # ... of unequal lengths (a shorter window's padding repeats its last position)
    ((230,), 3), ((97, 161), (2, 3)), ((31, 29, 37), (2, 3, 5)),
]


def _data(rng, shape, kind, dtype):
    x = rng.standard_normal(shape)
    if kind == "ties":
        x = np.round(x)
    elif kind == "special":
        x[rng.random(shape) < 0.15] = np.nan
        x[rng.random(shape) < 0.1] = np.inf
        x[rng.random(shape) < 0.1] = -np.inf
    elif kind == "neginf":
        x[...] = -np.inf
        x[rng.random(shape) < 0.05] = np.nan
    elif kind == "zeros":
        x = np.where(rng.random(shape) < 0.5, 0.0, -0.0)
    return x.astype(dtype)


def _fn(lib, kind, nd):
    return getattr(lib.nn.functional, f"adaptive_{kind}_pool{nd}d")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("data", ["normal", "ties", "special", "neginf", "zeros"])
@pytest.mark.parametrize("plane,out", CASES)
def test_max_matches_torch(torch, plane, out, data, dtype):
    rng = np.random.default_rng(len(plane) * 100 + sum(plane))
    x = _data(rng, (2, 3) + plane, data, dtype)
    nd = len(plane)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y, i = _fn(lib, "max", nd)(t, out, return_indices=True)
        w = lib.tensor(np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        res.append((to_np(y), to_np(i), to_np(t.grad)))
    (ey, ei, eg), (ty, ti, tg) = res
    np.testing.assert_array_equal(ei, ti)
    assert ei.dtype == np.int64
    np.testing.assert_array_equal(ey, ty)  # the chosen elements (NaN where PyTorch's is)
    np.testing.assert_array_equal(np.signbit(ey), np.signbit(ty))
    np.testing.assert_allclose(eg, tg, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("plane,out", CASES)
def test_avg_matches_torch(torch, plane, out, dtype):
    rng = np.random.default_rng(7 + sum(plane))
    x = rng.standard_normal((2, 3) + plane).astype(dtype)
    nd = len(plane)
    res = []
    for lib in (ember, torch):
        t = lib.tensor(x, requires_grad=True)
        y = _fn(lib, "avg", nd)(t, out)
        w = lib.tensor(np.linspace(-1.5, 1.5, y.numel()).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        res.append((to_np(y), to_np(t.grad)))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [5, 70])
def test_avg_infinities_stay_in_their_windows(torch, n):
    """A window's repeats past its end are zeroed, not multiplied by 0 (inf * 0 is NaN); on
    few large windows (membership-matrix products) the exact path redoes a non-finite result,
    and spreads back a non-finite gradient."""
    x = np.zeros((1, 1, n))
    x[0, 0, 1] = np.inf
    x[0, 0, n - 1] = -np.inf
    got = to_np(ember.nn.functional.adaptive_avg_pool1d(ember.tensor(x), 3))
    want = torch.nn.functional.adaptive_avg_pool1d(torch.tensor(x), 3).numpy()
    np.testing.assert_array_equal(got, want)
    g = np.array([[[1.0, np.inf, 2.0]]])
    res = []
    for lib in (ember, torch):
        t = lib.tensor(np.ones((1, 1, n)), requires_grad=True)
        lib.nn.functional.adaptive_avg_pool1d(t, 3).backward(lib.tensor(g))
        res.append(to_np(t.grad))
    np.testing.assert_array_equal(*res)


def test_empty_and_unbatched(torch):
    for shape, out in (((0, 3, 5), 2), ((2, 7, 9), (3, 4))):
        x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        nd = 1 if shape[0] == 0 else 2
        for kind in ("max", "avg"):
            a = _fn(ember, kind, nd)(ember.tensor(x), out)
            b = _fn(torch, kind, nd)(torch.tensor(x), out)
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(to_np(a), b.numpy())


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("plane,out", [((7,), 3), ((5,), 7), ((6, 5), (4, 2)),
                                       ((4, 5, 3), (3, 2, 3))])
def test_gradients_by_finite_differences(kind, plane, out):
    rng = np.random.default_rng(3)
    n = int(np.prod(plane)) * 2
    x = ember.tensor((rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape((1, 2) + plane) / n,
                     dtype=ember.float64, requires_grad=True)  # distinct: one maximum a window
    f = _fn(ember, kind, len(plane))
    assert gradcheck(lambda t: f(t, out), (x,))
    assert gradgradcheck(lambda t: f(t, out), (x,))


def test_double_backward_matches_torch(torch):
    rng = np.random.default_rng(4)
    x = rng.permutation(2 * 9 * 11).reshape(1, 2, 9, 11) / 50.0
    res = []
    for lib in (ember, torch):
        outs = []
        for kind in ("max", "avg"):
            t = lib.tensor(x, requires_grad=True)
            y = _fn(lib, kind, 2)(t, (4, 3))
            (g,) = lib.autograd.grad((y * y).sum(), t, create_graph=True)
            (g * g).sum().backward()
            outs += [to_np(g), to_np(t.grad)]
        res.append(outs)
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
