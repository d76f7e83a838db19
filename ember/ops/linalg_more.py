"""More of ``torch.linalg``: ``multi_dot``, ``vecdot`` and ``matrix_rank``, as PyTorch's
composites of ``mm``, ``mul``/``sum`` and ``svdvals`` (so their ``grad_fn`` chains are
PyTorch's: ``ViewBackward0 <- MmBackward0 ...``, ``SumBackward1 <- MulBackward0``)."""
from __future__ import annotations

import numpy as np

from .. import _creation
from .._tensor import Tensor
from .operands import _check_tensor

_EPS = {np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float64): 2.0 ** -52,
        np.dtype(np.complex64): 2.0 ** -23, np.dtype(np.complex128): 2.0 ** -52}


def _cpp(t):
    """The C++ name of a tensor's dtype, as PyTorch's multi_dot message gives it."""
    names = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
             "float16": "c10::Half", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}
    return names.get(str(t._data.dtype), str(t._data.dtype))


def _chain_order(dims):
    """The cheapest parenthesization of matrices ``dims[i] x dims[i+1]`` (the classic
    dynamic program); ``split[i][j]``: where the product of ``i..j`` splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def linalg_multi_dot(tensors, *, out=None):
    """The product of 2-D matrices (the first and last may be 1-D vectors), multiplied in the
    cheapest order."""
    if out is not None:
        raise TypeError("multi_dot(): out= is not supported by ember")
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for t in tensors:
        _check_tensor("multi_dot", t)
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{last.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_cpp(first)} and tensor {i} {_cpp(t)}")
    out_shape = ([first.shape[0]] if first.dim() == 2 else []) + \
        ([last.shape[1]] if last.dim() == 2 else [])
    mats = tensors[:]
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        a, b = mats[i], mats[i + 1]
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))

    return product(0, n - 1).view(out_shape)


def linalg_vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim`` (conjugating ``x``), with broadcasting."""
    if out is not None:
        raise TypeError("vecdot(): out= is not supported by ember")
    _check_tensor("vecdot", x)
    _check_tensor("vecdot", y, "y", 2)
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype._legacy[:-6]} and y of type "
                           f"{y.dtype._legacy[:-6]} instead")
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above ``max(atol, rtol * largest)``; with neither
    given, ``rtol = eps * max(m, n)``; ``tol`` is the old name of ``atol``. int64, no
    gradient."""
    if out is not None:
        raise TypeError("matrix_rank(): out= is not supported by ember")
    _check_tensor("linalg.matrix_rank", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    data = A._data
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(data))
    else:
        s = np.linalg.svd(data, compute_uv=False) if data.size else \
            np.zeros(data.shape[:-2] + (0,))
    m, n = data.shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol is not None and (not isinstance(atol, (int, float)) or atol > 0) \
            else _EPS[data.dtype] * max(m, n)
    atol = 0.0 if atol is None else atol
    atol = atol._data if isinstance(atol, Tensor) else atol
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    largest = s.max(axis=-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,))
    bound = np.maximum(np.asarray(atol)[..., None] if np.ndim(atol) else atol,
                       (np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol) * largest)
    return _creation.tensor((s > bound).sum(-1).astype(np.int64))


__all__ = []
METHODS = {}
INPLACE = ()
