"""The native norms as PyTorch's fused ops (``native_layer_norm``, ``native_group_norm``,
``native_batch_norm``); their derivatives are PyTorch's closed forms in array-API code, so
derivatives of any order work. What PyTorch saves besides the inputs (mean and rstd) the
forward writes into a ``saved`` dict parameter; rules never read the output, so in-place ops
on it (``relu_`` after a norm) stay legal, as in PyTorch. ``ember/nn/functional/
normalization.py`` checks the arguments.
"""
from __future__ import annotations

import math

from ... import _array_api
from .. import batching
from ..reduction.rows import sum_first, sum_last
from ..registry import defop

# --------------------------------------------------------------------------- normalization


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _mean(xp, x, axes):
    """``xp.mean(x, axis=axes, keepdims=True)``. Over the trailing dims (layer and group norm)
    or the batch and trailing dims (batch and instance norm: per channel), the sums are
    ``rows``' BLAS products: NumPy's mean over a (1536, 48) batch's rows takes 5x longer."""
    nd, k = x.ndim, len(axes)
    n = _count(x.shape, axes)
    if axes == tuple(range(nd - k, nd)):
        return sum_last(xp, x, k) / n
    if nd > 2 and axes == (0,) + tuple(range(2, nd)):
        return xp.sum(sum_last(xp, x, nd - 2), axis=0, keepdims=True) / n
    return xp.mean(x, axis=axes, keepdims=True)


def _moments(xp, x, axes, eps):
    """Mean, biased variance and 1/sqrt(variance + eps) over ``axes`` (kept as size-1 dims),
    and ``x - mean``."""
    mean = _mean(xp, x, axes)
    xc = x - mean
    var = _mean(xp, xc * xc, axes)
    return mean, var, 1 / xp.sqrt(var + eps), xc


def _stats(xp, x, axes, eps, saved):
    """The mean and rstd the forward saved; recomputed from ``x`` when the rule is recorded
    (``create_graph=True``), so that their dependence on ``x`` is differentiated too."""
    if _array_api.is_tensor_namespace(xp):
        mean, _, rstd, _ = _moments(xp, x, axes, eps)
        return mean, rstd
    return saved["mean"], saved["rstd"]


def _normalized_grad(xp, gxhat, input, mean, rstd, axes, gain=None):
    """The input gradient of ``xhat = (input - mean) * rstd``, statistics over ``axes``:
    ``rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))``, in few passes. ``gain``
    (constant over ``axes``: a per-channel weight) multiplies ``gxhat`` and the result alike.
    """
    xc = input - mean
    scale = rstd * rstd * _mean(xp, gxhat * xc, axes)
    dx = gxhat - _mean(xp, gxhat, axes) - xc * scale
    return dx * (rstd if gain is None else gain * rstd)


def _layer_norm_batched(op, args, levels):
    """The batching rule of ``layer_norm``: the normalized ``axes`` moved past the batch; a
    weight or bias that varies per sample (per-sample gradients) is applied after, by the
    pointwise rules."""
    input, weight, bias, axes, eps, saved = args
    x = batching.physical(input, levels, expand=True)
    nb = len(levels)
    batched = batching.BatchedTensor
    own_weight = weight if type(weight) is not batched else None
    own_bias = bias if own_weight is weight and type(bias) is not batched else None
    out = batching.wrap(op(x, own_weight, own_bias, tuple(a + nb for a in axes), eps, saved),
                        levels)
    if own_weight is not weight:
        out = out * weight
    if own_bias is not bias:
        out = out + bias
    return out


@defop("native_layer_norm", n_in=3, jvp="transpose", batch=_layer_norm_batched)
def _layer_norm(xp, input, weight, bias, axes, eps, saved):
    mean, _, rstd, out = _moments(xp, input, axes, eps)
    saved["mean"], saved["rstd"] = mean, rstd
    out *= rstd  # (x - mean) * rstd in x - mean's buffer, and so on: no temporaries
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return out


def _ln_input_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    mean, rstd = _stats(xp, input, axes, eps, saved)
    gxhat = g if weight is None else g * weight
    return _normalized_grad(xp, gxhat, input, mean, rstd, axes)


def _ln_weight_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    mean, rstd = _stats(xp, input, axes, eps, saved)
    return sum_first(xp, g * (input - mean) * rstd, input.ndim - len(axes))


_layer_norm.defvjp(
    _ln_input_rule, _ln_weight_rule,
    lambda xp, g, ans, input, weight, bias, axes, eps, saved: sum_first(
        xp, g, input.ndim - len(axes)))


def _channel(xp, v, ndim):
    """A per-channel vector shaped to broadcast over (N, C, *)."""
    return xp.reshape(v, (1, -1) + (1,) * (ndim - 2))


def _channel_sum(xp, x):
    if x.ndim > 2:
        x = sum_last(xp, x, x.ndim - 2)  # (the fast row sums: see _mean)
    return xp.reshape(xp.sum(x, axis=0), (x.shape[1],))


