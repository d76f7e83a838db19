"""LU factors and the ``_ex`` forms of ``torch.linalg``: ``lu_factor``/``lu_factor_ex``, ``lu``,
``lu_solve``, and ``cholesky_ex``, ``inv_ex``, ``solve_ex`` (which report a failure in an
``info`` tensor instead of raising, unless ``check_errors``).

NumPy exposes no ``getrf``, so the LU factors are ember's own (``_getrf``): partial pivoting
as LAPACK's, by recursive halving of the columns (Toledo, SIAM J. Matrix Anal. Appl. 18,
1997), so all the arithmetic but that of panels ``_LEAF`` columns wide is matrix products.
Pivots are LAPACK's: 1-based int32 row interchanges applied in order.

Derivatives of ``A = P L U`` (square; the tall and wide cases below): from
``L^{-1} P^T dA U^{-1} = L^{-1} dL + dU U^{-1}``, strictly lower plus upper,
``gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}``.
"""
from __future__ import annotations

import numpy as np

from ... import _creation, _dtypes, _xp
from .. import reduction as _reduction
from ..batching import per_sample
from ..registry import defop
from . import _triangular
from ._common import (
    _NOT_PD,
    _SINGULAR,
    _SOLVE_SINGULAR,
    _check_floating,
    _check_matrix,
    _LinAlgError,
    _mT,
    _recording,
    real_only,
)
from .decompositions import _cholesky_backward, linalg_cholesky
from .solvers import _vector_rhs, linalg_inv, linalg_solve

# Columns of a panel factored one column at a time: below, a Python step per column costs
# more than the matrix product that would replace it.
_LEAF = 16


# ------------------------------------------------------------------------- the factors

def _pivot_magnitude(xp, x):
    """LAPACK's ``i?amax`` measure: ``|x|``, and ``|re| + |im|`` for complex entries."""
    if x.dtype.kind == "c":
        return xp.abs(x.real) + xp.abs(x.imag)
    return xp.abs(x)


def _panel(xp, a, c0, c1, pivots, info):
    """Factor columns ``c0:c1`` of ``a`` (rows ``c0:``) one column at a time; row swaps are
    applied to whole rows, as LAPACK applies them left and right of the panel.

    The panel is factored transposed, as one contiguous copy: a step's pivot search, scaling
    and rank-1 update then run along rows of ``m - c0`` elements, where on ``a`` each inner
    loop is as short as what is left of the panel's width (the whole factorisation of
    74 x 112 x 112, float32: 19.8 -> 16.2 ms). The operations and their order are the same:
    so are the factors, bit for bit."""
    rows = xp.arange(a.shape[0])
    pT = xp.ascontiguousarray(xp.swapaxes(a[:, c0:, c0:c1], 1, 2))  # (batch, width, m - c0)
    for j in range(c1 - c0):
        p = j + xp.argmax(_pivot_magnitude(xp, pT[:, j, j:]), axis=1)
        pivots[:, c0 + j] = c0 + p + 1
        swap = pT[rows, :, p].copy()
        pT[rows, :, p] = pT[:, :, j]
        pT[:, :, j] = swap
        pivot = pT[:, j, j]
        zero = pivot == 0  # nothing to pivot on (the column is zero): LAPACK notes it
        info[(info == 0) & zero] = c0 + j + 1
        # scaled by the reciprocal, as LAPACK's getf2 does (where the pivot is not tiny)
        pT[:, j, j + 1:] *= (1 / xp.where(zero, 1, pivot))[:, None]
        pT[:, j + 1:, j + 1:] -= pT[:, j, None, j + 1:] * pT[:, j + 1:, j, None]  # L U
    for j in range(c0, c1):  # the same interchanges on the rest of the rows, in order
        p = pivots[:, j] - 1
        swap = a[rows, p].copy()
        a[rows, p] = a[rows, j]
        a[rows, j] = swap
    a[:, c0:, c0:c1] = xp.swapaxes(pT, 1, 2)


