"""The blocked kernels of ``ember/ops/special_kernels.py`` (I0, I1 and their scaled forms;
``erfcx``, ``log_ndtr``, ``ndtri``): float32 results within an ulp of the exact value (mpmath)
over the whole domain, across several blocks with mixed branches, special values as in
PyTorch, and the rules' NumPy path (on blocks, in place) equal to their expression form."""
import math

import numpy as np
import pytest

import ember
from ember import _array_api, _xp
from ember.ops import special_functions as sf
from ember.ops._blocks import _BLOCK

mp = pytest.importorskip("mpmath")
inf, nan = math.inf, math.nan


def _exact(fn, xs, dps=30):
    mp.mp.dps = dps
    return np.array([float(fn(mp.mpf(float(x)))) if np.isfinite(x) else nan for x in xs])


def _ulps(got, want):
    """|got - want| in float32 ulps at ``want`` (normal results only)."""
    keep = np.isfinite(want) & (np.abs(want) > 1.2e-38) & (np.abs(want) < 3.4e38)
    want32 = np.abs(want[keep]).astype(np.float32)
    return np.abs(got[keep].astype(np.float64) - want[keep]) / np.spacing(want32)


I_EXACT = {
    "i0": lambda x: mp.besseli(0, x), "i1": lambda x: mp.besseli(1, x),
    "i0e": lambda x: mp.besseli(0, x) * mp.exp(-abs(x)),
    "i1e": lambda x: mp.besseli(1, x) * mp.exp(-abs(x)),
}


def _i_points(n=3000):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-14, 14, n), 10 ** rng.uniform(-40, 3, n // 2),
                        np.arange(-16, 16.5, 0.5)])
    return np.concatenate([x, -x[: n // 4]])


@pytest.mark.parametrize("name", sorted(I_EXACT))
def test_bessel_i_float32_within_an_ulp(name):
    x = _i_points().astype(np.float32)
    got = getattr(ember.special, name)(ember.tensor(x)).numpy()
    want = _exact(I_EXACT[name], x)
    assert got.dtype == np.float32
    err = _ulps(got, want)
    assert err.max() <= 0.51, (x[np.argmax(err)], err.max())


@pytest.mark.parametrize("name", sorted(I_EXACT))
def test_bessel_i_float64_to_a_few_ulp(name):
    x = _i_points(1500)
    got = getattr(ember.special, name)(ember.tensor(x)).numpy()
    want = _exact(I_EXACT[name], x, 40)
    keep = np.abs(want) < 1e300
    rel = np.abs(got[keep] - want[keep]) / np.maximum(np.abs(want[keep]), 1e-300)
    assert rel.max() < 2e-15, (x[keep][np.argmax(rel)], rel.max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(I_EXACT))
def test_blocks_with_both_branches_match_single_elements(name, dtype):
    """Blocks holding small and large arguments (both branches, selected) give each element
    the value it has alone; 0-d inputs run."""
    rng = np.random.default_rng(2)
    x = rng.uniform(-30, 30, 2 * _BLOCK + 5).astype(dtype)
    x[:7] = [0.0, -0.0, inf, -inf, nan, 1e-30, 7.99]
    fn = getattr(ember.special, name)
    whole = fn(ember.tensor(x)).numpy()
    singles = np.array([fn(ember.tensor(v)).item() for v in x[:: 997]], dtype=dtype)
    np.testing.assert_array_equal(whole[:: 997], singles)
    small = x[np.abs(x) < 8][:1000]
    np.testing.assert_array_equal(fn(ember.tensor(small)).numpy(), whole[np.abs(x) < 8][:1000])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(I_EXACT))
def test_bessel_i_special_values_like_torch(name, dtype):
    torch = pytest.importorskip("torch")
    x = [0.0, -0.0, inf, -inf, nan, 1e-30, -1e-30, 8.0, 12.0, -12.0, 700.0, 710.0, -710.0]
    e = getattr(ember.special, name)(ember.tensor(x, dtype=getattr(ember, dtype))).numpy()
    t = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype))).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-12 if dtype == "float64" else 3e-6, atol=0)
    np.testing.assert_array_equal(np.signbit(e[e == e]), np.signbit(t[t == t]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(I_EXACT))
def test_bessel_i_rules_on_blocks_equal_their_expressions(name, dtype):
    """The rules' NumPy path (blocks, one buffer) against the expression form they take on
    Tensors (under create_graph), over several blocks, zeros included."""
    rng = np.random.default_rng(4)
    x = rng.uniform(-20, 20, 2 * _BLOCK + 3).astype(dtype)
    x[:3] = [0.0, -0.0, 1e-20]
    g = rng.uniform(-1, 1, x.size).astype(dtype)
    rule = {"i0": sf._i0_rule, "i0e": sf._i0e_rule, "i1": sf._i1_rule, "i1e": sf._i1e_rule}[name]
    ans = getattr(ember.special, name)(ember.tensor(x)).numpy()
    fast = rule(_xp.NUMPY, g, ans, x)
    slow = rule(_array_api, ember.tensor(g), ember.tensor(ans), ember.tensor(x)).numpy()
    np.testing.assert_allclose(fast, slow, rtol=1e-6 if dtype == "float32" else 1e-14,
                               atol=1e-30)
    assert fast.dtype == x.dtype


NORMAL_EXACT = {
    "erfcx": lambda x: mp.exp(x * x) * mp.erfc(x),
    "log_ndtr": lambda x: mp.log(mp.ncdf(x)),
}


def _normal_points():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-10, 12, 6000), 10 ** rng.uniform(-40, 30, 2000),
                        -(10 ** rng.uniform(-40, 1.3, 2000)), np.arange(-20, 20.5, 0.5),
                        [10.5, 10.500001, 14.85, 14.9]])
    return x.astype(np.float32)


