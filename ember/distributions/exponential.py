"""``Exponential``: waiting times of rate ``rate`` (density ``rate * exp(-rate x)``, x >= 0)."""
from __future__ import annotations

from numbers import Number

from .. import _creation
from .._tensor import Size
from . import constraints
from ._samplers import noise
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


def _standard_exponential(rng, shape):
    return rng.standard_exponential(shape)


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.rate = self.rate.expand(batch_shape)
        return self._expanded(Exponential, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return _creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        return noise(self.rate, shape, _standard_exponential) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