def _grouped(xp, x, groups):
    return xp.reshape(x, (x.shape[0], groups, -1))


def _channel_affine_batched(op, args, levels):
    """The batching rule of group norm and of batch norm in eval mode: the vmap batch folded
    into N; a weight or bias that varies per sample (per-sample gradients) is applied after,
    per channel, by the pointwise rules (else the whole op ran once per sample)."""
    input, weight, bias = args[:3]
    batched = batching.BatchedTensor
    if type(weight) is not batched and type(bias) is not batched:
        return batching.fold(op, args, levels)
    own_weight = weight if type(weight) is not batched else None
    own_bias = bias if own_weight is weight and type(bias) is not batched else None
    out = op(input, own_weight, own_bias, *args[3:])
    shape = (-1,) + (1,) * (input.ndim - 2)  # per channel, over a sample (N, C, *)
    if own_weight is not weight:
        out = out * weight.reshape(shape)
    if own_bias is not bias:
        out = out + bias.reshape(shape)
    return out


@defop("native_group_norm", n_in=3, jvp="transpose", batch=_channel_affine_batched)
def _group_norm(xp, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, _, rstd, xc = _moments(xp, x, (2,), eps)
    saved["mean"], saved["rstd"] = mean, rstd
    out = (xc * rstd).reshape(input.shape)
    if weight is not None:
        out = out * _channel(xp, weight, input.ndim)
    if bias is not None:
        out = out + _channel(xp, bias, input.ndim)
    return out


def _gn_input_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, rstd = _stats(xp, x, (2,), eps, saved)
    gxhat = g if weight is None else g * _channel(xp, weight, input.ndim)
    dx = _normalized_grad(xp, _grouped(xp, gxhat, groups), x, mean, rstd, (2,))
    return xp.reshape(dx, tuple(input.shape))


def _gn_weight_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, rstd = _stats(xp, x, (2,), eps, saved)
    return _channel_sum(xp, g * xp.reshape((x - mean) * rstd, tuple(input.shape)))


_group_norm.defvjp(
    _gn_input_rule, _gn_weight_rule,
    lambda xp, g, ans, input, weight, bias, groups, eps, saved: _channel_sum(xp, g))


def _batch_norm_batched(op, args, levels):
    """The batching rule of ``batch_norm``: in eval mode a per-channel affine map, the vmap
    batch folded into N (``_channel_affine_batched``); in training (statistics over the
    batch) one sample at a time."""
    return (batching.loop_rule if args[5] else _channel_affine_batched)(op, args, levels)


@defop("native_batch_norm", n_in=3, jvp="transpose", batch=_batch_norm_batched)
def _batch_norm(xp, input, weight, bias, running_mean, running_var, training, momentum, eps,
                saved):
    """Normalize per channel with batch statistics (training) or the running ones.

    In training the running statistics (raw arrays) are updated in place, as PyTorch's kernel
    does: ``(1 - momentum) * running + momentum * batch`` with the unbiased batch variance.
    """
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        mean, var, rstd, _ = _moments(xp, input, axes, eps)
        if running_mean is not None:
            n = _count(input.shape, axes)
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean.reshape(-1)
            running_var[...] = ((1 - momentum) * running_var
                                + momentum * n / (n - 1) * var.reshape(-1))
    else:
        mean = _channel(xp, running_mean.astype(input.dtype), input.ndim)
        rstd = 1 / xp.sqrt(_channel(xp, running_var.astype(input.dtype), input.ndim) + eps)
    saved["mean"], saved["rstd"] = mean, rstd
    scale = rstd if weight is None else rstd * _channel(xp, weight, input.ndim)
    out = (input - mean) * scale
    if bias is not None:
        out += _channel(xp, bias, input.ndim)
    return out


def _bn_stats(xp, input, training, eps, saved):
    if not training:  # the running statistics: constants
        return saved["mean"], saved["rstd"]
    return _stats(xp, input, (0,) + tuple(range(2, input.ndim)), eps, saved)


def _bn_input_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                   momentum, eps, saved):
    mean, rstd = _bn_stats(xp, input, training, eps, saved)
    gain = None if weight is None else _channel(xp, weight, input.ndim)
    if not training:  # the running statistics are constants
        return g * (rstd if gain is None else gain * rstd)
    return _normalized_grad(xp, g, input, mean, rstd, (0,) + tuple(range(2, input.ndim)), gain)


def _bn_weight_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                    momentum, eps, saved):
    mean, rstd = _bn_stats(xp, input, training, eps, saved)
    return _channel_sum(xp, g * (input - mean)) * rstd.reshape(-1)


_batch_norm.defvjp(
    _bn_input_rule, _bn_weight_rule,
    lambda xp, g, ans, input, weight, bias, running_mean, running_var, training, momentum, eps,
    saved: _channel_sum(xp, g))
