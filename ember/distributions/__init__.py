"""``torch.distributions``: probability distributions with sampling, densities and KL.

The base class ``Distribution`` (batch/event shapes, argument and sample validation, PyTorch's
messages) lives in ``distribution.py``; each distribution in its own module at PyTorch's path;
``constraints`` describes parameter and sample domains; ``kl`` holds ``kl_divergence`` and
``register_kl``. So far: ``Categorical``, ``Normal`` and ``MultivariateNormal``.
"""
from . import constraints, kl, utils  # noqa: F401
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal

__all__ = ["Categorical", "Distribution", "ExponentialFamily", "MultivariateNormal", "Normal",
           "kl_divergence", "register_kl"]

# PyTorch's other public names, not in ember yet: ``torch.distributions.Beta`` says so instead
# of a bare "has no attribute" (``from ... import Beta`` still gets Python's ImportError).
_NOT_YET = frozenset("""
    Bernoulli Beta Binomial Cauchy Chi2 ContinuousBernoulli Dirichlet Exponential
    FisherSnedecor Gamma GeneralizedPareto Geometric Gumbel HalfCauchy HalfNormal Independent
    InverseGamma Kumaraswamy LKJCholesky Laplace LogNormal LogisticNormal
    LowRankMultivariateNormal MixtureSameFamily Multinomial NegativeBinomial OneHotCategorical
    OneHotCategoricalStraightThrough Pareto RelaxedBernoulli RelaxedOneHotCategorical StudentT
    Poisson Uniform VonMises Weibull Wishart TransformedDistribution biject_to transform_to
    AbsTransform AffineTransform CatTransform ComposeTransform CorrCholeskyTransform
    CumulativeDistributionTransform ExpTransform IndependentTransform LowerCholeskyTransform
    PositiveDefiniteTransform PowerTransform ReshapeTransform SigmoidTransform SoftplusTransform
    TanhTransform SoftmaxTransform StackTransform StickBreakingTransform Transform
    identity_transform""".split())


def __getattr__(name):
    if name in _NOT_YET:
        raise AttributeError(f"ember does not implement torch.distributions.{name} yet "
                             f"(it has {', '.join(__all__)})")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
