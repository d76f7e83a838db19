"""``Poisson``: counts of events at rate ``rate``, P(k) = rate^k e^-rate / k!."""
from __future__ import annotations

from numbers import Number

from .. import _sampling
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..ops import binary_math
from . import constraints
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with rate ``rate`` (>= 0)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.rate = self.rate.expand(batch_shape)
        return self._expanded(Poisson, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _sampling.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return binary_math.xlogy(value, rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
