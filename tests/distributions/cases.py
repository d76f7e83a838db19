"""The distributions the table-driven tests build, with the parameters and values to use.

A case is ``Case(name, params, value, ...)``: ``params(rng, batch, dtype)`` returns the keyword
arguments as NumPy arrays (or Python numbers, passed as they are) for a batch shape ``batch``;
``value(rng, shape, dtype, params)`` returns points of the support of shape
``shape`` (``sample_shape + batch + event``) at which ``log_prob``/``cdf`` are compared;
``event`` is the event shape as a function of the parameters; ``make(lib, **kwargs)`` builds
the distribution in either library (``lib.distributions.<name>`` by default).
"""
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


def pos(lo=0.5, hi=3.0):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def real(scale=1.0):
    return lambda rng, shape, dtype: (scale * rng.standard_normal(shape)).astype(dtype)


def unit(lo=0.05, hi=0.95):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def simplex_vec(k):
    def gen(rng, shape, dtype):
        x = rng.uniform(0.2, 1.0, shape + (k,))
        return (x / x.sum(-1, keepdims=True)).astype(dtype)
    return gen


def vec(gen, k):
    return lambda rng, shape, dtype: gen(rng, shape + (k,), dtype)


def scalar(gen):
    """A 0-d parameter whatever the batch shape (a temperature shared by the batch)."""
    return lambda rng, shape, dtype: np.asarray(gen(rng, (), dtype))


def number(v):
    return lambda rng, shape, dtype: v


def count(n):
    return lambda rng, shape, dtype: rng.integers(0, n + 1, shape).astype(dtype)


@dataclass
class Case:
    name: str
    params: dict  # name -> generator(rng, batch_shape, dtype)
    value: Callable  # (rng, shape, dtype, params) -> array
    event: tuple = ()
    make: Callable = None
    icdf: bool = False  # compare icdf on (0, 1)
    grad_params: tuple = None  # which parameters take gradients (default: float arrays)
    id: str = ""
    rtol: dict = field(default_factory=dict)  # float64 tolerances by property, where wider
    skip: tuple = ()  # properties not compared with PyTorch's (each says why where it is set)
    torch_default64: bool = False  # run PyTorch with float64 as its default dtype
    heavy: bool = False  # heavy tails: the sample variance is too noisy to check
    # the batch shapes to test (PyTorch's Wishart with a number df fails for batches: it
    # views its 0-d df as the batch shape)
    batches: tuple = ("scalar", "batch", "batch2", "broadcast")

    def build(self, lib, arrays):
        kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v
                  for k, v in arrays.items()}
        if self.make is not None:
            return self.make(lib, **kwargs)
        return getattr(lib.distributions, self.name)(**kwargs)


def within(lo, hi):
    return lambda rng, shape, dtype, p: rng.uniform(lo, hi, shape).astype(dtype)


def positive_values(rng, shape, dtype, p):
    return rng.uniform(0.1, 4.0, shape).astype(dtype)


def real_values(rng, shape, dtype, p):
    return (2 * rng.standard_normal(shape)).astype(dtype)


def unit_values(rng, shape, dtype, p):
    return rng.uniform(0.02, 0.98, shape).astype(dtype)


def simplex_values(rng, shape, dtype, p):
    x = rng.uniform(0.1, 1.0, shape)
    return (x / x.sum(-1, keepdims=True)).astype(dtype)


def bools(rng, shape, dtype, p):
    return rng.integers(0, 2, shape).astype(dtype)


def counts(n):
    return lambda rng, shape, dtype, p: rng.integers(0, n + 1, shape).astype(dtype)


def one_hots(rng, shape, dtype, p):
    k = shape[-1]
    return np.eye(k, dtype=dtype)[rng.integers(0, k, shape[:-1])]


def uniform_values(rng, shape, dtype, p):
    lo, hi = np.broadcast_arrays(p["low"], p["high"])
    lo, hi = np.broadcast_to(lo, shape), np.broadcast_to(hi, shape)
    return (lo + (hi - lo) * rng.uniform(0.01, 0.99, shape)).astype(dtype)


def above_scale(rng, shape, dtype, p):
    scale = np.broadcast_to(p["scale"], shape)
    return (scale * rng.uniform(1.01, 4.0, shape)).astype(dtype)


def real_neg(lo, hi):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def gp_values(rng, shape, dtype, p):
    """Points above ``loc`` and, for a negative concentration, below its upper end."""
    loc, scale, c = (np.broadcast_to(p[k], shape) for k in ("loc", "scale", "concentration"))
    width = np.where(c < 0, -scale / np.where(c < 0, c, -1.0), 4 * scale)
    return (loc + width * rng.uniform(0.02, 0.98, shape)).astype(dtype)


def mat(gen, n, m):
    return lambda rng, shape, dtype: gen(rng, shape + (n, m), dtype)


