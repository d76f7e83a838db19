"""``Cauchy``: the Lorentz distribution (no mean or variance), density
``1 / (pi scale (1 + ((x - loc) / scale)^2))``."""
from __future__ import annotations

import math

from .. import _creation
from ._location_scale import LocationScale
from ._samplers import noise
from .distribution import _EMPTY, Distribution

__all__ = ["Cauchy"]


def _standard_cauchy(rng, shape):
    return rng.standard_cauchy(shape)


class Cauchy(LocationScale, Distribution):
    """The Cauchy distribution with median ``loc`` and half width ``scale``."""

    def _full(self, value):
        return _creation.full(tuple(self._extended_shape()), value, dtype=self.loc.dtype,
                              device=self.loc.device)

    @property
    def mean(self):
        return self._full(math.nan)

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
