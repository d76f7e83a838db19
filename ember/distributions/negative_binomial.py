"""``NegativeBinomial``: failures before the ``total_count``-th success of a coin with
success probability ``1 - probs`` (a Gamma-Poisson mixture, which is how it is sampled)."""
from __future__ import annotations

from .. import _sampling
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import selection
from . import constraints
from .distribution import _EMPTY, Distribution
from .gamma import Gamma
from .utils import (
    BinaryProbsOrLogits,
    count_and_probs_or_logits,
    expand_probs_or_logits,
    lazy_property,
)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsOrLogits, Distribution):
    """P(k) = C(k + r - 1, k) (1 - p)^r p^k with ``r = total_count``, ``p = probs``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        count_and_probs_or_logits(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.total_count = self.total_count.expand(batch_shape)
            expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(NegativeBinomial, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=_EMPTY):
        with no_grad():
            return _sampling.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        unnormalized = r * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_norm = -(r + value).lgamma() + (1.0 + value).lgamma() + r.lgamma()
        # r = 0 and k = 0: the point mass at 0 (the lgamma terms are inf - inf there)
        log_norm = selection.where(r + value == 0.0, 0.0, log_norm)
        return unnormalized - log_norm
