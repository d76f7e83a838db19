"""Decompositions of ``torch.linalg``: ``cholesky``, ``qr``, ``eigh``/``eigvalsh``,
``svd``/``svdvals``, and what is read off them: ``pinv`` and ``matrix_rank``. They run on
NumPy's LAPACK and differentiate with PyTorch's formulas (``FunctionsManual.cpp``), written once
against the array namespace so second derivatives come from recording the first ones.
Gradients are for real inputs (complex inputs run forward only).
"""
from __future__ import annotations

import numpy as np

from ... import _creation, _xp
from ..._tensor import Tensor
from .. import reduction as _reduction
from ..autocast import autocast_op
from ..operands import _check_tensor
from ..registry import defop
from ._common import (
    _NOT_PD,
    _absent,
    _check_floating,
    _check_matrix,
    _eps,
    _failure,
    _mT,
    _not_positive_definite,
    real_only,
)
from ._lapack import lapack


@defop("linalg_cholesky_ex", n_in=1, jvp="transpose", batch="unchanged")
def _cholesky(xp, A, upper):
    try:
        L = xp.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise _failure("linalg.cholesky", A, _not_positive_definite, _NOT_PD) from None
    if not bool(xp.all(xp.diagonal(L, axis1=-2, axis2=-1) > 0)):
        # a NaN pivot: OpenBLAS's potrf carries it on (NaN factors, no error) where LAPACK's
        # reference and MKL report the minor, and PyTorch raises
        raise _failure("linalg.cholesky", A, _first_nan_pivot, _NOT_PD)
    return _mT(xp, L).copy() if upper else L


def _first_nan_pivot(a):
    """The order of the first leading minor of ``a`` whose Cholesky pivot is not positive
    (NaN included), 0 if there is none."""
    bad = np.flatnonzero(~(np.diagonal(np.linalg.cholesky(a)) > 0))
    return int(bad[0]) + 1 if bad.size else 0


def _cholesky_backward(xp, g, ans, A, upper):
    """PyTorch's ``cholesky_backward`` (Murray, arXiv:1602.07527): with ``phi(X)`` the lower
    triangle of ``X`` with its diagonal halved, ``gA = L^{-T} sym(phi(L^T gL)) L^{-1} / 2``."""
    L, gL = (_mT(xp, ans), _mT(xp, g)) if upper else (ans, g)
    gA = xp.tril(xp.matmul(_mT(xp, L), gL))
    gA = 0.5 * (gA + _mT(xp, xp.tril(gA, -1)))
    gA = xp.linalg_solve_triangular(_mT(xp, L), gA, upper=True)
    return xp.linalg_solve_triangular(L, gA, upper=False, left=False)


_cholesky.defvjp(real_only("linalg.cholesky", _cholesky_backward))


@autocast_op("linalg_cholesky")
def linalg_cholesky(A, *, upper=False):
    """The lower triangular ``L`` with ``A = L L^T`` (``upper=True``: ``U = L^T``) of a
    symmetric positive-definite matrix."""
    _check_matrix(A, "linalg.cholesky")
    _check_floating(A, "linalg.cholesky")
    return _cholesky(A, upper)


@defop("linalg_qr", n_in=1, nout=2, jvp="transpose", batch="unchanged")
def _qr(xp, A, mode):
    if mode == "r":
        return xp.zeros((0,), dtype=A.dtype), xp.linalg.qr(A, mode="r")
    Q, R = xp.linalg.qr(A, mode=mode)
    return Q, R


