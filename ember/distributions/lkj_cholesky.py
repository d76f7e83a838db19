"""``LKJCholesky``: the LKJ distribution over correlation matrices, on their Cholesky factors.

The density of a factor ``L`` is proportional to ``prod_i L_ii^(dim - i + 2 (c - 1))``
(``i = 2..dim``); samples come from the onion method: row ``i`` is a uniform direction scaled
by the square root of a Beta draw, its diagonal entry completing the unit norm.
"""
from __future__ import annotations

import math

from .. import _creation
from .._tensor import Size
from .._typeinfo import finfo
from ..autograd.grad_mode import no_grad
from ..ops import shape as shape_ops
from . import constraints
from .beta import Beta
from .distribution import _EMPTY, Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(``concentration``) over ``dim x dim`` correlation matrices, by Cholesky factor."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = (dim, dim)
        # the Beta of the onion method, one per row (row 0 is (1, 0, ...): a placeholder)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = _creation.arange(self.dim - 1, dtype=self.concentration.dtype,
                                  device=self.concentration.device)
        offset = shape_ops.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, Size(event_shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.dim = self.dim
            new.concentration = self.concentration.expand(batch_shape)
            new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._expanded(LKJCholesky, batch_shape, _instance, set_params)

    def sample(self, sample_shape=_EMPTY):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = _standard_normal(self._extended_shape(sample_shape), like=y).tril(-1)
            direction = u / u.norm(dim=-1, keepdim=True)
            direction = shape_ops.cat([_creation.zeros_like(direction[..., :1, :]),
                                       direction[..., 1:, :]], -2)  # row 0: all zero
            w = y.sqrt() * direction
            tiny = finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + diagonal.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _creation.arange(2, self.dim + 1, dtype=self.concentration.dtype,
                                 device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = (alpha - 0.5).mvlgamma(dm1)
        normalizer = 0.5 * dm1 * math.log(math.pi) + numerator - denominator
        return unnormalized - normalizer