@pytest.mark.parametrize("name", sorted(NORMAL_EXACT))
def test_normal_float32_within_an_ulp(name):
    """Over the whole range: the rational, the asymptotic tail past 10.5 (and for log_ndtr
    past x = -14.85) and the reflection below 0."""
    x = _normal_points()
    got = getattr(ember.special, name)(ember.tensor(x)).numpy()
    want = _exact(NORMAL_EXACT[name], x, 60)
    assert got.dtype == np.float32
    err = _ulps(got, want)
    assert err.max() <= 0.56, err.max()  # (the rational: 3.2e-9, 0.05 ulp at most)


def test_ndtri_float32_within_an_ulp_against_mpmath():
    rng = np.random.default_rng(6)
    p = np.concatenate([rng.uniform(0, 1, 6000), 10 ** rng.uniform(-45, -1, 3000),
                        1 - 10 ** rng.uniform(-7.2, -1, 2000),
                        [0.02425, 1 - 0.02425, 0.5]]).astype(np.float32)
    got = ember.special.ndtri(ember.tensor(p)).numpy()
    mp.mp.dps = 80
    want = np.array([float(mp.sqrt(2) * mp.erfinv(2 * mp.mpf(float(v)) - 1)) for v in p])
    err = _ulps(got, want)
    assert err.max() <= 0.56, err.max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri"])
def test_normal_special_values_and_mixed_blocks_like_torch(name, dtype):
    """Special values, and blocks where a branch is taken by all, few (gathered) or many
    elements (selected): each element as PyTorch has it."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    if name == "ndtri":
        specials = [0.0, 1.0, -0.0, -0.1, 1.1, nan, inf, -inf, 1e-45, 1e-30, 0.5,
                    1 - 2 ** -24]
        x = np.concatenate([rng.uniform(0.1, 0.9, _BLOCK), rng.uniform(0, 1, _BLOCK),
                            rng.uniform(0.03, 0.97, _BLOCK)])
        x[_BLOCK + 5: _BLOCK + 50] = 1e-12  # (a few tail elements in a block)
    else:
        specials = [0.0, -0.0, inf, -inf, nan, 40.0, -40.0, -9.5, -9.2, 1e-30, -1e-30,
                    10.5, -10.5, 26.0, -26.0, 30.0]
        x = np.concatenate([rng.uniform(0.1, 3, _BLOCK), rng.uniform(-30, 30, _BLOCK),
                            rng.uniform(0.1, 3, _BLOCK)])
        x[5:50] = -rng.uniform(0.1, 3, 45)  # (a few negative elements in a block)
        x[_BLOCK + 5: _BLOCK + 50] = 20.0
    x = np.concatenate([specials, x]).astype(dtype)
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    rtol = np.full(x.shape, 1e-12 if dtype == "float64" else 3e-6)
    if name != "ndtri" and dtype == "float32":  # (PyTorch's float32 exp(±x²) rounds x² first:
        rtol = np.maximum(rtol, 1.2e-7 * x * x)   # its error; ours is checked with mpmath)
    with np.errstate(invalid="ignore"):
        close = (e == t) | (np.abs(e - t) <= rtol * np.abs(t) + 1e-44) | (np.isnan(e) &
                                                                          np.isnan(t))
    assert close.all(), (x[~close][:5], e[~close][:5], t[~close][:5])
    np.testing.assert_array_equal(np.signbit(e[e == e]), np.signbit(t[t == t]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri"])
def test_normal_rules_on_blocks_equal_their_expressions(name, dtype):
    rng = np.random.default_rng(8)
    x = (rng.uniform(0.01, 0.99, 2 * _BLOCK + 3) if name == "ndtri" else
         rng.uniform(-8, 8, 2 * _BLOCK + 3)).astype(dtype)
    g = rng.uniform(-1, 1, x.size).astype(dtype)
    op = {"erfcx": sf._erfcx, "log_ndtr": sf._log_ndtr, "ndtri": sf._ndtri}[name]
    rule = op.rules[0] if hasattr(op, "rules") else None
    if rule is None:
        pytest.skip("no rule attribute")
    ans = getattr(ember.special, name)(ember.tensor(x)).numpy()
    fast = rule(_xp.NUMPY, g, ans, x)
    slow = rule(_array_api, ember.tensor(g), ember.tensor(ans), ember.tensor(x)).numpy()
    np.testing.assert_allclose(fast, slow, rtol=1e-5 if dtype == "float32" else 1e-13)
    assert fast.dtype == x.dtype


JY_EXACT = {"bessel_j0": lambda x: mp.besselj(0, x), "bessel_j1": lambda x: mp.besselj(1, x),
            "bessel_y0": lambda x: mp.bessely(0, x), "bessel_y1": lambda x: mp.bessely(1, x)}


@pytest.mark.parametrize("name", sorted(JY_EXACT))
def test_bessel_jy_float32_against_mpmath(name):
    """``bessel32.py``: below 5 the exact value rounded (the polynomials' error is 2e-11
    absolute), beyond within 2e-8 absolute (float32's cos and sin, as PyTorch's kernels);
    both well under PyTorch's float32 error (3e-7 and more)."""
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(0, 5, 2000), rng.uniform(5, 60, 2000),
                        10 ** rng.uniform(-30, 4, 500), [5.0, 5.000001, 4.999999]])
    if name in ("bessel_j0", "bessel_j1"):
        x = np.concatenate([x, -x])
    x = x.astype(np.float32)
    got = getattr(ember.special, name)(ember.tensor(x)).numpy().astype(np.float64)
    want = _exact(JY_EXACT[name], x)
    small = np.abs(x) < 5
    err = np.abs(got - want)
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (err[small] <= 0.5 * spacing[small] + 3e-11).all()
    assert (err[~small] <= 3e-8 * np.maximum(1, np.abs(want[~small]))).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(JY_EXACT))
