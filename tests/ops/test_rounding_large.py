"""fmod, remainder and floor division of large float32 arrays, where ember computes fmod by
a number through float64 (``ops/arithmetic.py``'s ``_fmod_float32``) and floor division without
where(): bit for bit NumPy's fmod and PyTorch's algorithms, on a grid of awkward values
(signed zeros, subnormals, the largest floats, infinities, NaN, huge quotients) and on
random numbers of every magnitude; and the gradients against PyTorch.
"""
import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

AWKWARD = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 3e38, -3e38, np.inf, -np.inf,
                    np.nan, 1.5, -1.5, 3.0, -3.0, 4.5, 1e10, -1e10, 7.0, 0.1, -0.1, 2.0 ** 29,
                    -(2.0 ** 30), 16777217.0, 0.75, 1e-20], np.float32)


def _pairs():
    rng = np.random.default_rng(0)
    a, b = np.repeat(AWKWARD, len(AWKWARD)), np.tile(AWKWARD, len(AWKWARD))
    n = 20_000
    ra = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    rb = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    near = rng.uniform(-50, 50, n), rng.uniform(0.5, 2, n) * rng.choice([-1, 1], n)
    return (np.concatenate([a, ra, near[0]]).astype(np.float32),
            np.concatenate([b, rb, near[1]]).astype(np.float32))


def _same_bits(a, b):
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    assert a.dtype == b.dtype
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(a[~nan].view(np.uint32), b[~nan].view(np.uint32))


def _remainder_ref(a, b):
    r = np.fmod(a, b)
    return np.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


def _floor_div_ref(a, b):
    """PyTorch's float algorithm, with where()s, as ember wrote it before."""
    mod = np.fmod(a, b)
    div = (a - mod) / b
    div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = np.floor(div)
    floor = np.where(div - floor > 0.5, floor + 1, floor)
    quotient = a / b
    out = np.where(div == 0, np.copysign(0.0, quotient).astype(a.dtype), floor)
    return np.where(b == 0, quotient, out)


@pytest.fixture(scope="module")
def pairs():
    return _pairs()


def test_fmod_bits(pairs):
    a, b = pairs
    with np.errstate(all="ignore"):
        _same_bits(ember.fmod(ember.tensor(a), ember.tensor(b)).numpy(), np.fmod(a, b))
        for s in (-1.5, 0.1, 3, 1e30, 1e-30, float("inf"), 0.0):
            _same_bits(ember.fmod(ember.tensor(a), s).numpy(), np.fmod(a, np.float32(s)))
        square = a[:200 * 200].reshape(200, 200)  # (2-d, with huge quotients and NaN)
        _same_bits(ember.fmod(ember.tensor(square), 1e-3).numpy(),
                   np.fmod(square, np.float32(1e-3)))


def test_remainder_bits(pairs):
    a, b = pairs
    with np.errstate(all="ignore"):
        _same_bits(ember.remainder(ember.tensor(a), ember.tensor(b)).numpy(),
                   _remainder_ref(a, b))
        for s in (-1.5, 0.1, 3, 1e30, float("inf")):
            _same_bits((ember.tensor(a) % s).numpy(), _remainder_ref(a, np.float32(s)))


def test_floor_divide_bits(pairs):
    a, b = pairs
    with np.errstate(all="ignore"):
        want = _floor_div_ref(a, b)
        _same_bits(ember.div(ember.tensor(a), ember.tensor(b), rounding_mode="floor").numpy(),
                   want)
        _same_bits(ember.floor_divide(ember.tensor(a), ember.tensor(b)).numpy(), want)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["fmod", "remainder", "div_floor"])
def test_against_pytorch_large(name):
    rng = np.random.default_rng(1)
    a = rng.uniform(-6, 6, 6000).astype(np.float32)
    b = (rng.uniform(0.55, 1.95, 6000) * rng.choice([-1, 1], 6000)).astype(np.float32)
    g = rng.uniform(-1, 1, 6000).astype(np.float32)
    f = {"fmod": lambda L, x, y: L.fmod(x, y), "remainder": lambda L, x, y: L.remainder(x, y),
         "div_floor": lambda L, x, y: L.div(x, y, rounding_mode="floor") * x}[name]
    res = []
    for L in (ember, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        out = f(L, x, y)
        out.backward(L.tensor(g))
        res.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for e, t in zip(*res):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=1e-6)


