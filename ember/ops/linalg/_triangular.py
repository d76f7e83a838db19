"""Triangular solves ``T^{-1} B`` by blocks, for ``linalg.solve_triangular`` and the rules that
need one (Cholesky's, QR's): NumPy exposes no ``trsm``.

Recursive halving: with ``T = [[T11, T12], [0, T22]]`` (upper), ``X2 = T22^{-1} B2`` and then
``X1 = T11^{-1} (B1 - T12 X2)``; each half recurses down to diagonal blocks of ``_LEAF`` rows,
so all the arithmetic but the blocks' own is matrix products.

A diagonal block goes to LAPACK's ``gesv`` (``xp.linalg.solve``) as an upper triangle: the LU
factors of an upper triangle are exactly ``I`` and the triangle itself (no row is ever a
better pivot than a zero), so ``gesv`` ends in the plain back substitution ``trsm`` would do.
(A lower block is turned upper by reversing its rows and columns: a real LU of a lower
triangle would pivot, and round.) With a few right-hand sides, each block is solved so. With
many, ``gesv`` of a small matrix is slow (76 blocks of 8 x 8 with 115 columns: 880 us,
against 140 us for their inverses and one product): the blocks are inverted first, all in one
``gesv`` against the identity, and a block's solution is its inverse times its right-hand
side, refined once: ``x += T^{-1} (b - T x)``. One step of refinement with the residual in
working precision makes it componentwise backward-stable as substitution is (Skeel, Math.
Comp. 35, 1980; Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §12.2),
ill-conditioned blocks included, where a bare inverse can lose digits.

Why not ``gesv`` on the whole triangle: an LU of ``n x n`` costs ``n^3`` where the solve costs
``n^2`` (76 matrices of 115 x 115: 86 ms in ``gesv``).

Only the triangle named is read, as LAPACK does: the other one may hold anything.
"""
from __future__ import annotations

import numpy as np

from ._lapack import lapack

# Rows of a diagonal block: at 8, inverting them costs about as much as the products.
_LEAF = 8
# Up to this size a triangle is one block, for ``gesv`` (the blocks' bookkeeping would cost
# more than ``gesv``'s cubic LU: 8 matrices of 12 x 12, 18 us against 39 us).
_SMALL = 16


def _substitute(xp, T, B):
    """``T^{-1} B`` for upper ``T`` by plain back substitution, one row at a time: for blocks
    ``gesv`` refuses (a zero on the diagonal), where the divisions by zero give the
    infinities LAPACK's ``trsm`` gives."""
    X = xp.zeros(np.broadcast_shapes(T.shape[:-2], B.shape[:-2]) + B.shape[-2:],
                 dtype=np.result_type(T.dtype, B.dtype))
    for i in range(T.shape[-1] - 1, -1, -1):
        rest = xp.matmul(T[..., i:i + 1, :], X)[..., 0, :]
        X[..., i, :] = (B[..., i, :] - rest) / T[..., i, i, None]
    return X


def _gesv(xp, T, B):
    """``T^{-1} B`` for upper ``T``: ``gesv``'s back substitution (see above), or ours where it
    refuses ``T`` (a zero on its diagonal)."""
    try:
        return lapack(xp, T, B).solve(T, B)
    except np.linalg.LinAlgError:
        return _substitute(xp, T, B)


def _triangles(xp, blocks, upper, unitriangular):
    """The triangles of a stack of diagonal blocks, upper (a lower one reversed)."""
    n = blocks.shape[-1]
    T = xp.triu(blocks) if upper else xp.tril(blocks)
    if unitriangular:
        T = xp.where(xp.eye(n, dtype=bool), xp.ones((), dtype=blocks.dtype), T)
    return T if upper else T[..., ::-1, ::-1]


def _inverses(xp, T):
    """The inverses of a stack of upper triangles, and whether each is usable (a triangle with
    a zero on its diagonal has none: its block is solved by substitution)."""
    eye = xp.broadcast_to(xp.eye(T.shape[-1], dtype=T.dtype), T.shape)
    try:
        return lapack(xp, T).solve(T, eye), True
    except np.linalg.LinAlgError:
        return None, False


class _Diagonal:
    """The diagonal blocks of a triangle: each one's (reversed, if lower) triangle and, with
    ``inverted``, its inverse; block ``i`` covers rows ``i * _LEAF`` up to
    ``(i + 1) * _LEAF``."""

    def __init__(self, xp, A, upper, unitriangular, inverted):
        n = A.shape[-1]
        full = [A[..., i:i + _LEAF, i:i + _LEAF] for i in range(0, n - _LEAF + 1, _LEAF)]
        stacks = [_triangles(xp, xp.stack(full, axis=-3), upper, unitriangular)] if full else []
        if n % _LEAF:  # the last, shorter block
            i = n - n % _LEAF
            stacks.append(_triangles(xp, A[..., None, i:, i:], upper, unitriangular))
        self.T, self.inv = [], []
        for T in stacks:
            inv, usable = _inverses(xp, T) if inverted else (None, False)
            for k in range(T.shape[-3]):
                self.T.append(T[..., k, :, :])
                self.inv.append(inv[..., k, :, :] if usable else None)
        self.upper = upper

    def solve(self, xp, k, B):
        """``T_k^{-1} B``: by ``gesv`` (back substitution), or with the inverse, refined once
        (see the module's docstring)."""
        T, inv = self.T[k], self.inv[k]
        if not self.upper:
            B = B[..., ::-1, :]
        if inv is not None:
            X = xp.matmul(inv, B)
            if bool(xp.all(xp.isfinite(X))):  # (infinities: nothing to refine)
                X = X + xp.matmul(inv, B - xp.matmul(T, X))
        else:
            X = _gesv(xp, T, B)
        return X if self.upper else X[..., ::-1, :]


def _blocks(xp, A, B, X, diagonal, first_block):
    """Writes ``T^{-1} B`` into ``X``, for the triangle ``T`` of ``A`` whose first diagonal
    block is ``diagonal``'s ``first_block``."""
    n = A.shape[-1]
    if n <= _LEAF:
        X[...] = diagonal.solve(xp, first_block, B)
        return
    half = -(-n // _LEAF) // 2 * _LEAF  # a whole number of blocks on each side
    parts = [(slice(0, half), first_block), (slice(half, n), first_block + half // _LEAF)]
    if diagonal.upper:  # the bottom half first
        parts.reverse()
    (f, fk), (s, sk) = parts
    _blocks(xp, A[..., f, f], B[..., f, :], X[..., f, :], diagonal, fk)
    rest = B[..., s, :] - xp.matmul(A[..., s, f], X[..., f, :])
    _blocks(xp, A[..., s, s], rest, X[..., s, :], diagonal, sk)


def solve_triangular(xp, A, B, upper, unitriangular=False):
    """``T^{-1} B`` for the upper (or lower) triangle ``T`` of ``A`` (with ones on its diagonal
    if ``unitriangular``); batch dims broadcast."""
    if A.shape[-1] <= _SMALL:  # one block: gesv of the whole triangle, at the least cost
        T = _triangles(xp, A, upper, unitriangular)
        X = _gesv(xp, T, B if upper else B[..., ::-1, :])
        return X if upper else X[..., ::-1, :]
    shape = np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + tuple(B.shape[-2:])
    X = xp.empty(shape, dtype=np.result_type(A.dtype, B.dtype))
    # few right-hand sides: each block by ``gesv``; many: by its inverse (see above)
    diagonal = _Diagonal(xp, A, upper, unitriangular, inverted=B.shape[-1] > _LEAF)
    _blocks(xp, A, B, X, diagonal, 0)
    return X
