"""``cdist``: the ``p``-norm distances between the rows of two (batches of) matrices, and its
two ops, ``cdist`` (every ``p``, the differences taken directly) and ``euclidean_dist`` (``p =
2`` by matrix products, as PyTorch's ``use_mm`` modes).

Why the kernels are shaped as they are:

- A distance is a reduction over the differences ``x1[i] - x2[j]``; building all of them at
  once is a ``(P, R, M)`` array (1 GiB for 671 x 447 rows of 895 floats), several times over
  for the temporaries. The kernels take it in blocks of rows of ``_BLOCK`` elements that stay
  in cache, each reduced as soon as it is made, in place: 5-20x faster at ~1M inputs, and the
  memory is one block.
- The backward is a weighted sum over ``j`` of a per-element term of the differences; each block
  of terms is contracted with its gradient rows by a matrix product.
- ``p = 2`` by products: ``|x|^2 + |y|^2 - 2 x.y`` is one matrix product, but it cancels where a
  distance is small against the norms; the inputs are first centred (distances do not move),
  and the rows that hold a pair still close enough to lose digits are computed directly,
  so the result keeps the direct form's accuracy (exact zeros at equal rows, where PyTorch's
  product form leaves the rounding of the norms).
- A recorded backward (``create_graph``) runs the plain array-API formula on Tensors.
"""
from __future__ import annotations

import numpy as np

from ... import _dtypes
from ..._broadcast import broadcast_shapes as _broadcast_shapes
from .. import reduction as _reduction
from .. import shape as _shape
from ..autocast import autocast_op
from ..registry import defop, public
from ._common import _in_vmap, _mT, _recording, _shared

# Elements of one block of differences: 2^17 float32 (512 KiB) stay in L2 through the few
# passes a block takes; larger blocks measured slower, smaller ones pay NumPy's per-call cost.
_BLOCK = 1 << 17
# The product form's squared distance loses about eps * (|x|^2 + |y|^2) to rounding; a row
# holding a pair with d^2 below _NEAR * (|x|^2 + |y|^2) is computed directly instead.
_NEAR = 1 / 16


