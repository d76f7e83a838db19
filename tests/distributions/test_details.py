"""Details the table does not reach: Gamma's cdf derivatives, Kumaraswamy's mode (PyTorch's
is NaN), reprs of compound distributions, Wishart with a number df, expand of subclasses."""
import numpy as np
import pytest

import ember

from ..oracle import assert_same_tensor


def test_gamma_cdf_gradients(torch):
    grads = []
    for L in (ember, torch):
        c = L.tensor([2.0, 0.7], dtype=L.float64, requires_grad=True)
        r = L.tensor([1.5, 3.0], dtype=L.float64, requires_grad=True)
        v = L.tensor([1.0, 0.2], dtype=L.float64, requires_grad=True)
        y = L.distributions.Gamma(c, r).cdf(v)
        grads.append(L.autograd.grad(y.sum(), [r, v], retain_graph=True))
        with pytest.raises(NotImplementedError,
                           match="the derivative for 'igamma: input' is not implemented."):
            L.autograd.grad(y.sum(), [c])
    for a, b in zip(*grads):
        assert_same_tensor(a, b, rtol=1e-10)
    r = ember.tensor([1.5, 3.0], dtype=ember.float64, requires_grad=True)
    v = ember.tensor([1.0, 0.2], dtype=ember.float64, requires_grad=True)

    def cdf(r, v):
        return ember.distributions.Gamma(ember.tensor([2.0, 0.7], dtype=ember.float64),
                                         r).cdf(v)
    assert ember.autograd.gradcheck(cdf, (r, v))
    assert ember.autograd.gradgradcheck(cdf, (r, v))


def test_kumaraswamy_mode():
    """((a - 1) / (a b - 1))^(1/a) where a, b >= 1 (the maximum of the density), NaN else."""
    a = ember.tensor([2.0, 3.0, 0.5, 2.0], dtype=ember.float64)
    b = ember.tensor([2.0, 1.5, 2.0, 0.5], dtype=ember.float64)
    d = ember.distributions.Kumaraswamy(a, b)
    mode = d.mode.numpy()
    an, bn = a.numpy(), b.numpy()
    want = ((an[:2] - 1) / (an[:2] * bn[:2] - 1)) ** (1 / an[:2])
    np.testing.assert_allclose(mode[:2], want, rtol=1e-12)
    assert np.isnan(mode[2:]).all()
    grid = ember.linspace(0.01, 0.99, 9801, dtype=ember.float64)
    density = ember.distributions.Kumaraswamy(a[:2, None], b[:2, None]).log_prob(grid)
    np.testing.assert_allclose(grid.numpy()[density.argmax(-1).numpy()], want, atol=2e-4)


def test_reprs(torch):
    for build in (
        lambda D, L: D.MixtureSameFamily(D.Categorical(logits=L.zeros(2)),
                                         D.Normal(L.zeros(2), L.ones(2))),
        lambda D, L: D.Independent(D.Normal(L.zeros(3, 2), L.ones(3, 2)), 1),
        lambda D, L: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.ExpTransform()]),
        lambda D, L: D.LKJCholesky(3, 0.5),
        lambda D, L: D.Wishart(4.0, covariance_matrix=L.eye(2)),
        lambda D, L: D.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
        lambda D, L: D.Beta(2.0, 3.0),
        lambda D, L: D.Uniform(0.0, 1.0),
    ):
        assert repr(build(ember.distributions, ember)) == repr(build(torch.distributions,
                                                                    torch))


def test_wishart_number_df_and_precision(torch):
    out = []
    for L in (ember, torch):
        prec = L.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=L.float64)
        d = L.distributions.Wishart(3.5, precision_matrix=prec)
        v = L.tensor([[1.0, 0.2], [0.2, 0.8]], dtype=L.float64)
        out.append((d.log_prob(v), d.entropy(), d.mean, d.variance, d.scale_tril))
    for a, b in zip(*out):
        assert_same_tensor(a, b, rtol=1e-10, atol=1e-12)


def test_subclass_with_own_init_must_expand(torch):
    for L in (ember, torch):
        class MyGamma(L.distributions.Gamma):
            def __init__(self, c):
                super().__init__(c, 1.0)
        with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
            MyGamma(L.tensor([1.0])).expand((2, 1))
