"""``igamma`` / ``igammac`` (``ember/ops/incomplete_gamma.py``) and ``special.zeta``'s sums, by
region of the domain: float64 against mpmath, float32 against mpmath and PyTorch (at least as
accurate as PyTorch's float32), PyTorch's values off the domain, the x-gradient (finite
differences and PyTorch's), and results independent of the blocks they are computed in."""
import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

torch = pytest.importorskip("torch")

# a across the methods' borders (a < 1: Q's own series; 10: Stirling's prefactor; 20: Temme's
# expansion), x as multiples of a across theirs (0.7 and 1.3: Temme's; x = a + 1: the
# series' and the fraction's)
A = [1e-3, 0.3, 0.99, 1.0, 5.0, 9.99, 10.0, 19.99, 20.0, 25.0, 150.0, 3000.0]
LAMBDA = [1e-3, 0.5, 0.69, 0.71, 0.95, 1.0, 1.05, 1.29, 1.31, 2.0, 10.0]


def _grid(dtype):
    pairs = [(a, a * lam) for a, lam in itertools.product(A, LAMBDA)]
    pairs += [(a, a + 1 + d) for a in (0.5, 5.0, 15.0) for d in (-1e-3, 0.0, 1e-3)]
    a, x = (np.array(v, dtype=dtype) for v in zip(*pairs))
    return a, x


def _exact(a, x):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    pairs = [(mp.mpf(float(u)), mp.mpf(float(v))) for u, v in zip(a, x)]
    p = [mp.gammainc(u, 0, v, regularized=True) for u, v in pairs]
    q = [mp.gammainc(u, v, mp.inf, regularized=True) for u, v in pairs]
    return np.array([float(v) for v in p]), np.array([float(v) for v in q])


def _ours(lib, name, a, x):
    return getattr(lib.special, name)(lib.tensor(a), lib.tensor(x)).numpy().astype(np.float64)


def test_float64_against_mpmath_in_every_region():
    """Within 1e-13, or within a few ulp times the condition number in the tails: there P or Q
    is about exp(-a phi(x / a - 1)), and one ulp of x moves it by a |x / a - 1| ulp."""
    a, x = _grid(np.float64)
    exact_p, exact_q = _exact(a, x)
    bound = 1e-13 + 1e-15 * np.abs(x - a)
    for name, exact in (("gammainc", exact_p), ("gammaincc", exact_q)):
        ours = _ours(ember, name, a, x)
        keep = exact > 1e-290  # (subnormal results keep fewer digits)
        rel = np.abs(ours - exact)[keep] / exact[keep] / bound[keep]
        assert np.max(rel) < 1, (name, a[keep][np.argmax(rel)], x[keep][np.argmax(rel)])
        assert np.all(ours[~keep] < 1e-280)


def test_float32_at_least_as_accurate_as_torch():
    a, x = _grid(np.float32)
    exact_p, exact_q = _exact(a, x)  # (of the float32 inputs)
    for name, exact in (("gammainc", exact_p), ("gammaincc", exact_q)):
        ours = np.abs(_ours(ember, name, a, x) - exact)
        theirs = np.abs(_ours(torch, name, a, x) - exact)
        # within float32's rounding of the exact value, or no further off than PyTorch
        assert np.all(ours <= np.maximum(theirs, 1.2e-7 * exact + 1e-44)), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_off_the_domain_like_torch(name, dtype):
    values = [0.0, -0.0, 1e-3, 1.0, 30.0, -1.0, float("inf"), float("-inf"), float("nan")]
    a, x = (np.array(v) for v in zip(*itertools.product(values, values)))
    ours = getattr(ember.special, name)(ember.tensor(a, dtype=getattr(ember, dtype)),
                                        ember.tensor(x, dtype=getattr(ember, dtype))).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(a, dtype=getattr(torch, dtype)),
                                          torch.tensor(x, dtype=getattr(torch, dtype))).numpy()
    off = ~((a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x))
    np.testing.assert_array_equal(ours[off], theirs[off])
    np.testing.assert_allclose(ours[~off], theirs[~off], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_x_gradient_in_every_region(name):
    # series, fraction, a < 1 below a + 1, Temme's on both sides, a large
    a = np.array([0.5, 3.0, 0.3, 12.0, 50.0, 50.0, 1e5, 2e7])
    x = np.array([0.4, 9.0, 0.8, 11.5, 45.0, 56.0, 1e5 + 200.0, 2e7 - 3e3])
    fn = getattr(ember.special, name)
    xe = ember.tensor(x, dtype=ember.float64, requires_grad=True)
    ae = ember.tensor(a, dtype=ember.float64)
    assert gradcheck(lambda t: fn(ae, t), (xe,))
    fn(ae, xe).sum().backward()
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    getattr(torch.special, name)(torch.tensor(a, dtype=torch.float64), xt).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-7)
    # float32: the same density, rounded
    x32 = ember.tensor(x, dtype=ember.float32, requires_grad=True)
    fn(ember.tensor(a, dtype=ember.float32), x32).sum().backward()
    np.testing.assert_allclose(x32.grad.numpy(), xe.grad.numpy(), rtol=2e-6, atol=1e-30)


