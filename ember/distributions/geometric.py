"""``Geometric``: the number of failures before the first success of a ``probs`` coin."""
from __future__ import annotations

from .. import _creation
from .._tensor import Size
from .._typeinfo import finfo
from ..autograd.grad_mode import no_grad
from ..nn import functional as F
from ..ops import selection
from . import constraints
from .bernoulli import _probs_or_logits
from .distribution import _EMPTY, Distribution
from .utils import (
    BinaryProbsOrLogits,
    broadcast_all,
)

__all__ = ["Geometric"]


class Geometric(BinaryProbsOrLogits, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, 2, ...; by ``probs`` or ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        scalar = _probs_or_logits(self, probs, logits)
        batch_shape = Size() if scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            if "probs" in self.__dict__:
                new.probs = self.probs.expand(batch_shape)
            if "logits" in self.__dict__:
                new.logits = self.logits.expand(batch_shape)
        return self._expanded(Geometric, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _creation.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(sample_shape))
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():  # inversion: floor(log U / log(1 - p))
            u = _creation.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            return (u.clamp(min=tiny).log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and k = 0: 0 * log(0) counts as 0
        probs = selection.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
