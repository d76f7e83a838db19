"""``RelaxedBernoulli``: a continuous relaxation of ``Bernoulli`` on ``(0, 1)`` (the binary
Concrete / Gumbel-softmax distribution), reparameterisable; ``LogitRelaxedBernoulli`` is the
distribution of its logit.

A draw is ``sigmoid((logits + L) / temperature)`` with ``L`` logistic noise; as the
temperature goes to 0 the draws approach Bernoulli(``probs``) samples.
"""
from __future__ import annotations

from numbers import Number

from .. import _creation
from .._tensor import Size
from . import constraints
from .distribution import _EMPTY, Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (
    BinaryProbsOrLogits,
    broadcast_all,
    clamp_probs,
    expand_probs_or_logits,
    family,
    require_probs_or_logits,
)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbsOrLogits, Distribution):
    """The logit of a ``RelaxedBernoulli`` variable, by ``probs`` or ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        require_probs_or_logits(probs, logits)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch_shape = Size() if isinstance(given, Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.temperature = self.temperature
            expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(LogitRelaxedBernoulli, batch_shape, _instance, set_params)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(_creation.rand(shape, dtype=probs.dtype, device=probs.device))
        logistic = u.log() - (-u).log1p()
        return (logistic + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedThroughTransform(TransformedDistribution):
    """What ``RelaxedBernoulli`` and ``RelaxedOneHotCategorical`` share: a relaxed base
    distribution seen through one transform, whose temperature, logits and probs they show."""

    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(family(self, RelaxedThroughTransform), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(RelaxedThroughTransform):
    """``sigmoid`` of a ``LogitRelaxedBernoulli(temperature, probs, logits)`` variable."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)
