"""``Categorical``: a distribution over ``{0, ..., K-1}`` given by probabilities or logits.

The parameter's last dim indexes the K categories; the dims before it are the batch shape.
``probs`` are normalised to sum to 1 and ``logits`` to ``logsumexp == 0``; whichever was not
given is derived lazily (``logits = log(clamp(probs))``, ``probs = softmax(logits)``), as in
PyTorch. Samples come from ``_sampling.multinomial`` (ember's generator, so the numbers differ from
PyTorch's for the same seed; the distribution is the same).
"""
from __future__ import annotations

import math

from .. import _creation, _dtypes, _sampling
from .._tensor import Size
from .._typeinfo import finfo
from ..autograd.grad_mode import no_grad
from ..ops import selection
from ..ops import shape as shape_ops
from . import constraints
from .distribution import _EMPTY, Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits, require_probs_or_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """A categorical distribution parametrised by ``probs`` or ``logits`` (exactly one)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        require_probs_or_logits(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            param_shape = batch_shape + Size((self._num_events,))
            if "probs" in self.__dict__:
                new.probs = self.probs.expand(param_shape)
                new._param = new.probs
            if "logits" in self.__dict__:
                new.logits = self.logits.expand(param_shape)
                new._param = new.logits
            new._num_events = self._num_events
        return self._expanded(Categorical, batch_shape, _instance, set_params)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        """NaN: the categories are labels, not numbers (as PyTorch)."""
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN, as ``mean``."""
        return _creation.full(tuple(self._extended_shape()), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    def sample(self, sample_shape=_EMPTY):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = _sampling.multinomial(probs_2d, sample_shape.numel(), True).T
            return draws.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        """``logits[..., value]``, with ``value`` broadcast against the batch shape."""
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        index, log_pmf = shape_ops.broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self):
        """``-sum(p * log p)``, with ``-inf`` logits clamped to the dtype's min so 0*log 0 = 0."""
        logits = selection.clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        """``0..K-1`` along dim 0, shaped to broadcast against the batch shape."""
        values = _creation.arange(self._num_events, dtype=_dtypes.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
