"""Losses of ``torch.nn.functional``: the reduction arguments (``reduction`` and the deprecated
``size_average`` / ``reduce``), the regression losses (mse, l1, smooth L1, soft margin,
huber), the classification losses (nll, cross entropy, binary cross entropy, kl_div,
multi-label soft margin, multi margin) and the Poisson and Gaussian negative
log-likelihoods. PyTorch's argument checks and messages here; fused kernels in
``ember/ops/nn/loss.py``, composites of ordinary ops where PyTorch composes them (their
``grad_fn`` chains are then PyTorch's).
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from ... import _creation, _dtypes, _recording
from ...autograd import grad_mode as _grad_mode
from ...ops import batching
from ...ops import pointwise as _pointwise
from ...ops import shape as _shape
from ...ops import unary as _unary
from ...ops.autocast import autocast_op
from ...ops.nn import loss as _nn
from ...ops.pointwise import xlogy
from ...ops.registry import saves_also
from ._common import _floating_only, per_sample_with
from .activation import log_softmax, logsigmoid

if TYPE_CHECKING:
    from ..._tensor import Tensor


def _legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction the deprecated ``size_average`` / ``reduce`` flags stand for."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _get_enum(reduction):
    """``reduction`` checked, as PyTorch's ``_Reduction.get_enum`` (but kept a string)."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _get_enum(reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# --------------------------------------------------------------------------- regression losses


def _check_same_size(input, target):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      stacklevel=4)  # the caller of the loss function


def _check_weight_size(weight, input):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted(loss, weight, reduction, mean_by_weight):
    """PyTorch's Python-level weighting of an elementwise loss (mse, l1, huber)."""
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _pointwise_loss(input, target, size_average, reduce, reduction):
    """The size warning, the legacy flags and the broadcast every pointwise loss starts with."""
    _check_same_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _shape.broadcast_tensors(input, target) + (reduction,)


@autocast_op("mse_loss")
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error."""
    input_, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((input_ - target).pow(2), weight, reduction, True)
    reduction = _get_enum(reduction)
    _floating_only("mse_cpu", input_, target)
    return _nn._mse_loss(input_, target, reduction)


def _l1(input, target, reduction):
    """ATen's l1_loss: a composite of sub, abs and the reduction."""
    return _reduce((input - target).abs(), _get_enum(reduction))


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error."""
    input_, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((input_ - target).abs(), weight, reduction, True)
    return _l1(input_, target, reduction)


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Squared error below ``beta``, absolute error (shifted) above."""
    input, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if beta == 0.0:
        return _l1(input, target, reduction)
    reduction = _get_enum(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _floating_only("smooth_l1_cpu", input, target)
    return _nn._smooth_l1_loss(input, target, reduction, beta)


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-target * input))``, targets of 1 or -1."""
    if target.requires_grad and _grad_mode._state.grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    t = target._data if target.dtype == input.dtype else target.to(input.dtype)._data
    return saves_also(_nn._soft_margin_loss(input, t, _reduction(size_average, reduce,
                                                                 reduction)), target)


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error below ``delta``, ``delta``-scaled absolute error above."""
    input_, target, _ = _pointwise_loss(input, target, None, None, reduction)
    if weight is None:
        return _huber(input_, target, _get_enum(reduction), delta)
    _check_weight_size(weight, input)
    return _weighted(_huber(input_, target, "none", delta), weight, reduction, False)


def _huber(input, target, reduction, delta):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _floating_only("huber_cpu", input, target)
    return _nn._huber_loss(input, target, reduction, delta)


# --------------------------------------------------------------------------- classification


def _class_weight_raw(weight, input):
    """A class weight as the ops take it: a raw array (PyTorch refuses other dtypes)."""
    if weight is None:
        return None
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._word} but found "
                           f"{weight.dtype._word}")
    return weight._data.reshape(-1)  # nll_loss2d takes any weight of C elements


