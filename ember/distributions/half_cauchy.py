"""``HalfCauchy``: ``|X|`` for ``X ~ Cauchy(0, scale)``."""
from __future__ import annotations

import math

from .. import _creation
from .cauchy import Cauchy
from .half_normal import _Half

__all__ = ["HalfCauchy"]


class HalfCauchy(_Half):
    """``|X|`` for ``X ~ Cauchy(0, scale)`` (no finite mean or variance)."""

    _base = Cauchy

    @property
    def mean(self):
        return _creation.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                              device=self.scale.device)

    @property
    def variance(self):
        return _creation.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                              device=self.scale.device)
