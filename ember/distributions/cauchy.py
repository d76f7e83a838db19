"""``Cauchy``: the Lorentz distribution (no mean or variance), density
``1 / (pi scale (1 + ((x - loc) / scale)^2))``."""
from __future__ import annotations

import math
from numbers import Number

from .. import _creation
from .._tensor import Size
from . import constraints
from ._samplers import noise
from .distribution import _EMPTY, Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


def _standard_cauchy(rng, shape):
    return rng.standard_cauchy(shape)


class Cauchy(Distribution):
    """The Cauchy distribution with median ``loc`` and half width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
        return self._expanded(Cauchy, batch_shape, _instance, set_params)

    def _full(self, value):
        return _creation.full(tuple(self._extended_shape()), value, dtype=self.loc.dtype,
                              device=self.loc.device)

    @property
    def mean(self):
        return self._full(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(math.inf)

    def rsample(self, sample_shape=_EMPTY):
        eps = noise(self.loc, self._extended_shape(sample_shape), _standard_cauchy)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z * z).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
