"""``ctc_loss``: the Connectionist Temporal Classification loss (Graves et al., 2006).

The loss of a sample is ``-log`` of the total probability of all alignments of its target
(blanks interleaved, repeats merged) to its input frames, computed by the forward (alpha)
recursion over the extended label sequence ``blank, l1, blank, l2, ..., blank``. The recursion
is written with ember's ops, one step per frame over the whole batch, so its gradient is the
exact derivative of the loss (and differentiable again).

Impossible alignments carry a large finite negative log-probability (``_NEG``) rather than
``-inf``: a log-sum-exp over ``-inf`` alone has an undefined (nan) gradient, which would leak
into the samples that are feasible. A sample whose best path still carries it has probability
0: its loss is ``inf`` (or 0 with ``zero_infinity``, with a zero gradient).

PyTorch's own kernel returns, for the gradient with respect to ``log_probs``, the gradient
with respect to the logits of a ``log_softmax`` in front of it (the difference, ``exp(
log_probs)``, vanishes through that ``log_softmax``). ember's is the derivative of the loss
itself: both agree wherever ``log_probs`` come from ``log_softmax``, as CTC requires.

The recursion runs as one op, ``CtcLossBackward0`` as in PyTorch: the forward keeps every
frame's alpha, and the backward runs the adjoint of the recursion back over the frames
(~10 NumPy calls per frame on the whole batch, in place of ~15 recorded ops per frame and
their rules: 94x -> ~6x PyTorch's C++ loop on 864 frames of a batch of 2). Its values and
gradients are those of the recursion written with ember's ops (``_nll_composite``), which
still serves second derivatives and forward mode: the backward records that graph when it
must be differentiable itself.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _creation
from ..._tensor import Tensor
from ...ops.autocast import autocast_op
from ...ops.registry import defop
from ...ops.shape.joins import cat, stack
from ._common import composite_vjp
from .loss import _get_enum

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ctc_loss"]

_NEG = -1e30  # "log 0" that keeps gradients finite; float32 holds it (max 3.4e38)


def _as_lengths(value, name):
    if isinstance(value, Tensor):
        return value.detach().reshape(-1).cpu().numpy().astype(np.int64)
    return np.asarray(value, dtype=np.int64).reshape(-1)


def _padded_targets(targets, target_lengths, batch):
    """The targets as an (N, S) int array, from the padded or the concatenated form."""
    t = targets.detach().cpu().numpy().astype(np.int64) if isinstance(targets, Tensor) else \
        np.asarray(targets, dtype=np.int64)
    if t.ndim == 2 or (t.ndim == 1 and batch == 0):
        return t.reshape(batch, -1)
    width = int(target_lengths.max(initial=0))
    out = np.zeros((batch, width), np.int64)
    start = 0
    for n, length in enumerate(target_lengths):
        out[n, :length] = t[start:start + length]
        start += length
    return out


def _check(log_probs, targets, input_lengths, target_lengths, blank, batched):
    if not log_probs.is_floating_point():
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{log_probs.dtype._word}'")
    n_frames, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.size != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.size != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    suffix = " (while checking arguments for ctc_loss_allocate_outputs)"
    for name, lengths, limit in (("input_lengths", input_lengths, n_frames),
                                 ("target_lengths", target_lengths, None)):
        if lengths.size and lengths.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{lengths.min()}{suffix}")
        if limit is not None and lengths.size and lengths.max() > limit:
            raise RuntimeError(f"Expected {name} to have value at most {limit}, but got value "
                               f"{lengths.max()}{suffix}")
    if targets.dim() == 2 and batched and target_lengths.size and \
            target_lengths.max() > targets.shape[1]:
        raise RuntimeError(f"Expected tensor to have size at least {target_lengths.max()} at "
                           f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                           f"'targets'{suffix}")


def _logsumexp(parts):
    """``log(sum(exp(parts)))`` over a list of same-shape tensors, shifted by their
    (constant) maximum."""
    top = parts[0].detach()
    for p in parts[1:]:
        top = top.maximum(p.detach())
    total = None
    for p in parts:
        e = (p - top).exp()
        total = e if total is None else total + e
    return total.log() + top


@autocast_op("ctc_loss")
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int],
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (T, N, C) or (T, C) against ``targets``, padded (N, S)
    or concatenated (sum of ``target_lengths``); ``reduction='mean'`` divides each loss by its
    target length, then averages over the batch."""
    reduction = _get_enum(reduction)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if not batched:
        targets = targets.unsqueeze(0) if isinstance(targets, Tensor) else targets
    in_len = _as_lengths(input_lengths, "input_lengths")
    tg_len = _as_lengths(target_lengths, "target_lengths")
    _check(lp, targets, in_len, tg_len, blank, batched)
    n_frames, batch, _ = lp.shape
    labels = _padded_targets(targets, tg_len, batch)
    width = 2 * labels.shape[1] + 1
    ext = np.full((batch, width), blank, np.int64)  # blank, l1, blank, l2, ..., blank
    ext[:, 1::2] = labels
    # the skip from s - 2 to s: onto a label that differs from the one two back
    skip = np.zeros((batch, width), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    if not batch:
        loss = lp.sum((0, 2)) * 0
    else:  # inf where impossible; with zero_infinity, 0 and a zero gradient (PyTorch's where)
        loss = _ctc(lp, ext, skip, in_len, tg_len, bool(zero_infinity))[0]
        if zero_infinity:
            loss = loss.where(~loss.isinf(), 0.0)
    if reduction == "mean":
        divisor = _creation.tensor(np.maximum(tg_len, 1), dtype=loss.dtype, device=lp.device)
        loss = (loss / divisor).mean()
    elif reduction == "sum":
        loss = loss.sum()
    return loss if batched or reduction != "none" else loss.squeeze(0)


# --------------------------------------------------------------------------- the recursion
# One frame of alpha: ``emit + (log(e0 + e1 + e2) + top)`` over the three ways into each
# extended position s (from s, s - 1, and s - 2 where ``skip``), ``e_i`` their exponentials
# shifted by their maximum ``top``; positions before the sequence and barred skips read
# ``_NEG``. The composite (``_nll_composite``) and the op's kernels compute the same values in
# the same order.


def _alpha_forward(xp, lp, ext, skip, in_len, tg_len):
    """Per-sample ``-log p(target | input)`` and every frame's alpha (T, N, W), each frame
    in a dozen NumPy calls on the whole batch."""
    n_frames, batch, _ = lp.shape
    ext, skip = xp.asarray(ext), xp.asarray(skip)
    width = ext.shape[1]
    emit = xp.take_along_axis(lp, xp.broadcast_to(ext, (n_frames,) + ext.shape), 2)
    # alpha behind two columns of _NEG: the positions before the sequence, read by the shifts
    padded = xp.full((n_frames, batch, width + 2), _NEG, lp.dtype)
    alpha = padded[:, :, 2:]
    alpha[0] = emit[0]
    alpha[0, :, 2:] += _NEG  # (the start: the first blank or the first label)
    exps = xp.empty((3, batch, width), lp.dtype)
    neg = xp.asarray(_NEG, lp.dtype)
    for t in range(1, n_frames):
        prev = padded[t - 1]
        stay, step = prev[:, 2:], prev[:, 1:-1]
        skipped = xp.where(skip, prev[:, :-2], neg)
        top = xp.maximum(stay, step)
        xp.maximum(top, skipped, out=top)
        xp.subtract(stay, top, out=exps[0])
        xp.subtract(step, top, out=exps[1])
        xp.subtract(skipped, top, out=exps[2])
        xp.exp(exps, out=exps)
        total = exps[0] + exps[1]
        total += exps[2]
        xp.log(total, out=total)
        total += top
        xp.add(emit[t], total, out=alpha[t])
    nll = xp.empty(batch, lp.dtype)
    for n in range(batch):
        length, last = int(in_len[n]), 2 * int(tg_len[n])
        if length == 0:  # an empty input: probability 1 of an empty target, else 0
            nll[n] = 0 if last == 0 else math.inf
            continue
        ends = alpha[length - 1, n, max(last - 1, 0):last + 1]
        top = ends.max()
        nll[n] = -(xp.log(xp.exp(ends - top).sum()) + top)
    nll[nll > -_NEG / 2] = math.inf  # no alignment: its best path carries _NEG
    return nll, alpha


def _weights(xp, alpha, skip):
    """Every frame's log-sum-exp weights (3, T - 1, N, W), from alpha (T, N, W): how much of
    alpha[t] came from alpha[t - 1] at s, s - 1 and s - 2 (zero where a skip is barred),
    over all frames at once."""
    n_frames, batch, width = alpha.shape
    padded = xp.full((n_frames - 1, batch, width + 2), _NEG, alpha.dtype)
    padded[:, :, 2:] = alpha[:-1]
    parts = xp.empty((3,) + padded[:, :, 2:].shape, alpha.dtype)
    parts[0] = padded[:, :, 2:]
    parts[1] = padded[:, :, 1:-1]
    parts[2] = xp.where(skip, padded[:, :, :-2], _NEG)
    parts -= parts.max(0)
    xp.exp(parts, out=parts)
    total = parts[0] + parts[1]
    total += parts[2]
    parts /= total
    parts[2] *= skip
    return parts


def _alpha_backward(xp, g, lp, alpha, ext, skip, in_len, tg_len):
    """The gradient of ``Σ_n g[n] nll[n]`` with respect to ``lp``: the adjoint of each
    frame's log-sum-exp (its softmax weights) run back over the frames, four NumPy calls a
    frame, then summed onto the classes each extended position reads. ``g`` is scaled
    already where a sample is impossible (``_impossible_scale``)."""
    n_frames, batch, classes = lp.shape
    ext, skip = xp.asarray(ext), xp.asarray(skip)
    width = ext.shape[1]
    # the adjoint of the last frame of each sample: -g times the ends' softmax weights
    adj = xp.zeros((n_frames, batch, width), lp.dtype)  # d loss / d alpha[t] = d / d emit[t]
    for n in range(batch):
        length, last = int(in_len[n]), 2 * int(tg_len[n])
        if length == 0:
            continue
        lo = max(last - 1, 0)
        ends = alpha[length - 1, n, lo:last + 1]
        w = xp.exp(ends - ends.max())
        adj[length - 1, n, lo:last + 1] = -g[n] * w / w.sum()
    if n_frames > 1:
        weights = _weights(xp, alpha, skip)
        into = xp.empty((3, batch, width), lp.dtype)
        for t in range(n_frames - 1, 0, -1):
            xp.multiply(adj[t], weights[:, t - 1], out=into)
            back = adj[t - 1]
            back += into[0]
            back[:, :-1] += into[1, :, 1:]
            back[:, :-2] += into[2, :, 2:]
    columns = (xp.arange(batch)[:, None] * classes + ext).reshape(-1)
    flat = (xp.arange(n_frames)[:, None] * (batch * classes) + columns).reshape(-1)
    total = xp.bincount(flat, weights=adj.reshape(-1), minlength=n_frames * batch * classes)
    return total.reshape(n_frames, batch, classes).astype(lp.dtype)


@defop("ctc_loss", n_in=1, nout=2, jvp="transpose", batch="loop", method=False)
def _ctc(xp, log_probs, ext, skip, in_len, tg_len, zero_infinity):
    return _alpha_forward(xp, log_probs, ext, skip, in_len, tg_len)


def _impossible_scale(xp, nll, zero_infinity):
    """Per sample, what its gradient is scaled by: 1, or where it has no alignment (its loss
    inf) 0 with ``zero_infinity``, else inf (a non-finite gradient, as PyTorch's)."""
    one = xp.ones_like(nll)
    return xp.where(xp.isinf(nll), one * (0.0 if zero_infinity else math.inf), one)


def _ctc_rule(xp, g, ans, log_probs, ext, skip, in_len, tg_len, zero_infinity):
    g = g[0] * _impossible_scale(xp, ans[0], zero_infinity)
    if isinstance(g, Tensor):  # a graph of the gradient: the recursion as ember's ops
        return composite_vjp(_nll_composite, log_probs, g, ext, skip, in_len, tg_len)
    return _alpha_backward(xp, g, log_probs, ans[1], ext, skip, in_len, tg_len)


_ctc.defvjp(_ctc_rule)
_ctc.saved_outputs = (1,)


def _nll_composite(lp: Tensor, ext: np.ndarray, skip: np.ndarray, in_len: np.ndarray,
                   tg_len: np.ndarray) -> Tensor:
    """Per-sample ``-log p`` by the recursion written with ember's ops (differentiable to
    any order): the values of ``_alpha_forward``."""
    n_frames, batch, _ = lp.shape
    dev = lp.device
    ext_t = _creation.tensor(ext, device=dev)
    neg = _creation.full((batch, 1), _NEG, dtype=lp.dtype, device=dev)
    skip_t = _creation.tensor(skip, device=dev)

    def emit(t):
        return lp[t].gather(1, ext_t)

    start = np.full(ext.shape, _NEG)
    start[:, :2] = 0.0
    alpha: Any = (emit(0) + _creation.tensor(start, dtype=lp.dtype, device=dev) if n_frames
                  else None)
    finals: list = [None] * batch
    by_end: dict[int, list[int]] = {}
    for n, length in enumerate(in_len):
        by_end.setdefault(int(length) - 1, []).append(n)
    for t in range(n_frames):
        if t:
            one_back = cat([neg, alpha[:, :-1]], 1)
            two_back = cat([neg, neg, alpha[:, :-2]], 1).where(skip_t, _NEG)
            alpha = emit(t) + _logsumexp([alpha, one_back, two_back])
        for n in by_end.get(t, ()):
            last = 2 * int(tg_len[n])
            ends = [alpha[n, last]] + ([alpha[n, last - 1]] if last else [])
            finals[n] = -_logsumexp(ends)
    for n in by_end.get(-1, ()):  # an empty input: probability 1 of an empty target
        zero = lp.sum() * 0
        finals[n] = zero if tg_len[n] == 0 else zero + float("inf")
    return stack(finals)
