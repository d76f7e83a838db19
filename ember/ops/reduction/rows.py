"""Fast sums and maxima over the last dims of a NumPy array, for the kernels that reduce each
row of a batch (softmax, log_softmax, layer norm, batch norm's per-channel sums).

NumPy reduces a contiguous last axis one row at a time, at 20-80 ns of overhead per row: on a
batch of short rows (a (512, 27) batch of character logits) ``x.sum(axis=-1)`` costs 5x the
arithmetic and ``x.max(axis=-1)`` 20x. Here:

- a sum over the trailing (or leading) dims of a contiguous float32/float64 array is a
  matrix-vector product with a vector of ones (BLAS): 2-6x faster at every row length
  measured, (512, 27) to (1024, 1000) (under a short tail of at most 127 entries, a sum over
  the leading dims is ``_broadcast.sum_head``'s, blocks of rows). A row of the last dims is
  summed so only when it has at most ``_BLAS_ROW`` elements: BLAS accumulates it in a few
  dozen running sums, each adding n/64 terms in turn, where NumPy's pairwise sum adds at
  most 16 in turn; up to 1024 elements the two are alike (the tests check the error against
  the exact sum). A sum over the leading dims adds each column in turn in NumPy too;
- a maximum over a last dim of at most ``_SHORT_ROW`` elements is taken on the transposed
  copy, where it is an elementwise maximum of whole rows (vectorised): 3-10x faster; over
  longer rows (where that copy's strided writes cost more than they save: 1.4x at 64, 24x
  at (4096, 256)) by ``np.maximum.reduceat`` over the flat array, one segment a row, which
  skips most of the per-row set-up of a reduction: 1.5-2.8x faster than ``x.max(-1)`` from
  rows of 64 to 1000 (the attention scores of (16, 3, 128, 128): 609 -> 377 us).

A kernel of several passes over such rows (softmax, log_softmax) makes that transposed copy
once (``short_columns``) and runs every pass on it: each row's maximum or sum is then a
reduction down the columns and the subtraction of it a broadcast along a contiguous axis, where
on the rows each pass is one NumPy inner loop per short row (log_softmax at (512, 27):
28 -> 24 us, with the copy back).

Anything else (CuPy, other dtypes, non-contiguous arrays, the Tensor namespace of a recorded
rule) goes to ``xp.sum``/``xp.max``, which give the same values.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _xp
from ..._broadcast import sum_head

_BLAS_ROW = 1024
_SHORT_ROW = 48
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _plain(xp, x):
    return (xp is _xp.NUMPY and type(x) is np.ndarray and x.dtype in _FLOATS
            and x.flags.c_contiguous and x.size > 0)


_ONES = {}


def _ones(n, dtype):
    """A read-only vector of ``n`` ones (cached for the short ones: a call is ~1 us)."""
    if n > _BLAS_ROW:
        return np.ones(n, dtype)
    try:
        return _ONES[dtype, n]
    except KeyError:
        ones = _ONES[dtype, n] = np.ones(n, dtype)
        ones.flags.writeable = False
        return ones


def sum_last(xp, x, k=1):
    """The sum over the last ``k`` dims of ``x``, those dims kept (as ones)."""
    if _plain(xp, x):
        n = math.prod(x.shape[x.ndim - k:])
        if 1 < n <= _BLAS_ROW:
            return (x.reshape(-1, n) @ _ones(n, x.dtype)).reshape(x.shape[:x.ndim - k]
                                                                  + (1,) * k)
    return xp.sum(x, axis=tuple(range(x.ndim - k, x.ndim)), keepdims=True)


def sum_first(xp, x, k=1):
    """The sum over the first ``k`` dims of ``x``, those dims dropped. Under a short tail,
    ``sum_head``'s blocks of rows beat the BLAS product (0.2 against 3.5 ms for (333332, 3))
    and are closer to the exact sum."""
    if _plain(xp, x):
        n = math.prod(x.shape[:k])
        head = sum_head(x, tuple(range(k)))
        if head is not None:
            return head.reshape(x.shape[k:])
        if n > 1:
            return (_ones(n, x.dtype) @ x.reshape(n, -1)).reshape(x.shape[k:])
    return xp.sum(x, axis=tuple(range(k)))


def short_columns(xp, x):
    """``x`` as a C-contiguous ``(n, rows)`` copy, its last dim first, where that dim is short
    (2 to ``_SHORT_ROW``) and the rows many (as for ``max_last``'s transposed maximum); else
    None. ``rows_back`` undoes it."""
    n = x.shape[-1] if x.ndim >= 2 else 0
    if 1 < n <= _SHORT_ROW and x.size >= n * 64 and _plain(xp, x):
        return np.ascontiguousarray(x.reshape(-1, n).T)
    return None


def rows_back(columns, shape):
    """``short_columns``' layout back to a C-contiguous array of ``shape``."""
    return np.ascontiguousarray(columns.T).reshape(shape)


def max_last(xp, x):
    """The maximum over the last dim of ``x``, kept (as one)."""
    if _plain(xp, x) and x.ndim >= 2 and x.shape[-1] > 1:
        n = x.shape[-1]
        if n > _SHORT_ROW:
            flat = x.reshape(-1)
            return np.maximum.reduceat(flat, np.arange(0, flat.size, n)).reshape(
                x.shape[:-1] + (1,))
        if x.size >= n * 64:  # (fewer rows: NumPy's own is as fast)
            rows = np.ascontiguousarray(x.reshape(-1, n).T)  # (n, rows): max of n vectors
            return rows.max(axis=0).reshape(x.shape[:-1] + (1,))
    return xp.max(x, axis=-1, keepdims=True)
