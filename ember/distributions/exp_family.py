"""``ExponentialFamily``: distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``.

Subclasses give the natural parameters ``theta`` (``_natural_params``), the log normaliser
``F`` (``_log_normalizer``) and the carrier measure's expectation (``_mean_carrier_measure``);
the base then has a generic ``entropy`` as the Bregman divergence of ``F`` (its gradient is
taken with ember's autograd). As in PyTorch, that generic entropy is computed from detached
natural parameters, so it carries no gradient to the distribution's parameters; subclasses
with a closed form (``Normal``) override it.
"""
from __future__ import annotations

from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class for exponential-family distributions."""

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normaliser ``F`` as a function of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expectation of the carrier measure ``k(x)``."""
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]`` (the Bregman-divergence form)."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = autograd.grad(log_norm.sum(), params, create_graph=True)
        result = result + log_norm
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
