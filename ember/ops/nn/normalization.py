"""The native norms as PyTorch's fused ops (``native_layer_norm``, ``native_group_norm``,
``native_batch_norm``); their derivatives are PyTorch's closed forms in array-API code, so
derivatives of any order work. What PyTorch saves besides the inputs (mean and rstd) the
forward writes into a ``saved`` dict parameter; rules never read the output, so in-place ops
on it (``relu_`` after a norm) stay legal, as in PyTorch. ``ember/nn/functional/
normalization.py`` checks the arguments.

Every norm is computed on the input viewed as ``(A, C, B)``, its statistics over axes 0 and
2, one per C: layer norm ``(1, rows, row)``, group norm ``(1, N * groups, rest)``, batch norm
``(N, C, rest)``, instance norm (a batch norm of ``(1, N * C, rest)``). NumPy does not fuse,
so the cost is the number of passes over the 1M elements (each ~0.3-1 ms at 1M here): the
kernels compute the centred data once in a buffer of their own and finish it in place, sum
products in one read (``_dots``: einsum, no temporary), keep the normalized input of an
affine norm for the backward (``saved["xhat"]``: one activation more, two passes fewer) and
share the backward's sums among its rules (``ops/_between_rules.py``) instead of recomputing
them: layer norm's forward+backward takes 10 passes and 6 reads, where it took 22 passes.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _array_api
from .. import _between_rules, batching
from ..reduction.rows import _BLAS_ROW, _plain, sum_first, sum_last
from ..registry import defop

# --------------------------------------------------------------------------- statistics


def _sums(xp, x3):
    """The sums of ``x3`` (A, C, B) over axes 0 and 2, shaped (1, C, 1): ``rows``' BLAS
    products (NumPy's sum over a (1536, 48) batch's rows takes 5x longer)."""
    a, c, b = x3.shape
    s = sum_last(xp, x3) if b > 1 else x3
    return s if a == 1 else xp.reshape(sum_first(xp, s), (1, c, 1))


def _row_split(b):
    """How many pieces of ``_BLAS_ROW`` elements or fewer (and 128 or more) a row of ``b``
    splits into evenly; 0 if none."""
    if b <= _BLAS_ROW:
        return 1
    return next((k for k in range(-(-b // _BLAS_ROW), b // 128 + 1) if b % k == 0), 0)


def _dots(xp, x3, y3):
    """The sums of ``x3 * y3`` over axes 0 and 2, shaped (1, C, 1). On NumPy arrays an
    einsum: one read of each and no product array, 3x faster than ``_sums(x3 * y3)``. It adds
    a row's terms in a few running sums, so a row longer than ``_BLAS_ROW`` (see ``rows``) is
    split into pieces first, their sums added after."""
    a, c, b = x3.shape
    k = _row_split(b)
    if k and _plain(xp, x3) and type(y3) is np.ndarray and y3.dtype == x3.dtype:
        shape = (a, c * k, b // k)
        d = np.einsum("acb,acb->c", x3.reshape(shape), y3.reshape(shape))
        return (d if k == 1 else d.reshape(c, k).sum(axis=1)).reshape(1, c, 1)
    return _sums(xp, x3 * y3)


def _moments(xp, x3, eps):
    """Mean, biased variance and 1/sqrt(variance + eps) of ``x3`` (A, C, B) over axes 0 and
    2, shaped (1, C, 1), and the centred ``x3 - mean`` (a new array, which the forward
    finishes in place). The variance is the centred data's, which keeps its accuracy when the
    mean is large against the spread; its sum of squares costs one read (``_dots``)."""
    n = x3.shape[0] * x3.shape[2]
    mean = _sums(xp, x3) / n
    xc = x3 - mean
    var = _dots(xp, xc, xc) / n
    return mean, var, 1 / xp.sqrt(var + eps), xc


def _stats(xp, x3, eps, saved):
    """The mean and rstd the forward saved; recomputed from ``x3`` when the rule is recorded
    (``create_graph=True``), so that their dependence on the input is differentiated too."""
    if _array_api.is_tensor_namespace(xp):
        mean, _, rstd, _ = _moments(xp, x3, eps)
        return mean, rstd
    return saved["mean"], saved["rstd"]


def _xhat(xp, x3, eps, saved):
    """The normalized input ``(x3 - mean) * rstd`` and whether it is the rule's own (to
    update in place): the forward's (``saved["xhat"]``, read only) when it kept it, else
    computed; always computed when the rule is recorded, from ``x3``."""
    xhat = saved.get("xhat")
    if xhat is not None and not _array_api.is_tensor_namespace(xp):
        return xhat, False
    mean, rstd = _stats(xp, x3, eps, saved)
    if _array_api.is_tensor_namespace(xp):
        return (x3 - mean) * rstd, False
    xhat = x3 - mean
    xhat *= rstd
    return xhat, True


def _normalized_grad(xp, gx3, xhat, rstd, gain=None, own_gx=False, own_xhat=False):
    """The input gradient of ``xhat = (x - mean) * rstd``, statistics over axes 0 and 2 of
    (A, C, B): ``rstd * (gx - mean(gx) - xhat * mean(gx * xhat))``; ``gain`` (constant over
    those axes: batch norm's per-channel weight) multiplies the result, as it would ``gx``.
    Returns it with the sums of ``gx`` and of ``gx * xhat`` (shaped (1, C, 1)), which batch
    norm's weight and bias gradients are. On raw arrays it works in place in the buffers that
    are the rule's own (``own_gx``, ``own_xhat``)."""
    n = xhat.shape[0] * xhat.shape[2]
    k = rstd if gain is None else gain * rstd
    s, d = _sums(xp, gx3), _dots(xp, gx3, xhat)
    if _array_api.is_tensor_namespace(xp):
        return (gx3 - s / n - xhat * (d / n)) * k, s, d
    if own_xhat:
        t = xhat
        t *= k * d / n
    else:
        t = xhat * (k * d / n)
    if own_gx:
        dx = gx3
        dx *= k
    else:
        dx = gx3 * k
    dx -= t
    dx -= k * s / n
    return dx, s, d


# --------------------------------------------------------------------------- layer norm


def _rows(input, axes):
    """Layer norm's view of ``input``: (1, rows, the ``axes`` dims' size)."""
    lead = input.ndim - len(axes)
    return 1, math.prod(input.shape[:lead]), math.prod(input.shape[lead:])


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
    mean, _, rstd, out = _moments(xp, xp.reshape(input, _rows(input, axes)), eps)
    saved["mean"], saved["rstd"] = mean, rstd
    out *= rstd  # (x - mean) * rstd in x - mean's buffer, and so on: no temporaries
    if weight is not None:
        saved["xhat"] = out
        out = xp.reshape(out, input.shape) * weight
    else:
        out = xp.reshape(out, input.shape)
    if bias is not None:
        out += bias
    return out


def _ln_input_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    shape = _rows(input, axes)
    x3 = xp.reshape(input, shape)
    xhat, own = _xhat(xp, x3, eps, saved)
    rstd = _stats(xp, x3, eps, saved)[1]
    gx = g if weight is None else g * weight
    dx, _, _ = _normalized_grad(xp, xp.reshape(gx, shape), xhat, rstd,
                                own_gx=weight is not None, own_xhat=own)
    return xp.reshape(dx, input.shape)


def _ln_weight_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    shape = _rows(input, axes)
    xhat, _ = _xhat(xp, xp.reshape(input, shape), eps, saved)
    by_column = (shape[1], shape[2], 1)  # the sums over the rows, one read (``_dots``)
    return xp.reshape(_dots(xp, xp.reshape(g, by_column), xp.reshape(xhat, by_column)),
                      tuple(weight.shape))


_layer_norm.defvjp(
    _ln_input_rule, _ln_weight_rule,
    lambda xp, g, ans, input, weight, bias, axes, eps, saved: sum_first(
        xp, g, input.ndim - len(axes)))

# --------------------------------------------------------------------------- group norm


def _channel(xp, v, ndim):
    """A per-channel vector shaped to broadcast over (N, C, *)."""
    return xp.reshape(v, (1, -1) + (1,) * (ndim - 2))


def _channel_sum(xp, x):
    if x.ndim > 2:
        x = sum_last(xp, x, x.ndim - 2)  # (the fast row sums: see _sums)
    return xp.reshape(xp.sum(x, axis=0), (x.shape[1],))


def _grouped(input, groups):
    """Group norm's view of ``input``: (1, N * groups, the rest)."""
    n = input.shape[0] * groups
    return 1, n, math.prod(input.shape) // n if n else 0


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


# Group norm's kernels keep the centred input ``xc`` (not xhat = xc * rstd: one activation
# more without a weight, as layer norm keeps xhat with one) and fold rstd and the weight into
# per-(sample, channel) factors: the forward is xc * (rstd * w) + b (2 passes, where xhat,
# then xhat * w, then + b took 3); the backward reads g and xc once each for the sums per
# (sample, channel) of g and g * xc, from which the input rule's group sums and the weight
# and bias gradients all follow (shared: ``ops/_between_rules.py``), then writes
# dx = g * (rstd * w) - xc * k - c (4 passes). Forward + backward: 11 passes where 17 were
# (9 where 12 without a weight: xhat is not recomputed).


def _gn_views(input, groups):
    """(N, groups, C/g, rest) and the per-(sample, channel) view's shape (1, N * C, rest)."""
    n, c = input.shape[:2]
    rest = math.prod(input.shape[2:])
    return (n, groups, c // groups, rest), (1, n * c, rest)


@defop("native_group_norm", n_in=3, jvp="transpose", batch=_channel_affine_batched)
def _group_norm(xp, input, weight, bias, groups, eps, saved):
    mean, _, rstd, xc = _moments(xp, xp.reshape(input, _grouped(input, groups)), eps)
    saved["mean"], saved["rstd"], saved["xc"] = mean, rstd, xc
    by_group, _ = _gn_views(input, groups)
    if weight is None:
        out = xc * rstd
    else:
        k = xp.reshape(rstd, by_group[:2] + (1, 1)) * xp.reshape(weight, by_group[1:3] + (1,))
        out = xp.reshape(xc, by_group) * k
    out = xp.reshape(out, input.shape)
    if bias is not None:
        out += _channel(xp, bias, input.ndim)
    return out


def _gn_sums(xp, g, input, groups, saved):
    """Per (sample, channel), (N, C): the sums of g and of g * xc, from one read of each."""
    _, by_channel = _gn_views(input, groups)
    g3, xc3 = xp.reshape(g, by_channel), xp.reshape(saved["xc"], by_channel)
    shape = tuple(input.shape[:2])
    return xp.reshape(_sums(xp, g3), shape), xp.reshape(_dots(xp, g3, xc3), shape)


def _gn_input_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    if _array_api.is_tensor_namespace(xp):  # recorded: the formulas, differentiable again
        shape = _grouped(input, groups)
        x3 = xp.reshape(input, shape)
        xhat, _ = _xhat(xp, x3, eps, saved)
        rstd = _stats(xp, x3, eps, saved)[1]
        gx = g if weight is None else g * _channel(xp, weight, input.ndim)
        return xp.reshape(_normalized_grad(xp, xp.reshape(gx, shape), xhat, rstd)[0],
                          input.shape)
    sums = _gn_sums(xp, g, input, groups, saved)
    _between_rules.leave(xp, saved, (g,), sums)  # the weight and bias gradients
    by_group, _ = _gn_views(input, groups)
    n, grp, cg, rest = by_group
    rstd = xp.reshape(saved["rstd"], (n, grp, 1))
    s, d = xp.reshape(sums[0], (n, grp, cg)), xp.reshape(sums[1], (n, grp, cg))
    gain = rstd
    if weight is not None:  # the sums of g * w and g * w * xc over each group
        w = xp.reshape(weight, (1, grp, cg))
        s, d, gain = s * w, d * w, rstd * w
    m = cg * rest  # elements per group
    s = xp.sum(s, axis=2, keepdims=True)
    d = xp.sum(d, axis=2, keepdims=True)
    dx = xp.reshape(g, by_group) * gain[..., None]
    dx = xp.reshape(dx, (n, grp, m))
    t = xp.reshape(saved["xc"], (n, grp, m)) * (rstd * rstd * rstd * d / m)
    dx -= t
    dx -= rstd * s / m
    return xp.reshape(dx, input.shape)


def _gn_weight_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    if not _array_api.is_tensor_namespace(xp):
        sums = (_between_rules.take(xp, saved, (g,), last=False)
                or _gn_sums(xp, g, input, groups, saved))
        by_group, _ = _gn_views(input, groups)
        rstd = xp.reshape(saved["rstd"], by_group[:2] + (1,))
        return xp.reshape(xp.sum(xp.reshape(sums[1], by_group[:3]) * rstd, axis=0), (-1,))
    xhat, _ = _xhat(xp, xp.reshape(input, _grouped(input, groups)), eps, saved)
    shape = _per_channel(input)  # the sums over N and the rest, one read (``_dots``)
    return xp.reshape(_dots(xp, xp.reshape(g, shape), xp.reshape(xhat, shape)), (shape[1],))


def _gn_bias_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    sums = _between_rules.take(xp, saved, (g,), last=True)
    return _channel_sum(xp, g) if sums is None else xp.sum(sums[0], axis=0)


_group_norm.defvjp(_gn_input_rule, _gn_weight_rule, _gn_bias_rule)

# --------------------------------------------------------------------------- batch norm


def _per_channel(input):
    """Batch norm's view of ``input``: (N, C, the rest)."""
    return input.shape[0], input.shape[1], math.prod(input.shape[2:])


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
    x3 = xp.reshape(input, _per_channel(input))
    if training:
        mean, var, rstd, out = _moments(xp, x3, eps)
        if running_mean is not None:
            n = x3.shape[0] * x3.shape[2]
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean.reshape(-1)
            running_var[...] = ((1 - momentum) * running_var
                                + momentum * n / (n - 1) * var.reshape(-1))
    else:
        mean = xp.reshape(running_mean.astype(input.dtype), (1, -1, 1))
        rstd = 1 / xp.sqrt(xp.reshape(running_var.astype(input.dtype), (1, -1, 1)) + eps)
        out = x3 - mean
    saved["mean"], saved["rstd"] = mean, rstd
    out *= rstd  # in place, as layer norm's
    if weight is not None:
        saved["xhat"] = out
        out = out * xp.reshape(weight, (1, -1, 1))
    if bias is not None:
        out += xp.reshape(bias, (1, -1, 1))
    return xp.reshape(out, input.shape)


def _bn_stats(xp, x3, training, eps, saved):
    if not training:  # the running statistics: constants
        return saved["mean"], saved["rstd"]
    return _stats(xp, x3, eps, saved)


def _bn_xhat(xp, x3, training, eps, saved):
    if training:
        return _xhat(xp, x3, eps, saved)
    xhat = saved.get("xhat")  # (in eval mode, of the constant running statistics)
    if xhat is not None and not _array_api.is_tensor_namespace(xp):
        return xhat, False
    mean, rstd = saved["mean"], saved["rstd"]
    return (x3 - mean) * rstd, not _array_api.is_tensor_namespace(xp)


def _bn_input_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                   momentum, eps, saved):
    shape = _per_channel(input)
    x3 = xp.reshape(input, shape)
    rstd = _bn_stats(xp, x3, training, eps, saved)[1]
    gain = None if weight is None else xp.reshape(weight, (1, -1, 1))
    if not training:  # the running statistics are constants
        k = rstd if gain is None else gain * rstd
        return g * xp.reshape(k, (1, -1) + (1,) * (g.ndim - 2))
    xhat, own = _xhat(xp, x3, eps, saved)
    dx, s, d = _normalized_grad(xp, xp.reshape(g, shape), xhat, rstd, gain, own_xhat=own)
    if not _array_api.is_tensor_namespace(xp):
        _between_rules.leave(xp, saved, (g,), (s, d))  # the bias and weight gradients
    return xp.reshape(dx, input.shape)


def _bn_weight_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                    momentum, eps, saved):
    sums = _between_rules.take(xp, saved, (g,), last=False)
    if sums is not None:
        return sums[1].reshape(-1)
    shape = _per_channel(input)
    xhat, _ = _bn_xhat(xp, xp.reshape(input, shape), training, eps, saved)
    return xp.reshape(_dots(xp, xp.reshape(g, shape), xhat), (-1,))


def _bn_bias_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                  momentum, eps, saved):
    sums = _between_rules.take(xp, saved, (g,), last=True)
    return _channel_sum(xp, g) if sums is None else sums[0].reshape(-1)


_batch_norm.defvjp(_bn_input_rule, _bn_weight_rule, _bn_bias_rule)
