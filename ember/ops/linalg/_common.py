"""What the files of ``ember/ops/linalg/`` share: the matrix transpose and the recording test
that derivative rules use, PyTorch's type names for messages, the input checks and the
``LinAlgError`` of the ``torch.linalg`` functions, and ember's own LU factors, used where
LAPACK's show through (error messages, exact determinants, results at singular matrices).
"""
from __future__ import annotations

import functools

import numpy as np

from ... import _array_api
from .. import _between_rules
from .. import shape as _shape


def _mT(xp, x):
    """The matrix transpose of the last two dims (the adjoint, for the real inputs we derive)."""
    return xp.swapaxes(x, -1, -2)


def _complex(a):
    dtype = getattr(a, "dtype", None)
    return getattr(dtype, "kind", None) == "c" or getattr(dtype, "is_complex", False)


def real_only(name, rule):
    """``rule``, refusing complex input: the rules written for real matrices (those whose
    complex derivative is not the real formula read in the engine's conjugate convention:
    Cholesky, QR, eigh, SVD, pinv, lu_solve, lstsq, householder_product) raise instead of
    returning a plausible wrong gradient. The outputs tell (one is complex exactly when the
    input is: eigh's eigenvalues are real, its vectors not); the node saves what ``rule``
    reads (``Op.defvjp`` looks through the wrapper)."""
    @functools.wraps(rule)
    def checked(xp, g, ans, *args):
        if any(_complex(a) for a in (ans if isinstance(ans, tuple) else (ans,))):
            raise NotImplementedError(
                f"ember: the derivative of {name} for complex input is not implemented")
        return rule(xp, g, ans, *args)
    return checked


def _recording(xp):
    """Whether a derivative rule is being recorded (``create_graph=True``) rather than run."""
    return _array_api.is_tensor_namespace(xp)


def _absent(xp, g):
    """Whether ``g`` is the zero stand-in for an output that received no gradient.

    PyTorch skips the terms of undefined output gradients; skipping an all-zero gradient is the
    same in exact arithmetic and avoids 0/0 at degenerate spectra (repeated singular values).
    A recorded gradient that may itself be differentiated is never skipped.
    """
    if _recording(xp) and g.requires_grad:
        return False
    return not bool(xp.any(g != 0))


def _permute(input, dims):
    return _shape.permute(input, tuple(dims))


def _writable_diagonal(xp, a, offset=0, axis1=0, axis2=1):
    """``xp.diagonal`` as a writable view (NumPy hands out read-only diagonals)."""
    d = xp.diagonal(a, offset, axis1, axis2)
    flags = getattr(d, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True) and a.flags.writeable:
        d.flags.writeable = True
    return d


class _LinAlgError(RuntimeError):
    """A linear-algebra failure on well-formed input: a singular matrix, one that is not
    positive-definite... (``torch.linalg.LinAlgError``)."""


def _check_matrix(A, name, square=True):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _check_floating(A, name):
    if A.dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._word}")
    if A.dtype.itemsize < 4:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {A.dtype._word}")


def _lu(a):
    """LU factors with partial pivoting of a batch of matrices, computed like LAPACK's unblocked
    ``getrf`` (which NumPy does not expose): ``(lu, perm, sign, info)`` with
    ``a[..., perm, :] = L @ U``, ``sign`` the permutation's sign and ``info`` the (1-based)
    first zero pivot, 0 if none. Used where LAPACK's own factors show through: error messages,
    exact determinants, and results at singular matrices."""
    n = a.shape[-1]
    lu = np.array(a).reshape(-1, n, n)
    b = np.arange(len(lu))
    perm = np.broadcast_to(np.arange(n), lu.shape[:2]).copy()
    sign = np.ones(len(lu), dtype=lu.dtype)
    info = np.zeros(len(lu), dtype=np.int64)
    for k in range(n):
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        zero = lu[b, p, k] == 0  # nothing to pivot on: LAPACK notes it and moves on
        info[(info == 0) & zero] = k + 1
        p = np.where(zero, k, p)
        sign[p != k] *= -1
        for arr in (lu, perm):
            row = arr[b, k].copy()
            arr[b, k] = arr[b, p]
            arr[b, p] = row
        lu[:, k + 1:, k] /= np.where(zero, 1, lu[:, k, k])[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), perm.reshape(batch + (n,)), sign.reshape(batch), \
        info.reshape(batch)


def _zero_pivot(a):
    return int(_lu(a)[3])


def _lu_det(a):
    """Determinants as PyTorch computes them: the product of the pivots of ``a^T``'s LU factors
    (NumPy's ``det`` goes through logarithms and misses exact results: ``-2.0000000000000004``
    for ``[[1, 2], [3, 4]]``)."""
    lu, _, sign, _ = _lu(np.swapaxes(a, -1, -2))
    return np.prod(np.diagonal(lu, 0, -2, -1), axis=-1) * sign


