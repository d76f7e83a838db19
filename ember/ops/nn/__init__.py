"""Neural-network kernels as differentiable ops, one module per family: each op's
declaration, forward and derivative together. ``ember/nn/functional/<family>.py`` holds the
same family's argument checks (PyTorch's messages) and calls these kernels:

- ``activation``: relu, elus, gelu, softplus, hardtanh, shrinks, threshold, prelu, glu;
- ``loss``: mse, smooth L1, soft margin, huber, binary cross entropy, nll, multi margin;
- ``conv``: convolution and its transpose, im2col / col2im (``unfold`` / ``fold``);
- ``pooling``: max, average, adaptive pooling, max unpooling;
- ``resampling``: upsampling, padding, pixel and channel shuffle;
- ``normalization``: the native batch, layer and group norms;
- ``sparse``: embedding, embedding_bag;
- ``_taps`` (pooling windows and interpolation stencils as taps) and ``_common``, shared.

The kernels work on raw arrays, vectorised over output positions (one pass per kernel tap
for the layers), and every derivative is an op or array-API code, so derivatives of any order
work.

As an op family (``ember/ops/__init__.py``) the package's surface is its modules' together.
"""
from __future__ import annotations

from . import activation, conv, loss, normalization, pooling, resampling, sparse
from .activation import *  # noqa: F403
from .loss import *  # noqa: F403

_FAMILIES = (loss, activation, conv, pooling, resampling, normalization, sparse)
__all__ = [name for family in _FAMILIES for name in family.__all__]
METHODS = {name: fn for family in _FAMILIES for name, fn in family.METHODS.items()}
INPLACE = tuple(name for family in _FAMILIES for name in family.INPLACE)