def _qr_backward(xp, g, ans, A, mode):
    """PyTorch's ``linalg_qr_backward``: for ``m >= n``,
    ``gA = (gQ + Q copyltu(triu(gR R^T - Q^T gQ))) R^{-T}``; wide matrices add the part of
    ``A`` beyond the first ``m`` columns."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    (Q, R), (gQ, gR) = ans, g
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gA = xp.matmul(gR, _mT(xp, R)) - xp.matmul(_mT(xp, Q), gQ)
    if m >= n:
        gA = xp.matmul(Q, xp.triu(gA) + _mT(xp, xp.triu(gA, 1))) + gQ
        return xp.linalg_solve_triangular(_mT(xp, R), gA, upper=False, left=False)
    gA = xp.matmul(Q, xp.tril(_mT(xp, gA) - gA))
    gA = xp.linalg_solve_triangular(_mT(xp, R[..., :m]), gA, upper=False, left=False)
    return xp.concat([gA, xp.zeros_like(R[..., m:])], axis=-1) + xp.matmul(Q, gR)


_qr.defvjp(real_only("linalg.qr", _qr_backward))
_QrResult = _reduction.return_type("linalg_qr", ("Q", "R"))


@autocast_op("linalg_qr")
def linalg_qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns and ``R`` upper triangular;
    ``mode`` 'reduced', 'complete', or 'r' (``R`` only; ``Q`` is empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrix(A, "linalg.qr", square=False)
    _check_floating(A, "linalg.qr")
    return _QrResult(_qr(A, mode))


@defop("linalg_eigh", n_in=1, nout=2, jvp="transpose", batch="unchanged")
def _eigh(xp, A, UPLO):
    L, V = xp.linalg.eigh(A, UPLO=UPLO)
    return L, V


def _eigh_backward(xp, g, ans, A, UPLO):
    """PyTorch's ``linalg_eig_backward`` for symmetric matrices:
    ``gA = V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i``."""
    (L, V), (gL, gV) = ans, g
    if _absent(xp, gV):  # eigenvalues only: no division by eigenvalue gaps
        return xp.matmul(V * gL[..., None, :], _mT(xp, V))
    VtgV = xp.matmul(_mT(xp, V), gV)
    VtgV = 0.5 * (VtgV - _mT(xp, VtgV))
    E = L[..., None, :] - L[..., :, None] + xp.diag_embed(xp.ones_like(L))
    return xp.matmul(V, xp.matmul(VtgV / E + xp.diag_embed(gL), _mT(xp, V)))


_eigh.defvjp(real_only("linalg.eigh", _eigh_backward))
_EighResult = _reduction.return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


def _check_uplo(UPLO):
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


@autocast_op("linalg_eigh")
def linalg_eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, read from
    its lower (``UPLO='L'``) or upper triangle."""
    _check_matrix(A, "linalg.eigh")
    _check_floating(A, "linalg.eigh")
    return _EighResult(_eigh(A, _check_uplo(UPLO)))


