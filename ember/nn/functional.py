"""``ember.nn.functional``: stateless neural-network functions (activations, losses, layers)."""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from ..ops import conv as _conv
from ..ops import nn_ops as _nn
from ..ops import reduction as _red
from ..ops import shape as _shape
from ..ops import unary as _unary
from ..ops.nn_ops import binary_cross_entropy_with_logits

softmax = _red.softmax
log_softmax = _red.log_softmax

_REDUCTIONS = ("none", "mean", "sum")


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        if not reduce:
            return "none"
        return "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _apply(input, inplace, fn):
    """``fn(input)``, or written into ``input`` in place (history rebased like PyTorch)."""
    return input._inplace(fn) if inplace else fn(input)


# --------------------------------------------------------------------------- activations


def relu(input, inplace=False):
    """``max(input, 0)``."""
    return _apply(input, inplace, _nn._relu)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    return _apply(input, inplace, lambda x: _nn._leaky_relu(x, negative_slope))


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere."""
    return _apply(input, inplace, lambda x: _nn._elu(x, alpha))


def gelu(input, approximate="none"):
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _nn._gelu(input, approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)``."""
    return _apply(input, inplace, _nn._silu)


def mish(input, inplace=False):
    """``input * tanh(softplus(input))``."""
    return _apply(input, inplace, _nn._mish)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold``."""
    return _nn._softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(input, inplace, lambda x: _nn._hardtanh(x, min_val, max_val))


def sigmoid(input):
    """Logistic function."""
    return _unary.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _unary.tanh(input)


# --------------------------------------------------------------------------- linear, dropout


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    out = input.matmul(weight.t()) if weight.ndim == 2 else input.matmul(weight)
    if bias is not None:
        out = out + bias
    return out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p`` (ember's RNG) and scale the rest by ``1/(1-p)``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _apply(input, inplace, lambda x: x * 0)
    keep = _creation.rand(*input.shape, dtype=input.dtype) >= p
    return _apply(input, inplace, lambda x: x * keep / (1 - p))


# --------------------------------------------------------------------------- regression losses


def _check_same_size(input, target, name):
    if input.shape != target.shape:
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    _check_same_size(input, target, "mse_loss")
    reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target) ** 2
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error."""
    _check_same_size(input, target, "l1_loss")
    reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _where(cond, a, b):
    from ..ops.pointwise import where
    return where(cond, a, b)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error below ``beta``, absolute error (shifted) above."""
    _check_same_size(input, target, "smooth_l1_loss")
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = _where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error below ``delta``, ``delta``-scaled absolute error above."""
    _check_same_size(input, target, "huber_loss")
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = _where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- classification