def test_gradient_off_the_domain_like_torch():
    values = [0.0, 0.5, 1.0, 2.0, float("inf"), float("nan")]
    a, x = (np.array(v) for v in zip(*itertools.product(values, values)))
    grads = []
    for lib in (ember, torch):
        xs = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        lib.special.gammainc(lib.tensor(a, dtype=lib.float64), xs).sum().backward()
        grads.append(xs.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "zeta"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_results_do_not_depend_on_the_blocks(name, dtype):
    """Broadcast operands over more elements than a block (a row against a column), each
    element equal to its value computed alone."""
    rng = np.random.default_rng(0)
    a = 10 ** rng.uniform(-2, 4, (1, 400))
    x = np.concatenate([10 ** rng.uniform(-2, 4, 150), 10 ** rng.uniform(0, 3, 150)])[:, None]
    if name == "zeta":
        a = a + 1.0
    fn = getattr(ember.special, name)
    big = fn(ember.tensor(a, dtype=getattr(ember, dtype)),
             ember.tensor(x, dtype=getattr(ember, dtype))).numpy()
    assert big.shape == (300, 400)
    for i in range(0, 300, 37):
        alone = fn(ember.tensor(a, dtype=getattr(ember, dtype)),
                   ember.tensor(x[i:i + 1], dtype=getattr(ember, dtype))).numpy()
        np.testing.assert_array_equal(big[i:i + 1], alone)


def test_zeta_of_a_large_s():
    """A large s ends the sum after a term or two; float64 against mpmath, float32 no
    further off than PyTorch's."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    s = np.array([30.0, 64.0, 65.0, 100.0, 1e3, 1e5, 1e5, 2.0, 3.5, 15.0])
    q = np.array([0.7, 1.0, 1.5, 1.01, 1.0, 0.999, 2.5, 0.5, 12.0, 15.5])
    exact = np.array([float(mp.zeta(u, v)) for u, v in zip(s, q)])
    ours = ember.special.zeta(ember.tensor(s), ember.tensor(q)).numpy()
    fine = np.isfinite(exact) & (exact > 1e-300)
    assert np.max(np.abs(ours - exact)[fine] / exact[fine]) < 1e-14
    assert np.array_equal(ours[~fine], np.where(np.isinf(exact), np.inf, 0.0)[~fine])
    s32, q32 = s.astype(np.float32), q.astype(np.float32)
    exact = np.array([float(mp.zeta(float(u), float(v))) for u, v in zip(s32, q32)])
    ours = ember.special.zeta(ember.tensor(s32), ember.tensor(q32)).numpy().astype(float)
    theirs = torch.special.zeta(torch.tensor(s32), torch.tensor(q32)).numpy().astype(float)
    with np.errstate(invalid="ignore"):
        err, their_err = np.abs(ours - exact), np.abs(theirs - exact)
    finite = np.isfinite(exact)
    assert np.all(err[finite] <= np.maximum(their_err[finite], 2e-7 * exact[finite] + 1e-44))
    assert np.array_equal(ours[~finite], theirs[~finite])