def _factor(xp, a, c0, c1, pivots, info):
    """Factor columns ``c0:c1`` (rows ``c0:``): the left half, the block row of ``U`` right of
    it (a unit-lower solve), the Schur complement update (one product), the right half."""
    if c1 - c0 <= _LEAF:
        _panel(xp, a, c0, c1, pivots, info)
        return
    h = c0 + (c1 - c0) // 2
    _factor(xp, a, c0, h, pivots, info)
    a[:, c0:h, h:c1] = _triangular.solve_triangular(xp, a[:, c0:h, c0:h], a[:, c0:h, h:c1],
                                                    False, True)
    a[:, h:, h:c1] -= xp.matmul(a[:, h:, c0:h], a[:, c0:h, h:c1])
    _factor(xp, a, h, c1, pivots, info)


def _getrf(xp, A):
    """``(LU, pivots, info)`` of a (batch of) ``m x n`` matrices, as LAPACK's ``getrf``."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    a = xp.array(A, copy=True).reshape((int(np.prod(batch)), m, n))
    pivots = xp.empty((a.shape[0], k), dtype=np.int32)
    info = xp.zeros(a.shape[0], dtype=np.int32)
    if a.shape[0] and k:
        _factor(xp, a, 0, k, pivots, info)
        if n > m:  # the columns right of the square: U's block row
            a[:, :, m:] = _triangular.solve_triangular(xp, a[:, :, :m], a[:, :, m:], False, True)
    return a.reshape(A.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(xp, pivots, m):
    """The row order ``perm`` of LAPACK ``pivots`` (``A[perm] = L U``), one row per matrix."""
    flat = pivots.reshape((int(np.prod(pivots.shape[:-1])), pivots.shape[-1])) - 1
    perm = xp.broadcast_to(xp.arange(m), (flat.shape[0], m)).copy()
    rows = xp.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        swap = perm[rows, p].copy()
        perm[rows, p] = perm[:, j]
        perm[:, j] = swap
    return perm.reshape(pivots.shape[:-1] + (m,))


def _rows(xp, B, order):
    """``B[..., order, :]`` per matrix (``order`` broadcast against ``B``'s batch): one ``take``
    of whole rows from the matrices' rows stacked, where ``take_along_axis`` (or a product with
    the permutation matrix) works element by element: 65 x 97 x 65, 0.12 against 1.07 ms."""
    m, k = B.shape[-2:]
    batch = tuple(B.shape[:-2])
    nb = int(np.prod(batch))
    flat = xp.reshape(xp.broadcast_to(order, batch + (m,)), (nb, m)) + \
        xp.arange(nb)[:, None] * m
    return xp.reshape(xp.take(xp.reshape(B, (nb * m, k)), xp.reshape(flat, (-1,)), axis=0),
                      batch + (m, k))


def _host(x):
    """The raw array of a Tensor (rules under ``create_graph`` hold Tensors), or ``x``."""
    return getattr(x, "_data", x)


def _permutation_matrix(xp, pivots, m, dtype):
    """``P`` with ``A = P L U`` (``P[perm[i], i] = 1``), in the namespace of the rule."""
    raw = _host(pivots)
    rxp = _xp.namespace_of(raw)
    P = _mT(rxp, rxp.eye(m, dtype=getattr(dtype, "np", dtype))[_permutation(rxp, raw, m)])
    return xp.asarray(P) if _recording(xp) else P


def _unpack(xp, LU):
    """``L`` (unit lower, ``m x k``) and ``U`` (upper, ``k x n``) of packed factors."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    L = xp.tril(LU[..., :, :k], -1) + xp.eye(m, k, dtype=LU.dtype)
    return L, xp.triu(LU[..., :k, :])


