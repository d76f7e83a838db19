"""Loss kernels with fused derivatives, as PyTorch's nodes: the regression losses (mse,
smooth L1, soft margin, huber), binary cross entropy (on probabilities and on logits), the
negative log-likelihood and the multi-class hinge ``multi_margin_loss``.

The losses take their reduction as a string ('none', 'mean', 'sum');
``ember/nn/functional/loss.py`` checks the arguments and gives PyTorch's errors before calling
them.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _recording, _xp
from ..._tensor import Tensor
from ...autograd import grad_mode
from .. import batching
from .._blocks import _BLOCK, _blockwise
from .._select import _fast, _select, _zero_where
from ..autocast import autocast_op
from ..registry import defop

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return xp.mean(loss)
    if reduction == "sum":
        return xp.sum(loss)
    return loss


def _mean_scale(grad, reduction):
    """The elementwise gradient ``grad`` of a loss, divided by its element count for 'mean'."""
    return grad / math.prod(grad.shape) if reduction == "mean" else grad


def _times_g(g, grad, reduction):
    """``g * _mean_scale(grad, reduction)``, in place on ``grad`` where it is a NumPy buffer
    the result fits (the same values, two temporaries fewer)."""
    if (type(grad) is not np.ndarray or not grad.ndim
            or not isinstance(g, (np.ndarray, np.generic))  # (-g of 0-d: a NumPy scalar)
            or (g.ndim and g.shape != grad.shape) or g.dtype != grad.dtype):
        return g * _mean_scale(grad, reduction)
    if reduction == "mean" and not g.ndim and grad.size:  # one pass: times 1 / N, times g
        return np.multiply(grad, grad.dtype.type(1 / math.prod(grad.shape)) * g, out=grad)
    if reduction == "mean":
        grad /= math.prod(grad.shape)
    return np.multiply(g, grad, out=grad)


# --------------------------------------------------------------------------- regression losses
# Input and target are differentiable (the target's gradient is minus the input's); the
# forwards get tensors already broadcast to one shape.


@defop("mse_loss", n_in=2, promote=True, jvp="transpose", batch="loss")
def _mse_loss(xp, input, target, reduction):
    d = input - target
    return _reduce(xp, d * d, reduction)


def _mse_grad(xp, g, ans, input, target, reduction):
    d = input - target
    if type(d) is np.ndarray:  # (in place: 2 * d is d + d)
        return _times_g(g, np.add(d, d, out=d), reduction)
    return g * _mean_scale(2 * d, reduction)


# (the target's: (-g) * x is -(g * x) exactly, and -g is a number for 'mean' and 'sum')
_mse_loss.defvjp(_mse_grad, lambda xp, g, ans, input, target, reduction:
                 _mse_grad(xp, -g, None, input, target, reduction))


def _huber_buffer(xp, input, target, delta):
    """Huber's loss elementwise, PyTorch's ``0.5 * z * z`` below ``delta`` and ``delta * (z -
    0.5 * delta)`` above (``z = |input - target|``), bit for bit, without a branch: both are
    ``c * (z - 0.5 * c)`` with ``c = min(z, delta)`` (below, z - 0.5 * z is exactly 0.5 * z).
    Six passes in place on two buffers; a where() on the random mask cost 3x that."""
    z = xp.asarray(input - target)  # (a buffer, also for 0-d)
    xp.abs(z, out=z)
    c = xp.asarray(xp.minimum(z, delta))
    z -= 0.5 * c
    z *= c
    return z


def _smooth_l1_buffer(xp, input, target, beta):
    """PyTorch's smooth L1 with ``beta != 1`` elementwise: ``0.5 * z * z / beta`` below
    ``beta``, ``z - 0.5 * beta`` above. (Not as the larger of the two, the parabola lying
    above its tangent line: near the kink the rounded line can exceed the rounded parabola.)"""
    z = xp.asarray(input - target)  # (in place from here: a buffer, also for 0-d)
    xp.abs(z, out=z)
    quadratic = 0.5 * z
    quadratic *= z
    quadratic /= beta
    return _select(xp, z < beta, quadratic, z - 0.5 * beta)


# The regression losses' elementwise passes over L2-sized blocks: smooth L1's forward 1.5 ->
# 1.0 ms at 500k. (Not their rules: 4 in-place passes, as fast whole.) Reduced, each block is
# summed while in cache, and the loss is never assembled (a copy and a pass fewer).
_huber_block = _blockwise(_huber_buffer)
_smooth_l1_block = _blockwise(_smooth_l1_buffer)


def _reduced_blocks(xp, kernel, input, target, reduction, param):
    """``_reduce`` of ``kernel``'s elementwise loss, for large NumPy arrays in blocks."""
    if reduction == "none" or not _fast(input, target) or input.size <= _BLOCK:
        blocks = _huber_block if kernel is _huber_buffer else _smooth_l1_block
        return _reduce(xp, blocks(xp, input, target, param) if _fast(input, target)
                       else kernel(xp, input, target, param), reduction)
    a, b = input.reshape(-1), target.reshape(-1)
    total = sum(kernel(xp, a[i:i + _BLOCK], b[i:i + _BLOCK], param).sum()
                for i in range(0, a.size, _BLOCK))
    return total / a.size if reduction == "mean" else total


