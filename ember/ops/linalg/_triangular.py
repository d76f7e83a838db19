"""Triangular solves ``T^{-1} B`` by blocks, for ``linalg.solve_triangular`` and the rules that
need one (Cholesky's, QR's): NumPy exposes no ``trsm``.

Recursive halving: with ``T = [[T11, T12], [0, T22]]`` (upper), ``X2 = T22^{-1} B2`` and then
``X1 = T11^{-1} (B1 - T12 X2)``; each half recurses until a block is ``_LEAF`` rows, so all the
arithmetic but the leaves' is a few matrix products. A leaf goes to LAPACK's ``gesv``
(``xp.linalg.solve``) as an upper triangle: its LU factors are then exactly ``I`` and the
triangle itself (no row is ever a better pivot than a zero), and ``gesv`` ends in the
back substitution ``trsm`` would do, so a leaf is exact to LAPACK's accuracy. A lower leaf is
turned upper by reversing its rows and columns (a real LU of a lower triangle would pivot, and
round). The blocked substitution is the one LAPACK's own blocked ``trsm`` does: its error
is componentwise backward-stable as plain substitution is (Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., §8.3), ill-conditioned matrices included, and unlike
multiplying by inverted diagonal blocks.

Only the triangle named is read, as LAPACK does: the other one may hold anything. Why not
``xp.linalg.solve`` of the whole triangle: an LU of ``n x n`` costs ``n^3`` where the solve
costs ``n^2``: 76 matrices of 115 x 115 took 86 ms in ``gesv``, 0.6 ms by blocks.
"""
from __future__ import annotations

import numpy as np

# Rows of a leaf: ``gesv`` costs about 0.5 us a matrix at 8 x 8 and 1.7 us at 16 x 16 (its LU
# is cubic), a call about 10 us: 8 is the cheaper at every batch size measured.
_LEAF = 8


def _substitute(xp, T, B):
    """``T^{-1} B`` for an upper ``T`` by plain back substitution, one row at a time: for the
    leaves ``gesv`` refuses (a zero on the diagonal), where the divisions by zero give the
    infinities LAPACK's ``trsm`` gives."""
    X = xp.zeros(np.broadcast_shapes(T.shape[:-2], B.shape[:-2]) + B.shape[-2:],
                 dtype=np.result_type(T.dtype, B.dtype))
    for i in range(T.shape[-1] - 1, -1, -1):
        rest = xp.matmul(T[..., i:i + 1, :], X)[..., 0, :]
        X[..., i, :] = (B[..., i, :] - rest) / T[..., i, i, None]
    return X


def _leaf(xp, A, B, upper, unitriangular):
    """``T^{-1} B`` for the triangle ``T`` of one small block ``A``, by ``gesv`` (see above)."""
    n = A.shape[-1]
    T = xp.triu(A) if upper else xp.tril(A)
    if unitriangular:
        T = xp.where(xp.eye(n, dtype=bool), xp.ones((), dtype=A.dtype), T)
    if not upper:  # reversed rows and columns: the same equations, an upper triangle
        T, B = T[..., ::-1, ::-1], B[..., ::-1, :]
    try:
        X = xp.linalg.solve(T, B)
    except np.linalg.LinAlgError:
        X = _substitute(xp, T, B)
    return X if upper else X[..., ::-1, :]


def _blocks(xp, A, B, X, upper, unitriangular):
    """Writes ``T^{-1} B`` into ``X``, for the triangle ``T`` of ``A``."""
    n = A.shape[-1]
    if n <= _LEAF:
        X[...] = _leaf(xp, A, B, upper, unitriangular)
        return
    half = n // 2
    # the half solved first (the bottom one of an upper triangle), then the other
    first, second = (slice(half, n), slice(0, half)) if upper else (slice(0, half),
                                                                   slice(half, n))
    _blocks(xp, A[..., first, first], B[..., first, :], X[..., first, :], upper, unitriangular)
    rest = B[..., second, :] - xp.matmul(A[..., second, first], X[..., first, :])
    _blocks(xp, A[..., second, second], rest, X[..., second, :], upper, unitriangular)


def solve_triangular(xp, A, B, upper, unitriangular=False):
    """``T^{-1} B`` for the upper (or lower) triangle ``T`` of ``A`` (with ones on its diagonal
    if ``unitriangular``); batch dims broadcast."""
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + tuple(B.shape[-2:])
    X = xp.empty(shape, dtype=np.result_type(A.dtype, B.dtype))
    _blocks(xp, A, B, X, upper, unitriangular)
    return X
