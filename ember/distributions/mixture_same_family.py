"""``MixtureSameFamily``: a mixture of ``K`` components of one family, weighted by a
``Categorical``; the components are the rightmost batch dim of ``component_distribution``.

``log_prob`` is ``logsumexp_k(log w_k + log p_k(x))``; ``mean`` and ``variance`` follow the
laws of total expectation and variance; sampling picks a component per draw and gathers its
sample (no reparameterisation).
"""
from __future__ import annotations

from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from . import constraints
from .categorical import Categorical
from .distribution import _EMPTY, Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture of the components of ``component_distribution`` (batch ``(..., K)``) with
    weights ``mixture_distribution`` (a ``Categorical`` over ``K``)."""

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "torch.distributions.Distribution")
        mix_batch = mixture_distribution.batch_shape
        comp_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not "
                                 "compatible with `component_distribution.batch_shape`"
                                 f"({comp_batch})")
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(f"`mixture_distribution component` ({k_mix}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({k_comp})")
        self._num_component = k_mix
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(comp_batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + Size((self._num_component,)))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        """``x`` with a component dim where the components' batch has it."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """Mixture weights ``(..., K)`` shaped to broadcast against the components'
        ``(batch..., K, event...)``."""
        batch_ndims = len(self.batch_shape)
        mix_ndims = len(self.mixture_distribution.batch_shape)
        pad = 0 if mix_ndims == 1 else batch_ndims - mix_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        dim = -1 - self._event_ndims
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_of_variances = (probs * self.component_distribution.variance).sum(dim)
        spread = (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        return mean_of_variances + (probs * spread).sum(dim)

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_weights = F.log_softmax(self.mixture_distribution.logits, dim=-1)
        return (log_prob_x + log_weights).logsumexp(dim=-1)

    def sample(self, sample_shape=_EMPTY):
        sample_shape = Size(sample_shape)
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            which = self.mixture_distribution.sample(sample_shape)
            draws = self.component_distribution.sample(sample_shape)
            event = tuple(self.event_shape)
            index = which.reshape(tuple(which.shape) + (1,) * (len(event) + 1))
            index = index.expand(tuple(which.shape) + (1,) + event)
            return draws.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")
