"""The float32 kernels of the error and gamma functions (``ops/unary.py``, ``ops/gamma.py``):
one branch-free rational or series each, in float64 on blocks, rounded once. Checked here
without PyTorch, against float64 references (``math``, and ember's float64 kernels, which
``test_ops_pointwise.py`` / ``test_ops_gamma.py`` check against PyTorch): on dense grids over
the whole domain within 0.6 ulp (a wrong coefficient costs thousands), at the special
values, through the blocked path (more than one block), in any layout and at 0-d, and exact
GELU (float32 arithmetic: within 8 ulp) forward and backward."""
import math

import numpy as np
import pytest

import ember
from ember.ops import unary

inf, nan = math.inf, math.nan
BLOCKS = 3 * unary._BLOCK + 17  # several blocks and a short last one


def _ulp_error(got, want):
    """|got - want| in units of float32's spacing at ``want`` (float64 values)."""
    want32 = np.abs(want).astype(np.float32)
    return np.abs(got.astype(np.float64) - want) / np.spacing(want32).astype(np.float64)


def _grid(low, high, tiny=True):
    x = np.linspace(low, high, BLOCKS)
    if tiny:
        x = np.concatenate([x, np.geomspace(1e-38, 1, 4000), -np.geomspace(1e-38, 1, 4000)])
    return x.astype(np.float32)


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_and_erfc_are_correctly_rounded(name):
    x = _grid(-11, 11)
    want = np.array([getattr(math, name)(float(v)) for v in x])
    got = getattr(ember, name)(ember.tensor(x)).numpy()
    assert got.dtype == np.float32
    normal = np.abs(want) > 1.2e-38  # (erfc's subnormal tail: absolute precision only)
    err = _ulp_error(got, want)[normal]
    assert err.max() < 0.6, (name, x[normal][err.argmax()], err.max())
    np.testing.assert_allclose(got[~normal], want[~normal], rtol=0, atol=1.5e-45)


def test_erfinv_is_correctly_rounded_to_the_tails():
    y = np.concatenate([np.linspace(-1, 1, BLOCKS)[1:-1], 1 - np.geomspace(6e-8, 0.5, 4000),
                        -1 + np.geomspace(6e-8, 0.5, 4000), np.geomspace(1e-38, 0.5, 4000),
                        -np.geomspace(1e-38, 0.5, 4000)]).astype(np.float32)
    want = ember.erfinv(ember.tensor(y.astype(np.float64))).numpy()
    got = ember.erfinv(ember.tensor(y)).numpy()
    err = _ulp_error(got, want)
    assert err.max() < 0.6, (y[err.argmax()], err.max())


def test_error_functions_special_values_in_float32():
    x = ember.tensor([inf, -inf, nan, 0.0, -0.0, 30.0, -30.0, 1e-45])
    erf, erfc = ember.erf(x).numpy(), ember.erfc(x).numpy()
    np.testing.assert_array_equal(erf[[0, 1, 3, 4, 5, 6]], [1, -1, 0, 0, 1, -1])
    np.testing.assert_array_equal(erfc[[0, 1, 3, 4, 5, 6]], [0, 2, 1, 1, 0, 2])
    assert np.isnan(erf[2]) and np.isnan(erfc[2])
    assert np.signbit(erf[4]) and not np.signbit(erf[3]) and erf[7] > 0
    y = ember.tensor([1.0, -1.0, 1.5, -2.0, nan, 0.0, -0.0])
    got = ember.erfinv(y).numpy()
    np.testing.assert_array_equal(got[[0, 1, 5, 6]], [inf, -inf, 0, 0])
    assert np.isnan(got[[2, 3, 4]]).all() and np.signbit(got[6]) and not np.signbit(got[5])


def _erf_family_exact(name, x):
    if name == "erfinv":
        return ember.erfinv(ember.tensor(x.astype(np.float64))).numpy()
    return np.array([getattr(math, name)(float(v)) for v in x])


