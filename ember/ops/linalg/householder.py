"""``linalg.householder_product`` (``orgqr``): the first ``n`` columns of the product
``H_1 ... H_k`` of Householder reflections ``H_i = I - tau_i v_i v_i^H``, ``v_i`` the ``i``-th
column of ``A`` below its diagonal with a 1 on it (how ``geqrf`` stores ``Q``).

The product is applied to the first columns of the identity from the last reflection to the
first, one rank-1 update each. Its derivative runs the same updates backwards (real inputs):
with ``Y`` the columns a reflection receives, ``G`` the gradient of what it gives,
``w = v^T Y`` and ``u = v^T G``: ``g_tau = -u . w``, ``g_v = -tau (G w^T + Y u^T)`` (the
entries below the diagonal are ``A``'s), and ``H^T G`` goes on to the reflection before.
"""
from __future__ import annotations

from ..registry import defop
from ._common import _check_matrix, real_only


def _reflector(xp, A, i):
    """``v_i``: zeros above row ``i``, 1 on it, ``A``'s column ``i`` below."""
    m = A.shape[-2]
    rows = xp.arange(m)
    column = A[..., :, i]
    below = xp.where(rows > i, column, xp.zeros_like(column))
    return xp.where(rows == i, xp.ones_like(column), below)


def _reflect(xp, v, tau_i, Y):
    """``(I - tau v v^H) Y`` as a rank-1 update."""
    w = xp.sum(xp.conj(v)[..., :, None] * Y, axis=-2)
    return Y - tau_i[..., None, None] * (v[..., :, None] * w[..., None, :])


def _columns(xp, A, tau):
    """The columns each reflection receives, last reflection first: ``[E, H_k E, ...]``."""
    m, n = A.shape[-2:]
    eye = xp.eye(m, n, dtype=A.dtype)
    Y = xp.broadcast_to(eye, tuple(A.shape[:-2]) + (m, n)) * xp.ones_like(A)
    received = []
    for i in range(tau.shape[-1] - 1, -1, -1):
        received.append(Y)
        Y = _reflect(xp, _reflector(xp, A, i), tau[..., i], Y)
    return received[::-1], Y


@defop("linalg_householder_product", n_in=2, jvp="transpose", batch="loop")
def _householder_product(xp, A, tau):
    return _columns(xp, A, tau)[1]


def _backward(xp, g, A, tau):
    """``(gA, gtau)`` by running the reflections backwards (see the module docstring)."""
    received, _ = _columns(xp, A, tau)
    G = g
    m, n = A.shape[-2:]
    rows = xp.arange(m)
    g_columns, g_tau = [], []
    for i, Y in enumerate(received):
        v, t = _reflector(xp, A, i), tau[..., i]
        w = xp.sum(v[..., :, None] * Y, axis=-2)
        u = xp.sum(v[..., :, None] * G, axis=-2)
        g_tau.append(-xp.sum(u * w, axis=-1))
        gv = -t[..., None] * (xp.sum(G * w[..., None, :], axis=-1) +
                              xp.sum(Y * u[..., None, :], axis=-1))
        g_columns.append(xp.where(rows > i, gv, xp.zeros_like(gv)))
        G = _reflect(xp, v, t, G)
    zero = xp.zeros_like(A[..., :, 0])
    g_columns += [zero] * (n - len(received))
    return xp.stack(g_columns, axis=-1), xp.stack(g_tau, axis=-1) if g_tau else xp.zeros_like(tau)


_householder_product.defvjp(
    real_only("linalg.householder_product", lambda xp, g, ans, A, tau: _backward(xp, g, A, tau)[0]),
    real_only("linalg.householder_product", lambda xp, g, ans, A, tau: _backward(xp, g, A, tau)[1]))


@_householder_product.public
def orgqr(input, tau):
    """``linalg.householder_product`` under LAPACK's name."""
    return linalg_householder_product(input, tau)


def linalg_householder_product(A, tau):
    """The first ``n`` columns of ``H_1 ... H_k`` for the Householder vectors stored below the
    diagonal of ``A`` (``m x n``, ``m >= n``) and their scales ``tau`` (``k <= n``)."""
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype._word} does not match input dtype "
                           f"{A.dtype._word}")
    _check_matrix(A, name, square=False)
    return _householder_product(A, tau)
