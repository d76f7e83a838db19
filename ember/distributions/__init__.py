"""``torch.distributions``: probability distributions with sampling, densities and KL.

The base class ``Distribution`` (batch/event shapes, argument and sample validation, PyTorch's
messages) lives in ``distribution.py``; each distribution in its own module at PyTorch's path;
``constraints`` describes parameter and sample domains, ``transforms`` the maps between them,
``constraint_registry`` (``biject_to``/``transform_to``) the map from a constraint to a
transform onto it; ``kl`` holds ``kl_divergence`` and ``register_kl``.
"""
from . import constraints, kl, transforms, utils  # noqa: F401
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "Dirichlet", "Distribution", "ExpTransform",
    "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Independent",
    "IndependentTransform", "Laplace", "LowerCholeskyTransform", "Multinomial",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Poisson", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "TanhTransform", "Transform", "TransformedDistribution",
    "Uniform", "biject_to", "kl_divergence", "register_kl", "transform_to",
    "identity_transform",
]

# PyTorch's other public names, not in ember yet: ``torch.distributions.Wishart`` says so
# instead of a bare "has no attribute" (``from ... import`` still gets Python's ImportError).
_NOT_YET = frozenset("""
    ContinuousBernoulli FisherSnedecor GeneralizedPareto Gumbel HalfCauchy HalfNormal
    InverseGamma Kumaraswamy LKJCholesky LogNormal LogisticNormal LowRankMultivariateNormal
    MixtureSameFamily NegativeBinomial Pareto RelaxedBernoulli RelaxedOneHotCategorical
    StudentT VonMises Weibull Wishart""".split())


def __getattr__(name):
    if name in _NOT_YET:
        raise AttributeError(f"ember does not implement torch.distributions.{name} yet "
                             f"(it has {', '.join(__all__)})")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
