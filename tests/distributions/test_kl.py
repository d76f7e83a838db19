"""Every KL pair PyTorch registers, against PyTorch: values (finite and infinite), errors,
and gradients with respect to both distributions' parameters (float64)."""
import numpy as np
import pytest

import ember

from ..oracle import assert_same_tensor
from .cases import CASES, pd

# a builder per class name: cases of the table, plus those the table does not hold
_EXTRA = {
    "Normal": ({"loc": lambda r, s: r.standard_normal(s),
                "scale": lambda r, s: r.uniform(0.5, 2.0, s)},
               lambda L, loc, scale: L.distributions.Normal(loc, scale)),
    "Categorical": ({"logits": lambda r, s: r.standard_normal(s + (4,))},
                    lambda L, logits: L.distributions.Categorical(logits=logits)),
    "MultivariateNormal": ({"loc": lambda r, s: r.standard_normal(s + (3,)),
                            "covariance_matrix": lambda r, s: pd(3)(r, s, np.float64)},
                           lambda L, loc, covariance_matrix: L.distributions.MultivariateNormal(
                               loc, covariance_matrix)),
    "HalfNormal": ({"scale": lambda r, s: r.uniform(0.5, 2.0, s)},
                   lambda L, scale: L.distributions.HalfNormal(scale)),
}


def _case(name):
    for case in CASES:
        if case.name == name and case.make is None:
            return case
    raise KeyError(name)


def _arrays(name, seed):
    rng = np.random.default_rng(seed)
    if name in _EXTRA:
        return {k: g(rng, (3,)) for k, g in _EXTRA[name][0].items()}
    case = _case(name)
    out = {}
    for k, gen in case.params.items():
        v = gen(rng, (3,), np.float64)
        out[k] = v if type(v) in (int, float) else np.asarray(v, np.float64)
    return out


def _build(lib, name, arrays, grad=False):
    params = {k: lib.tensor(v, requires_grad=grad) if isinstance(v, np.ndarray) else v
              for k, v in arrays.items()}
    if name in _EXTRA:
        return _EXTRA[name][1](lib, **params), params
    return getattr(lib.distributions, name)(**params), params


def _library_class(cls):
    """A distribution of the library (not one a test registered a pair for)."""
    return cls.__module__.startswith(("torch.distributions.", "ember.distributions."))


def _pairs(torch):
    from torch.distributions import kl
    names = sorted((p.__name__, q.__name__) for p, q in kl._KL_REGISTRY
                   if _library_class(p) and _library_class(q))
    return [pair for pair in names if "ExponentialFamily" not in pair
            and "TransformedDistribution" not in pair and "Independent" not in pair
            and "LowRankMultivariateNormal" not in pair]


