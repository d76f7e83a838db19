"""The eigendecomposition of general (non-symmetric) matrices: ``linalg.eig`` and
``linalg.eigvals``. Eigenvalues and eigenvectors are complex whatever the input (LAPACK's
``geev`` through NumPy: each eigenvector of unit norm with its largest component real, in
LAPACK's order).

The derivative, in PyTorch's convention for complex gradients (``g = dL/dRe + i dL/dIm``):
from ``A V = V L``, ``V^{-1} dA V = dL + C L - L C`` with ``C = V^{-1} dV``, so
``dL = diag(V^{-1} dA V)`` and ``C_ij = (V^{-1} dA V)_ij / (L_j - L_i)`` off the diagonal;
the unit norm of each eigenvector fixes ``Re(V^H dV)``'s diagonal, and its phase is free.
Hence ``gA = V^{-H} (diag(gL) + (G - V^H V Re(diag G)) / conj(E)) V^H`` with
``G = V^H gV``, ``E_ij = L_j - L_i`` off the diagonal. A loss that depends on the phases
(``Im(diag G)`` not zero) is ill-defined, and refused as PyTorch refuses it.
"""
from __future__ import annotations

import numpy as np

from ... import _creation, _dtypes, _recording
from ...autograd import grad_mode
from .. import reduction as _reduction
from ..pointwise import where
from ..registry import defop
from ._common import _absent, _check_matrix, _mT
from ._common import _recording as _recorded

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
            np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}


@defop("linalg_eig", n_in=1, nout=2, jvp="transpose", batch="unchanged", holomorphic=False)
def _eig(xp, A):
    dtype = _COMPLEX[np.dtype(A.dtype)]
    if A.size == 0:
        return xp.zeros(A.shape[:-1], dtype=dtype), xp.zeros(A.shape, dtype=dtype)
    L, V = xp.linalg.eig(A)
    return L.astype(dtype), V.astype(dtype)


def _adjoint(xp, X):
    return xp.conj(_mT(xp, X))


def _phase_dependent(d):
    """Whether the loss depends on the eigenvectors' phases: ``d``, the diagonal of
    ``V^H gV``, is not real up to rounding."""
    if not d.size:
        return False
    scale = float(abs(d).max())
    eps = 2.0 ** -23 if d.dtype.itemsize == 8 else 2.0 ** -52  # complex64: float32's
    return float(abs(d.imag).max()) > 100 * eps * max(scale, 1.0)


def _eig_backward(xp, g, ans, A):
    (L, V), (gL, gV) = ans, g
    Vh = _adjoint(xp, V)
    n = L.shape[-1]
    eye = xp.eye(n, dtype=np.dtype(np.bool_))
    if _absent(xp, gV):
        M = xp.where(eye, gL[..., None, :], xp.zeros_like(V))  # eigenvalues only
    else:
        G = xp.matmul(Vh, gV)
        diagonal = xp.diagonal(G, 0, -2, -1)
        d = getattr(diagonal, "_data", diagonal)  # (a check on values: no graph needed)
        # (recording its graph, the rule's arrays are recorded ops: compiled mode makes the
        # check again in each replay; run raw, the rule is replayed whole)
        if (_recording.expect(_phase_dependent, d) if _recorded(xp) else _phase_dependent(d)):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
        G = G - xp.matmul(Vh, V) * xp.real(diagonal)[..., None, :]
        E = L[..., None, :] - L[..., :, None]
        E = xp.where(eye, xp.ones_like(E), E)
        M = xp.where(eye, gL[..., None, :], G / xp.conj(E))
    gA = xp.linalg_solve(Vh, xp.matmul(M, Vh))
    complex_input = A.is_complex() if hasattr(A, "is_complex") else A.dtype.kind == "c"
    return gA if complex_input else xp.real(gA)  # a real A: the real part (dL/dRe)


def _eig_jvp(xp, t, ans, A):
    """``dL = diag(P)``, ``dV = V C`` with ``P = V^{-1} dA V``, ``C = P / E`` off the
    diagonal and the diagonal that keeps each eigenvector of unit norm and its phase
    (PyTorch's gauge; the VJP transposed would not see the conjugations)."""
    L, V = ans
    eye = xp.eye(L.shape[-1], dtype=np.dtype(np.bool_))
    P = xp.linalg_solve(V, xp.matmul(xp.astype(t, V.dtype), V))
    E = L[..., None, :] - L[..., :, None]
    dV = xp.matmul(V, xp.where(eye, xp.zeros_like(P), P / xp.where(eye, xp.ones_like(E), E)))
    norms = xp.real(xp.diagonal(xp.matmul(_adjoint(xp, V), dV), 0, -2, -1))
    return xp.diagonal(P, 0, -2, -1), dV - V * norms[..., None, :]


_eig.defvjp(_eig_backward)
_eig.defjvp(_eig_jvp)
_EigResult = _reduction.return_type("linalg_eig", ("eigenvalues", "eigenvectors"))


def _check(A, name, finite=True):
    _check_matrix(A, name)
    if A.dtype.category < 2:
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype._word}")
    if finite:
        _recording.expect(_check_finite, A._data)


def _check_finite(a):
    """eig's error for a non-finite input (checked again by each compiled replay)."""
    if not bool(np.isfinite(a).all()):  # (CuPy arrays take NumPy's ufunc)
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


def linalg_eig(A):
    """``(eigenvalues, eigenvectors)`` of a (batch of) square matrices, complex: ``A V = V
    diag(L)``, each eigenvector of unit norm (defined up to a phase: differentiate only
    functions of them that do not depend on it)."""
    _check(A, "linalg.eig")
    return _EigResult(_eig(A))


def linalg_eigvals(A):
    """The eigenvalues of a (batch of) square matrices, complex, in LAPACK's order."""
    recording = A.requires_grad and grad_mode._state.grad
    _check(A, "linalg.eigvals", finite=recording)
    finite = np.isfinite(A._data).all(axis=(-2, -1))
    if bool(finite.all()):
        return _eig(A)[0]
    # PyTorch's eigvals (without a graph) gives NaNs for a matrix with a non-finite entry
    finite = A.new_tensor(finite if A.ndim > 2 else bool(finite), dtype=_dtypes.bool)
    eye = _creation.eye(A.shape[-1], dtype=A.dtype)
    values = _eig(where(finite[..., None, None], A, eye))[0]
    return where(finite[..., None], values, complex(float("nan"), float("nan")))