MIDDLE = {"erf": unary._ERF_MID, "erfc": unary._ERFC_MID, "erfinv": unary._ERFINV_MID}


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_central_rationals_are_correctly_rounded(name):
    """Blocks wholly inside the central range take its rational of lower degree
    (``unary._central``): dense over that range, every block inside it."""
    bound = np.float32(MIDDLE[name])
    x = np.linspace(-bound, bound, BLOCKS).astype(np.float32)
    assert np.abs(x).max() <= bound
    got = getattr(ember, name)(ember.tensor(x)).numpy()
    err = _ulp_error(got, _erf_family_exact(name, x))
    assert err.max() < 0.6, (name, x[err.argmax()], err.max())


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_central_blocks_redo_the_elements_beyond(name):
    """A block mostly inside the central range with a few elements beyond (gathered and
    redone by the whole range's kernel) or mostly beyond (the whole block by it), the
    special values among them: each element as it is alone."""
    rng = np.random.default_rng(7)
    bound = MIDDLE[name]
    beyond = ([0.95, -0.97, 0.999999, -1.0, 1.0, 1.5, -3.0] if name == "erfinv" else
              [2.7, -3.1, 4.2, -9.5, 11.0, 30.0, -30.0, math.inf, -math.inf])
    special = [0.0, -0.0, math.nan, 1e-45, -1e-40, np.nextafter(np.float32(bound), 2)]
    for share in (0.001, 0.1, 0.5):
        x = rng.uniform(-bound, bound, 2 * unary._BLOCK + 5)
        at = rng.choice(x.size, int(share * x.size) + len(beyond) + len(special),
                        replace=False)
        x[at] = rng.choice(beyond + special, at.size)
        x[at[:len(beyond) + len(special)]] = beyond + special
        x = x.astype(np.float32)
        got = getattr(ember, name)(ember.tensor(x)).numpy()
        alone = np.array([getattr(ember, name)(ember.tensor(v)).item() for v in x[at]],
                         np.float32)
        np.testing.assert_array_equal(got[at], alone)
        want = _erf_family_exact(name, x)
        finite = np.isfinite(want) & (np.abs(want) > 1.2e-38)
        err = _ulp_error(got[finite], want[finite])
        assert err.max() < 0.6, (name, share, x[finite][err.argmax()], err.max())


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma"])
def test_layouts_zero_d_and_float16(name):
    fn = getattr(ember, name)
    x = np.random.default_rng(0).uniform(0.05, 0.95, (300, 250)).astype(np.float32)
    whole = fn(ember.tensor(x)).numpy()
    np.testing.assert_array_equal(fn(ember.tensor(x).t()).numpy(), whole.T)
    np.testing.assert_array_equal(fn(ember.tensor(x)[:, ::3]).numpy(), whole[:, ::3])
    scalar = fn(ember.tensor(x[0, 0]))
    assert scalar.shape == () and scalar.item() == whole[0, 0]
    half = fn(ember.tensor(x[:4, :4], dtype=ember.float16))
    assert half.dtype == ember.float16
    want = fn(ember.tensor(x[:4, :4].astype(np.float16).astype(np.float64))).numpy()
    np.testing.assert_allclose(half.numpy().astype(np.float64), want, rtol=1e-3)


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def test_exact_gelu_in_float32_is_within_a_few_ulp():
    """Exact GELU in float32 runs in float32 arithmetic (ops/nn/activation.py; the erfc kernel
    in float64 costs 3x): within 8 ulp of x Phi(x) wherever the result is a normal float
    (7.1 measured, in the deep negative tail, where the exp's argument is squared in
    float64), the negative tail included. PyTorch's float32 formula 0.5 x (1 + erf),
    measured on this grid: 5.1 ulp for x > 1, 2.2 on [-1, 1], and millions of ulp below
    x = -1 (1 + erf cancels; it returns 0 below about -5.7)."""
    x = _grid(-14, 14)
    want = np.array([float(v) * _phi(float(v)) for v in x])
    got = ember.nn.functional.gelu(ember.tensor(x)).numpy()
    normal = np.abs(want) > 1.2e-38
    err = _ulp_error(got, want)[normal]
    assert err.max() < 8, (x[normal][err.argmax()], err.max())
    np.testing.assert_allclose(got[~normal], want[~normal], rtol=0, atol=1e-44)
    assert (got[x < 0] <= 0).all() and (got[x > 0] >= 0).all()
    special = ember.nn.functional.gelu(ember.tensor([inf, -inf, nan, 0.0, -0.0, 20.0, -20.0,
                                                     1e-45, -1e-45])).numpy()
    assert special[0] == inf and np.isnan(special[1:3]).all()
    assert special[3] == 0 and np.signbit(special[4]) and special[4] == 0
    np.testing.assert_array_equal(special[5:7], [20, 0])
    assert np.signbit(special[6]) and np.signbit(special[8])
    np.testing.assert_allclose(special[7:], [7e-46, -7e-46], rtol=0, atol=1.5e-45)