def test_bessel_jy_special_values_and_mixed_blocks_like_torch(name, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x = np.concatenate([[0.0, -0.0, inf, -inf, nan, -1.0, 1e-30, 5.0, 100.0],
                        rng.uniform(0, 4, _BLOCK), rng.uniform(-30, 30, _BLOCK),
                        rng.uniform(6, 9, _BLOCK)]).astype(dtype)
    x[20:40] = 7.0  # (a few of the other branch's elements in a block)
    x[2 * _BLOCK + 20: 2 * _BLOCK + 40] = 3.0
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-5 if dtype == "float64" else 1e-4, atol=1e-6)
    np.testing.assert_array_equal(np.signbit(e[e == e]), np.signbit(t[t == t]))


K_EXACT = {"modified_bessel_k0": lambda x: mp.besselk(0, x),
           "modified_bessel_k1": lambda x: mp.besselk(1, x),
           "scaled_modified_bessel_k0": lambda x: mp.besselk(0, x) * mp.exp(x),
           "scaled_modified_bessel_k1": lambda x: mp.besselk(1, x) * mp.exp(x)}


@pytest.mark.parametrize("name", sorted(K_EXACT))
def test_bessel_k_float32_within_an_ulp(name):
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(0, 4, 2000), rng.uniform(2, 100, 2000),
                        10 ** rng.uniform(-30, 4, 1000), [2.0, 2.0000002]]).astype(np.float32)
    got = getattr(ember.special, name)(ember.tensor(x)).numpy()
    err = _ulps(got, _exact(K_EXACT[name], x))
    assert err.max() <= 0.51, err.max()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(K_EXACT))
def test_bessel_k_special_values_and_mixed_blocks_like_torch(name, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    x = np.concatenate([[0.0, -0.0, inf, -inf, nan, -1.0, 1e-30, 2.0, 100.0, 700.0],
                        rng.uniform(0, 2, _BLOCK), rng.uniform(-1, 30, _BLOCK),
                        rng.uniform(3, 9, _BLOCK)]).astype(dtype)
    x[20:40] = 7.0
    x[2 * _BLOCK + 20: 2 * _BLOCK + 40] = 1.0
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    t = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(e, t, rtol=1e-12 if dtype == "float64" else 1e-5, atol=1e-44)


def test_spherical_j0_float32_within_an_ulp_and_special_values():
    """sin by its own reduction below 2^23 (NumPy's float64 sin beyond), in blocks that mix
    both; 1 at 0, 0 at ±inf."""
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.uniform(-30, 30, 5000), 10 ** rng.uniform(-30, 9, 3000),
                        -(10 ** rng.uniform(-30, 9, 1000)),
                        [np.pi, 2 * np.pi, 1e7 * np.pi, 2.0 ** 23, 2.0 ** 23 - 1]])
    x = x.astype(np.float32)
    got = ember.special.spherical_bessel_j0(ember.tensor(x)).numpy()
    err = _ulps(got, _exact(lambda v: mp.sin(v) / v, x))
    assert err.max() <= 0.6, err.max()  # (PyTorch's float32: 1.33)
    specials = ember.tensor([0.0, -0.0, inf, -inf, nan, 1e-30], dtype=ember.float32)
    np.testing.assert_array_equal(ember.special.spherical_bessel_j0(specials).numpy(),
                                  np.array([1, 1, 0, 0, nan, 1], np.float32))
