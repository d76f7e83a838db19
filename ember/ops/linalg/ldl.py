"""``linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve``: ``A = P L D L^T P^T`` of a symmetric
matrix with Bunch-Kaufman pivoting (1 x 1 and 2 x 2 diagonal blocks), in LAPACK's ``sytrf``
storage: ``L`` below the diagonal, ``D`` on it (a 2 x 2 block's off-diagonal entry below it),
and ``pivots`` 1-based int32, positive for a 1 x 1 block (the row swapped with this one),
negative and repeated for a 2 x 2 block. Only the lower triangle of ``A`` is read.

NumPy has no ``sytrf``: the factorization is ember's own, LAPACK's unblocked algorithm
(Bunch and Kaufman, Math. Comp. 31, 1977; the choice of pivot with
``alpha = (1 + sqrt(17)) / 8``), one Python step per column and per matrix: meant for the
sizes these functions are used at. Like PyTorch's, they have no derivative: their results
require grad, with PyTorch's ``NotImplemented`` node, which raises when backward reaches it.
"""
from __future__ import annotations

import math

import numpy as np

from .. import reduction as _reduction
from ..batching import per_sample
from ..operands import _underivable
from ..registry import defop
from ._common import _check_floating, _check_matrix

_ALPHA = (1 + math.sqrt(17)) / 8


def _magnitude(x):
    """LAPACK's ``cabs1``: ``|re| + |im|`` (``|x|`` for real numbers)."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _swap_symmetric(a, k, kk, kp, kstep):
    """Rows and columns ``kk`` and ``kp`` of the trailing lower triangle ``a[k:, k:]``."""
    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    segment = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
    a[kp, kk + 1:kp] = segment
    a[[kk, kp], [kk, kp]] = a[[kp, kk], [kp, kk]]
    if kstep == 2:
        a[[k + 1, kp], k] = a[[kp, k + 1], k]


def _sytf2(a):
    """Factor one matrix in place (lower); ``(pivots, info)``."""
    n = a.shape[-1]
    pivots = np.zeros(n, dtype=np.int32)
    info, k = 0, 0
    while k < n:
        kstep, absakk = 1, _magnitude(a[k, k])
        imax = k + 1 + int(np.argmax(_magnitude(a[k + 1:, k]))) if k < n - 1 else k
        colmax = _magnitude(a[imax, k]) if k < n - 1 else 0.0
        if max(absakk, colmax) == 0:  # a zero column: singular, nothing to eliminate
            info = info or k + 1
            kp = k
        else:
            kp = k
            if absakk < _ALPHA * colmax:
                rowmax = float(np.max(_magnitude(a[imax, k:imax])))
                if imax < n - 1:
                    rowmax = max(rowmax, float(np.max(_magnitude(a[imax + 1:, imax]))))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif _magnitude(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap_symmetric(a, k, kk, kp, kstep)
            if kstep == 1:
                if k < n - 1:
                    d11 = 1 / a[k, k]
                    column = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= d11 * np.tril(np.outer(column, column))
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                d21 = (1 / (d11 * d22 - 1)) / d21
                ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                wk, wk1 = d21 * (d11 * ck - ck1), d21 * (d22 * ck1 - ck)
                a[k + 2:, k + 2:] -= np.tril(np.outer(ck, wk) + np.outer(ck1, wk1))
                a[k + 2:, k], a[k + 2:, k + 1] = wk, wk1
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return pivots, info


@defop("linalg_ldl_factor_ex", n_in=1, nout=3, batch="loop")
def _ldl_factor_ex(xp, A, hermitian):
    host = A if isinstance(A, np.ndarray) else A.get()
    n = host.shape[-1]
    a = np.tril(host).reshape((-1, n, n)).copy()
    pivots = np.empty(a.shape[:2], dtype=np.int32)
    info = np.zeros(a.shape[0], dtype=np.int32)
    for b in range(a.shape[0]):
        pivots[b], info[b] = _sytf2(a[b])
    batch = host.shape[:-2]
    out = np.tril(a).reshape(host.shape), pivots.reshape(batch + (n,)), info.reshape(batch)
    return tuple(o if isinstance(A, np.ndarray) else xp.asarray(o) for o in out)


def _factors(A, hermitian):
    """The op's results, ``LD`` with PyTorch's node that refuses a backward."""
    LD, pivots, info = _ldl_factor_ex(A, hermitian)
    return _underivable(LD, "linalg_ldl_factor_ex", A), pivots, info


_LdlFactorExResult = _reduction.return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_LdlFactorResult = _reduction.return_type("linalg_ldl_factor", ("LD", "pivots"))


def _check_ldl(A, name, hermitian):
    _check_matrix(A, name)
    _check_floating(A, name)
    if hermitian and A.is_complex():
        raise NotImplementedError(f"{name}: ember factors complex Hermitian matrices "
                                  "(hermitian=True) only in PyTorch's sense of hetrf, which it "
                                  "does not implement yet")


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)``: the compact ``L D L^T`` factorization of a symmetric matrix
    (see the module docstring); ``info``: the first zero diagonal block, 1-based (0: none)."""
    _check_ldl(A, "torch.linalg.ldl_factor_ex", hermitian)
    LD, pivots, info = _factors(A, hermitian)
    if check_errors:
        _raise_singular(info, "torch.linalg.ldl_factor_ex")
    return _LdlFactorExResult((LD, pivots, info))


