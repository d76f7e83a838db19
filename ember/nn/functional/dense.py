"""``linear`` and ``bilinear``: affine maps of the last dim, composed of ordinary ops (matmul,
einsum) as PyTorch's CPU path records them.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...ops.autocast import autocast_op
from ...ops.linalg.addmm import addmm
from ...ops.linalg.einsum import einsum
from ...ops.shape.views import _reshaped_view

if TYPE_CHECKING:
    from ..._tensor import Tensor

# --------------------------------------------------------------------------- linear, bilinear


@autocast_op("linear")
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, recorded as PyTorch records it: one ``addmm`` for a matrix
    input, and for a contiguous input of another rank flattened to a matrix when the bias is a
    vector (up to dims of size 1); otherwise ``matmul`` and an in-place ``add_`` of the bias."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is not None:
        if input.ndim == 2:
            return addmm(bias, input, weight.t())
        if bias.ndim == 1 and bias.is_contiguous() and input.is_contiguous():
            # (the views made directly: their shapes are known good; 2 x 2 us of checks)
            *batch, n = input.shape
            out = addmm(bias, _reshaped_view(input, (math.prod(batch), n)), weight.t())
            return _reshaped_view(out, (*batch, out.shape[1]))
        vector_bias = sum(n != 1 for n in bias.shape) == 1
        if vector_bias and bias.is_contiguous() and input.is_contiguous():
            *batch, n = input.shape
            out = bias.addmm(input.view(math.prod(batch), n), weight.t())
            return out.view(*batch, out.shape[1])
    out = input.matmul(weight.t())
    return out if bias is None else out.add_(bias)


@autocast_op("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    batch = tuple(input1.shape[:-1])
    flat = einsum("bi,oij,bj->bo", input1.reshape(-1, input1.shape[-1]), weight,
                  input2.reshape(-1, input2.shape[-1]))
    out = flat.view(*batch, weight.shape[0])
    return out if bias is None else out + bias
