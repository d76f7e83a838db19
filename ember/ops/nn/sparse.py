"""Embedding kernels: ``embedding`` (a row gather whose derivative is
``embedding_dense_backward``, itself differentiable) and ``embedding_bag``.
``ember/nn/functional/sparse.py`` checks the arguments.
"""
from __future__ import annotations

from ... import _xp
from ..registry import defop
from ._common import _apply, _raw

# --------------------------------------------------------------------------- embedding


def _row_scale(xp, indices, num_weights, padding_idx, scale_grad_by_freq, dtype):
    """Per index: 0 for ``padding_idx``, else 1 or 1/frequency (``scale_grad_by_freq``)."""
    scale = xp.ones(indices.shape, dtype=dtype)
    if scale_grad_by_freq:
        counts = xp.bincount(indices.reshape(-1), minlength=num_weights)
        scale = scale / counts[indices].astype(dtype)
    if padding_idx >= 0:
        scale = xp.where(indices == padding_idx, 0, scale).astype(dtype)
    return scale


@defop("embedding", n_in=1, jvp="transpose", batch="loop")
def _embedding(xp, weight, indices, num_weights, padding_idx, scale_grad_by_freq):
    return xp.take(weight, indices, axis=0)


@defop("embedding_dense_backward", n_in=1, jvp="transpose", batch="loop")
def _embedding_backward(xp, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The rows of ``grad`` summed into a (num_weights, dim) table at ``indices``."""
    d = grad.shape[-1]
    scale = _row_scale(xp, indices, num_weights, padding_idx, scale_grad_by_freq, grad.dtype)
    rows = grad.reshape(-1, d) * scale.reshape(-1, 1)
    flat = (indices.reshape(-1, 1) * d + xp.arange(d)).reshape(-1)
    out = xp.bincount(flat, weights=rows.reshape(-1), minlength=num_weights * d)
    return out.astype(grad.dtype).reshape(num_weights, d)


_embedding.defvjp(lambda xp, g, ans, weight, indices, num_weights, padding_idx,
                  scale_grad_by_freq: _apply(_embedding_backward, xp, g, indices, num_weights,
                                             padding_idx, scale_grad_by_freq))


def _embedding_backward_rule(xp, g, ans, grad, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    rows = _apply(_embedding, xp, g, indices, num_weights, padding_idx, scale_grad_by_freq)
    if padding_idx < 0 and not scale_grad_by_freq:
        return rows
    scale = _row_scale(_xp.namespace_of(indices), indices, num_weights, padding_idx,
                       scale_grad_by_freq, _raw(g).dtype)
    return rows * scale[..., None]


_embedding_backward.defvjp(_embedding_backward_rule)


# --------------------------------------------------------------------------- embedding bag
# ``embedding_bag``: sums, means or maxima of bags of embedding rows, without building the
# (bags x indices x dim) gather PyTorch's fused kernel also avoids.
#
# One formulation serves the three modes: ``out[b] = sum_k coef[k] * psw[k] * weight[indices[k]]
# / divisor[b]`` over the indices ``k`` of bag ``b``, where ``coef`` is 0 for ``padding_idx``
# entries and otherwise 1 (``sum``, ``mean``) or, for ``max``, a per-column 0/1 mask picking
# each bag's first maximal entry (found on raw arrays before the op runs), ``divisor`` is the
# bag's count of non-padding entries for ``mean`` (1 for an empty bag), else 1, and ``psw`` the
# per-sample weights (ones when not given). The op is linear in ``weight`` and in ``psw``; the
# weight's derivative scatters ``g[bag] * coef * psw / divisor`` back to the rows through
# ``embedding_dense_backward``, itself differentiable (second derivatives), which also applies
# ``scale_grad_by_freq``. As in PyTorch the node is ``EmbeddingBagBackward0`` with two inputs,
# ``weight`` and ``per_sample_weights``.


def _bag_sum(xp, rows, bag_of, nbags):
    """Sum the rows (L, D) into their bags (nbags, D), in float64 like ``bincount``."""
    d = rows.shape[-1]
    flat = (bag_of.reshape(-1, 1) * d + xp.arange(d)).reshape(-1)
    out = xp.bincount(flat, weights=rows.reshape(-1), minlength=nbags * d)
    return out.reshape(nbags, d)


@defop("embedding_bag", n_in=2, jvp="multilinear", batch="loop")
def _embedding_bag(xp, weight, per_sample_weights, indices, bag_of, nbags, coef, divisor,
                   scale_grad_by_freq):
    rows = weight[indices] * (coef * per_sample_weights.reshape(-1, 1))
    return (_bag_sum(xp, rows, bag_of, nbags) / divisor).astype(weight.dtype)


def _weight_rule(xp, g, ans, weight, psw, indices, bag_of, nbags, coef, divisor,
                 scale_grad_by_freq):
    rows = (g / divisor)[bag_of] * coef * psw.reshape(-1, 1)
    return _apply(_embedding_backward, xp, rows, indices, weight.shape[0], -1,
                  scale_grad_by_freq)


def _psw_rule(xp, g, ans, weight, psw, indices, bag_of, nbags, coef, divisor,
              scale_grad_by_freq):
    return xp.sum((g / divisor)[bag_of] * weight[indices] * coef, axis=-1)


_embedding_bag.defvjp(_weight_rule, _psw_rule)
