"""Embedding kernels: ``embedding`` (a row gather whose derivative is
``embedding_dense_backward``, itself differentiable) and ``embedding_bag``.
``ember/nn/functional/sparse.py`` checks the arguments.
"""
from __future__ import annotations

import numpy as np

from ... import _array_api, _xp
from ..registry import defop
from ._common import _apply, _raw

# --------------------------------------------------------------------------- segment sums
# Summing the rows of a (L, D) array into a (num, D) table at L indices is the backward of
# every gather here. ``bincount`` over flat (index, column) keys does it in one call but in
# float64, through an (L*D) key array and a float64 copy of the rows: 5-8x PyTorch at 1M
# elements. On NumPy the indices are instead sorted (a radix sort on 16-bit keys) and each run
# of equal indices summed in the rows' own dtype, in index order like PyTorch:
# - a long run by one product ``ones(k) @ rows`` (BLAS: 2x ``sum(axis=0)``, 3x ``reduceat``);
# - the short runs together: their k-th rows added to the table in one fancy-indexed ``+=``
#   per k (within one k the indices are distinct, so ``+=`` is exact).
# 3-6x faster than ``bincount`` at 1M elements. ``bincount`` stays for small sizes (fewer
# calls) and for CuPy (one kernel there).
_LONG_RUN = 16  # a run longer than this is summed on its own
_SMALL = 1 << 15  # rows (and table rows) * columns up to which bincount's one call wins
_FEW_ROWS = 32  # tables up to this many rows take the one-hot product (below)...
# ...when its multiply-adds and the rows' size are within these: measured crossovers against
# the sorted sums, which win on longer or wider rows (memory-bound where the product is not)
_ONE_HOT_MACS = 3 << 20
_ONE_HOT_SIZE = 1 << 17
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _one_hot_sum(rows, index, num):
    """``_segment_sum`` into a table of a few rows (a character vocabulary) as one product of
    the (num, L) one-hot matrix of ``index`` with the rows: 2.4x faster than ``bincount`` at
    makemore's (512, 64) rows into 27, and 1.6x faster than the sorted sums at its MLP's
    (1536, 64) rows into 28 (both like PyTorch's time). The matrix is written by one scatter of
    ones into zeros (3x faster than comparing ``index`` with every row number; ``index`` is in
    range). None when a sum is not finite: the product spreads an inf to every table row as
    0 * inf = nan, the caller sums again."""
    n = index.shape[0]
    one_hot = np.zeros((num, n), rows.dtype)
    one_hot[index, np.arange(n)] = 1
    out = np.dot(one_hot, rows)
    return out if np.isfinite(out).all() else None


def _segment_sum(xp, rows, index, num, presorted=False):
    """``out[i] = sum of rows[k] where index[k] == i``, (num, D), in the rows' dtype."""
    n, d = rows.shape
    if num <= _FEW_ROWS and type(rows) is np.ndarray and rows.dtype in _FLOATS and \
            n * d <= _ONE_HOT_SIZE and n * d * num <= _ONE_HOT_MACS:
        out = _one_hot_sum(rows, index, num)
        if out is not None:
            return out
    if type(rows) is not np.ndarray or max(n, num) * d <= _SMALL:  # (and float64 tables)
        flat = (index.reshape(-1, 1) * d + xp.arange(d)).reshape(-1)
        out = xp.bincount(flat, weights=rows.reshape(-1), minlength=num * d)
        return out.astype(rows.dtype).reshape(num, d)
    out = np.zeros((num, d), rows.dtype)
    if n == 0:
        return out
    if presorted:
        order = np.arange(n)
    else:
        keys = index.astype(np.uint16) if num <= 1 << 16 else index  # radix sort: 5-10x
        order = np.argsort(keys, kind="stable")
        index = index[order]
    starts = np.flatnonzero(np.concatenate([[True], index[1:] != index[:-1]]))
    counts = np.diff(np.append(starts, n))
    long_runs = counts > _LONG_RUN
    ones = np.ones(int(counts.max()), rows.dtype)
    for a, k in zip(starts[long_runs].tolist(), counts[long_runs].tolist()):
        np.dot(ones[:k], rows[order[a:a + k]], out=out[index[a]])
    starts, counts = starts[~long_runs], counts[~long_runs]
    if starts.size:
        targets = index[starts]
        out[targets] = rows[order[starts]]
        for k in range(1, int(counts.max())):
            more = counts > k
            out[targets[more]] += rows[order[starts[more] + k]]
    return out


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


# Forward mode: the rows of the weight's tangent (``jvp="linear"``), the padding row's and
# repeated rows' in full, as PyTorch's: ``padding_idx`` and ``scale_grad_by_freq`` shape the
# gradient the weight is trained with, not the derivative of the rows picked.
@defop("embedding", n_in=1, jvp="linear", batch="loop")
def _embedding(xp, weight, indices, num_weights, padding_idx, scale_grad_by_freq):
    return xp.take(weight, indices, axis=0)