def _lu_backward(xp, gL, gU, permute, L, U):
    """The gradient of ``A = P L U`` from those of ``L`` and ``U`` (see the module docstring;
    tall: ``L = [L1; L2]``, wide: ``U = [U1, U2]``, the same identity on the square part and
    the rest by a triangular solve). Only the strict lower part of ``gL``'s square block and
    the upper part of ``gU``'s count: the products below mask the rest."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)

    def lower_t(X):  # L1^{-T} X
        return xp.linalg_solve_triangular(_mT(xp, L[..., :k, :]), X, upper=True,
                                          unitriangular=True)

    def upper_t(X):  # X U1^{-T}
        return xp.linalg_solve_triangular(_mT(xp, U[..., :, :k]), X, upper=False, left=False)

    if m == n:
        M = xp.tril(xp.matmul(_mT(xp, L), gL), -1) + xp.triu(xp.matmul(gU, _mT(xp, U)))
        gA = upper_t(lower_t(M))
    elif m > n:
        L1, L2, gL1, gL2 = L[..., :k, :], L[..., k:, :], gL[..., :k, :], gL[..., k:, :]
        M = xp.tril(xp.matmul(_mT(xp, L1), gL1), -1) + \
            xp.triu(xp.matmul(gU, _mT(xp, U)) - xp.matmul(_mT(xp, L2), gL2))
        gA = upper_t(xp.concat([lower_t(M), gL2], axis=-2))
    else:
        U1, U2, gU1, gU2 = U[..., :k], U[..., k:], gU[..., :k], gU[..., k:]
        M = xp.tril(xp.matmul(_mT(xp, L), gL) - xp.matmul(gU2, _mT(xp, U2)), -1) + \
            xp.triu(xp.matmul(gU1, _mT(xp, U1)))
        gA = lower_t(xp.concat([upper_t(M), gU2], axis=-1))
    return permute(gA)  # P gA


@defop("linalg_lu_factor_ex", n_in=1, nout=3, jvp="transpose", batch="unchanged")
def _lu_factor_ex(xp, A):
    return _getrf(xp, A)


def _lu_factor_ex_backward(xp, g, ans, A):
    LU, pivots = ans[0], ans[1]
    m, n = LU.shape[-2:]
    k = min(m, n)
    L, U = _unpack(xp, LU)
    return _lu_backward(xp, g[0][..., :, :k], g[0][..., :k, :], _permute(xp, pivots, m, LU.dtype),
                        L, U)


def _permute(xp, pivots, m, dtype, transpose=False):
    """``P X`` (``P^T X`` if ``transpose``) for ``A = P L U`` given by its pivots: a product with
    ``P`` where the rule is recorded, else the rows of ``X`` reordered (``_rows``; a product
    would also turn an infinity into NaN)."""
    if _recording(xp):
        P = _permutation_matrix(xp, pivots, m, dtype)
        return lambda X: xp.matmul(_mT(xp, P) if transpose else P, X)
    perm = _permutation(xp, _host(pivots), m)  # (P^T X)[i] = X[perm[i]]
    order = perm if transpose else xp.argsort(perm, axis=-1)
    return lambda X: _rows(xp, X, order)


_lu_factor_ex.defvjp(_lu_factor_ex_backward)
_lu_factor_ex.saved_outputs = (0, 1)
_LuFactorExResult = _reduction.return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LuFactorResult = _reduction.return_type("linalg_lu_factor", ("LU", "pivots"))
_LuResult = _reduction.return_type("linalg_lu", ("P", "L", "U"))


def _check_lu_input(A, name, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype.category < 2 or A.dtype.itemsize < 4:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype._word}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: the packed LU factors with partial pivoting (``L`` unit lower
    below the diagonal, ``U`` on and above it), LAPACK's 1-based int32 row interchanges, and
    ``info``, the 1-based index of the first zero pivot (0 if none)."""
    _check_lu_input(A, "torch.linalg.lu_factor_ex", pivot)
    result = _lu_factor_ex(A)
    if check_errors:
        _raise_zero_pivot(result[2], "torch.linalg.lu_factor_ex")
    return _LuFactorExResult(result)


def _raise_zero_pivot(info, name):
    info = np.asarray(_host(info.detach()) if hasattr(info, "detach") else info)
    failing = np.flatnonzero(info.reshape(-1))
    if failing.size:
        b = int(failing[0])
        i = int(info.reshape(-1)[b])
        prefix = f"(Batch element {b}): " if info.ndim else ""
        raise RuntimeError(f"{name}: {prefix}U[{i},{i}] is zero and using it on lu_solve would "
                           "result in a division by zero. If you still want to perform the "
                           "factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")


