"""Float32 normal samples by Box-Muller (``ember/_box_muller.py``): the distribution against
the normal CDF (Kolmogorov-Smirnov), moments and tails, with fixed seeds and tolerances a
1% error of scale or location fails; the tail redraw at float64 resolution; every entry point
(``normal_``, the four ``normal`` overloads); seeded reproducibility and generator states;
float64 samples still NumPy's ziggurat."""
import math

import numpy as np
import pytest

import ember
from ember import _box_muller

N = 1 << 20
KS_LIMIT = 1.95 / math.sqrt(N)  # Kolmogorov's distribution: exceeded with probability 0.001


def _ks(samples):
    """The Kolmogorov-Smirnov distance between ``samples`` and N(0, 1)."""
    x = np.sort(np.asarray(samples, np.float64).ravel())
    cdf = 0.5 * (1 + ember.erf(ember.tensor(x / math.sqrt(2))).numpy())
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))


def _check_standard(z):
    z = np.asarray(z, np.float64).ravel()
    n = z.size
    assert np.isfinite(z).all()
    assert _ks(z) < KS_LIMIT
    m, v = z.mean(), z.var()
    assert abs(m) < 5 / math.sqrt(n)
    assert abs(v - 1) < 5 * math.sqrt(2 / n)
    c = (z - m) / math.sqrt(v)
    assert abs(np.mean(c ** 3)) < 5 * math.sqrt(6 / n)
    assert abs(np.mean(c ** 4) - 3) < 5 * math.sqrt(96 / n)
    for k in (2, 3, 4):  # two-sided tail counts against the binomial's spread
        p = math.erfc(k / math.sqrt(2))
        assert abs(np.sum(np.abs(z) > k) - n * p) < 5 * math.sqrt(n * p) + 1


def test_the_checks_reject_a_wrong_sampler():
    z = np.random.default_rng(0).standard_normal(N)
    _check_standard(z)
    for wrong in (z * 1.01, z + 0.01):
        assert _ks(wrong) > KS_LIMIT


@pytest.mark.parametrize("seed", [0, 1])
def test_normal32_is_standard_normal(seed):
    z = _box_muller.normal32(np.random.Generator(np.random.PCG64(seed)), (N,))
    assert z.dtype == np.float32 and z.shape == (N,)
    _check_standard(z)


def test_the_tail_redraw_keeps_the_distribution(monkeypatch):
    """Half the radii drawn again (u1 <= 1/2, at float64 resolution): still N(0, 1); and
    with the default threshold the tail goes past the float32 grid's 5.77."""
    monkeypatch.setattr(_box_muller, "_TAIL", 0.5)
    _check_standard(_box_muller.normal32(np.random.Generator(np.random.PCG64(2)), (N,)))
    monkeypatch.undo()
    rng = np.random.Generator(np.random.PCG64(3))
    big = max(np.abs(_box_muller.normal32(rng, (1 << 22,))).max() for _ in range(8))
    assert big < 10  # (the largest of 2**25 normals is ~5.9 typically; finite, not cut)


def test_every_entry_point_draws_float32_normals():
    g = ember.Generator().manual_seed(5)
    m = ember.zeros(N)
    draws = {
        "normal_": ember.empty(N).normal_(generator=g),
        "normal_mean_std": (ember.empty(N).normal_(3.0, 2.0, generator=g) - 3) / 2,
        "sized": ember.normal(0.0, 1.0, (N,), generator=g),
        "tensor_float": ember.normal(m, 1.0, generator=g),
        "float_tensor": ember.normal(0.0, m + 1, generator=g),
        "tensors": ember.normal(m, m + 1, generator=g),
    }
    for name, t in draws.items():
        assert t.dtype == ember.float32, name
        _check_standard(t.numpy())


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 5), (7, 1, 3)])
def test_shapes_and_seeded_reproducibility(shape):
    ember.manual_seed(11)
    a = ember.empty(shape).normal_()
    state = ember.get_rng_state()
    b = ember.normal(1.0, 2.0, shape)
    ember.manual_seed(11)
    assert np.array_equal(ember.empty(shape).normal_().numpy(), a.numpy())
    ember.set_rng_state(state)
    c = ember.normal(1.0, 2.0, shape)
    assert tuple(a.shape) == tuple(c.shape) == shape
    assert np.array_equal(b.numpy(), c.numpy())


def test_float64_is_still_numpys_ziggurat():
    g = ember.Generator().manual_seed(7)
    got = ember.empty(1000, dtype=ember.float64).normal_(2.0, 3.0, generator=g).numpy()
    want = np.random.Generator(np.random.PCG64(7)).normal(2.0, 3.0, 1000)
    np.testing.assert_array_equal(got, want)
    _check_standard(ember.normal(0.0, 1.0, (N,), dtype=ember.float64).numpy())
