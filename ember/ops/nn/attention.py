"""Attention as one op where PyTorch's CPU runs its fused kernel,
``_scaled_dot_product_flash_attention_for_cpu`` (node
``ScaledDotProductFlashAttentionForCpuBackward0``). ``ember/nn/functional/attention.py``
chooses it where PyTorch would (4-d inputs of one head dim, no mask, no dropout: its
``_flash_applies``) and runs the math backend's composite elsewhere.

Why one op: the composite is about fifteen nodes forward and as many backward (scalings of
q and k, a mask built per call and added, an all-masked-rows check, softmax, two batched
matmuls of copied operands, transposes), each a pass over the (B, H, L, S) scores or a copy.
Here the scores are made once by one matmul of the inputs as they lie (strided views of a
fused qkv projection go to BLAS uncopied), scaled, masked and softmaxed in place; the
output and the gradients are laid out like their inputs, as PyTorch's kernel lays them out, so
nanoGPT's ``y.transpose(1, 2).contiguous()`` and the backward's view of the heads copy
nothing. The backward shares ``dL/dscores`` between the query and key rules and takes each
row's ``sum(dP * P)`` as ``sum(dO * O)`` (the flash-attention identity: L x E, not L x S).

The softmax weights are kept from the forward (the composite keeps them too); under
``create_graph`` the rules recompute them from the query and key, in recorded ops, so that
their dependence on both is differentiated and second derivatives are exact (PyTorch's
kernel has none).
"""
from __future__ import annotations

import numpy as np

from ... import _xp
from .. import _between_rules, batching
from ..linalg._common import _mT, _recording
from ..reduction.rows import sum_last
from ..registry import defop

_BOOL = np.dtype(np.bool_)  # (a dtype object: the recorded namespace maps those)
_CAUSAL = {}  # (namespace, S, L, dtype) -> the causal bound, transposed (S, L)
_CAUSAL_KEPT = 8  # bounds kept: sampling with a growing context makes one per length


def _causal_bound_t(xp, s, n, dtype):
    """PyTorch's causal mask (top left: query i sees keys 0..i), transposed to the (S, L)
    layout of the scores below, as a bound for ``fmin``: +inf where key j <= query i, -inf
    elsewhere. ``fmin(scores, bound)`` sets every masked score to -inf whatever it was (nan,
    +inf: PyTorch's kernel never computes those) and leaves the others; a kept nan becomes
    +inf, which makes its row nan all the same. As fast as adding a mask; made once per
    shape, the last ``_CAUSAL_KEPT`` shapes kept."""
    key = (id(xp), s, n, np.dtype(dtype).str)  # (the namespaces live as long as ember)
    bound = _CAUSAL.get(key)
    if bound is None:
        bound = xp.where(xp.triu(xp.ones((s, n), dtype=_BOOL)), np.inf, -np.inf).astype(dtype)
        if xp is _xp.NUMPY:
            bound.flags.writeable = False
        if len(_CAUSAL) >= _CAUSAL_KEPT:  # (the oldest goes: dicts keep insertion order)
            _CAUSAL.pop(next(iter(_CAUSAL)), None)
        _CAUSAL[key] = bound
    return bound


def _attention_batched(op, args, levels):
    """Under ``vmap``: the vmap batch folded into the inputs' batch dim."""
    nb = len(levels)
    q, k, v = (batching.physical(t, levels, expand=True) for t in args[:3])
    out = op(*(t.reshape((-1,) + tuple(t.shape[nb + 1:])) for t in (q, k, v)), *args[3:])
    return batching.wrap(out.reshape(tuple(q.shape[:nb + 1]) + tuple(out.shape[1:])), levels)


# The scores are computed transposed, (B, H, S, L): key @ query^T. The softmax over keys is then
# over the second-to-last dim, whose maximum NumPy takes as an elementwise maximum of whole
# rows (vectorised: 3.3x faster than the row-at-a-time maximum over a last dim of 64 at
# nanoGPT's (12, 4, 64, 64)) and whose sum is a product with a vector of ones (BLAS); the
# products with the weights take them transposed, which BLAS does for free.


@defop("_scaled_dot_product_flash_attention_for_cpu", n_in=3, jvp="transpose",
       batch=_attention_batched, method=False)
