"""Neural-network ops with fused derivatives (losses); layers come with the nn issue."""
from __future__ import annotations

import math

from .registry import defop

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return xp.mean(loss)
    if reduction == "sum":
        return xp.sum(loss)
    return loss


def _softplus_neg(xp, x):
    """log(1 + exp(-x)), stable for large |x|."""
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0 * x)


@defop("binary_cross_entropy_with_logits", n_in=2, promote=True)
def _bce_logits(xp, input, target, weight, pos_weight, reduction):
    sp = _softplus_neg(xp, input)
    if pos_weight is None:
        loss = (1 - target) * input + sp
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


def _scale(xp, g, grad, weight, reduction, n):
    if weight is not None:
        grad = grad * weight
    if reduction == "mean":
        grad = grad / n
    return g * grad


def _bce_input_rule(xp, g, ans, input, target, weight, pos_weight, reduction):
    s = xp.sigmoid(input)
    if pos_weight is None:
        grad = s - target
    else:
        grad = (1 + (pos_weight - 1) * target) * s - pos_weight * target
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


def _bce_target_rule(xp, g, ans, input, target, weight, pos_weight, reduction):
    if pos_weight is None:
        grad = -input
    else:
        grad = -input + (pos_weight - 1) * _softplus_neg(xp, input)
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


_bce_logits.defvjp(_bce_input_rule, _bce_target_rule)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross-entropy in one numerically stable op."""
    from .._tensor import Tensor
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    raw = [w._data if isinstance(w, Tensor) else w for w in (weight, pos_weight)]
    return _bce_logits(input, target, raw[0], raw[1], reduction)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["binary_cross_entropy_with_logits"]
METHODS = {}
INPLACE = ()