def _nll_loss_2d(input, target, weight, reduction, ignore_index):
    """ATen's nll_loss (1-d or 2-d input) and nll_loss2d (4-d input), with their checks in
    PyTorch's order."""
    four_d = input.ndim == 4
    _nn._not_differentiable(weight, "weight", "nll_loss2d_forward" if four_d else
                            "nll_loss_forward")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if four_d and target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if not four_d and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype not in (_dtypes.int64, _dtypes.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._word}")
    if four_d:
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if (input.shape[0],) + input.shape[2:] != target.shape:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    else:
        if input.ndim == 1 and target.ndim == 1:
            if target.shape[0] != 1:
                raise ValueError("For 1D input, 1D target must have size 1, but got target "
                                 f"size: {target.shape[0]}")
            target = target.reshape(())
        if weight is not None and (weight.ndim != 1 or weight.numel() != c):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    _floating_only("nll_loss2d_forward_out_frame" if four_d else "nll_loss_out_frame", input)
    raw_weight = _class_weight_raw(weight, input)
    if four_d and target.dtype != _dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._word}")
    t = target._data.astype(np.int64, copy=False)  # (the ops never write into it)
    if _recording.state.recorder is not None:
        # compiled mode: the check again in each replay, and ignore_index kept whatever the
        # targets (the shorter path is the same values: no choice on them in a replay)
        _recording.expect(_check_nll_targets, t, c, ignore_index)
    elif not _nll_targets(t, c, ignore_index):
        ignore_index = None  # no target is ignored (the ops' shorter path)
    op = _nn._nll_loss2d if four_d else _nn._nll_loss
    return saves_also(op(input, t, raw_weight, reduction, ignore_index), target, weight)


def _nll_targets(t, c, ignore_index):
    """PyTorch's error for a target outside ``[0, c)`` that is not ``ignore_index``; whether
    any target is ``ignore_index``."""
    lo, hi = (int(t.min()), int(t.max())) if t.size else (0, -1)
    # Then look closer: ignore_index may be out. (Not when the only negative target can be
    # ignore_index -1, makemore's padding: 5 passes fewer.)
    if hi >= c or lo < 0 and (lo != ignore_index or ignore_index < -1):
        bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
        if bad.size:
            raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    return not t.size or lo <= ignore_index <= hi


def _check_nll_targets(t, c, ignore_index):
    _nll_targets(t, c, ignore_index)  # (the error only: its answer varies from call to call)


def _nll_loss_batched(fn, input, target, weight, reduction, ignore_index):
    """nll_loss under vmap: the vmap batch folded into the loss's own (N), losses per element,
    then each sample's reduction (the mean weighted by the targets' class weights)."""
    if batching.is_batched(weight):
        return batching.loop(fn, (input, target, weight, reduction, ignore_index))
    levels = tuple(sorted(set(batching.levels_of(input)) | set(batching.levels_of(target))))
    k = 1 if input.ndim >= 2 else 0  # the sample's own batch dim, folded in too
    x = batching.physical(input, levels, expand=True)
    t = batching.physical(target, levels, expand=True)
    batch = tuple(x.shape[:len(levels)])
    losses = fn(x.reshape((-1,) + tuple(input.shape[k:])),
                t.reshape((-1,) + tuple(target.shape[k:])), weight, "none", ignore_index)
    out = losses.reshape(batch + tuple(target.shape))
    dims = tuple(range(len(levels), out.ndim))  # a sample's elements (none for a 0-d target)
    if reduction == "sum" and dims:
        out = out.sum(dims)
    elif reduction == "mean" and weight is None and not (t._data == ignore_index).any():
        out = out.mean(dims) if dims else out  # every target counts once
    elif reduction == "mean":  # NaN where every target is ignored, with a zero gradient
        kept = (t != ignore_index).to(x.dtype)
        if weight is not None:
            kept = kept * weight[t.clamp(0, weight.shape[0] - 1)]
        total, count = (out.sum(dims), kept.sum(dims)) if dims else (out, kept)
        some = count != 0
        out = (total / count.masked_fill(~some, 1)).masked_fill(~some, math.nan)
    return batching.wrap(out, levels)


