"""Matrix norms and distances: ``linalg.matrix_norm``, ``linalg.norm`` (vector norms are the
reductions' ``vector_norm``) and ``cdist``, the norms of the differences between rows, with
its rules.
"""
from __future__ import annotations

import numpy as np

from ... import _dtypes
from ..._broadcast import broadcast_shapes as _broadcast_shapes
from ..._tensor import _wrap_dim
from .. import reduction as _reduction
from .. import shape as _shape
from ..autocast import autocast_op
from ..registry import defop, public
from ._common import _in_vmap, _mT, _permute
from .decompositions import linalg_svdvals


def _norm_order(ord):
    return ord if isinstance(ord, str) else f"{float(ord):g}"


def _matrix_norm_dims(A, dim, dtype, name="linalg.matrix_norm"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._word}")
    if dtype is not None and dtype.category < 2:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype._word}")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def _to_back(A, d0, d1, dtype):
    """``A`` (cast to ``dtype``) with dims ``d0``, ``d1`` moved last, and the way back."""
    order = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
    back = [order.index(d) for d in range(A.ndim)]
    if dtype is not None:
        A = A.to(dtype)
    return _permute(A, order), back


def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms over dims ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2 (largest /
    smallest singular value), 1 / -1 (max / min column sum of ``|A|``), inf / -inf (rows)."""
    dtype = _dtypes.as_dtype(dtype, "linalg.matrix_norm")
    inf = float("inf")
    supported = ord in ("fro", "nuc") if isinstance(ord, str) else abs(ord) in (1, 2, inf)
    if not supported:
        raise RuntimeError(f"linalg.matrix_norm: Order {_norm_order(ord)} not supported.")
    d0, d1 = _matrix_norm_dims(A, dim, dtype)
    if ord == "fro":
        return _reduction.vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord == "nuc" or abs(ord) == 2:
        permuted, back = _to_back(A, d0, d1, dtype)
        S = linalg_svdvals(permuted)
        result = (_reduction.sum(S, -1, keepdim) if ord == "nuc" else
                  (_reduction.amax if ord > 0 else _reduction.amin)(S, -1, keepdim))
        if keepdim:
            result = _permute(_shape.unsqueeze(result, -1), back)
        return result
    if abs(ord) == inf:  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = _reduction.vector_norm(A, 1, (d0,), keepdim, dtype=dtype)
    return (_reduction.amax if ord > 0 else _reduction.amin)(sums, d1, keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``dim`` an int, or 1-d input) or a matrix norm (``dim`` a pair, or 2-d
    input) of order ``ord``; without ``ord``, the 2-norm of all elements."""
    dtype = _dtypes.as_dtype(dtype, "linalg.norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str) or ord is not None and (
            dim is not None and len(dim) == 2 or dim is None and A.ndim == 2):
        return linalg_matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return _reduction.vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def _pairwise_diff(xp, x1, x2):
    """``x1[..., i, :] - x2[..., j, :]`` at ``[..., i, j, :]``."""
    return xp.expand_dims(x1, -2) - xp.expand_dims(x2, -3)


def _cdist_forward(xp, x1, x2, p):
    diff = xp.abs(_pairwise_diff(xp, x1, x2))
    if p == 0:
        return xp.sum(diff != 0, axis=-1).astype(x1.dtype)
    if p == 1:
        return xp.sum(diff, axis=-1)
    if p == 2:
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    if p == float("inf"):
        return xp.max(diff, axis=-1) if diff.shape[-1] else xp.sum(diff, axis=-1)
    return xp.sum(diff ** p, axis=-1) ** (1 / p)


def _cdist_grad(xp, g, ans, x1, x2, p):
    """PyTorch's ``_cdist_backward``: the gradient for ``x1``, zero where a distance is zero
    (and, for ``p < 1``, where a coordinate difference is); at ``p = inf`` every coordinate
    that attains the maximum gets the whole gradient."""
    if p == 0:
        return xp.zeros_like(x1)
    diff = _pairwise_diff(xp, x1, x2)
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


@defop("cdist", n_in=2, jvp="transpose", batch="loop")
def _cdist(xp, x1, x2, p):
    return _cdist_forward(xp, x1, x2, p)


_cdist.defvjp(lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, g, ans, x1, x2, p),
              lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, _mT(xp, g), _mT(xp, ans), x2, x1, p))


@defop("euclidean_dist", n_in=2, jvp="transpose", batch="loop")
def _euclidean_dist(xp, x1, x2):
    return _cdist_forward(xp, x1, x2, 2)


_euclidean_dist.defvjp(
    lambda xp, g, ans, x1, x2: _cdist_grad(xp, g, ans, x1, x2, 2),
    lambda xp, g, ans, x1, x2: _cdist_grad(xp, _mT(xp, g), _mT(xp, ans), x2, x1, 2))

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


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@public(method=False)
@autocast_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """Distances between the rows of ``x1`` and of ``x2`` (batched over leading dims) in the
    ``p``-norm. As in PyTorch, ``p = 2`` on more than 25 rows (or with
    ``'use_mm_for_euclid_dist'``) records ``EuclideanDistBackward0``, computed the direct way
    (PyTorch's matrix-product form loses digits to cancellation)."""
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
        compute_mode in _CDIST_MODES[:2] and (r1 > 25 or r2 > 25)))
    if _in_vmap(x1, x2):
        return _cdist_composite(x1, x2, float(p))
    if not mm:
        return _cdist(x1, x2, float(p))
    if batch:
        n = int(np.prod(batch))
        x1 = _shape.reshape(_shape.expand(x1, batch + tuple(x1.shape[-2:])), (n, r1, -1))
        x2 = _shape.reshape(_shape.expand(x2, batch + tuple(x2.shape[-2:])), (n, r2, -1))
    return _shape.view(_euclidean_dist(x1, x2), batch + (r1, r2))
