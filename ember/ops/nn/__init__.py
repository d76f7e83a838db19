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
- ``attention``: scaled dot-product attention where PyTorch fuses it;
- ``_taps`` (pooling windows and interpolation stencils as taps) and ``_common``, shared.

The kernels work on raw arrays, vectorised over output positions (one pass per kernel tap
for the layers), and every derivative is an op or array-API code, so derivatives of any order
work.

The modules declare their public functions where they write them (``ops/_surface.py``:
``torch.relu``, ``torch.binary_cross_entropy_with_logits``...); the package imports them all.
"""
from __future__ import annotations

from . import (  # noqa: F401
    activation,
    attention,
    conv,
    loss,
    normalization,
    pooling,
    resampling,
    sparse,
)
