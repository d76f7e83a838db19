"""``StudentT``: ``loc + scale * Z / sqrt(V / df)`` for ``Z`` standard normal and
``V ~ Chi2(df)``; reparameterisable through both draws."""
from __future__ import annotations

import math

from .._tensor import Size
from ..ops import selection
from . import constraints
from .distribution import _EMPTY, Distribution
from .gamma import Chi2
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location and scale."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.df = self.df.expand(batch_shape)
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
            new._chi2 = self._chi2.expand(batch_shape)
        return self._expanded(StudentT, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return selection.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        heavy = selection.where(df > 1, math.inf, math.nan)  # 1 < df <= 2: infinite
        return selection.where(df > 2, finite, heavy)

    def rsample(self, sample_shape=_EMPTY):
        shape = Size(self._extended_shape(sample_shape))
        z = _standard_normal(shape, like=self.df)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                    + (0.5 * df).lgamma() - (0.5 * (df + 1.0)).lgamma())
        return -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - log_norm

    def entropy(self):
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma()
                                                    - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)