def pd(n):
    def gen(rng, shape, dtype):
        a = rng.standard_normal(shape + (n, n))
        return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)
    return gen


def tril(n):
    def gen(rng, shape, dtype):
        return np.linalg.cholesky(pd(n)(rng, shape, np.float64)).astype(dtype)
    return gen


def pd_values(rng, shape, dtype, p):
    return pd(shape[-1])(rng, shape[:-2], dtype)


def corr_cholesky_values(rng, shape, dtype, p):
    c = pd(shape[-1])(rng, shape[:-2], np.float64)
    d = 1 / np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return np.linalg.cholesky(c * d[..., :, None] * d[..., None, :]).astype(dtype)


def multinomial_values(n, k):
    def gen(rng, shape, dtype, p):
        draws = rng.multinomial(n, np.full(k, 1.0 / k), size=shape[:-1])
        return draws.astype(dtype)
    return gen


# PyTorch's Multinomial entropy takes lgamma(total_count + 1) of an integer tensor, in float32;
# ember's is in the distribution's dtype: float64 entropies differ by ~1e-8
MULTINOMIAL_RTOL = {"entropy()": 1e-7}

CASES = [
    Case("Uniform", {"low": real(), "high": lambda rng, s, d: (rng.uniform(3.0, 4.0, s))
                     .astype(d)}, uniform_values, icdf=True),
    Case("Exponential", {"rate": pos()}, positive_values, icdf=True),
    Case("Laplace", {"loc": real(), "scale": pos()}, real_values, icdf=True),
    Case("Cauchy", {"loc": real(), "scale": pos()}, real_values, icdf=True),
    Case("Bernoulli", {"probs": unit()}, bools, id="probs"),
    Case("Bernoulli", {"logits": real(2.0)}, bools, id="logits"),
    Case("Geometric", {"probs": unit()}, counts(6)),
    Case("Geometric", {"logits": real()}, counts(6), id="logits"),
    Case("Poisson", {"rate": pos(0.5, 8.0)}, counts(10)),
    Case("Binomial", {"total_count": number(7), "probs": unit()}, counts(7)),
    Case("Binomial", {"total_count": number(5), "logits": real()}, counts(5), id="logits"),
    Case("Multinomial", {"total_count": number(6), "probs": simplex_vec(4)},
         multinomial_values(6, 4), event=(4,), rtol=MULTINOMIAL_RTOL),
    Case("Multinomial", {"total_count": number(3), "logits": vec(real(), 3)},
         multinomial_values(3, 3), event=(3,), id="logits", rtol=MULTINOMIAL_RTOL),
    Case("OneHotCategorical", {"probs": simplex_vec(4)}, one_hots, event=(4,)),
    Case("OneHotCategorical", {"logits": vec(real(), 3)}, one_hots, event=(3,), id="logits"),
    Case("OneHotCategoricalStraightThrough", {"probs": simplex_vec(4)}, one_hots,
         event=(4,)),
    Case("Gamma", {"concentration": pos(0.5, 4.0), "rate": pos()}, positive_values),
    Case("Chi2", {"df": pos(1.0, 6.0)}, positive_values),
    Case("Beta", {"concentration1": pos(), "concentration0": pos()}, unit_values),
    Case("Dirichlet", {"concentration": vec(pos(), 4)}, simplex_values, event=(4,)),
    Case("LogNormal", {"loc": real(), "scale": pos()}, positive_values, icdf=True, heavy=True),
    Case("HalfNormal", {"scale": pos()}, positive_values, icdf=True),
    Case("HalfCauchy", {"scale": pos()}, positive_values, icdf=True),
    Case("Gumbel", {"loc": real(), "scale": pos()}, within(-1.0, 2.0), icdf=True),
    Case("Pareto", {"scale": pos(), "alpha": pos(0.5, 5.0)}, above_scale, heavy=True),
    Case("Weibull", {"scale": pos(), "concentration": pos(0.5, 4.0)}, positive_values,
         icdf=True),
    # PyTorch 2.13's Kumaraswamy.mode is NaN wherever concentration0 != 1 (it takes
    # log1p(-concentration0)); ember's is the true mode, tested in test_distributions_more
    Case("Kumaraswamy", {"concentration1": pos(), "concentration0": pos()}, unit_values,
         icdf=True, skip=("mode",)),
    Case("LogisticNormal", {"loc": vec(real(), 3), "scale": vec(pos(), 3)}, simplex_values,
         event=(4,)),
    Case("RelaxedBernoulli", {"temperature": pos(), "probs": unit()}, unit_values,
         make=lambda lib, temperature, probs: lib.distributions.RelaxedBernoulli(
             temperature, probs=probs)),
    Case("RelaxedBernoulli", {"temperature": pos(), "logits": real()}, unit_values,
         id="logits", make=lambda lib, temperature, logits: lib.distributions.RelaxedBernoulli(
             temperature, logits=logits)),
    Case("RelaxedOneHotCategorical", {"temperature": scalar(pos()), "probs": simplex_vec(4)},
         simplex_values, event=(4,),
         make=lambda lib, temperature, probs: lib.distributions.RelaxedOneHotCategorical(
             temperature, probs=probs)),
    Case("InverseGamma", {"concentration": pos(0.5, 4.0), "rate": pos()}, positive_values,
         heavy=True),
    Case("StudentT", {"df": pos(0.5, 6.0), "loc": real(), "scale": pos()}, real_values,
         heavy=True),
    Case("FisherSnedecor", {"df1": pos(1.0, 8.0), "df2": pos(1.0, 9.0)}, positive_values,
         heavy=True),
    Case("ContinuousBernoulli", {"probs": unit()}, unit_values, icdf=True),
    Case("ContinuousBernoulli", {"logits": real()}, unit_values, icdf=True, id="logits"),
    Case("ContinuousBernoulli", {"probs": unit(0.4995, 0.5005)}, unit_values, icdf=True,
         id="near-half"),
    Case("NegativeBinomial", {"total_count": pos(0.5, 5.0), "probs": unit(0.05, 0.8)},
         counts(8)),
    Case("NegativeBinomial", {"total_count": pos(0.5, 5.0), "logits": real()}, counts(8),
         id="logits"),
    Case("GeneralizedPareto", {"loc": real(), "scale": pos(), "concentration": pos(0.05, 0.4)},
         gp_values, icdf=True, torch_default64=True, heavy=True),
    Case("GeneralizedPareto", {"loc": real(), "scale": pos(),
                               "concentration": real_neg(-0.9, -0.1)},
         gp_values, icdf=True, id="negative", torch_default64=True),
    Case("VonMises", {"loc": real(), "concentration": pos(0.2, 8.0)}, real_values),
    Case("LowRankMultivariateNormal", {"loc": vec(real(), 3), "cov_factor": mat(real(), 3, 2),
                                       "cov_diag": vec(pos(), 3)}, real_values, event=(3,)),
    Case("Wishart", {"df": pos(3.0, 6.0), "covariance_matrix": pd(3)}, pd_values, event=(3, 3)),
    Case("Wishart", {"df": pos(3.0, 6.0), "scale_tril": tril(3)}, pd_values, event=(3, 3),
         id="scale_tril"),
    Case("Wishart", {"df": number(4.5), "precision_matrix": pd(2)}, pd_values, event=(2, 2),
         id="number-df", batches=("scalar",)),
    Case("LKJCholesky", {"concentration": pos(0.5, 4.0)}, corr_cholesky_values, event=(3, 3),
         make=lambda lib, concentration: lib.distributions.LKJCholesky(3, concentration)),
    Case("MixtureSameFamily", {"logits": vec(real(), 3), "loc": vec(real(), 3),
                               "scale": vec(pos(), 3)}, real_values,
         make=lambda lib, logits, loc, scale: lib.distributions.MixtureSameFamily(
             lib.distributions.Categorical(logits=logits),
             lib.distributions.Normal(loc, scale))),
    Case("MixtureSameFamily", {"probs": simplex_vec(2), "loc": mat(real(), 2, 3),
                               "scale": mat(pos(), 2, 3)}, real_values, event=(3,),
         id="independent-components",
         make=lambda lib, probs, loc, scale: lib.distributions.MixtureSameFamily(
             lib.distributions.Categorical(probs=probs),
             lib.distributions.Independent(lib.distributions.Normal(loc, scale), 1))),
    Case("Independent", {"loc": vec(real(), 4), "scale": vec(pos(), 4)}, real_values,
         event=(4,), make=lambda lib, loc, scale: lib.distributions.Independent(
             lib.distributions.Normal(loc, scale), 1)),
    Case("TransformedDistribution", {"loc": real(), "scale": pos()}, within(-0.9, 0.9),
         id="tanh-affine", make=lambda lib, loc, scale: lib.distributions.TransformedDistribution(
             lib.distributions.Normal(loc, scale),
             [lib.distributions.AffineTransform(0.5, 2.0), lib.distributions.TanhTransform()])),
    Case("TransformedDistribution", {"rate": pos()}, within(0.05, 0.95), id="sigmoid-power",
         icdf=True, make=lambda lib, rate: lib.distributions.TransformedDistribution(
             lib.distributions.Exponential(rate),
             [lib.distributions.PowerTransform(0.5), lib.distributions.AffineTransform(0.0, -1.0),
              lib.distributions.SigmoidTransform()])),
    Case("TransformedDistribution", {"loc": vec(real(), 3), "scale": vec(pos(), 3)},
         corr_cholesky_values, event=(3, 3), id="corr-cholesky",
         make=lambda lib, loc, scale: lib.distributions.TransformedDistribution(
             lib.distributions.Normal(loc, scale),
             lib.distributions.CorrCholeskyTransform())),
]
