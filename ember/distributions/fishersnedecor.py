"""``FisherSnedecor``: the F distribution, ``(X1 / df1) / (X2 / df2)`` for chi-squared
``X1``, ``X2``; reparameterisable through both gamma draws."""
from __future__ import annotations

import math
from numbers import Number

from .._tensor import Size
from .._typeinfo import finfo
from ..ops import selection
from . import constraints
from .distribution import _EMPTY, Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.df1 = self.df1.expand(batch_shape)
            new.df2 = self.df2.expand(batch_shape)
            new._gamma1 = self._gamma1.expand(batch_shape)
            new._gamma2 = self._gamma2.expand(batch_shape)
        return self._expanded(FisherSnedecor, batch_shape, _instance, set_params)

    @property
    def mean(self):
        df2 = selection.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return selection.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df1 = self.df1
        df2 = selection.where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (df1 + df2 - 2)
                / (df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        # the gammas have rates df: each is already a chi-squared over its df
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        t3 = (h1 + h2) * (ratio * value).log1p()
        return t1 + t2 - t3
