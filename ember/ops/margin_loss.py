"""``multi_margin_loss``: the multi-class hinge loss, as PyTorch's fused op (node
``MultiMarginLossBackward0``). Per sample, with ``y`` its class and ``C`` classes::

    loss = sum_{i != y} max(0, margin - x[y] + x[i]) ** p * weight[y] / C

The rule is written with array-API operations on the saved input, so (unlike PyTorch, which
has no double backward for this op) second derivatives are available too.
"""
from __future__ import annotations

from .registry import defop

__all__ = []
METHODS = {}
INPLACE = ()


def _hinge(xp, x, onehot, margin):
    """``margin - x[y] + x[i]`` for every class ``i`` (0 at ``i = y``), rows of ``x``."""
    picked = xp.sum(x * onehot, axis=1, keepdims=True)
    return xp.where(onehot > 0, 0.0, margin - picked + x)


@defop("multi_margin_loss", n_in=1)
def _multi_margin_loss(xp, input, onehot, scale, p, margin, reduction, shape):
    z = _hinge(xp, input.reshape(onehot.shape), onehot, margin)
    h = xp.where(z > 0, z, 0.0)
    per = xp.sum(h * h if p == 2 else h, axis=1) * scale
    if reduction == "mean":
        return xp.asarray(xp.mean(per), dtype=input.dtype)
    if reduction == "sum":
        return xp.asarray(xp.sum(per), dtype=input.dtype)
    return per.reshape(shape).astype(input.dtype)


def _rule(xp, g, ans, input, onehot, scale, p, margin, reduction, shape):
    n = onehot.shape[0]
    z = _hinge(xp, xp.reshape(input, onehot.shape), onehot, margin)
    slope = xp.where(z > 0, 2 * z if p == 2 else 1.0, 0.0) * scale.reshape(n, 1)  # (raw)
    if reduction == "mean":
        slope = slope * (g / n)
    elif reduction == "sum":
        slope = slope * g
    else:
        slope = slope * xp.reshape(g, (n, 1))
    total = xp.sum(slope, axis=1, keepdims=True)
    return xp.reshape(slope - onehot * total, tuple(input.shape))


_multi_margin_loss.defvjp(_rule)
