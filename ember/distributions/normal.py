"""``Normal``: the univariate Gaussian ``N(loc, scale**2)``, batched over broadcast parameters.

``rsample`` is reparameterised (``loc + eps * scale``, so gradients reach both parameters);
``sample`` is ``rsample`` without gradients. The standard normal draws come from ember's
generator, so the numbers differ from PyTorch's for the same seed.
"""
from __future__ import annotations

import math

from .. import _sampling
from ..autograd.grad_mode import no_grad
from ..ops import unary
from ._location_scale import LocationScale
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(LocationScale, ExponentialFamily):
    """A normal distribution with mean ``loc`` and standard deviation ``scale``."""

    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _sampling.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=_EMPTY):
        eps = _standard_normal(self._extended_shape(sample_shape), like=self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + unary.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * unary.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + unary.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * unary.log(-math.pi / y)
