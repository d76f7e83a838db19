"""``ContinuousBernoulli``: the density on ``[0, 1]`` proportional to ``p^x (1 - p)^(1 - x)``.

Its normaliser ``C(p) = 2 atanh(1 - 2p) / (1 - 2p)`` and moments are 0/0 at ``p = 1/2``: inside
``lims`` around it they are replaced by their Taylor expansions in ``(p - 1/2)`` (worked out
from the series of ``atanh``), as PyTorch does, so values and gradients stay finite.
"""
from __future__ import annotations

import math
from numbers import Number

from .. import _creation
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import selection
from . import constraints
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .utils import (
    broadcast_all,
    clamp_probs,
    expand_probs_or_logits,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    require_probs_or_logits,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution, by ``probs`` or ``logits`` (exactly one)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        require_probs_or_logits(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        batch_shape = Size() if scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new._lims = self._lims
            expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(ContinuousBernoulli, batch_shape, _instance, set_params)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` with the values near 1/2 moved to ``lims[0]`` (so the exact formulas,
        computed everywhere, never divide 0 by 0; their result is discarded there)."""
        return selection.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """``log C(p)``."""
        cut = self._cut_probs()
        below = selection.where(cut <= 0.5, cut, 0.0)
        above = selection.where(cut >= 0.5, cut, 1.0)
        exact = (((-cut).log1p() - cut.log()).abs().log()
                 - selection.where(cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return selection.where(self._outside_unstable_region(), exact, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        exact = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return selection.where(self._outside_unstable_region(), exact, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        exact = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                 + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return selection.where(self._outside_unstable_region(), exact, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        u = _creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        u = _creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = F.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        exact = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = selection.where(self._outside_unstable_region(), exact, value)
        return selection.where(value <= 0.0, 0.0, selection.where(value >= 1.0, 1.0, inside))

    def icdf(self, value):
        cut = self._cut_probs()
        exact = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                 / (cut.log() - (-cut).log1p()))
        return selection.where(self._outside_unstable_region(), exact, value)

    def entropy(self):
        log_q = (-self.probs).log1p()
        log_p = self.probs.log()
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """``log C`` in the natural parameter, with its Taylor form near 0."""
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= lo) | (x > hi)
        cut = selection.where(outside, x, lo)
        exact = cut.exp().sub(1.0).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return selection.where(outside, exact, taylor)