def _class_dim_last(x):
    """(N, C, d...) -> (N*d..., C)."""
    if x.ndim <= 2:
        return x
    return x.movedim(1, -1).reshape(-1, x.shape[1])


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of class-index targets given log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim >= 2 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    out_shape = target.shape
    x = input.unsqueeze(0) if input.ndim == 1 else _class_dim_last(input)
    t = target.reshape(-1)
    c = x.shape[1]
    tv = t.detach().numpy()
    valid = tv != ignore_index
    bad = tv[valid]
    if bad.size and (bad.min() < 0 or bad.max() >= c):
        raise IndexError(f"Target {int(bad[(bad < 0) | (bad >= c)][0])} is out of bounds.")
    safe = _creation.tensor(np.where(valid, tv, 0).astype(np.int64))
    picked = x.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = np.where(valid, 1.0, 0.0)
    if weight is not None:
        w = w * weight.detach().numpy()[np.where(valid, tv, 0)]
    wt = _creation.tensor(w.astype(x.detach().numpy().dtype))
    loss = -picked * wt
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input))`` for class indices, or soft-target cross entropy."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    c = input.shape[class_dim]
    wshape = [1] * input.ndim
    wshape[class_dim] = c
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError("Expected target size " + str(list(input.shape)) + ", got "
                               + str(list(target.shape)))
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(class_dim)
        if reduction == "mean":
            n = loss.numel()
            return loss.sum() / n
        return _reduce(loss, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    lp = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -lp.sum(class_dim)
    valid = _creation.tensor((target.detach().numpy() != ignore_index).astype(
        logp.detach().numpy().dtype))
    smooth = smooth * valid
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            tv = np.where(target.detach().numpy() != ignore_index, target.detach().numpy(), 0)
            wsum = (weight.detach().numpy()[tv] * valid.numpy()).sum()
            smooth = smooth.sum() / float(wsum)
    return (1 - label_smoothing) * nll + (label_smoothing / c) * smooth


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities (log clamped at -100 like PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    lo = input.log().clamp(min=-100)
    l1 = (1 - input).log().clamp(min=-100)
    loss = -(target * lo + (1 - target) * l1)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence; ``input`` holds log-probabilities."""
    if reduction != "batchmean":
        reduction = _reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from ..ops.pointwise import xlogy
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- similarity, misc


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``."""
    n1 = (x1 * x1).sum(dim)
    n2 = (x2 * x2).sum(dim)
    denom = (n1 * n2).clamp(min=eps * eps).sqrt()
    return (x1 * x2).sum(dim) / denom


def one_hot(tensor, num_classes=-1):
    """Class indices -> int64 one-hot vectors in a new last dim."""
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    v = tensor.numpy().astype(np.int64)
    if num_classes == -1:
        num_classes = int(v.max()) + 1 if v.size else 0
    if v.size and v.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if v.size and v.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _creation.tensor((v[..., None] == np.arange(num_classes)).astype(np.int64))


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - PyTorch's names
    """Pad the last ``len(pad) // 2`` dims: constant, reflect or replicate."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and not (len(pad) in (2, 4, 6) and
                                   len(pad) // 2 + 1 <= input.ndim <= len(pad) // 2 + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = out.shape[dim]
        if mode == "constant":
            if lo < 0:
                out = out.narrow(dim, -lo, out.shape[dim] + lo)
                lo = 0
            if hi < 0:
                out = out.narrow(dim, 0, out.shape[dim] + hi)
                hi = 0
            parts = []
            fill = 0 if value is None else value
            for size in (lo, None, hi):
                if size is None:
                    parts.append(out)
                elif size:
                    shape = list(out.shape)
                    shape[dim] = size
                    parts.append(_creation.full(shape, fill, dtype=out.dtype))
            out = _shape.cat(parts, dim)
            continue
        idx = np.arange(-lo, n + hi)
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                    f"{list(input.shape)}")
            idx = np.abs(idx)
            idx = np.where(idx > n - 1, 2 * (n - 1) - idx, idx)
        elif mode == "replicate":
            idx = np.clip(idx, 0, n - 1)
        elif mode == "circular":
            idx = idx % n
        else:
            raise NotImplementedError(f"Unrecognised padding mode {mode}")
        out = out.index_select(dim, _creation.tensor(idx))
    return out


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``input``; ``padding_idx`` rows get no gradient."""
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        idx = input.numpy()
        keep = _creation.tensor((idx != padding_idx).astype(weight.detach().numpy().dtype))
        rows = weight.index_select(0, input.reshape(-1)).reshape(*input.shape, weight.shape[1])
        return rows * keep.unsqueeze(-1) + rows.detach() * (1 - keep.unsqueeze(-1))
    return weight.index_select(0, input.reshape(-1)).reshape(*input.shape, weight.shape[1])


# --------------------------------------------------------------------------- convolution


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _check_conv_dtypes(input, weight, bias):
    def word(t):
        return t.dtype._legacy[:-6]
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {word(input)} but found {word(weight)}")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({word(input).lower()}) and bias type "
                           f"({word(bias).lower()}) should be the same")


def _conv_nd(nd, input, weight, bias, stride, padding, dilation, groups):
    _check_conv_dtypes(input, weight, bias)
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    batched = input.ndim == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    kernel = weight.shape[2:]
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{input.shape[1]} channels instead")
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            tot = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = tuple((t // 2, t - t // 2) for t in tot)
        else:
            raise ValueError(f"Invalid padding string '{padding}'")
    else:
        pads = tuple((p, p) for p in _tuple(padding, nd))
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, False, None, groups)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation over (N, C, L) inputs."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(nd, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    _check_conv_dtypes(input, weight, bias)
    stride, padding = _tuple(stride, nd), _tuple(padding, nd)
    output_padding, dilation = _tuple(output_padding, nd), _tuple(dilation, nd)
    batched = input.ndim == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    kernel = weight.shape[2:]
    out_sp = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                   zip(input.shape[2:], stride, padding, dilation, kernel, output_padding))
    pads = tuple((p, p) for p in padding)
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, True, out_sp, groups)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-d convolution (the gradient of conv1d in its input)."""
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-d convolution (the gradient of conv2d in its input)."""
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


