"""More of ``torch.nn.functional``'s losses: ranking and embedding losses (margin ranking,
hinge embedding, cosine embedding, triplet margin), multi-label soft margin, the Poisson and
Gaussian negative log-likelihoods, and the multi-class hinge ``multi_margin_loss``.

PyTorch computes all but the last as composites of ordinary ops (no fused kernel), so they
are composites here too: their ``grad_fn`` and gradients are those of the same ops, in the same
order (``MeanBackward0`` for a mean, ``ClampMinBackward0`` under ``reduction='none'``...).
``multi_margin_loss`` is PyTorch's fused op, declared in ``ember/ops/margin_loss.py``.
"""
from __future__ import annotations

import math

from .. import _creation
from ..autograd import grad_mode as _grad_mode
from ..ops import pointwise as _pw
from ..ops import unary as _unary
from ..ops.autocast import autocast_op
from .functional import _get_enum, _legacy_get_string, _reduce, _reduction, logsigmoid
from .functional import pairwise_distance as _pairwise_distance

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "multi_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss"]


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (1 or -1) says which
    input should rank higher."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce(_pw.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other
    target values get both terms, as in PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _creation.zeros_like(input)
    below = _pw.where(target != 1, _pw.clamp_min(margin - input, 0), zeros)
    return _reduce(below + _pw.where(target != -1, input, zeros), reduction)


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
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
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance
    (``swap``: ``d(a, n)`` replaced by ``d(p, n)`` where that is smaller)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_triplet_dims(anchor, positive, negative)
    dist = lambda x1, x2: _pairwise_distance(x1, x2, p, eps)  # noqa: E731
    return _triplet(anchor, positive, negative, dist, margin, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
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


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Per sample, the mean over classes of the logistic loss
    ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` (times ``weight``)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log-likelihood: ``exp(input) - target * input`` for log-rates
    (``log_input``), else ``input - target * log(input + eps)``; ``full`` adds Stirling's
    approximation of ``log(target!)`` where ``target > 1``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _unary.exp(input) - target * input
    else:
        loss = input - target * _unary.log(input + eps)
    if full:
        stirling = target * _unary.log(target) - target + 0.5 * _unary.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, _get_enum(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log-likelihood ``(log(var) + (input - target)**2 / var) / 2`` (plus
    ``log(2 pi) / 2`` if ``full``), ``var`` clamped to at least ``eps`` (the clamp passes no
    gradient, as in PyTorch). ``var`` may lack the last dim, or have size 1 in one dim
    (one variance shared by that dim)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _creation.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                b for a, b in zip(input.size(), var.size()) if a != b) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_unary.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: per sample, ``sum_{i != y} max(0, margin - x[y] + x[i]) ** p``
    (times ``weight[y]``) over the ``C`` classes, divided by ``C``; ``p`` is 1 or 2."""
    import numpy as np

    from ..ops import margin_loss as _ml
    from ..ops.registry import saves_also
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    c = input.shape[-1] if input.dim() else 1
    n = input.shape[0] if input.dim() == 2 else 1
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy[:-6]}")
    if input.dim() == 2 and (target.dim() != 1 or target.shape[0] != n):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    y = target._data.astype(np.int64).reshape(-1)
    if y.size and (y.min() < 0 or y.max() >= c):
        raise RuntimeError("target out of range")
    dtype = input._data.dtype
    onehot = (np.arange(c) == y[:, None]).astype(dtype)
    scale = np.full(n, 1.0 / c, dtype) if weight is None else \
        (weight._data.astype(dtype)[y] / c).astype(dtype)
    shape = tuple(target.shape) if input.dim() == 2 else ()
    out = _ml._multi_margin_loss(input, onehot, scale, p, float(margin), reduction, shape)
    return saves_also(out, target)