def _blocks(n, P, R, M):
    """``(batch, rows of x1, rows of x2)`` slices cutting ``n`` batches of ``P x R`` pairs of
    ``M`` coordinates into blocks of about ``_BLOCK`` elements."""
    if P * R * M <= _BLOCK:
        step = max(1, _BLOCK // max(P * R * M, 1))
        for b in range(0, n, step):
            yield slice(b, b + step), slice(None), slice(None)
        return
    if R * M <= _BLOCK:
        step = max(1, _BLOCK // max(R * M, 1))
        for b in range(n):
            for r in range(0, P, step):
                yield slice(b, b + 1), slice(r, r + step), slice(None)
        return
    step = max(1, _BLOCK // max(M, 1))
    for b in range(n):
        for r in range(P):
            for c in range(0, R, step):
                yield slice(b, b + 1), slice(r, r + 1), slice(c, c + step)


def _flat(xp, x1, x2):
    """``x1``, ``x2`` with their batch dims broadcast and flattened into one: ``(n, P, M)``,
    ``(n, R, M)``, and the batch shape."""
    batch = _broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    n = int(np.prod(batch))
    x1 = xp.reshape(xp.broadcast_to(x1, batch + x1.shape[-2:]), (n,) + x1.shape[-2:])
    x2 = xp.reshape(xp.broadcast_to(x2, batch + x2.shape[-2:]), (n,) + x2.shape[-2:])
    return x1, x2, batch


def _diff(xp, x1, x2, out=None):
    """``x1[..., i, :] - x2[..., j, :]`` at ``[..., i, j, :]``, into ``out`` if given: a
    scratch buffer reused block after block (a fresh array per block costs its page faults),
    filled with ``x1`` and then reduced by ``x2`` in place (NumPy's in-place loop is ~2x faster
    than its three-operand broadcasting one)."""
    if out is None:
        return xp.expand_dims(x1, -2) - xp.expand_dims(x2, -3)
    xp.copyto(out, xp.expand_dims(x1, -2))
    return xp.subtract(out, xp.expand_dims(x2, -3), out=out)


def _scratch(xp, n, P, R, M, dtype):
    """A buffer for the largest block of ``_blocks(n, P, R, M)``: ``shape -> view``."""
    flat = xp.empty(min(n * P * R * M, 2 * _BLOCK + M), dtype=dtype)
    return lambda shape: xp.reshape(flat[:int(np.prod(shape))], shape)


def _reduce(xp, d, p):
    """The distances of a block of differences ``d`` (overwritten). Sums over the coordinates
    are products with a vector of ones: BLAS's ``gemv`` is ~8x faster than NumPy's ``sum``
    along a row (its accumulators are as many and as accurate as PyTorch's vectorised ones)."""
    ones = xp.ones(d.shape[-1], dtype=d.dtype)
    if p == 0:  # the count of non-zero differences, NaN where one is NaN (as PyTorch)
        count = xp.sum(d != 0, axis=-1).astype(d.dtype)
        total = xp.matmul(xp.abs(d, out=d), ones)
        return xp.where(total != total, total, count)
    if p == 2:
        return xp.sqrt(xp.matmul(xp.multiply(d, d, out=d), ones))
    a = xp.abs(d, out=d)
    if p == float("inf"):
        return xp.max(a, axis=-1) if a.shape[-1] else xp.sum(a, axis=-1)
    if p == 1:
        return xp.matmul(a, ones)
    if p == 0.5:  # a sqrt and a square: pow costs ~25 ns an element, sqrt 0.3
        s = xp.matmul(xp.sqrt(a, out=a), ones)
        return s * s
    if p == 1.5:
        s = xp.matmul(xp.multiply(a, xp.sqrt(a), out=a), ones)
        return s ** (1 / p)
    return xp.matmul(xp.power(a, p, out=a), ones) ** (1 / p)


def _direct(xp, x1, x2, p):
    """The distances, block by block of differences."""
    x1, x2, batch = _flat(xp, x1, x2)
    n, P, M = x1.shape
    R = x2.shape[1]
    out = xp.empty((n, P, R), dtype=x1.dtype)
    buf = _scratch(xp, n, P, R, M, x1.dtype)
    for b, r, c in _blocks(n, P, R, M):
        x, y = x1[b, r], x2[b, c]
        out[b, r, c] = _reduce(xp, _diff(xp, x, y, buf(x.shape[:-1] + y.shape[1:])), p)
    return xp.reshape(out, batch + (P, R))


def _term(xp, d, dist, p, t):
    """The derivative of the distance ``dist`` (``1`` where it is zero) by each coordinate of
    the differences ``d``, written to ``t``: ``sign(d) (|d| / dist)^(p-1)``, 0 where ``d`` is
    0 for ``p < 1``; at ``p = inf`` the sign where ``|d|`` attains the maximum. (``sign``
    and ``copysign`` never write over their own input: NumPy's in-place loops for them are
    ~10x slower.)"""
    if p == 1:
        return xp.sign(d, out=t)
    if p == 2:  # d / dist: the division is folded into the gradient rows
        return d
    if p == float("inf"):
        top = xp.abs(d, out=t) == dist
        return xp.multiply(xp.sign(d, out=t), top, out=t)
    a = xp.abs(d, out=t)
    if p == 0.5:  # (|d| / dist)^(-1/2) as the sqrt of the inverse ratio
        a = xp.sqrt(xp.divide(dist, a, out=a), out=a)
    elif p == 1.5:
        a = xp.sqrt(xp.divide(a, dist, out=a), out=a)
    else:
        a = xp.power(xp.divide(a, dist, out=a), p - 1, out=a)
    a = xp.copysign(a, d, out=a)
    if p < 1:  # 0^(p-1) is inf
        xp.copyto(a, 0, where=d == 0)
    return a


def _direct_grad(xp, g, dist, x1, x2, p):
    """The gradient for ``x1``: ``sum_j g_ij term(x1_i - x2_j)``, block by block, each block of
    terms contracted with its rows of ``g`` by a matrix product."""
    x1, x2, batch = _flat(xp, x1, x2)
    n, P, M = x1.shape
    R = x2.shape[1]
    g = xp.reshape(g, (n, P, R))
    dist = xp.reshape(dist, (n, P, R))
    zero = dist == 0  # PyTorch's subgradient there: 0
    g = xp.where(zero, 0, g)
    dist = xp.where(zero, 1, dist)
    if p == 2:
        g = g / dist
    g, dist = g[..., None, :], dist[..., None]
    out = xp.zeros(x1.shape, dtype=x1.dtype)
    dbuf, tbuf = (_scratch(xp, n, P, R, M, x1.dtype) for _ in range(2))
    for b, r, c in _blocks(n, P, R, M):
        x, y = x1[b, r], x2[b, c]
        shape = x.shape[:-1] + y.shape[1:]
        t = _term(xp, _diff(xp, x, y, dbuf(shape)), dist[b, r, c], p, tbuf(shape))
        out[b, r] += xp.matmul(g[b, r, :, c], t)[..., 0, :]
    return xp.reshape(out, batch + (P, M))


def _recorded_grad(xp, g, ans, x1, x2, p):
    """The gradient for ``x1`` in array-API calls on the whole ``(..., P, R, M)`` differences
    (a recorded backward, which must itself be differentiable)."""
    diff = _diff(xp, x1, x2)
    dist = xp.expand_dims(ans, -1)
    if p == 1:
        term = xp.sign(diff)
    elif p == float("inf"):
        term = xp.where(xp.abs(diff) == dist, xp.sign(diff), 0)
    else:
        zero = dist == 0
        safe = xp.where(zero, 1, dist)
        if p == 2:
            term = xp.where(zero, 0, diff / safe)
        elif p < 1:
            zero = zero | (diff == 0)
            abs_diff = xp.where(zero, 1, xp.abs(diff))
            term = xp.where(zero, 0, xp.sign(diff) * (abs_diff / safe) ** (p - 1))
        elif p < 2:
            term = xp.where(zero, 0, xp.sign(diff) * (xp.abs(diff) / safe) ** (p - 1))
        else:
            term = xp.where(zero, 0, diff * xp.abs(diff) ** (p - 2) / safe ** (p - 1))
    return xp.sum(xp.expand_dims(g, -1) * term, axis=-2)


def _cdist_grad(xp, g, ans, x1, x2, p):
    """PyTorch's ``_cdist_backward``: the gradient for ``x1``, zero where a distance is zero
    (and, for ``p < 1``, where a coordinate difference is); at ``p = inf`` every coordinate
    that attains the maximum gets the whole gradient."""
    if p == 0:
        return xp.zeros_like(x1)
    if _recording(xp):
        return _recorded_grad(xp, g, ans, x1, x2, p)
    return _direct_grad(xp, g, ans, x1, x2, p)


@defop("cdist", n_in=2, jvp="transpose", batch="loop")
def _cdist(xp, x1, x2, p):
    return _direct(xp, x1, x2, p)


_cdist.defvjp(lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, g, ans, x1, x2, p),
              lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, _mT(xp, g), _mT(xp, ans), x2, x1, p))


def _centred(xp, x1, x2):
    """``x1``, ``x2`` less the mean row of ``x2`` (per batch; its finite coordinates), and
    their squared row norms."""
    c = xp.mean(x2, axis=-2, keepdims=True) if x2.shape[-2] else xp.zeros(1, dtype=x2.dtype)
    c = xp.where(xp.isfinite(c), c, 0)
    x1, x2 = x1 - c, x2 - c
    ones = xp.ones(x1.shape[-1], dtype=x1.dtype)
    return x1, x2, xp.matmul(x1 * x1, ones), xp.matmul(x2 * x2, ones)


def _near_rows(xp, sq, n1, n2):
    """Per batch, the rows ``i`` of ``x1`` holding a pair whose product-form ``sq`` may have
    lost digits, ``sq_ij <= _NEAR (n1_i + n2_j)``: every exact zero distance, and every NaN
    (inf - inf in the product) too. (Two passes over ``sq``: a row's smallest
    ``sq_ij - _NEAR n2_j`` against ``_NEAR n1_i``.)"""
    low = xp.min(sq - _NEAR * n2[..., None, :], axis=-1) if sq.shape[-1] else n1
    return ~(low > _NEAR * n1)


def _each_near(xp, rows):
    """``(batch, row indices)`` for the batches of ``rows`` (a host-side loop over the few
    batches with near rows)."""
    if sum(rows.shape) and not bool(xp.any(rows)):
        return
    hits = rows.get() if hasattr(rows, "get") else rows
    for b in np.flatnonzero(hits.any(axis=-1)):
        yield int(b), xp.asarray(np.flatnonzero(hits[b]))


def _euclidean_forward(xp, x1, x2):
    """``(n, P, M)``, ``(n, R, M)`` -> ``(n, P, R)`` (or without the ``n``) by one matrix
    product, with the rows it would get wrong done directly."""
    if x1.ndim == 2:
        return _euclidean_forward(xp, x1[None], x2[None])[0]
    c1, c2, n1, n2 = _centred(xp, x1, x2)
    sq = xp.matmul(c1, _mT(xp, c2 * -2))  # the factor on the smaller side, not on sq
    sq += n1[..., :, None]
    sq += n2[..., None, :]
    near = _near_rows(xp, sq, n1, n2)
    out = xp.sqrt(xp.maximum(sq, 0, out=sq), out=sq)
    for b, rows in _each_near(xp, near):
        out[b, rows] = _direct(xp, c1[b, rows], c2[b], 2)
    return out


def _euclidean_grad(xp, g, ans, x1, x2, centred):
    """The gradient for ``x1``: ``sum_j w_ij (x1_i - x2_j)`` with ``w = g / dist`` (0 where
    ``dist`` is), as ``x1_i sum_j w_ij - (w x2)_i`` (a matrix product) on the centred inputs
    (``centred()``: ``_centred``'s four arrays), and directly on the rows where a close pair
    would make those two terms cancel."""
    if _recording(xp):
        return _recorded_grad(xp, g, ans, x1, x2, 2)
    c1, c2, n1, n2 = centred()
    if x1.ndim == 2:
        return _euclidean_grad(xp, g[None], ans[None], x1[None], x2[None],
                               lambda: (c1[None], c2[None], n1[None], n2[None]))[0]
    w = g / ans
    xp.copyto(w, 0, where=ans == 0)
    out = c1 * xp.matmul(w, xp.ones(w.shape[-1], dtype=w.dtype))[..., None]
    out -= xp.matmul(w, c2)
    near = _near_rows(xp, ans * ans, n1, n2)
    for b, rows in _each_near(xp, near):
        out[b, rows] = _direct_grad(xp, g[b, rows], ans[b, rows], c1[b, rows], c2[b], 2)
    return out


@defop("euclidean_dist", n_in=2, jvp="transpose", batch="loop")
def _euclidean_dist(xp, x1, x2):
    return _euclidean_forward(xp, x1, x2)


def _centred_once(xp, g, ans, x1, x2, first):
    """``_centred(x1, x2)``, computed once for both rules (the distances do not depend on the
    centre, so the rule for ``x2`` takes ``x1``'s and ``x2``'s centred the same way): three
    passes fewer over each input."""
    return lambda: _shared(xp, ans, g, lambda: _centred(xp, x1, x2), first)


def _swapped(centred):
    return lambda: (lambda c1, c2, n1, n2: (c2, c1, n2, n1))(*centred())


_euclidean_dist.defvjp(
    lambda xp, g, ans, x1, x2: _euclidean_grad(xp, g, ans, x1, x2,
                                               _centred_once(xp, g, ans, x1, x2, True)),
    lambda xp, g, ans, x1, x2: _euclidean_grad(
        xp, _mT(xp, g), _mT(xp, ans), x2, x1,
        _swapped(_centred_once(xp, g, ans, x1, x2, False))))


def _cdist_composite(x1, x2, p):
    """``cdist`` from ops that batch, with the same first derivatives: the vector norm of the
    differences, except that at ``p = inf`` every tied maximum gets the whole gradient."""
    diff = _shape.unsqueeze(x1, -2) - _shape.unsqueeze(x2, -3)
    if p != float("inf"):
        return _reduction.vector_norm(diff, p, -1)
    a = diff.abs()
    top = _reduction.amax(a.detach(), -1, keepdim=True)
    return _shape.squeeze(top + _reduction.sum((a == top) * (a - a.detach()), -1,
                                               keepdim=True), -1)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@public(method=False)
@autocast_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between the rows of ``x1`` and of ``x2`` (batched over leading dims) in the
    ``p``-norm. As in PyTorch, ``p = 2`` on more than 25 rows (or with
    ``'use_mm_for_euclid_dist'``) records ``EuclideanDistBackward0``, computed by matrix
    products except where they would cancel (module docstring)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not _dtypes.is_floating(t._data.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{t.dtype._word}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype._word} but found {x2.dtype._word}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = _broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode == _CDIST_MODES[0] and (r1 > 25 or r2 > 25)))
    if _in_vmap(x1, x2):
        return _cdist_composite(x1, x2, float(p))
    if not mm:
        return _cdist(x1, x2, float(p))
    if batch:
        n = int(np.prod(batch))
        x1 = _shape.reshape(_shape.expand(x1, batch + tuple(x1.shape[-2:])), (n, r1, -1))
        x2 = _shape.reshape(_shape.expand(x2, batch + tuple(x2.shape[-2:])), (n, r2, -1))
    return _shape.view(_euclidean_dist(x1, x2), batch + (r1, r2))