def test_exact_gelu_in_float32_layouts_and_float16():
    """Strided, transposed and several blocks give the contiguous values (0-d takes the
    formula, within float32 rounding); float16 rounds the float32 kernel's result."""
    x = np.random.default_rng(4).normal(scale=4, size=(700, 130)).astype(np.float32)
    fn = ember.nn.functional.gelu
    whole = fn(ember.tensor(x)).numpy()
    np.testing.assert_array_equal(fn(ember.tensor(x).t()).numpy(), whole.T)
    np.testing.assert_array_equal(fn(ember.tensor(x)[:, ::3]).numpy(), whole[:, ::3])
    assert abs(fn(ember.tensor(x[3, 5])).item() - whole[3, 5]) < 8 * 2.0 ** -24 * abs(x[3, 5])
    want = x.astype(np.float64) * np.array([_phi(float(v))
                                                   for v in x.ravel()]).reshape(x.shape)
    np.testing.assert_allclose(whole, want, rtol=8 * 2.0 ** -24, atol=1e-44)
    x16 = x[:40].astype(np.float16)
    half = fn(ember.tensor(x16))
    assert half.dtype == ember.float16
    want = np.array([float(v) * _phi(float(v)) for v in x16.ravel()]).reshape(x16.shape)
    np.testing.assert_allclose(half.numpy().astype(np.float64), want, rtol=1e-3, atol=6e-8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_gelu_backward(dtype):
    """The plain backward (float32: the erfc kernel on blocks) against the formula with erf
    (the recorded form, under ``create_graph``) and float64 arithmetic, through 0, subnormal
    inputs and both tails."""
    x = np.concatenate([np.linspace(-12, 12, BLOCKS), [0.0, -0.0, 1e-40, -1e-45, 1e-30, 40.0,
                                                      -40.0]]).astype(dtype)
    g = np.random.default_rng(1).normal(size=x.shape).astype(dtype)
    grads = []
    for create_graph in (False, True):
        t = ember.tensor(x, requires_grad=True)
        (grad,) = ember.autograd.grad(ember.nn.functional.gelu(t), t, ember.tensor(g),
                                      create_graph=create_graph)
        grads.append(grad.detach().numpy())
    want = np.array([_phi(float(v)) + float(v) * math.exp(-float(v) ** 2 / 2)
                     / math.sqrt(2 * math.pi) for v in x]) * g
    eps = np.finfo(dtype).eps
    for got in grads:
        np.testing.assert_allclose(got, want, rtol=8 * eps, atol=4 * eps)
    np.testing.assert_array_equal(grads[0][-7:-2], 0.5 * g[-7:-2])


def _gamma_reference(name, x):
    if name == "lgamma":
        out = []
        for v in x:
            try:
                out.append(math.lgamma(float(v)))
            except (ValueError, OverflowError):
                out.append(inf)
        return np.array(out)
    fn = ember.digamma if name == "digamma" else lambda t: ember.polygamma(1, t)
    return fn(ember.tensor(x.astype(np.float64))).numpy()  # (float64: checked against PyTorch)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "trigamma"])
def test_gamma_family_in_float32_is_correctly_rounded(name):
    """Positive and negative non-integers, next to the poles and the zeros, tiny and huge."""
    rng = np.random.default_rng(2)
    poles = -np.arange(1, 40, dtype=np.float64)
    x = np.concatenate([_grid(-30, 30), np.geomspace(1e-30, 3e38, 4000),
                        -np.geomspace(1e-30, 1e6, 4000), rng.uniform(0.9, 2.1, 4000),
                        poles + 1e-3, poles - 1e-3, [1.4616321, 2.5, -2.5]]).astype(np.float32)
    x = x[(x > 0) | (x != np.floor(x))]  # the poles: below
    fn = {"lgamma": ember.lgamma, "digamma": ember.digamma,
          "trigamma": lambda t: ember.polygamma(1, t)}[name]
    got = fn(ember.tensor(x)).numpy()
    want = _gamma_reference(name, x)
    finite = np.isfinite(want.astype(np.float32)) & (want != 0)
    err = _ulp_error(got[finite], want[finite])
    assert err.max() < 0.6, (name, x[finite][err.argmax()], err.max())
    np.testing.assert_array_equal(got[~finite], want[~finite].astype(np.float32))


@pytest.mark.parametrize("name", ["lgamma", "digamma", "trigamma"])
def test_gamma_family_special_values_in_float32_as_in_float64(name):
    x = np.array([0.0, -0.0, -1.0, -2.0, -7.0, inf, -inf, nan, 1.0, 2.0, 1e-30, -1e-30, 3e38,
                  -3e7], dtype=np.float32)
    fn = {"lgamma": ember.lgamma, "digamma": ember.digamma,
          "trigamma": lambda t: ember.polygamma(1, t)}[name]
    got = fn(ember.tensor(x)).numpy()
    want = fn(ember.tensor(x.astype(np.float64))).numpy().astype(np.float32)
    if name == "trigamma":
        # At the negative integers float64 (as PyTorch's float64) gives sin(pi x)'s rounding
        # error's huge value; float32 gives the pole's inf (PyTorch's float32: ~1e15).
        at_pole = (x < 0) & (x == np.floor(x)) & np.isfinite(x)
        assert (got[at_pole] == inf).all()
        got, want = got[~at_pole], want[~at_pole]
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)  # (the signs of infinities and zeros)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_gelu_in_buffers_matches_its_formula(dtype):
    """Forward in one buffer, backward in two: against the recorded form (``create_graph``)
    and float64 arithmetic, through 0 and subnormals."""
    x = np.concatenate([np.linspace(-9, 9, 20001), [0.0, -0.0, 1e-40, -1e-45, 1e-30]])
    x = x.astype(dtype)
    g = np.random.default_rng(3).normal(size=x.shape).astype(dtype)
    k, beta = 0.044715, math.sqrt(2 / math.pi)
    x64 = x.astype(np.float64)
    t = np.tanh(beta * (x64 + k * x64 ** 3))
    want_out = 0.5 * x64 * (1 + t)
    want = g * (0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * beta * (1 + 3 * k * x64 ** 2))
    eps = np.finfo(dtype).eps
    for create_graph in (False, True):
        inp = ember.tensor(x, requires_grad=True)
        out = ember.nn.functional.gelu(inp, approximate="tanh")
        (grad,) = ember.autograd.grad(out, inp, ember.tensor(g), create_graph=create_graph)
        # (the formula's 1 + tanh cancels for x < -3, and 1 - tanh rounds coarsely for x > 3:
        # ~1e-6 off in float32, as PyTorch's)
        np.testing.assert_allclose(out.detach().numpy(), want_out, rtol=4 * eps, atol=16 * eps)
        np.testing.assert_allclose(grad.detach().numpy(), want, rtol=64 * eps, atol=64 * eps)
    scalar = ember.tensor(0.5, dtype=getattr(ember, dtype), requires_grad=True)
    ember.nn.functional.gelu(scalar, approximate="tanh").backward()
    t = math.tanh(beta * (0.5 + k / 8))
    slope = 0.5 * (1 + t) + 0.25 * (1 - t * t) * beta * (1 + 3 * k / 4)
    assert abs(scalar.grad.item() - slope) < 16 * eps


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_output_modified_in_place_keeps_its_gradient(approximate):
    """GELU's rules read the input only (PyTorch's GeluBackward saves ``self``): an output
    modified in place does not touch the gradient."""
    x = ember.tensor([-1.25, 2.5, 0.3], requires_grad=True)
    out = ember.nn.functional.gelu(x, approximate=approximate)
    out.neg_()
    out.sum().backward()
    y = ember.tensor([-1.25, 2.5, 0.3], requires_grad=True)
    ember.nn.functional.gelu(y, approximate=approximate).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), -y.grad.numpy())