@per_sample_with(_nll_loss_batched)
def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """ATen's nll_loss_nd: other inputs of 3 or more dims go through the 4-d op as (N, C, 1, -1)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    batch = target.shape[0] if target.ndim else 0
    if input.ndim != 1 and input.shape[0] != batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({batch}).")
    if input.ndim in (1, 2, 4):
        return _nll_loss_2d(input, target, weight, reduction, ignore_index)
    n, c = input.shape[:2]
    out_size = (n,) + input.shape[2:]
    if target.shape != out_size:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    empty = input.numel() == 0
    x = input.contiguous().view(n, c, 0, 0) if empty else input.contiguous().view(n, c, 1, -1)
    t = target.contiguous().view(n, 0, 0) if empty else target.contiguous().view(n, 1, -1)
    out = _nll_loss_2d(x, t, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == "none" else out


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class-index targets given log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _class_weight_view(weight, input, class_dim):
    """``weight`` shaped to broadcast along the class dim of ``input``."""
    shape = [1] * input.ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    """ATen's cross_entropy with class probabilities (a composite of ordinary ops)."""
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = _pointwise._mul_scalar(target, 1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * (_class_weight_view(weight, input, class_dim) if input.ndim > 1 else weight)
    if reduction == "mean":
        if input.numel() == 0:
            return -prod.sum().fill_(math.nan)
        return _pointwise._div_scalar(-prod.sum(), input.numel() // c)
    return -prod.sum() if reduction == "sum" else -prod.sum(class_dim)


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing):
    """ATen's cross_entropy with class indices and label smoothing: the nll loss mixed with
    the mean negative log-probability over the classes."""
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    c = logp.shape[class_dim]
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight_view(weight, logp, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth.masked_fill_(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:  # normalised by the targets' weights, as nll_loss is
            # (flattened before masked_select, which refuses 0-d tensors in ember)
            total = weight.gather(0, target.flatten().masked_select(~ignore_mask.flatten())).sum()
        else:
            total = (~ignore_mask).sum()
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (_pointwise._mul_scalar(nll, 1 - label_smoothing)
            + _pointwise._mul_scalar(smooth, label_smoothing / c))


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")


@autocast_op("cross_entropy_loss")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input))`` for class indices; soft-target cross entropy for class
    probabilities (a target of the input's shape)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {target.dtype._word}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index,
                                       label_smoothing)
    logp = log_softmax(input, 0 if input.ndim == 1 else 1)
    return _nll_loss_nd(logp, target, weight, reduction, ignore_index)


def _broadcast_weight(weight, target):
    """``weight`` expanded to its broadcast shape with the target (PyTorch's error text)."""
    shape = [1] * max(target.ndim, weight.ndim)
    for arg, size in enumerate((target.shape, weight.shape)):
        for i in range(-1, -1 - len(size), -1):
            if shape[i] == 1:
                shape[i] = size[i]
            elif size[i] not in (1, shape[i]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size[i]} at {i}! "
                    f"Mismatching argument at index {arg} had {size}; but expected shape should "
                    f"be broadcastable to {shape}")
    return weight.expand(*shape)


def _check_margin_targets(y, c):
    if y.size and (y.min() < 0 or y.max() >= c):
        raise RuntimeError("target out of range")


def _check_probabilities(x, y):
    """PyTorch's kernel checks input then target, element by element (NaN fails too)."""
    bad_x = ~((x >= 0) & (x <= 1))
    bad = bad_x | ~((y >= 0) & (y <= 1))
    if bad.any():
        which = "input" if bad_x.reshape(-1)[bad.reshape(-1).argmax()] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy of probabilities (log clamped at -100 like PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = _broadcast_weight(weight, target)
    _nn._not_differentiable(weight, "weight", "binary_cross_entropy")
    if batching.is_batched(weight):  # read as a raw array below: one sample at a time
        return batching.loop(binary_cross_entropy, (input, target, weight),
                             dict(reduction=reduction))
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype._word} but expected "
                           f"{input.dtype._word}")
    _floating_only("binary_cross_entropy", input)
    x = input._data
    _recording.expect(_check_probabilities, x, target._data)
    if weight is not None and weight.shape != input.shape:  # PyTorch's in-place loss *= weight
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(weight.shape)}")
    raw_weight = None if weight is None else weight._data.astype(x.dtype)
    return _nn._binary_cross_entropy(input, target, raw_weight, reduction)


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence; ``input`` holds log-probabilities."""
    if size_average is not None or reduce is not None:
        enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        enum = _get_enum("sum" if reduction == "batchmean" else reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    loss = _reduce(loss, enum)
    if reduction == "batchmean" and input.ndim != 0:
        loss = loss / input.shape[0]
    return loss


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
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
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
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


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
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
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss: per sample, ``sum_{i != y} max(0, margin - x[y] + x[i]) ** p``
    (times ``weight[y]``) over the ``C`` classes, divided by ``C``; ``p`` is 1 or 2."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    c = input.shape[-1] if input.dim() else 1
    n = input.shape[0] if input.dim() == 2 else 1
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._word}")
    if input.dim() == 2 and (target.dim() != 1 or target.shape[0] != n):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    y = target._data.astype(np.int64).reshape(-1)
    _recording.expect(_check_margin_targets, y, c)
    dtype = input._data.dtype
    onehot = (np.arange(c) == y[:, None]).astype(dtype)
    scale = np.full(n, 1.0 / c, dtype) if weight is None else \
        (weight._data.astype(dtype)[y] / c).astype(dtype)
    shape = tuple(target.shape) if input.dim() == 2 else ()
    out = _nn._multi_margin_loss(input, onehot, scale, p, float(margin), reduction, shape)
    return saves_also(out, target)