@defop("smooth_l1_loss", n_in=2, promote=True, jvp="transpose", batch="loss")
def _smooth_l1_loss(xp, input, target, reduction, beta):
    if beta == 1:  # Huber's loss with delta 1, exactly
        return _reduced_blocks(xp, _huber_buffer, input, target, reduction, 1)
    return _reduced_blocks(xp, _smooth_l1_buffer, input, target, reduction, beta)


def _smooth_l1_grad(xp, g, ans, input, target, reduction, beta):
    # d/dd of the loss: d / beta strictly inside (-beta, beta), the sign of d elsewhere (so
    # the second derivative is 1 / beta strictly inside only, as PyTorch's double backward).
    # That is d / beta clipped to [-1, 1] (|d| = beta gives exactly 1): no branch, no where.
    d = input - target
    if isinstance(d, Tensor):  # recording: clip's derivative would pass at |d| = beta too
        return g * _mean_scale(xp.where(xp.abs(d) < beta, d / beta, xp.sign(d)), reduction)
    d = xp.asarray(d)
    if beta != 1:  # (exact either way)
        d /= beta
    return _times_g(g, xp.clip(d, -1, 1, out=d), reduction)


_smooth_l1_loss.defvjp(_smooth_l1_grad, lambda xp, g, ans, input, target, reduction, beta:
                       _smooth_l1_grad(xp, -g, None, input, target, reduction, beta))


@defop("soft_margin_loss", n_in=1, jvp="transpose",
       batch="loop")  # (the target is not differentiable)
def _soft_margin_loss(xp, input, target, reduction):
    return _reduce(xp, xp.log1p(xp.exp(-input * target)), reduction)


def _soft_margin_grad(xp, g, ans, input, target, reduction):
    """PyTorch's soft_margin_loss_backward: ``-target * z / (1 + z)``, ``z = exp(-input *
    target)``."""
    z = xp.exp(-input * target)
    return g * _mean_scale(-target * z / (1 + z), reduction)


_soft_margin_loss.defvjp(_soft_margin_grad)


@defop("huber_loss", n_in=2, promote=True, jvp="transpose", batch="loss")
def _huber_loss(xp, input, target, reduction, delta):
    return _reduced_blocks(xp, _huber_buffer, input, target, reduction, delta)


def _huber_grad(xp, g, ans, input, target, reduction, delta):
    d = input - target
    if type(d) is np.ndarray:  # (in place)
        return _times_g(g, np.clip(d, -delta, delta, out=d), reduction)
    return g * _mean_scale(xp.clip(d, -delta, delta), reduction)


_huber_loss.defvjp(_huber_grad, lambda xp, g, ans, input, target, reduction, delta:
                   _huber_grad(xp, -g, None, input, target, reduction, delta))


