"""``Gamma`` (shape ``concentration``, inverse scale ``rate``) and ``Chi2`` (Gamma(df/2, 1/2)).

``rsample`` draws standard gammas with implicit reparameterisation gradients
(``_samplers.standard_gamma``), so gradients reach ``concentration`` as well as ``rate``.
``cdf`` is the regularised incomplete gamma function (differentiable in the value and rate,
not in the concentration, as in PyTorch).
"""
from __future__ import annotations

from numbers import Number

from .._tensor import Size
from .._typeinfo import finfo
from ..ops import binary_math
from . import constraints
from ._samplers import gammainc, standard_gamma
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Chi2", "Gamma"]


class Gamma(ExponentialFamily):
    """Density ``rate^c x^(c-1) e^(-rate x) / Gamma(c)`` on ``x >= 0``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        batch_shape = Size() if scalar else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.concentration = self.concentration.expand(batch_shape)
            new.rate = self.rate.expand(batch_shape)
        return self._expanded(Gamma, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # an underflowed draw becomes the smallest positive number (in the support, log finite)
        return value.clamp(min=finfo(value.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, rate = self.concentration, self.rate
        return (binary_math.xlogy(c, rate) + binary_math.xlogy(c - 1, value) - rate * value
                - c.lgamma())

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
