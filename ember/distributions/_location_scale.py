"""What the location-scale families (``Normal``, ``Laplace``, ``Cauchy``) share: parameters
``loc`` and ``scale`` broadcast together, a batch shape that is theirs (empty when both are
numbers), an ``expand`` that expands both, support on the whole real line, a reparameterised
``rsample`` and the mode at ``loc``.

Listed first among a family's bases (``class Normal(LocationScale, ExponentialFamily)``), so
its ``__init__`` runs and hands the batch shape on to the distribution base.
"""
from __future__ import annotations

from numbers import Number

from .._tensor import Size
from . import constraints
from .utils import broadcast_all, family

__all__ = ["LocationScale"]


class LocationScale:
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.loc = self.loc.expand(batch_shape)
            new.scale = self.scale.expand(batch_shape)
        return self._expanded(family(self, LocationScale), batch_shape, _instance, set_params)

    @property
    def mode(self):
        return self.loc