# --------------------------------------------------------------------------- classification
# ``weight`` and ``pos_weight`` are raw arrays of the input's dtype (never differentiable, as in
# PyTorch); nll's ``target`` is a raw int64 array.


def _not_differentiable(tensor, arg, fn):
    """PyTorch refuses a class weight that requires grad (when grad mode is on)."""
    if tensor is not None and tensor.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


# PyTorch's floor on x * (1 - x) in the gradient of binary_cross_entropy: 1e-12 as a C float.
_BCE_EPS = 9.999999960041972e-13


@defop("binary_cross_entropy", n_in=2, jvp="transpose", batch="loss")
def _binary_cross_entropy(xp, input, target, weight, reduction):
    # PyTorch clamps both logs at -100, so the loss stays finite at input 0 and 1.
    loss = (target - 1) * xp.maximum(xp.log1p(-input), -100) \
        - target * xp.maximum(xp.log(input), -100)
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


def _bce_prob_input_rule(xp, g, ans, input, target, weight, reduction):
    q = (1 - input) * input
    grad = (input - target) / xp.maximum(q, 0 * q + _BCE_EPS)
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


def _bce_prob_target_rule(xp, g, ans, input, target, weight, reduction):
    grad = -xp.log(input / (1 - input))  # minus logit(input), unclamped as in PyTorch
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


_binary_cross_entropy.defvjp(_bce_prob_input_rule, _bce_prob_target_rule)


# ``ignore_index`` is None when the caller found that no target is ignored: without class
# weights every target then counts once, and the forward and rule below take a shorter path
# (the same values: each weight is 1, the mean divides by the number of targets).
#
# The picks go through a flat index into the (N, C, *rest) input, one gather (a third of the
# time of indexing by (range, class) tuples), and each target's weight through one gather from
# a small table that holds 0 at the ignored class: the ignore mask, the where()s and the casts
# are gone from the forward and the rule (weighted nll with ignore_index at (250000, 3): the
# forward 3.6 -> 0.9 ms, forward + backward 6.9 -> 2.0 ms).

_TABLE_PAD = 4096  # ignore_index >= -_TABLE_PAD gets table slots of its own (see _nll_weights)


def _nll_weights(xp, target, weight, ignore_index, c, dtype):
    """``(classes, w)``: each target's class, a valid index (0 where an ignored target is
    negative), and its class weight (None: every target counts once), 0 where it is ignored.

    ``w`` is one gather from a table of the ``c`` weights (ones without weights) with the
    ignored class's set to 0; a negative ``ignore_index`` (the only negative target the
    caller lets through) reads one of the zeros that follow them by negative indexing (a
    table of ``c - ignore_index``)."""
    if ignore_index is None:
        return target, None if weight is None else xp.take(weight, target)
    pad = min(-ignore_index, _TABLE_PAD) if ignore_index < 0 else 1
    table = xp.zeros(c + pad, dtype)
    table[:c] = 1 if weight is None else weight
    if 0 <= ignore_index < c:
        table[ignore_index] = 0
        return target, xp.take(table, target)
    if ignore_index >= c:  # (then the only target past the classes: to the table's zero)
        return xp.minimum(target, c - 1), xp.take(table, xp.minimum(target, c))
    # (a far negative ignore_index: its targets first moved to -1, the table's last zero)
    w = xp.take(table, target if pad == -ignore_index else xp.maximum(target, -1))
    return xp.maximum(target, 0), w


def _flat_entries(xp, shape, classes):
    """The flat index of each target's class entry in a C-contiguous (N, C, *rest) array of
    ``shape`` (``classes`` itself for a 1-d input and its 0-d target):
    ``n * C * R + class * R + r``, with R the product of ``rest``."""
    if classes.ndim == 0 or classes.size == 0:  # (no targets: an empty index of their shape)
        return classes
    n, c, r = shape[0], shape[1], math.prod(shape[2:])
    flat = xp.arange(0, n * c * r, c * r)
    if r == 1:
        flat += classes
        return flat
    flat = flat.reshape((n,) + (1,) * (len(shape) - 2)) + xp.arange(r).reshape(shape[2:])
    flat += classes * r
    return flat


