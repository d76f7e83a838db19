"""Ranking and embedding losses of ``torch.nn.functional``: margin ranking, hinge embedding,
cosine embedding, triplet margin (with a distance function or not).

PyTorch computes them as composites of ordinary ops (no fused kernel), so they are composites
here too: their ``grad_fn`` and gradients are those of the same ops, in the same order
(``MeanBackward0`` for a mean, ``ClampMinBackward0`` under ``reduction='none'``...).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ... import _creation
from ...ops import pointwise as _pw
from ...ops import unary as _unary
from ...ops.autocast import autocast_op
from .distance import pairwise_distance as _pairwise_distance
from .loss import _reduce, _reduction

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..._tensor import Tensor


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (1 or -1) says which
    input should rank higher."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce(_pw.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other
    target values get both terms, as in PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _creation.zeros_like(input)
    below = _pw.where(target != 1, _pw.clamp_min(margin - input, 0), zeros)
    return _reduce(below + _pw.where(target != -1, input, zeros), reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it
    is -1; the cosine along the last dim of 2-D inputs (1-D inputs with a 0-D target), with
    1e-12 added to each squared norm."""
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if dim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(
            f"{dim}D target tensor expects {want}D input tensors, but found inputs with sizes "
            f"{_sizes(input1)} and {_sizes(input2)}.")
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = dot / _unary.sqrt(norms)
    zeros = _creation.zeros_like(cos)
    pos = _pw.where(target == 1, 1 - cos, zeros)
    neg = _pw.where(target == -1, _pw.clamp_min(cos - margin, 0), zeros)
    return _reduce(pos + neg, reduction)


def _sizes(t):
    return "[" + ", ".join(map(str, t.shape)) + "]"


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance
    (``swap``: ``d(a, n)`` replaced by ``d(p, n)`` where that is smaller)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    dist = lambda x1, x2: _pairwise_distance(x1, x2, p, eps)  # noqa: E731
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
        swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any distance (``pairwise_distance`` by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = _pairwise_distance if distance_function is None else distance_function
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def _triplet(anchor, positive, negative, dist, margin, swap, reduction):
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _pw.minimum(d_neg, dist(positive, negative))
    return _reduce(_pw.clamp_min(margin + d_pos - d_neg, 0), reduction)