def _lu_solve_transposed(a, b, nudge=False):
    """``a^{-T} b`` for one matrix, with the LU factors of ``a^T`` and plain substitution as in
    LAPACK's ``getrs``: at a singular ``a`` this gives the infinities and NaNs PyTorch gives, or
    with ``nudge`` (zero pivots replaced by eps, as PyTorch's ``det`` backward does) the
    signed zeros it gives."""
    lu, perm, _, _ = _lu(a.T)
    if nudge:
        pivots = _writable_diagonal(np, lu, 0, -2, -1)
        pivots[pivots == 0] = np.finfo(lu.dtype).eps
    x = np.array(b[perm], dtype=lu.dtype)
    for k in range(len(perm)):  # the unit lower triangle
        x[k + 1:] -= lu[k + 1:, k, None] * x[k]
    for k in range(len(perm) - 1, -1, -1):  # the upper one
        x[k] /= lu[k, k]
        x[:k] -= lu[:k, k, None] * x[k]
    return x


def _per_matrix(xp, values, A, mask, fn):
    """``values`` (one per matrix of ``A``) with ``fn(matrix, value)`` where ``mask`` holds,
    computed on the host."""
    host = (lambda x: x) if isinstance(A, np.ndarray) else (lambda x: x.get())
    out = np.array(host(values))
    flat = out.reshape((-1,) + out.shape[A.ndim - 2:])
    mats = host(A).reshape((-1,) + A.shape[-2:])
    for i in np.flatnonzero(host(mask)):
        flat[i] = fn(mats[i], flat[i])
    return out if isinstance(A, np.ndarray) else xp.asarray(out)


def _solve_singular(xp, A, rhs, singular, nudge):
    """``A^{-T} rhs``: by LAPACK where ``A`` is regular, by ember's own LU (and its infinities)
    where it is ``singular``."""
    eye = xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    regular = xp.linalg_solve(_mT(xp, xp.where(singular[..., None, None], eye, A)), rhs)
    at_singular = _per_matrix(xp, rhs, A, singular,
                              lambda a, b: _lu_solve_transposed(a, b, nudge))
    return xp.where(singular[..., None, None], at_singular, regular)


def _not_positive_definite(a):
    """LAPACK ``potrf``'s ``info``: the order of the first leading minor that is not
    positive-definite, 0 if there is none."""
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _failure(name, A, info, message):
    """The error for the first matrix of ``A`` that ``info`` finds failing (PyTorch names the
    batch element of batched inputs)."""
    A = A if isinstance(A, np.ndarray) else A.get()
    infos = [info(matrix) for matrix in A.reshape((-1,) + A.shape[-2:])]
    failing = [b for b, i in enumerate(infos) if i]
    # Without a failing one, LAPACK met a zero that our factors missed by a rounding.
    batch, position = (failing[0], infos[failing[0]]) if failing else (0, A.shape[-1])
    prefix = f"(Batch element {batch}): " if A.ndim > 2 else ""
    return _LinAlgError(f"{name}: {prefix}{message.format(position)}")


_SINGULAR = ("The diagonal element {} is zero, the inversion could not be completed because "
             "the input matrix is singular.")
_SOLVE_SINGULAR = "The solver failed because the input matrix is singular."
_NOT_PD = ("The factorization could not be completed because the input is not positive-definite "
           "(the leading minor of order {} is not positive-definite).")


def _eps(x):
    return float(np.finfo(getattr(x.dtype, "np", x.dtype)).eps)


def _diagonal_rhs(xp, d, n):
    """``d[..., None, None] * I_n`` as a batch of diagonal matrices."""
    return xp.diag_embed(xp.broadcast_to(d[..., None], tuple(d.shape) + (n,)))


def _masked(xp, mask, if_true, if_false, *args):
    """``if_true`` on the batch elements where ``mask`` holds, ``if_false`` on the others,
    reassembled (each runs only on its own elements, as PyTorch's ``masked_fmap``)."""
    hits = int(xp.sum(mask))
    if hits == int(np.prod(mask.shape)):
        return if_true(*args)
    if hits == 0:
        return if_false(*args)
    out = xp.zeros_like(args[0])
    out[mask] = if_true(*(a[mask] for a in args))
    out[~mask] = if_false(*(a[~mask] for a in args))
    return out


def _in_vmap(*tensors):
    """Whether any tensor is batched by ``vmap``: ops without a batching rule of their own are
    then written with ops that have one (rather than run once per sample)."""
    return any(getattr(t, "_levels", None) for t in tensors)


_HOLDER: dict = {}  # the value ``_shared`` keeps between two rules (ops/_between_rules.py)


def _shared(xp, ans, g, compute, first):
    """``compute()``, once for the two rules of a node that both need it: ``solve``'s gradient
    for ``B`` (``A^{-T} g``) is the first step of the one for ``A``, and a second solve would
    be a second factorisation (a third of ``solve``'s backward). The ``first`` rule always
    computes and leaves the value under the node's output ``ans`` and ``g``; the other takes
    it (see ``ops/_between_rules.py``)."""
    if not first:
        value = _between_rules.take(xp, _HOLDER, (ans, g))
        if value is not None:
            return value
    value = compute()
    if first:
        _between_rules.leave(xp, _HOLDER, (ans, g), value)
    return value