# Without class weights a reduced loss of (N, C) rows (a language model's) needs no table: the
# picks at each row's class are summed where the target is kept and divided by their count,
# and the rule writes -g / count at the kept picks into zeros (the same values as the general
# path, whose weights are then 1 and 0; 7 array calls fewer in the forward, 9 in the rule).


def _kept_entries(xp, n, c, target, ignore_index):
    """The flat index of each kept target's entry in a C-contiguous (n, c) array, and how many
    there are (every target when ``ignore_index`` is None)."""
    flat = xp.arange(0, n * c, c)
    if ignore_index is None:
        flat += target
        return flat, n
    keep = target != ignore_index
    flat = flat[keep]
    flat += target[keep]
    return flat, flat.shape[0]


def _nll_rows(xp, input, target, reduction, ignore_index):
    flat, count = _kept_entries(xp, input.shape[0], input.shape[1], target, ignore_index)
    picks = xp.take(xp.reshape(input, (-1,)), flat)
    total = xp.sum(xp.negative(picks, out=picks))  # (no targets: +0 as PyTorch's, not -0)
    # (the mean over no targets is PyTorch's NaN: 0 / 0)
    return total if reduction == "sum" else total / (count or input.dtype.type(0))


def _nll_rows_grad(xp, g, input, target, reduction, ignore_index):
    grad = xp.zeros(input.shape, g.dtype)
    flat, count = _kept_entries(xp, input.shape[0], input.shape[1], target, ignore_index)
    if count:
        xp.reshape(grad, (-1,))[flat] = -(g / count if reduction == "mean" else g)
    return grad


def _nll_forward(xp, input, target, weight, reduction, ignore_index):
    """``-input[target] * weight[target]`` along the class dim (1, or 0 for a 1-d input)."""
    if weight is None and reduction != "none" and input.ndim == 2:
        return _nll_rows(xp, input, target, reduction, ignore_index)
    classes, w = _nll_weights(xp, target, weight, ignore_index, input.shape[_class_axis(input)],
                              input.dtype)
    loss = xp.take(xp.reshape(input, (-1,)), _flat_entries(xp, input.shape, classes))
    loss = xp.negative(loss, out=loss) if loss.ndim else -loss
    if w is not None:  # (each kept target's weight, 0 where ignored)
        loss = xp.multiply(loss, w, out=loss) if loss.ndim else loss * w
    total = None if reduction == "none" else loss.sum()
    if ignore_index is not None and (total is None or not bool(xp.isfinite(total))):
        # An ignored target's pick times its weight 0 is +-0, or NaN where the pick is not
        # finite: PyTorch's loss there is +0 (and nothing in the sums).
        loss = _zero_where(xp, target == ignore_index, loss)
        total = None if reduction == "none" else loss.sum()
    if reduction == "mean":  # NaN when every target is ignored, as in PyTorch
        return total / (loss.size if w is None else w.sum())
    return loss if total is None else total


