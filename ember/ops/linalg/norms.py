"""Matrix norms: ``linalg.matrix_norm`` and ``linalg.norm`` (vector norms are the reductions'
``vector_norm``; ``cdist``, the norms of the differences between rows, is ``distances.py``).
"""
from __future__ import annotations

from ... import _dtypes
from ..._tensor import _wrap_dim
from .. import reduction as _reduction
from .. import shape as _shape
from ._common import _permute
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
