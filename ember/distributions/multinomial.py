"""``Multinomial``: category counts of ``total_count`` draws from a ``Categorical``."""
from __future__ import annotations

import math

from .. import _creation
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..ops import selection
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import _EMPTY, Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts over ``K`` categories (the event dim) of ``total_count`` independent draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=_EMPTY):
        sample_shape = Size(sample_shape)
        with no_grad():
            # draws: (total_count, *sample_shape, *batch) category indices, moved last
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            draws = draws.movedim(0, -1)
            counts = _creation.zeros(tuple(self._extended_shape(sample_shape)),
                                     dtype=draws.dtype, device=draws.device)
            counts = counts.scatter_add(-1, draws, _creation.ones_like(draws))
            return counts.type_as(self.probs)

    def entropy(self):
        n = _creation.tensor(self.total_count, dtype=self.probs.dtype, device=self.probs.device)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        counts = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(counts).exp()
        weights = (counts + 1).lgamma()
        return term1 + (binomial_probs * weights).sum([0, -1])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # a count of 0 in a category of probability 0 contributes 0 (not 0 * -inf)
        logits = selection.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