def _raise_singular(info, name):
    flat = np.asarray(info._data).reshape(-1)
    if flat.any():
        b = int(np.flatnonzero(flat)[0])
        prefix = f"(Batch element {b}): " if info.ndim else ""
        raise RuntimeError(f"{name}: {prefix}The factorization could not be completed because "
                           f"the input is singular (D[{int(flat[b])},{int(flat[b])}] is zero).")


def linalg_ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)`` of ``ldl_factor_ex``, raising for a singular matrix."""
    _check_ldl(A, "torch.linalg.ldl_factor_ex", hermitian)
    LD, pivots, info = _factors(A, hermitian)
    _raise_singular(info, "torch.linalg.ldl_factor")
    return _LdlFactorResult((LD, pivots))


def _sytrs(a, pivots, b):
    """``A^{-1} b`` for one matrix from its factors (LAPACK's ``sytrs``, lower)."""
    n = a.shape[-1]
    b = b.copy()
    k = 0
    while k < n:  # P L D: the forward substitutions and the blocks of D
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T
        b[k] -= a[k + 1:, k] @ b[k + 1:]
        if pivots[k] > 0:
            kp = pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
            kp = -pivots[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


@defop("linalg_ldl_solve", n_in=2, batch="loop")
def _ldl_solve(xp, LD, B, pivots):
    host = (lambda x: x) if isinstance(LD, np.ndarray) else (lambda x: x.get())
    ld, piv, b = host(LD), host(pivots), host(B)
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n = ld.shape[-1]
    ld = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n))
    piv = np.broadcast_to(piv, batch + (n,)).reshape((-1, n))
    bs = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = np.stack([_sytrs(ld[i], piv[i], bs[i]) for i in range(len(bs))]) if len(bs) else \
        np.array(bs)
    out = out.reshape(batch + b.shape[-2:])
    return out if isinstance(LD, np.ndarray) else xp.asarray(out)


@per_sample  # pivots are read as data: under vmap, once per sample
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    """The solution of ``A X = B`` from ``ldl_factor``'s ``(LD, pivots)``; batch dims
    broadcast. Like PyTorch's, it has no derivative."""
    name = "torch.linalg.ldl_solve"
    _check_matrix(LD, name)
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.ndim, 1)}"
                         f", {max(B.ndim, 1) - 1}], but got -2)")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype._word} and A of type {LD.dtype._word} instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    _check_ldl(LD, name, hermitian)
    return _underivable(_ldl_solve(LD, B, pivots._data), "linalg_ldl_solve", LD, B)
