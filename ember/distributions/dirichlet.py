"""``Dirichlet``: distributions over the probability simplex, by ``concentration`` (> 0)."""
from __future__ import annotations

from ..nn import functional as F
from ..ops import binary_math, selection
from . import constraints
from ._samplers import dirichlet
from .distribution import _EMPTY
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Density ``prod x_i^(a_i - 1) / B(a)`` on the simplex (the last dim is the event)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        return self._expanded(Dirichlet, batch_shape, _instance, set_params)

    def rsample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        return dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (binary_math.xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma()
                - c.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        excess = (self.concentration - 1).clamp(min=0.0)
        mode = excess / excess.sum(-1, keepdim=True)
        # every concentration below 1: the density peaks at the corner of the largest one
        corner = F.one_hot(mode.argmax(dim=-1), excess.shape[-1]).to(mode.dtype)
        below = (self.concentration < 1).all(dim=-1, keepdim=True)
        return selection.where(below, corner, mode)

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, keepdim=True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        total = c.sum(-1)
        return (c.lgamma().sum(-1) - total.lgamma() - (k - total) * total.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
