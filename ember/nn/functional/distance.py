"""Distances and similarities of ``torch.nn.functional``: ``normalize``,
``cosine_similarity``, ``pairwise_distance``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ... import _dtypes
from ..._broadcast import broadcast_shapes
from ..._out import write_out
from ...autograd.grad_mode import no_grad

if TYPE_CHECKING:
    from ..._tensor import Tensor

# --------------------------------------------------------------------------- similarity, misc


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else write_out("nn.functional.normalize", out,
                                                       input / denom)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    PyTorch's algorithm: each input divided by its norm, clamped to ``eps`` out of autograd's
    sight, then the sum of the products (the result stays within [-1, 1]).
    """
    dt = _dtypes.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dt._word}")
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    x1, x2 = (x if x.is_floating_point() else x.to(dt) for x in (x1, x2))
    if x1.shape != x2.shape:  # ATen's expand_outplace: both expanded, unless already equal
        shape = broadcast_shapes(x1.shape, x2.shape)
        x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim (ATen's composite)."""
    return (x1 - x2 + eps).norm(p, max(x1.ndim, x2.ndim) - 1, keepdim)