def test_exact_gelu_slope_kept_by_the_forward_is_the_backward_bit_for_bit():
    """A float32 forward that will be differentiated keeps its slope (``saved["slope"]``):
    the gradient through it has the bits of the backward kernel that recomputes from the
    input, over whole blocks, a short one, and the special values; a forward without grad
    keeps nothing."""
    from ember.ops.nn import _gelu32, activation

    rng = np.random.default_rng(7)
    x = (rng.normal(size=2 * BLOCKS + 123) * 4).astype(np.float32)
    x[:9] = [0.0, -0.0, np.inf, -np.inf, np.nan, 14.9, -14.9, 1e-40, -1e-45]
    g = rng.normal(size=x.shape).astype(np.float32)
    t = ember.tensor(x, requires_grad=True)
    out = ember.nn.functional.gelu(t)
    out.backward(ember.tensor(g))
    want = _gelu32.grad_narrow(np, g, x)
    np.testing.assert_array_equal(t.grad.numpy().view(np.uint32), want.view(np.uint32))
    with ember.no_grad():
        plain = ember.nn.functional.gelu(ember.tensor(x))
    np.testing.assert_array_equal(out.detach().numpy().view(np.uint32),
                                  plain.numpy().view(np.uint32))
    saved = {}
    activation._gelu(ember.tensor(x), "none", saved)
    assert saved["slope"].dtype == np.float32


