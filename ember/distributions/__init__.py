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
