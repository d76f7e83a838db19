"""``torch.nn.RMSNorm`` (PyTorch keeps it in ``torch.nn.modules.normalization``, which
re-exports it from here)."""
from __future__ import annotations

import numbers

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import _empty

__all__ = ["RMSNorm"]


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims (Zhang &
    Sennrich, 2019), with a per-element ``weight`` (ones) if ``elementwise_affine``; no bias,
    no mean subtraction. ``eps=None``: the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__)