# --------------------------------------------------------------------------- pooling


def _pool_out(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _max_pool_nd(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None or stride == [] else _tuple(stride, nd)
    padding, dilation = _tuple(padding, nd), _tuple(dilation, nd)
    for k, p in zip(kernel, padding):
        if p > k // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={dilation[0]}")
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    sp = x.shape[2:]
    outs = [_pool_out(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
            zip(sp, kernel, stride, padding, dilation)]
    raw = x.detach().numpy()
    need = [(o - 1) * s + d * (k - 1) + 1 for o, s, d, k in zip(outs, stride, dilation, kernel)]
    pads = tuple((p, max(0, nn - n - p)) for p, nn, n in zip(padding, need, sp))
    padded = np.pad(raw, ((0, 0), (0, 0)) + pads, constant_values=-np.inf)
    flat_idx = np.full(padded.shape[2:], -1)
    inner = tuple(slice(p, p + n) for (p, _), n in zip(pads, sp))
    flat_idx[inner] = np.arange(math.prod(sp)).reshape(sp)
    win = _conv._sliding(np, padded, kernel, stride, dilation)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in outs)]
    wflat = win.reshape(win.shape[:2 + nd] + (-1,))
    arg = np.argmax(np.where(np.isnan(wflat), np.inf, wflat), axis=-1)
    iwin = _conv._sliding(np, flat_idx[None, None], kernel, stride, dilation)
    iwin = iwin[(slice(None), slice(None)) + tuple(slice(0, o) for o in outs)]
    iflat = iwin[0, 0].reshape(tuple(outs) + (-1,))
    indices = np.take_along_axis(np.broadcast_to(iflat, wflat.shape), arg[..., None],
                                 axis=-1)[..., 0]
    n, c = x.shape[:2]
    idx_t = _creation.tensor(indices.reshape(n, c, -1).astype(np.int64))
    out = x.reshape(n, c, -1).gather(2, idx_t).reshape(n, c, *outs)
    if not batched:
        out = out.squeeze(0)
        idx_t = idx_t.reshape(c, *outs)
    else:
        idx_t = idx_t.reshape(n, c, *outs)
    return (out, idx_t) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling; the gradient flows to each window's maximum."""
    return _max_pool_nd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling; the gradient flows to each window's maximum."""
    return _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)


