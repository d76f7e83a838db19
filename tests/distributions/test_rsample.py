"""Gradients of ``rsample`` with respect to the parameters.

Where the draw is a smooth function of parameter-free noise (``loc + scale * eps``, an icdf of
a uniform...), fixing the seed makes ``rsample`` a deterministic function of the parameters:
checked by finite differences to second order. Gamma-based draws (Gamma, Chi2, Beta,
Dirichlet and those built on them) use implicit reparameterisation: the gradient keeps the
draw's quantile fixed, so it is checked against that definition, against PyTorch's
approximation of the same quantity, and statistically (d E[x] / d alpha).
"""
import math

import numpy as np
import pytest

import ember

from .cases import CASES
from .test_table import _ids, _structured, make_params

GAMMA_BASED = {"Gamma", "Chi2", "Beta", "Dirichlet", "StudentT", "FisherSnedecor",
               "InverseGamma", "Wishart"}
# (OneHotCategoricalStraightThrough's gradient is by design not the sample's derivative)
SMOOTH = [c for c in CASES if c.name not in GAMMA_BASED
          and c.name != "OneHotCategoricalStraightThrough"
          and c.build(ember, make_params(c, (), np.float64)).has_rsample]


@pytest.mark.parametrize("case", SMOOTH, ids=_ids)
def test_rsample_gradcheck(case):
    arrays = make_params(case, (2,) if "batch" in case.batches else (), np.float64)
    names = [k for k, v in arrays.items() if isinstance(v, np.ndarray)]

    def fn(*tensors):
        kwargs = dict(arrays)
        kwargs.update(zip(names, (_structured(k, t) for k, t in zip(names, tensors))))
        d = case.make(ember, **kwargs) if case.make else \
            getattr(ember.distributions, case.name)(**kwargs)
        ember.manual_seed(0)
        return d.rsample((3,))

    inputs = [ember.tensor(arrays[k], requires_grad=True) for k in names]
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)


def test_gamma_gradient_keeps_the_quantile(torch):
    """d/da P(a, x(a)) = 0: moving alpha and the draw together keeps its cdf value."""
    alpha = ember.tensor([0.3, 1.0, 2.5, 10.0, 150.0, 2000.0], dtype=ember.float64,
                         requires_grad=True)
    ember.manual_seed(0)
    x = ember.distributions.Gamma(alpha, 1.0).rsample()
    (dx,) = ember.autograd.grad(x.sum(), alpha)
    h = 1e-6
    a0, x0, g = alpha.detach(), x.detach(), dx
    cdf = ember.distributions._samplers.gammainc
    moved = cdf(a0 + h, x0 + h * g)
    back = cdf(a0 - h, x0 - h * g)
    np.testing.assert_allclose(moved.numpy(), back.numpy(), rtol=1e-7, atol=1e-12)
    # PyTorch's fitted approximation of the same derivative, at the same points
    want = torch._standard_gamma_grad(torch.tensor(a0.numpy()), torch.tensor(x0.numpy()))
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=2e-3)


def test_gamma_gradient_in_float32_and_with_rate():
    for dtype in (ember.float32, ember.float64):
        alpha = ember.tensor([0.7, 3.0], dtype=dtype, requires_grad=True)
        rate = ember.tensor([2.0, 0.5], dtype=dtype, requires_grad=True)
        x = ember.distributions.Gamma(alpha, rate).rsample((4,))
        ga, gr = ember.autograd.grad(x.sum(), [alpha, rate])
        assert ga.dtype == dtype and gr.dtype == dtype
        # x = g / rate: d x / d rate = -x / rate
        np.testing.assert_allclose(gr.numpy(), (-x / rate).sum(0).detach().numpy(), rtol=1e-5)


def test_gamma_gradient_has_no_second_derivative():
    alpha = ember.tensor([2.0], dtype=ember.float64, requires_grad=True)
    x = ember.distributions.Gamma(alpha, 1.0).rsample()
    (g,) = ember.autograd.grad(x.sum(), alpha, create_graph=True)
    with pytest.raises(NotImplementedError,
                       match="the derivative for '_standard_gamma_grad' is not implemented."):
        ember.autograd.grad(g.sum(), alpha)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "Chi2", "StudentT",
                                  "FisherSnedecor", "InverseGamma"])
def test_mean_gradient_statistically(name):
    """The average over many draws of d x / d theta estimates d E[x] / d theta: compared with
    the derivative of the closed-form mean (a wrong gradient, even a plausible one, fails)."""
    rng = np.random.default_rng(0)
    params = {
        "Gamma": {"concentration": rng.uniform(1.0, 4.0, 3), "rate": rng.uniform(0.5, 2.0, 3)},
        "Beta": {"concentration1": rng.uniform(1.0, 4.0, 3),
                 "concentration0": rng.uniform(1.0, 4.0, 3)},
        "Dirichlet": {"concentration": rng.uniform(1.0, 4.0, (2, 3))},
        "Chi2": {"df": rng.uniform(1.0, 6.0, 3)},
        "StudentT": {"df": rng.uniform(4.5, 8.0, 3), "loc": rng.standard_normal(3),
                     "scale": rng.uniform(0.5, 2.0, 3)},
        "FisherSnedecor": {"df1": rng.uniform(2.0, 6.0, 3), "df2": rng.uniform(9.0, 14.0, 3)},
        "InverseGamma": {"concentration": rng.uniform(4.0, 6.0, 3), "rate": rng.uniform(0.5, 2, 3)},
    }[name]
    n = 40000
    ember.manual_seed(1)
    tensors = {k: ember.tensor(v, requires_grad=True) for k, v in params.items()}
    d = getattr(ember.distributions, name)(**tensors)
    draws = d.rsample((n,))
    weights = ember.tensor(rng.standard_normal(tuple(draws.shape[1:])))
    inputs = list(tensors.values())
    estimate = ember.autograd.grad((draws * weights).mean(0).sum(), inputs, retain_graph=True,
                                   allow_unused=True)
    exact = ember.autograd.grad((d.mean * weights).sum(), inputs, allow_unused=True)
    for got, want, t in zip(estimate, exact, inputs):
        got = ember.zeros_like(t) if got is None else got
        want = ember.zeros_like(t) if want is None else want  # (StudentT's mean is loc)
        scale = want.abs().max().item() + 1e-3
        assert (got - want).abs().max().item() < 0.05 * scale + 0.02, (name, got, want)


def test_dirichlet_and_beta_draws_are_on_the_support():
    ember.manual_seed(3)
    c = ember.tensor([[0.05, 0.1, 3.0], [1.0, 1.0, 1.0]], dtype=ember.float32,
                     requires_grad=True)
    x = ember.distributions.Dirichlet(c).rsample((500,))
    assert bool((x > 0).all()) and bool(((x.sum(-1) - 1).abs() < 1e-5).all())
    (g,) = ember.autograd.grad(x[..., 0].sum(), c)
    assert bool(g.isfinite().all())
    assert math.isfinite(ember.distributions.Beta(0.1, 0.1).rsample((100,)).sum().item())