def _nll_rule(xp, g, ans, input, target, weight, reduction, ignore_index):
    """-g * w on each target's class entry, PyTorch's ``w * -(g / total weight)`` for the
    mean; every other entry's gradient is zero (also where ``g`` or the scale is not finite:
    an ignored target's entry gets 0, not 0 * inf)."""
    raw = _xp.namespace_of(target)  # the picks are raw arrays in every backward
    if xp is raw and weight is None and reduction != "none" and input.ndim == 2:
        return _nll_rows_grad(xp, g, input, target, reduction, ignore_index)
    c = input.shape[_class_axis(input)]
    if xp is raw:  # (not recording) a scatter into zeros by the flat index
        classes, w = _nll_weights(raw, target, weight, ignore_index, c,
                                  getattr(g.dtype, "np", g.dtype))
        total = None if reduction != "mean" else target.size if w is None else w.sum()
        grad = xp.zeros(input.shape, g.dtype)
        values = -(g if total is None else g / total)
        if w is not None:
            values = xp.multiply(w, values, out=w) if w.ndim else w * values
        if ignore_index is not None and not bool(xp.isfinite(values.sum())):
            values = _zero_where(xp, target == ignore_index, values)
        xp.reshape(grad, (-1,))[_flat_entries(xp, input.shape, classes)] = values
        return grad
    axis = _class_axis(input)
    index, w = _recording.opaque(_nll_scatter_weights, raw, target, weight, ignore_index, c,
                                 getattr(g.dtype, "np", g.dtype), reduction, axis)
    if w is None:
        picks = -g * (1 / target.size) if reduction == "mean" else -g
    else:
        picks = -g * w
    return xp.scatter_along_axis(xp.expand_dims(xp.broadcast_to(picks, target.shape), axis=axis),
                                 index, axis, tuple(input.shape))


def _nll_scatter_weights(raw, target, weight, ignore_index, c, dtype, reduction, axis):
    """For ``_nll_rule`` recording its graph: where each target's entry lies along ``axis``
    and the weight its gradient is scaled by (None: 1), divided by the total for the mean,
    0 where the target is ignored (0 / 0 where every one is). Raw arrays made from the
    targets, in one call, which compiled mode records whole (``_recording.opaque``)."""
    classes, w = _nll_weights(raw, target, weight, ignore_index, c, dtype)
    if w is not None:
        if reduction == "mean":
            w = w / w.sum()
        if ignore_index is not None:
            w = raw.where(target != ignore_index, w, 0)
    return raw.expand_dims(classes, axis), w


def _class_axis(input):
    return 0 if input.ndim == 1 else 1


# Inputs of 1 or 2 dims, and of 4 dims (N, C, H, W): the same op under PyTorch's two names.
_nll_loss = defop("nll_loss", n_in=1, jvp="transpose", batch="loop")(_nll_forward).defvjp(_nll_rule)
_nll_loss2d = defop("nll_loss2d", n_in=1, jvp="transpose",
                    batch="loop")(_nll_forward).defvjp(_nll_rule)


def _softplus_neg(xp, x):
    """log(1 + exp(-x)), stable for large |x|."""
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0 * x)


@defop("binary_cross_entropy_with_logits", n_in=2, promote=True, jvp="transpose", batch="loss",
       method=False)
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


@_bce_logits.public
@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross-entropy in one numerically stable op."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    for w in (weight, pos_weight):
        _not_differentiable(w, "weight" if w is weight else "pos_weight",
                            "binary_cross_entropy_with_logits")
    if batching.is_batched(weight, pos_weight):  # read as raw arrays below: one sample a time
        return batching.loop(binary_cross_entropy_with_logits, (input, target, weight),
                             dict(reduction=reduction, pos_weight=pos_weight))
    raw = [w._data if isinstance(w, Tensor) else w for w in (weight, pos_weight)]
    return _bce_logits(input, target, raw[0], raw[1], reduction)


# --------------------------------------------------------------------------- margin loss
# ``multi_margin_loss``: the multi-class hinge loss, as PyTorch's fused op (node
# ``MultiMarginLossBackward0``). Per sample, with ``y`` its class and ``C`` classes::
#
#     loss = sum_{i != y} max(0, margin - x[y] + x[i]) ** p * weight[y] / C
#
# The rule is written with array-API operations on the saved input, so (unlike PyTorch, which
# has no double backward for this op) second derivatives are available too.


def _hinge(xp, x, onehot, margin):
    """``margin - x[y] + x[i]`` for every class ``i`` (0 at ``i = y``), rows of ``x``."""
    picked = xp.sum(x * onehot, axis=1, keepdims=True)
    return xp.where(onehot > 0, 0.0, margin - picked + x)


@defop("multi_margin_loss", n_in=1, jvp="transpose", batch="loop")
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
