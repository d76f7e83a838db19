"""``GeneralizedPareto``: the distribution of threshold exceedances, with survival function
``(1 + c z)^(-1/c)`` for ``z = (x - loc) / scale`` (``exp(-z)`` at ``c = 0``)."""
from __future__ import annotations

import math
from numbers import Number, Real

from .. import _creation
from .._tensor import Size
from ..ops import comparison, selection
from . import constraints
from .distribution import _EMPTY, Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Location ``loc``, scale ``scale`` and shape ``concentration`` (any sign)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
            new.concentration = self.concentration.expand(batch_shape)
        return self._expanded(GeneralizedPareto, batch_shape, _instance, set_params)

    def _safe(self):
        """Where ``concentration`` is (close to) 0, and a concentration with those set to 1
        (so the general formulas stay finite where their limit is used instead). PyTorch
        compares with a tensor of the default dtype, so its float64 densities raise "Double did
        not match Float"; ember compares in the concentration's dtype."""
        at_zero = comparison.isclose(self.concentration,
                                     _creation.zeros_like(self.concentration))
        return at_zero, selection.where(at_zero, 1.0, self.concentration)

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        u = _creation.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._safe()
        y = 1 / c + _creation.ones_like(z)
        general = selection.where(y == 0, y, y * (c * z).log1p())
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - selection.where(at_zero, z, general)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._safe()
        return selection.where(at_zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        at_zero, c = self._safe()
        log_u = (-value).log1p()
        general = self.loc + self.scale / c * (-c * log_u).expm1()
        return selection.where(at_zero, self.loc - self.scale * log_u, general)

    @property
    def mean(self):
        valid = self.concentration < 1
        c = selection.where(valid, self.concentration, 0.5)
        return selection.where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = selection.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - c) ** 2 * (1 - 2 * c))
        return selection.where(valid, result, math.nan)

    def entropy(self):
        result = self.scale.log() + self.concentration + 1
        return result.broadcast_to(tuple(self._batch_shape))

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = selection.where(self.concentration < 0,
                                self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)