def _avg_pool_nd(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None or stride == [] else _tuple(stride, nd)
    padding = _tuple(padding, nd)
    if ceil_mode:
        raise NotImplementedError("ember: avg_pool with ceil_mode=True")
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    xs = x.reshape(n * c, 1, *x.shape[2:])
    ones = _creation.ones((1, 1) + kernel, dtype=x.dtype)
    pads = tuple((p, p) for p in padding)
    total = _conv._convolution(xs, ones, None, stride, pads, (1,) * nd, False, None, 1)
    if divisor_override:
        out = total / divisor_override
    elif count_include_pad or not any(padding):
        out = total / math.prod(kernel)
    else:
        cnt_in = _creation.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
        cnt = _conv._convolution(cnt_in, ones, None, stride, pads, (1,) * nd, False, None, 1)
        out = total / cnt.detach()
    out = out.reshape(n, c, *out.shape[2:])
    return out if batched else out.squeeze(0)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling."""
    return _avg_pool_nd(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling."""
    return _avg_pool_nd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """2-d average pooling to a fixed output size (PyTorch's window boundaries)."""
    osz = _tuple(output_size, 2)
    h, w = input.shape[-2:]
    osz = tuple(s if o is None else o for o, s in zip(osz, (h, w)))
    rows = []
    for i in range(osz[0]):
        h0, h1 = (i * h) // osz[0], -(-((i + 1) * h) // osz[0])
        cols = []
        for j in range(osz[1]):
            w0, w1 = (j * w) // osz[1], -(-((j + 1) * w) // osz[1])
            cols.append(input[..., h0:h1, w0:w1].mean((-2, -1)))
        rows.append(_shape.stack(cols, -1))
    return _shape.stack(rows, -2)


# --------------------------------------------------------------------------- normalization


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    """Normalize over (N, d...) per channel; training updates the running stats in place."""
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)}")
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        if running_mean is not None:
            from ..autograd.grad_mode import no_grad
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(
                    var.detach() * (momentum * count / (count - 1)))
    else:
        mean, var = running_mean, running_var
    out = (input - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    """Normalize over the trailing ``normalized_shape`` dims."""
    normalized_shape = _tuple(normalized_shape, 1)
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}")
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, unbiased=False, keepdim=True)
    out = (input - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    """Normalize over channel groups and the spatial dims."""
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    out = ((x - mean) * (var + eps).rsqrt()).reshape(input.shape)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


# --------------------------------------------------------------------------- interpolate


def _source_index(out, inp, align_corners, scale):
    i = np.arange(out, dtype=np.float64)
    if align_corners:
        return i * ((inp - 1) / (out - 1)) if out > 1 else np.zeros(out)
    ratio = 1 / scale if scale else inp / out
    return np.maximum((i + 0.5) * ratio - 0.5, 0)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims: ``nearest`` (1-d/2-d) or ``bilinear`` (2-d)."""
    nd = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    sp = tuple(input.shape[2:])
    scales = None
    if size is None:
        scales = _tuple(scale_factor, nd)
        size = tuple(int(math.floor(s * f)) for s, f in zip(sp, scales))
        if recompute_scale_factor:
            scales = None
    size = _tuple(size, nd)
    out = input
    if mode == "nearest":
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
        for k in range(nd):
            ratio = 1 / scales[k] if scales else sp[k] / size[k]
            idx = np.minimum(np.floor(np.arange(size[k]) * ratio).astype(np.int64), sp[k] - 1)
            out = out.index_select(2 + k, _creation.tensor(idx))
        return out
    if mode in ("linear", "bilinear"):
        ac = bool(align_corners)
        for k in range(nd):
            src = _source_index(size[k], sp[k], ac, scales[k] if scales else None)
            i0 = np.minimum(np.floor(src).astype(np.int64), sp[k] - 1)
            i1 = np.minimum(i0 + 1, sp[k] - 1)
            lam = (src - i0).astype(input.numpy().dtype if not input.requires_grad else
                                    input.detach().numpy().dtype)
            wshape = [1] * input.ndim
            wshape[2 + k] = size[k]
            lam_t = _creation.tensor(lam.reshape(wshape))
            a = out.index_select(2 + k, _creation.tensor(i0))
            b = out.index_select(2 + k, _creation.tensor(i1))
            out = a * (1 - lam_t) + b * lam_t
        return out
    raise NotImplementedError(f"ember: interpolate mode {mode!r}")


__all__ = [
    "relu", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "hardtanh", "sigmoid",
    "tanh", "softmax", "log_softmax", "linear", "dropout", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "normalize", "one_hot",
    "pad", "embedding", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
    "layer_norm", "group_norm", "interpolate",
]