@defop("embedding_dense_backward", n_in=1, jvp="transpose", batch="loop")
def _embedding_backward(xp, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The rows of ``grad`` summed into a (num_weights, dim) table at ``indices``."""
    d = grad.shape[-1]
    rows = grad.reshape(-1, d)
    if padding_idx >= 0 or scale_grad_by_freq:
        scale = _row_scale(xp, indices, num_weights, padding_idx, scale_grad_by_freq,
                           grad.dtype)
        rows = rows * scale.reshape(-1, 1)
    return _segment_sum(xp, rows, indices.reshape(-1), num_weights)


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


# Few bags over a small table (bags x table rows at most _DENSE_BAGS times the indices: 4 bags
# of a 10-row table, 10 indices) are one dense product each way instead: the forward
# ``S @ weight`` with S (bags, table rows) the indices' coefficients summed, the weight's
# gradient ``S^T @ g`` and per_sample_weights' from ``g @ weight^T``: the table and g are read
# once, and no (indices, dim) gather is built (the gathered rows were made 4 times over, in
# the forward and both rules: 3.4x PyTorch at 10 indices of 100K columns). The rules keep the
# gathers when recorded (``create_graph``): the dense path is for raw arrays.
_DENSE_BAGS = 32


def _dense(xp, n, nbags, num, coef):
    return coef.shape[-1] == 1 and nbags * num <= _DENSE_BAGS * n and \
        not _array_api.is_tensor_namespace(xp)


def _bag_matrix(xp, psw, indices, bag_of, nbags, num, coef, divisor):
    """S (bags, table rows): ``S[b, v]`` the sum of ``coef * psw / divisor`` over bag ``b``'s
    indices ``v`` (in float64 by ``bincount``, rounded once)."""
    vals = coef.reshape(-1) * psw.reshape(-1) / divisor.reshape(-1)[bag_of]
    flat = bag_of * num + indices
    s = xp.bincount(flat, weights=vals, minlength=nbags * num)
    return s.astype(coef.dtype, copy=False).reshape(nbags, num)


@defop("embedding_bag", n_in=2, jvp="multilinear", batch="loop")
def _embedding_bag(xp, weight, per_sample_weights, indices, bag_of, nbags, coef, divisor,
                   scale_grad_by_freq):
    if _dense(xp, indices.size, nbags, weight.shape[0], coef):
        s = _bag_matrix(xp, per_sample_weights, indices, bag_of, nbags, weight.shape[0], coef,
                        divisor)
        return xp.matmul(s, weight).astype(weight.dtype, copy=False)
    rows = weight[indices] * (coef * per_sample_weights.reshape(-1, 1))
    # bag_of never decreases (bags are runs of the indices): no sort needed
    out = _segment_sum(xp, rows, bag_of, nbags, presorted=True)  # a new array: divided in
    out /= divisor  # place, and no copy by astype (two passes over the output fewer)
    return out.astype(weight.dtype, copy=False)


def _weight_rule(xp, g, ans, weight, psw, indices, bag_of, nbags, coef, divisor,
                 scale_grad_by_freq):
    if _dense(xp, indices.size, nbags, weight.shape[0], coef):
        s = _bag_matrix(xp, psw, indices, bag_of, nbags, weight.shape[0], coef, divisor)
        if scale_grad_by_freq:  # each table row's sum over its count of indices
            s = s / xp.maximum(xp.bincount(indices, minlength=weight.shape[0]), 1).astype(s.dtype)
        return xp.matmul(s.T, g)
    rows = (g / divisor)[bag_of] * (coef * psw.reshape(-1, 1))  # (a column, mostly: a pass)
    return _apply(_embedding_backward, xp, rows, indices, weight.shape[0], -1,
                  scale_grad_by_freq)


def _psw_rule(xp, g, ans, weight, psw, indices, bag_of, nbags, coef, divisor,
              scale_grad_by_freq):
    if _dense(xp, indices.size, nbags, weight.shape[0], coef):
        dots = xp.matmul(g, weight.T)  # (bags, table rows): every bag's g against every row
        return dots[bag_of, indices] * (coef.reshape(-1) / divisor.reshape(-1)[bag_of])
    picked = (g / divisor)[bag_of]
    if coef.shape[-1] == 1:  # sum and mean: one coefficient per index, applied after the dot
        # (one pass over the two gathers instead of three: 2.5x faster at 1M elements)
        return xp.einsum("kd,kd->k", picked, weight[indices]) * coef.reshape(-1)
    return xp.sum(picked * weight[indices] * coef, axis=-1)


_embedding_bag.defvjp(_weight_rule, _psw_rule)