def _adversarial():
    """Quotients at the float64 kernel's bound (2**27) and beyond, near-multiples (k y and
    its float32 neighbours), signed zeros, subnormal and huge divisors, and infinities."""
    rng = np.random.default_rng(2)
    n = 30_000
    y = (rng.uniform(0.5, 2, n) * 10.0 ** rng.integers(-40, 38, n)
         * rng.choice([-1, 1], n)).astype(np.float32)
    k = np.concatenate([rng.integers(-2 ** 28, 2 ** 28, n // 3),
                        rng.integers(-300, 300, n - n // 3)]).astype(np.float64)
    x = (k * y.astype(np.float64)).astype(np.float32)
    x = np.where(np.isfinite(x), x, np.float32(1.0))
    step = rng.choice([-1, 0, 1], n)
    x = np.where(step > 0, np.nextafter(x, np.float32(np.inf)),
                 np.where(step < 0, np.nextafter(x, np.float32(-np.inf)), x))
    big = np.float32(2.0 ** 27)
    edges = np.array([big, -big, np.nextafter(big, np.float32(0)), 2 * big, 3e38, -0.0, 0.0,
                      1e-45, -1e-45, np.inf, -np.inf, np.nan], np.float32)
    ex, ey = np.repeat(edges, len(edges)), np.tile(np.concatenate(
        [[1.0, -1.0], edges[2:]]).astype(np.float32), len(edges))
    return np.concatenate([x, ex]).astype(np.float32), np.concatenate([y, ey]).astype(np.float32)


def _same_bits_as_references(a, b):
    """fmod, remainder and floor division of ``a`` by ``b``: the bits of the references."""
    with np.errstate(all="ignore"):
        _same_bits(ember.fmod(ember.tensor(a), ember.tensor(b)).numpy(), np.fmod(a, b))
        _same_bits(ember.remainder(ember.tensor(a), ember.tensor(b)).numpy(),
                   _remainder_ref(a, b))
        _same_bits(ember.div(ember.tensor(a), ember.tensor(b), rounding_mode="floor").numpy(),
                   _floor_div_ref(a, b))


def test_adversarial_bits():
    a, b = _adversarial()
    _same_bits_as_references(a, b)
    with np.errstate(all="ignore"):
        _same_bits(ember.floor_divide(ember.tensor(a), ember.tensor(b)).numpy(),
                   np.floor_divide(a, b))


@pytest.mark.parametrize("shapes", [((300, 400), (1, 400)), ((300, 400), (300, 1)),
                                    ((1, 400), (300, 400)), ((300, 1, 40), (7, 40))])
def test_broadcast_divisors_in_blocks_of_rows(shapes):
    """A divisor that broadcasts (a row, a column, or the larger operand) goes through the
    blocked float64 kernel by rows of the broadcast shape: the same bits."""
    a_all, b_all = _pairs()
    rng = np.random.default_rng(3)
    a = rng.choice(a_all, shapes[0])
    b = rng.choice(b_all, shapes[1])
    _same_bits_as_references(a, b)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["fmod", "remainder", "div_floor"])
def test_adversarial_against_pytorch(name):
    """Bit for bit PyTorch's, except that PyTorch's vectorised fmod (and remainder) gives NaN
    where x / y overflows float32 (x = 1.3e8 by y = 1e-45), where C's fmod, NumPy's and
    ember's give the exact remainder (0 there): those pairs are left out."""
    a, b = _adversarial()
    with np.errstate(all="ignore"):
        keep = ~(np.abs(a.astype(np.float64) / b) > np.finfo(np.float32).max) | np.isinf(a)
    a, b = a[keep], b[keep]
    f = {"fmod": lambda L, x, y: L.fmod(x, y), "remainder": lambda L, x, y: L.remainder(x, y),
         "div_floor": lambda L, x, y: L.div(x, y, rounding_mode="floor")}[name]
    with np.errstate(all="ignore"):
        got = f(ember, ember.tensor(a), ember.tensor(b)).numpy()
    _same_bits(got, f(torch, torch.tensor(a), torch.tensor(b)).numpy())


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_broadcast_gradients_against_pytorch(name):
    """The divisor's gradient (-g trunc(x / y), -g floor(x / y): the blocked floor division)
    summed over the broadcast rows, as PyTorch's."""
    rng = np.random.default_rng(4)
    a = rng.uniform(-30, 30, (200, 300)).astype(np.float32)
    b = (rng.uniform(0.55, 1.95, (1, 300)) * rng.choice([-1, 1], (1, 300))).astype(np.float32)
    g = rng.uniform(-1, 1, (200, 300)).astype(np.float32)
    res = []
    for L in (ember, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        out = getattr(L, name)(x, y)
        out.backward(L.tensor(g))
        res.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    _same_bits(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-5, atol=1e-3)