def linalg_lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` of ``lu_factor_ex``; raises where a pivot is zero (a singular
    matrix), as ``lu_solve`` would divide by it."""
    _check_lu_input(A, "torch.lu_factor", pivot)
    LU, pivots, info = _lu_factor_ex(A)
    _raise_zero_pivot(info._data, "torch.linalg.lu_factor")
    return _LuFactorResult((LU, pivots))


@defop("linalg_lu", n_in=1, nout=3, jvp="transpose", batch="unchanged")
def _lu(xp, A):
    LU, pivots, _ = _getrf(xp, A)
    L, U = _unpack(xp, LU)
    return _permutation_matrix(xp, pivots, A.shape[-2], A.dtype).astype(A.dtype), L, U


def _lu_rule(xp, g, ans, A):
    P, L, U = ans
    return _lu_backward(xp, g[1], g[2], lambda X: xp.matmul(P, X), L, U)


_lu.defvjp(_lu_rule)


def linalg_lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation matrix (no gradient), ``L`` unit
    lower ``m x k``, ``U`` upper ``k x n``, ``k = min(m, n)``."""
    _check_lu_input(A, "linalg.lu", pivot)
    P, L, U = _lu(A)
    return _LuResult((P.detach(), L, U))


# ------------------------------------------------------------------------- solving with them

def _lu_solve_left(xp, LU, pivots, B, adjoint):
    """``A^{-1} B`` (``adjoint``: ``A^{-H} B``) for ``A = P L U`` given by its packed factors."""
    m = LU.shape[-1]
    batch = np.broadcast_shapes(LU.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    B = xp.broadcast_to(B, batch + tuple(B.shape[-2:]))
    perm = _permutation(xp, pivots, m)
    if not adjoint:  # U^{-1} L^{-1} P^T B
        Y = _rows(xp, B, perm)
        Y = _triangular.solve_triangular(xp, LU, Y, False, True)
        return _triangular.solve_triangular(xp, LU, Y, True, False)
    LUh = xp.conj(_mT(xp, LU))  # P L^{-H} U^{-H} B
    Y = _triangular.solve_triangular(xp, LUh, B, False, False)
    Y = _triangular.solve_triangular(xp, LUh, Y, True, True)
    return _rows(xp, Y, xp.argsort(perm, axis=-1))


def _lu_solve_raw(xp, LU, pivots, B, left=True, adjoint=False):
    if left:
        return _lu_solve_left(xp, LU, pivots, B, adjoint)
    # X A = B  <=>  A^H X^H = B^H
    Bh = xp.conj(_mT(xp, B))
    return xp.conj(_mT(xp, _lu_solve_left(xp, LU, pivots, Bh, not adjoint)))


@defop("linalg_lu_solve", n_in=2, jvp="transpose", batch="loop")
def _lu_solve(xp, LU, B, pivots, left, adjoint):
    return _lu_solve_raw(xp, LU, pivots, B, left, adjoint)


def _lu_solve_gB(xp, g, LU, pivots, left, adjoint):
    return xp.linalg_lu_solve(LU, pivots, g, left=left, adjoint=not adjoint)


def _lu_solve_gLU(xp, g, ans, LU, B, pivots, left, adjoint):
    """The gradient of the implied ``A`` (``-gB X^T`` for ``A X = B``, and so on), then the
    one of its factors: ``gL = tril(P^T gA U^T, -1)``, ``gU = triu(L^T P^T gA)``."""
    gB, X = _lu_solve_gB(xp, g, LU, pivots, left, adjoint), ans
    if left:
        gA = -xp.matmul(X, _mT(xp, gB)) if adjoint else -xp.matmul(gB, _mT(xp, X))
    else:
        gA = -xp.matmul(_mT(xp, gB), X) if adjoint else -xp.matmul(_mT(xp, X), gB)
    L, U = _unpack(xp, LU)
    PtgA = _permute(xp, pivots, LU.shape[-1], LU.dtype, transpose=True)(gA)
    return xp.tril(xp.matmul(PtgA, _mT(xp, U)), -1) + xp.triu(xp.matmul(_mT(xp, L), PtgA))


_lu_solve.defvjp(real_only("linalg.lu_solve", _lu_solve_gLU),
                 real_only("linalg.lu_solve", lambda xp, g, ans, LU, B, pivots, left, adjoint:
                           _lu_solve_gB(xp, g, LU, pivots, left, adjoint)))
_xp.register_extra("linalg_lu_solve", _lu_solve_raw,
                   lambda LU, pivots, B, left=True, adjoint=False:
                   _lu_solve(LU, B, _host(pivots), left, adjoint))


@per_sample  # pivots are read as data: under vmap, once per sample
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``; ``A^H`` for ``A``
    with ``adjoint``) from ``lu_factor``'s ``(LU, pivots)``; batch dims broadcast."""
    name = "linalg.lu_solve"
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_matrix(LU, "torch.linalg.lu_solve")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if pivots.dtype != _dtypes.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if pivots.ndim < 1 or pivots.shape[-1] != n:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {LU.dtype._word} and B of type {B.dtype._word} instead")
    _check_floating(LU, name)
    p = _host(pivots)
    if p.size and int(p.min()) < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you "
                           "properly pass the result of lu_factor?")
    if p.size and int(p.max()) > n:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")
    return _lu_solve(LU, B, p, left, adjoint)


# ------------------------------------------------------------------------- the ``_ex`` forms

def _batch_prefix(info):
    """PyTorch's ``(Batch element b): `` naming the first failing matrix, and its ``info``."""
    info = np.asarray(_host(info))
    flat = info.reshape(-1)
    b = int(np.flatnonzero(flat)[0])
    return (f"(Batch element {b}): " if info.ndim else ""), int(flat[b])


def _potf2(xp, A):
    """``(L, info)`` as LAPACK's unblocked ``potf2`` (lower) leaves them: the columns before
    the first non-positive pivot factored, that pivot's value in its place, the rest of the
    lower triangle as it was (read only when some matrix is not positive-definite)."""
    n = A.shape[-1]
    a = xp.array(A, copy=True).reshape((int(np.prod(A.shape[:-2])), n, n))
    info = xp.zeros(a.shape[0], dtype=np.int32)
    for j in range(n):
        row = a[:, j, :j]
        d = a[:, j, j] - xp.sum((row * xp.conj(row)).real if row.dtype.kind == "c" else row * row,
                                axis=-1)
        active = info == 0
        bad = active & ~(d.real > 0) if d.dtype.kind == "c" else active & ~(d > 0)
        info[bad] = j + 1
        ok = active & ~bad
        pivot = xp.sqrt(xp.where(ok, d, 1))
        a[:, j, j] = xp.where(ok | bad, xp.where(ok, pivot, d), a[:, j, j])
        column = (a[:, j + 1:, j] - xp.matmul(a[:, j + 1:, :j], xp.conj(row)[..., None])[..., 0]) \
            / pivot[:, None]
        a[:, j + 1:, j] = xp.where(ok[:, None], column, a[:, j + 1:, j])
    return xp.tril(a).reshape(A.shape), info.reshape(A.shape[:-2])


@defop("linalg_cholesky_ex", n_in=1, nout=2, jvp="transpose", batch="unchanged")
def _cholesky_failing(xp, A, upper):
    L, info = _potf2(xp, xp.conj(_mT(xp, A)) if upper else A)
    return (xp.conj(_mT(xp, L)) if upper else L), info


_cholesky_failing.defvjp(lambda xp, g, ans, A, upper: _cholesky_backward(xp, g[0], ans[0], A,
                                                                         upper))
_cholesky_failing.saved_outputs = (0,)
_CholeskyExResult = _reduction.return_type("linalg_cholesky_ex", ("L", "info"))


def _zero_info(A):
    return _creation.zeros(tuple(A.shape[:-2]), dtype=_dtypes.int32)


def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: ``linalg.cholesky`` that reports in ``info`` the order of the first
    leading minor that is not positive-definite (0 if none) instead of raising, unless
    ``check_errors``."""
    _check_matrix(A, "linalg.cholesky")
    _check_floating(A, "linalg.cholesky")
    try:
        return _CholeskyExResult((linalg_cholesky(A, upper=upper), _zero_info(A)))
    except _LinAlgError:
        L, info = _cholesky_failing(A, upper)
    if check_errors:
        prefix, i = _batch_prefix(info._data)
        raise _LinAlgError(f"linalg.cholesky_ex: {prefix}{_NOT_PD.format(i)}")
    return _CholeskyExResult((L, info))


def _singular_solve(xp, A, B, left):
    """``A^{-1} B`` through ember's LU factors, with the infinities and NaNs of LAPACK's
    substitution where ``A`` is singular (where ``gesv`` refuses), and ``info``."""
    LU, pivots, info = _getrf(xp, A)
    return _lu_solve_raw(xp, LU, pivots, B, left), info


@defop("linalg_inv_ex", n_in=1, nout=2, jvp="transpose", batch="unchanged")
def _inv_singular(xp, A):
    eye = xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    return _singular_solve(xp, A, eye, True)


_inv_singular.defvjp(lambda xp, g, ans, A: -xp.matmul(_mT(xp, ans[0]),
                                                      xp.matmul(g[0], _mT(xp, ans[0]))))
_inv_singular.saved_outputs = (0,)
_InvExResult = _reduction.return_type("linalg_inv_ex", ("inverse", "info"))


def linalg_inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: ``linalg.inv`` that reports a singular matrix in ``info`` (the
    first zero pivot of its LU factors) instead of raising, unless ``check_errors``; the
    inverse of a singular matrix is then LAPACK's (infinities, NaNs)."""
    _check_matrix(A, "linalg.inv")
    _check_floating(A, "linalg.inv")
    try:
        return _InvExResult((linalg_inv(A), _zero_info(A)))
    except _LinAlgError:
        inverse, info = _inv_singular(A)
    if check_errors:
        prefix, i = _batch_prefix(info._data)
        raise _LinAlgError(f"linalg.inv_ex: {prefix}{_SINGULAR.format(i)}")
    return _InvExResult((inverse, info))


@defop("linalg_solve_ex", n_in=2, nout=2, jvp="transpose", batch="loop")
def _solve_singular(xp, A, B, left):
    vector = _vector_rhs(A.shape, B.shape)
    X, info = _singular_solve(xp, A, B[..., None] if vector else B, left)
    return (X[..., 0] if vector else X), info


def _solve_singular_gB(xp, g, A, left):
    return xp.linalg_solve(_mT(xp, A), g[0], left=left)


def _solve_singular_gA(xp, g, ans, A, B, left):
    gB, X = _solve_singular_gB(xp, g, A, left), ans[0]
    if _vector_rhs(A.shape, X.shape):
        return -(gB[..., :, None] * X[..., None, :])
    return -xp.matmul(gB, _mT(xp, X)) if left else -xp.matmul(_mT(xp, X), gB)


_solve_singular.defvjp(_solve_singular_gA,
                       lambda xp, g, ans, A, B, left: _solve_singular_gB(xp, g, A, left))
_solve_singular.saved_outputs = (0,)
_SolveExResult = _reduction.return_type("linalg_solve_ex", ("result", "info"))


def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)``: ``linalg.solve`` that reports a singular ``A`` in ``info`` instead
    of raising, unless ``check_errors``."""
    try:
        return _SolveExResult((linalg_solve(A, B, left=left), _zero_info(A)))
    except _LinAlgError:
        result, info = _solve_singular(A, B, left)
    if check_errors:
        prefix, _ = _batch_prefix(info._data)
        raise _LinAlgError(f"torch.linalg.solve_ex: {prefix}{_SOLVE_SINGULAR}")
    return _SolveExResult((result, info))
