"""``Binomial``: successes in ``total_count`` trials of a ``probs`` coin.

Densities are written in logits with the normaliser ``n log(1 + e^logits)`` computed as
``n (max(logits, 0) + log1p(e^-|logits|))`` (no overflow for large logits).
"""
from __future__ import annotations

import numpy as np

from .. import _creation, _random
from ..autograd.grad_mode import no_grad
from . import constraints
from ._samplers import _host64
from .distribution import _EMPTY, Distribution
from .utils import (
    BinaryProbsOrLogits,
    count_and_probs_or_logits,
    expand_probs_or_logits,
)

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """``max(x, 0)`` whose gradient at 0 is 1/2 (the mean of the two sides), as PyTorch's."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(total_count, what):
    n = int(total_count.max())
    if not bool((total_count == n).all()):
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return n


class Binomial(BinaryProbsOrLogits, Distribution):
    """The binomial distribution, by ``probs`` or ``logits`` (exactly one)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        count_and_probs_or_logits(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.total_count = self.total_count.expand(batch_shape)
            expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(Binomial, batch_shape, _instance, set_params)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            n = np.broadcast_to(_host64(self.total_count), shape).astype(np.int64)
            p = np.broadcast_to(_host64(self.probs), shape)
            draws = _random.rng(None).binomial(n, p)
            return _creation.tensor(np.asarray(draws, dtype=np.float64), dtype=self.probs.dtype,
                                    device=self.probs.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        normalizer = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
        return value * logits + log_choose - normalizer

    def entropy(self):
        _homogeneous_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = _homogeneous_count(self.total_count, "enumerate_support")
        values = _creation.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