def _flash_attention(xp, query, key, value, is_causal, scale, saved):
    """``softmax(query @ key^T * scale (+ causal mask)) @ value``, (B, H, L, E) inputs."""
    scores = xp.matmul(key, _mT(xp, query))  # a new array: the buffer of all that follows
    scores *= scale
    if is_causal:
        xp.fmin(scores, _causal_bound_t(xp, *scores.shape[-2:], scores.dtype), out=scores)
    top = xp.max(scores, axis=-2, keepdims=True)
    dead = None
    if not xp.isfinite(top).all():  # (B, H, 1, L): a cheap test for a rare case
        dead = top == -np.inf  # every score -inf: weights of zero, as PyTorch gives
        top = xp.where(dead, 0, top)
    scores -= top
    weights = xp.exp(scores, out=scores)
    total = _key_sum(xp, weights)
    weights /= total if dead is None else xp.where(dead, 1, total)
    saved["weights"] = weights
    out = xp.empty_like(query)  # the query's memory order (PyTorch's): see the module notes
    return xp.matmul(_mT(xp, weights), value, out=out)


def _key_sum(xp, w):
    """The sum over keys (dim -2) of transposed weights, kept: ``ones(S) @ w``."""
    ones = xp.ones((w.shape[-2],), dtype=w.dtype)
    return xp.reshape(xp.matmul(ones, w), w.shape[:-2] + (1, w.shape[-1]))


def _weights(xp, query, key, is_causal, scale, saved):
    """The softmax weights, transposed (B, H, S, L): the forward's, or recomputed in recorded
    ops (see the notes)."""
    if not _recording(xp):
        return saved["weights"]
    scores = xp.matmul(key, _mT(xp, query)) * scale
    if is_causal:
        keep = xp.triu(xp.ones(tuple(scores.shape[-2:]), dtype=_BOOL))
        scores = xp.where(keep, scores, float("-inf"))
    top = xp.max(scores, axis=-2, keepdims=True)
    e = xp.exp(scores - xp.where(top == float("-inf"), 0.0, top))
    total = xp.sum(e, axis=-2, keepdims=True)
    return e / xp.where(total == 0, 1.0, total)  # (0 only where every score is -inf)


def _scores_grad(xp, g, ans, query, key, value, is_causal, scale, saved, last):
    """``dL/d(key @ query^T)`` (transposed scores, as above): ``W * (value @ g^T -
    rowsum(g * out)^T) * scale``, computed by the first of the query and key rules to run and
    handed to the other (``ops/_between_rules.py``; ``last``: the key rule)."""
    memo = _between_rules.take(xp, saved, (g,), last)
    if memo is not None:
        return memo
    weights = _weights(xp, query, key, is_causal, scale, saved)
    grad = xp.matmul(value, _mT(xp, g))
    # rowsum(dL/dW * W) over keys is rowsum(g * out) over E: a (B, H, 1, L) row
    rows = xp.reshape(sum_last(xp, g * ans), tuple(ans.shape[:-2]) + (1, ans.shape[-2]))
    if _recording(xp):
        grad = weights * (grad - rows) * scale
    else:  # in the matmul's new buffer: two temporaries fewer
        grad -= rows
        grad *= weights
        grad *= scale
    if not last:
        _between_rules.leave(xp, saved, (g,), grad)
    return grad


def _product_into(xp, a, b, like):
    """``a @ b`` laid out like ``like`` (PyTorch's kernel gives each gradient its input's
    layout: a head-split view's gradient then folds back into its projection uncopied)."""
    if _recording(xp):
        return xp.matmul(a, b)
    return xp.matmul(a, b, out=xp.empty_like(like))


_flash_attention.defvjp(
    lambda xp, g, ans, query, key, value, is_causal, scale, saved: _product_into(
        xp, _mT(xp, _scores_grad(xp, g, ans, query, key, value, is_causal, scale, saved,
                                 False)), key, query),
    lambda xp, g, ans, query, key, value, is_causal, scale, saved: _product_into(
        xp, _scores_grad(xp, g, ans, query, key, value, is_causal, scale, saved, True), query,
        key),
    lambda xp, g, ans, query, key, value, is_causal, scale, saved: _product_into(
        xp, _weights(xp, query, key, is_causal, scale, saved), g, value))