@autocast_op("linalg_eigvalsh")
def linalg_eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric matrix."""
    _check_matrix(A, "linalg.eigh")
    _check_floating(A, "linalg.eigh")
    return _eigh(A, _check_uplo(UPLO))[0]


@defop("linalg_svd", n_in=1, nout=3, jvp="transpose", batch="unchanged")
def _svd(xp, A, full_matrices):
    U, S, Vh = lapack(xp, A).svd(A, full_matrices=full_matrices)
    return U, S, Vh


def _svd_backward(xp, g, ans, A, full_matrices):
    """PyTorch's ``svd_backward`` for real matrices (distinct singular values; full rank when
    rectangular). With ``skew(X) = X - X^T`` and ``E_jk = S_k^2 - S_j^2``:
    ``gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] V^T``, plus the parts
    of ``gU`` (tall) or ``gVh`` (wide) outside the span of ``U`` or ``V``."""
    (U, S, Vh), (gU, gS, gVh) = ans, g
    k = S.shape[-1]
    if full_matrices:  # only the first k singular vectors are determined by A
        U, Vh, gU, gVh = U[..., :k], Vh[..., :k, :], gU[..., :k], gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    use_U, use_V = not _absent(xp, gU), not _absent(xp, gVh)
    if not (use_U or use_V):  # singular values only (svdvals, norms)
        return (xp.matmul(U, gS[..., :, None] * Vh) if m >= n else
                xp.matmul(U * gS[..., None, :], Vh))
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None] + xp.diag_embed(xp.ones_like(S))
    if use_U:
        UtgU = xp.matmul(_mT(xp, U), gU)
        UtgU = UtgU - _mT(xp, UtgU)
    if use_V:
        VtgV = xp.matmul(Vh, _mT(xp, gVh))
        VtgV = VtgV - _mT(xp, VtgV)
    if use_U and use_V:
        inner = (UtgU * S[..., None, :] + S[..., :, None] * VtgV) / E
    elif use_U:
        inner = (UtgU / E) * S[..., None, :]
    else:
        inner = S[..., :, None] * (VtgV / E)
    inner = inner + xp.diag_embed(gS)
    if m > n and use_U:
        gUSinv = gU / S[..., None, :]
        gA = xp.matmul(U, inner) + gUSinv - xp.matmul(U, xp.matmul(_mT(xp, U), gUSinv))
        return xp.matmul(gA, Vh)
    if m < n and use_V:
        SinvgVh = gVh / S[..., :, None]
        gA = xp.matmul(inner, Vh) + SinvgVh - xp.matmul(xp.matmul(SinvgVh, _mT(xp, Vh)), Vh)
        return xp.matmul(U, gA)
    if m >= n:
        return xp.matmul(U, xp.matmul(inner, Vh))
    return xp.matmul(xp.matmul(U, inner), Vh)


_svd.defvjp(real_only("linalg.svd", _svd_backward))
_SvdResult = _reduction.return_type("linalg_svd", ("U", "S", "Vh"))


@autocast_op("linalg_svd")
def linalg_svd(A, full_matrices=True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending; the singular
    vectors are defined up to sign, so differentiate only sign-invariant functions of them."""
    _check_matrix(A, "linalg.svd", square=False)
    _check_floating(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return _SvdResult(_svd(A, full_matrices))


_xp.register_extra("linalg_svd", lambda xp, A, full_matrices=True: tuple(
    lapack(xp, A).svd(A, full_matrices=full_matrices)), linalg_svd)


@autocast_op("linalg_svdvals")
def linalg_svdvals(A, *, driver=None):
    """The singular values of a (batch of) matrices, descending."""
    _check_matrix(A, "linalg.svd", square=False)
    _check_floating(A, "linalg.svd")
    return _svd(A, False)[1]


@defop("linalg_pinv", n_in=1, jvp="transpose", batch="unchanged")
def _pinv(xp, A, atol, rtol, hermitian):
    if hermitian:
        L, V = xp.linalg.eigh(A)
        magnitude = xp.abs(L)
        tol = xp.maximum(atol, rtol * xp.max(magnitude, axis=-1, keepdims=True))
        inverse = xp.where(magnitude > tol, 1 / xp.where(L == 0, 1, L), 0).astype(A.dtype)
        return xp.matmul(V * inverse[..., None, :], _mT(xp, V))
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    tol = xp.maximum(atol, rtol * S[..., :1])
    inverse = xp.where(S > tol, 1 / xp.where(S == 0, 1, S), 0).astype(A.dtype)
    return xp.matmul(_mT(xp, Vh) * inverse[..., None, :], _mT(xp, U))


def _pinv_backward(xp, g, ans, A, atol, rtol, hermitian):
    """PyTorch's ``pinv_backward`` (the derivative of ``A^+`` where its rank is constant)."""
    P, Pt, gt = ans, _mT(xp, ans), _mT(xp, g)
    m, n = A.shape[-2], A.shape[-1]
    if m <= n:
        K = xp.matmul(gt, P)
        KPt = xp.matmul(K, Pt)
        return (-_mT(xp, xp.matmul(P, K)) + KPt - xp.matmul(xp.matmul(A, P), KPt) +
                xp.matmul(xp.matmul(Pt, P), gt - xp.matmul(K, A)))
    K = xp.matmul(P, gt)
    PtK = xp.matmul(Pt, K)
    return (-_mT(xp, xp.matmul(K, P)) + xp.matmul(xp.matmul(gt - xp.matmul(A, K), P), Pt) +
            PtK - xp.matmul(xp.matmul(PtK, P), A))


_pinv.defvjp(real_only("linalg.pinv", _pinv_backward))


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (``hermitian``: the eigendecomposition);
    singular values below ``max(atol, rtol * largest)`` count as zero (``rtol`` defaults to
    ``eps * max(m, n)`` unless ``atol > 0`` is given)."""
    if A.ndim < 2 or A.dtype.category < 2 or A.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({A.dtype._word}{{{list(A.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    atol = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol = 0.0 if atol > 0 else _eps(A._data) * max(A.shape[-2:])
    return _pinv(A, atol, float(rtol), hermitian)


_EPS = {np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float64): 2.0 ** -52,
        np.dtype(np.complex64): 2.0 ** -23, np.dtype(np.complex128): 2.0 ** -52}


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