PAIRS = [  # the registered pairs (as of PyTorch 2.13), less the generic ones tested below
    ("Bernoulli", "Bernoulli"), ("Bernoulli", "Poisson"), ("Beta", "Beta"),
    ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"), ("Beta", "Gamma"),
    ("Beta", "Normal"), ("Beta", "Pareto"), ("Beta", "Uniform"), ("Binomial", "Binomial"),
    ("Categorical", "Categorical"), ("Cauchy", "Cauchy"),
    ("ContinuousBernoulli", "ContinuousBernoulli"), ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Pareto"),
    ("ContinuousBernoulli", "Uniform"), ("Dirichlet", "Dirichlet"), ("Exponential", "Beta"),
    ("Exponential", "ContinuousBernoulli"), ("Exponential", "Exponential"),
    ("Exponential", "Gamma"), ("Exponential", "Gumbel"), ("Exponential", "Normal"),
    ("Exponential", "Pareto"), ("Exponential", "Uniform"), ("Gamma", "Beta"),
    ("Gamma", "ContinuousBernoulli"), ("Gamma", "Exponential"), ("Gamma", "Gamma"),
    ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Pareto"), ("Gamma", "Uniform"),
    ("Geometric", "Geometric"), ("Gumbel", "Beta"), ("Gumbel", "ContinuousBernoulli"),
    ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Gumbel"), ("Gumbel", "Normal"),
    ("Gumbel", "Pareto"), ("Gumbel", "Uniform"), ("HalfNormal", "HalfNormal"),
    ("Laplace", "Beta"), ("Laplace", "ContinuousBernoulli"), ("Laplace", "Exponential"),
    ("Laplace", "Gamma"), ("Laplace", "Laplace"), ("Laplace", "Normal"), ("Laplace", "Pareto"),
    ("Laplace", "Uniform"), ("MultivariateNormal", "MultivariateNormal"), ("Normal", "Beta"),
    ("Normal", "ContinuousBernoulli"), ("Normal", "Exponential"), ("Normal", "Gamma"),
    ("Normal", "Gumbel"), ("Normal", "Laplace"), ("Normal", "Normal"), ("Normal", "Pareto"),
    ("Normal", "Uniform"), ("OneHotCategorical", "OneHotCategorical"), ("Pareto", "Beta"),
    ("Pareto", "ContinuousBernoulli"), ("Pareto", "Exponential"), ("Pareto", "Gamma"),
    ("Pareto", "Normal"), ("Pareto", "Pareto"), ("Pareto", "Uniform"), ("Poisson", "Bernoulli"),
    ("Poisson", "Binomial"), ("Poisson", "Poisson"), ("Uniform", "Beta"),
    ("Uniform", "ContinuousBernoulli"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"), ("Uniform", "Normal"), ("Uniform", "Pareto"), ("Uniform", "Uniform"),
]


def test_the_pairs_are_pytorchs(torch):
    from torch.distributions import kl
    assert sorted(PAIRS) == _pairs(torch)
    mine = {(p.__name__, q.__name__) for p, q in ember.distributions._kl_registry._KL_REGISTRY
            if _library_class(p) and _library_class(q)}
    assert mine == {(p.__name__, q.__name__) for p, q in kl._KL_REGISTRY
                    if _library_class(p) and _library_class(q)}


def _outcome(fn):
    try:
        return fn(), None
    except (NotImplementedError, ValueError) as e:
        return None, e


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
@pytest.mark.parametrize("seeds", [(0, 1), (2, 3)])
def test_kl_against_torch(torch, pair, seeds):
    p_name, q_name = pair
    ap, aq = _arrays(p_name, seeds[0]), _arrays(q_name, seeds[1])
    results = []
    for L in (ember, torch):
        p, p_params = _build(L, p_name, ap, grad=True)
        q, q_params = _build(L, q_name, aq, grad=True)
        value, error = _outcome(lambda: L.distributions.kl_divergence(p, q))
        if error is not None:
            results.append((type(error), str(error)))
            continue
        inputs = [t for t in (*p_params.values(), *q_params.values())
                  if hasattr(t, "requires_grad")]
        finite = value.detach().isfinite()
        grads = None
        if bool(finite.any()) and value.requires_grad:
            grads = L.autograd.grad(value[finite].sum(), inputs, allow_unused=True)
        results.append((value, grads))
    (ve, ge), (vt, gt) = results
    if isinstance(vt, type):
        assert (ve, ge) == (vt, gt)
        return
    assert_same_tensor(ve, vt, rtol=1e-9, atol=1e-12)
    assert (ge is None) == (gt is None)
    for a, b in zip(ge or (), gt or ()):
        if b is None:
            assert a is None or not bool(a.abs().sum() > 0)
            continue
        assert_same_tensor(a, b, rtol=1e-8, atol=1e-12)


def test_binomial_refuses_a_larger_q_count(torch):
    for L in (ember, torch):
        D = L.distributions
        p = D.Binomial(3, probs=L.tensor([0.3, 0.6]))
        q = D.Binomial(5, probs=L.tensor([0.5, 0.5]))
        with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
            D.kl_divergence(p, q)


def test_generic_pairs(torch):
    """Independent, TransformedDistribution, the low-rank Gaussians and the exponential
    family's Bregman divergence (called directly: a specific pair wins dispatch)."""
    rng = np.random.default_rng(7)
    loc1, loc2 = rng.standard_normal((2, 3, 4))
    s1, s2 = rng.uniform(0.5, 2.0, (2, 3, 4))
    w1, w2 = rng.standard_normal((2, 4, 2))
    d1, d2 = rng.uniform(0.5, 2.0, (2, 4))
    cov = pd(4)(rng, (), np.float64)
    out = []
    for L in (ember, torch):
        D = L.distributions
        t = L.tensor
        res = [
            D.kl_divergence(D.Independent(D.Normal(t(loc1), t(s1)), 1),
                            D.Independent(D.Normal(t(loc2), t(s2)), 1)),
            D.kl_divergence(D.LogNormal(t(loc1), t(s1)), D.LogNormal(t(loc2), t(s2))),
            D.kl_divergence(D.LowRankMultivariateNormal(t(loc1), t(w1), t(d1)),
                            D.LowRankMultivariateNormal(t(loc2), t(w2), t(d2))),
            D.kl_divergence(D.LowRankMultivariateNormal(t(loc1), t(w1), t(d1)),
                            D.MultivariateNormal(t(loc2), t(cov))),
            D.kl_divergence(D.MultivariateNormal(t(loc2), t(cov)),
                            D.LowRankMultivariateNormal(t(loc1), t(w1), t(d1))),
            D.kl._kl_expfamily_expfamily(D.Gamma(t(s1), t(s2)), D.Gamma(t(s2), t(s1))),
            D.kl._kl_expfamily_expfamily(D.Beta(t(s1), t(s2)), D.Beta(t(s2), t(s1))),
        ]
        errors = [
            _outcome(lambda: D.kl_divergence(D.Independent(D.Normal(t(loc1), t(s1)), 1),
                                             D.Independent(D.Normal(t(loc1), t(s1)), 2)))[1],
            _outcome(lambda: D.kl_divergence(
                D.TransformedDistribution(D.Normal(t(loc1), t(s1)), D.ExpTransform()),
                D.TransformedDistribution(D.Normal(t(loc1), t(s1)), D.TanhTransform())))[1],
            _outcome(lambda: D.kl._kl_expfamily_expfamily(D.Gamma(t(s1), t(s2)),
                                                          D.Beta(t(s1), t(s2))))[1],
            _outcome(lambda: D.kl_divergence(
                D.LowRankMultivariateNormal(t(loc1), t(w1), t(d1)),
                D.MultivariateNormal(t(loc2[:, :3]), t(cov[:3, :3]))))[1],
        ]
        out.append((res, [(type(e), str(e)) for e in errors]))
    (re, ee), (rt, et) = out
    for a, b in zip(re, rt):
        assert_same_tensor(a.detach(), b.detach(), rtol=1e-9, atol=1e-12)
    assert ee == et
