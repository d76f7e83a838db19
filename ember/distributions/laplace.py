"""``Laplace``: the double exponential, density ``exp(-|x - loc| / scale) / (2 scale)``."""
from __future__ import annotations

from .. import _creation
from .._typeinfo import finfo
from ._location_scale import LocationScale
from .distribution import _EMPTY, Distribution

__all__ = ["Laplace"]


class Laplace(LocationScale, Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        eps = finfo(self.loc.dtype).eps
        # u uniform on (-1, 1): its sign picks the side, -log(1 - |u|) the exponential distance
        u = _creation.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        u = u * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value):
        t = value - 0.5
        return self.loc - self.scale * t.sign() * (-2 * t.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
