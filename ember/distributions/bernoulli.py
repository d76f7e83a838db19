"""``Bernoulli``: a coin with probability ``probs`` of 1 (or ``logits = log(p / (1 - p))``).

Exactly one parametrisation is given; the other is derived lazily (``lazy_property``), so a
distribution built from logits never rounds through probabilities. Densities use the
binary cross entropy with logits (stable for large ``|logits|``).
"""
from __future__ import annotations

import math
from numbers import Number

from .. import _creation, _sampling
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import selection
from . import constraints
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import (
    BinaryProbsOrLogits,
    broadcast_all,
    expand_probs_or_logits,
    require_probs_or_logits,
)

__all__ = ["Bernoulli"]


def _probs_or_logits(dist, probs, logits):
    """Set ``dist.probs`` or ``dist.logits`` (exactly one given, PyTorch's ValueError else) and
    ``dist._param``; return whether it was a Python number."""
    require_probs_or_logits(probs, logits)
    given = probs if probs is not None else logits
    (param,) = broadcast_all(given)
    if probs is not None:
        dist.probs = param
    else:
        dist.logits = param
    dist._param = param
    return isinstance(given, Number)


class Bernoulli(BinaryProbsOrLogits, ExponentialFamily):
    """A Bernoulli distribution over ``{0, 1}``, by ``probs`` or ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        scalar = _probs_or_logits(self, probs, logits)
        batch_shape = Size() if scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(Bernoulli, batch_shape, _instance, set_params)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        p = self.probs
        mode = (p >= 0.5).to(p.dtype)
        return selection.where(p == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return _sampling.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = _creation.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return x.exp().log1p()