def test_exact_gelu_tails_and_huge_values_across_blocks():
    """The elements that the float32 kernel hands to float64 (below -2.5, above 1e9, the
    infinities), gathered from several blocks (a NaN in a block does not hide its tail):
    output and slope against float64 references, with the kept slope the backward's."""
    from ember.ops.nn import _gelu32

    rng = np.random.default_rng(11)
    x = (rng.normal(size=3 * unary._BLOCK + 77) * 2.5).astype(np.float32)
    special = [np.nan, -2.5, -2.5000002, -13.0, -13.5, -20.0, 1e9, 1.0000001e9, 4e9, -1e13, 1e13,
               3e38, -3e38, inf, -inf]
    for k, v in enumerate(special):  # spread over the blocks, the short last one too
        x[(k * 7919) % x.size] = v
    x[-1] = -3.0
    out, slope = _gelu32.and_slope(np, x)
    np.testing.assert_array_equal(out.view(np.uint32), _gelu32.narrow(np, x).view(np.uint32))
    g = np.ones_like(x)
    np.testing.assert_array_equal(slope.view(np.uint32),
                                  _gelu32.grad_narrow(np, g, x).view(np.uint32))
    finite = np.isfinite(x)
    xf = x[finite].astype(np.float64)
    cdf = np.array([_phi(float(v)) for v in xf])
    want = xf * cdf
    normal = np.abs(want) > 1.2e-38
    err = _ulp_error(out[finite], want)[normal]
    assert err.max() < 8, (xf[normal][err.argmax()], err.max())
    np.testing.assert_allclose(out[finite][~normal], want[~normal], rtol=0, atol=1e-44)
    want_slope = cdf + xf * np.exp(-xf * xf / 2) / math.sqrt(2 * math.pi)
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(slope[finite], want_slope, rtol=8 * eps, atol=4 * eps)
    at = {v: (k * 7919) % x.size for k, v in enumerate(special)}
    assert out[at[1e13]] == 1e13 and out[at[3e38]] == np.float32(3e38) and out[at[inf]] == inf
    assert out[at[-1e13]] == 0 and np.signbit(out[at[-1e13]]) and out[at[-3e38]] == 0
    assert np.isnan(out[at[-inf]]) and np.isnan(out[at[np.nan]])
    assert slope[at[1e13]] == 1 and slope[at[-1e13]] == 0 and np.isnan(slope[at[np.nan]])


def test_exact_gelu_input_modified_in_place_raises_as_in_pytorch():
    """The kept slope does not replace the saved input: modifying it in place still raises
    at backward, with PyTorch's message."""
    torch = pytest.importorskip("torch")
    errors = []
    for lib in (ember, torch):
        x = lib.ones(4, requires_grad=True)
        y = x * 2
        out = lib.nn.functional.gelu(y)
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            out.sum().backward()
        errors.append(str(info.value).split(";")[0])
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_error_function_gradients_over_blocks(name):
    """The rules' ``g * scale * exp(±x²)`` over several blocks (``unary._gauss``): the bits of
    the one-buffer formula over the whole array, in float32 and float64."""
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        x = rng.uniform(-0.95, 0.95, BLOCKS).astype(dtype)
        g = rng.normal(size=BLOCKS).astype(dtype)
        t = ember.tensor(x, requires_grad=True)
        out = getattr(ember, name)(t)
        out.backward(ember.tensor(g))
        at = out.detach().numpy() if name == "erfinv" else x
        scale, sign = {"erf": (2 / math.sqrt(math.pi), -1), "erfc": (-2 / math.sqrt(math.pi), -1),
                       "erfinv": (math.sqrt(math.pi) / 2, 1)}[name]
        want = at * at
        if sign < 0:
            want = -want
        want = np.exp(want) * dtype(scale) * g
        np.testing.assert_array_equal(t.grad.numpy(), want)
