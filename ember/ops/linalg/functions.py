"""Matrix functions and solvers of ``torch.linalg`` built on the others: ``matrix_exp`` (an op
of its own), ``lstsq`` (an op of its own), and the composites ``vander``, ``cond``,
``tensorinv``, ``tensorsolve``, written with ember's ops step for step as PyTorch writes them,
so their graphs, grad_fn names and values at singular matrices are PyTorch's.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _dtypes, _xp
from ..._tensor import Tensor
from .. import reduction as _reduction
from .. import shape as _shape
from ..registry import defop
from ..shape.views import _reshape_alias, _reshaped_view
from ..unary import nan_to_num
from . import householder as _householder  # noqa: F401  (orgqr: its declaration)
from ._common import _check_floating, _check_matrix, _eps, _mT, _shared, real_only
from .decompositions import _pinv, _pinv_backward, linalg_pinv, linalg_svdvals
from .factorizations import linalg_inv_ex
from .norms import linalg_matrix_norm
from .solvers import linalg_inv, linalg_solve

# ------------------------------------------------------------------------- matrix_exp
# Scaling and squaring with diagonal Padé approximants (Higham, "The scaling and squaring
# method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26, 2005): the
# approximant r_m and the largest 1-norm theta_m for which r_m(A) = exp(A) to double
# precision (Table 2.3); the coefficients b_k of the numerator p_m(x) = sum b_k x^k
# (the denominator is p_m(-x)).
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
          9: 2.097847961257068e0, 13: 5.371920351148152e0}
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}


def _pade(xp, A, m):
    """``(U, V)``: the odd and even parts of ``p_m(A)`` (``r_m(A) = (V - U)^{-1} (V + U)``);
    degree 13 by Higham's grouping, 6 products."""
    b = _PADE[m]
    eye = xp.eye(A.shape[-1], dtype=A.dtype)
    A2 = xp.matmul(A, A)
    if m < 13:
        powers = [eye, A2]
        while len(powers) <= m // 2:
            powers.append(xp.matmul(powers[-1], A2))
        U = xp.matmul(A, sum(b[2 * k + 1] * powers[k] for k in range(m // 2 + 1)))
        V = sum(b[2 * k] * powers[k] for k in range(m // 2 + 1))
        return U, V
    A4 = xp.matmul(A2, A2)
    A6 = xp.matmul(A4, A2)
    U = xp.matmul(A, xp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) +
                  b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye)
    V = xp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + \
        b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    return U, V


def _expm(xp, A):
    """``exp(A)`` of a (batch of) square matrices, in float64 (complex128) whatever the input
    (the result is rounded to the input's dtype once: as accurate as that dtype allows)."""
    dtype = A.dtype
    A = A.astype(np.complex128 if dtype.kind == "c" else np.float64)
    if A.size == 0:
        return A.astype(dtype)
    norms = xp.max(xp.sum(xp.abs(A), axis=-2), axis=-1)  # the 1-norm of each matrix
    top = float(xp.max(norms)) if norms.size else 0.0
    if not math.isfinite(top):
        # a non-finite entry: the NaNs of the products (LAPACK would not solve either)
        return xp.full(A.shape, np.nan, dtype=A.dtype).astype(dtype)
    m = next((m for m in (3, 5, 7, 9) if top <= _THETA[m]), 13)
    # each matrix scaled by its own 2^-s so that its norm is at most theta_13
    s = xp.maximum(0, xp.ceil(xp.log2(xp.maximum(norms, 1e-300) / _THETA[13]))) \
        if m == 13 else xp.zeros(norms.shape)
    A = A / (2.0 ** s)[..., None, None]
    U, V = _pade(xp, A, m)
    R = xp.linalg.solve(V - U, V + U)
    for step in range(int(xp.max(s)) if s.size else 0):
        R = xp.where((s > step)[..., None, None], xp.matmul(R, R), R)
    return R.astype(dtype)


@defop("linalg_matrix_exp", n_in=1, jvp="transpose", batch="unchanged")
def _matrix_exp(xp, A):
    return _expm(xp, A)


def _matrix_exp_backward(xp, g, ans, A):
    """``gA = exp(A^T)``'s Fréchet derivative at ``A^T`` along ``g``: the upper right block of
    ``exp([[A^T, g], [0, A^T]])`` (Mathias, SIAM J. Matrix Anal. Appl. 17, 1996)."""
    n = A.shape[-1]
    At = _mT(xp, A)
    top = xp.concat([At, g], axis=-1)
    bottom = xp.concat([xp.zeros_like(g), At], axis=-1)
    return xp.linalg_matrix_exp(xp.concat([top, bottom], axis=-2))[..., :n, n:]


_matrix_exp.defvjp(_matrix_exp_backward)
_xp.register_extra("linalg_matrix_exp", _expm, lambda A: _matrix_exp(A))


@_matrix_exp.public
def matrix_exp(input):
    """The matrix exponential ``sum_k A^k / k!`` of a (batch of) square matrices."""
    _check_matrix(input, "linalg.matrix_exp")
    if input.dtype.category < 2:
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._word}")
    return _matrix_exp(input)


# ------------------------------------------------------------------------- vander

def linalg_vander(x, *, N=None):
    """The Vandermonde matrix of ``x``: columns ``x^0, x^1, ..., x^(N-1)`` (``N`` defaults to
    ``x.shape[-1]``), batched over ``x``'s leading dims; as PyTorch builds it, a column of
    ones and the running products of ``x`` (``cat`` of ``cumprod``)."""
    if x.dtype == _dtypes.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {x.dtype._word}")
    x = x if x.ndim else x.unsqueeze(0)  # a 0-d x is one point
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = x.new_ones(tuple(x.shape) + (1,))
    powers = x.unsqueeze(-1).expand(*x.shape, N - 1).cumprod(-1)
    return _shape.cat([ones, powers], -1)


# ------------------------------------------------------------------------- cond

def linalg_cond(A, p=None):
    """The condition number of ``A`` in the norm ``p``: ``sigma_max / sigma_min`` for
    ``None``/2 (-2: the reciprocal; rectangular matrices too), else
    ``norm(A, p) * norm(A^{-1}, p)`` (square), infinite for a singular matrix."""
    inf = float("inf")
    if isinstance(p, str) and p not in ("fro", "nuc") or \
            not isinstance(p, str) and p is not None and p not in (1, -1, 2, -2, inf, -inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_order_word(p)}")
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        S = linalg_svdvals(A)
        largest, smallest = S[..., :1], S[..., -1:]
        return (smallest / largest if p == -2 else largest / smallest).squeeze(-1)
    _check_matrix(A, f"linalg.cond(ord={_order_word(p)})")
    _check_floating(A, "linalg.cond")
    if A.numel() == 0:
        return A.new_zeros(tuple(A.shape[:-2]), dtype=_real(A.dtype))
    if p == "nuc":
        S = linalg_svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    inverse, info = linalg_inv_ex(A)
    inverse = inverse.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), inf)
    result = linalg_matrix_norm(A, p) * linalg_matrix_norm(inverse, p)
    return nan_to_num(result, inf, inf)


def _order_word(p):
    return p if isinstance(p, str) or p is None else (
        ("inf" if p > 0 else "-inf") if math.isinf(p) else f"{p}")


def _real(dtype):
    return {_dtypes.complex64: _dtypes.float32, _dtypes.complex128: _dtypes.float64}.get(dtype,
                                                                                       dtype)


# ------------------------------------------------------------------------- tensorinv, solve

def linalg_tensorinv(A, ind=2):
    """The inverse of ``A`` for ``tensordot(..., ind)``: ``A`` read as a square matrix of
    ``prod(shape[:ind])`` rows, inverted, reshaped to ``shape[ind:] + shape[:ind]``."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse = _inv_named(A.reshape(rows, cols), "inv")
    # PyTorch's inverse is stored column by column (LAPACK's layout), so its reshape is a view
    # under the name PyTorch gives a reshape of non-row-major elements
    return _reshaped_view(inverse, tuple(A.shape[ind:]) + tuple(A.shape[:ind]), _reshape_alias)


def _inv_named(A, name):
    """``linalg.inv`` whose error names ``name`` (PyTorch's composites name themselves)."""
    try:
        return linalg_inv(A)
    except RuntimeError as err:
        message = str(err)
        raise type(err)(message.replace("linalg.inv:", f"{name}:", 1)) from None


def linalg_tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``A``'s dims ``dims`` moved last, ``A`` read
    as a square matrix of ``B.numel()`` rows, solved against ``B`` flattened."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = _shape.movedim(A, tuple(dims), tuple(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    rows, cols = B.numel(), math.prod(rest)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           ":]) == prod(self.shape[:other.ndim]), but got "
                           f"{cols} != {rows}")
    result = linalg_solve(A.reshape(rows, cols), B.reshape(rows))
    return result.view(rest)


# ------------------------------------------------------------------------- lstsq

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _min_norm(xp, A, B, rcond):
    """The minimum-norm least-squares solution from the SVD, the rank (singular values above
    ``rcond`` times the largest) and the singular values."""
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    keep = S > rcond * S[..., :1]
    inverse = xp.where(keep, 1 / xp.where(keep, S, 1), 0).astype(S.dtype)
    X = xp.matmul(_mT(xp, Vh) * inverse[..., None, :], xp.matmul(_mT(xp, U), B))
    return X, xp.sum(keep, axis=-1).astype(np.int64), S


def _gels(xp, A, B):
    """``gels``: QR of ``A`` (tall) or of ``A^T`` (wide), full rank assumed."""
    m, n = A.shape[-2:]
    if m >= n:
        Q, R = xp.linalg.qr(A)
        return xp.linalg.solve(R, xp.matmul(_mT(xp, Q), B))
    Q, R = xp.linalg.qr(_mT(xp, A))
    return xp.matmul(Q, xp.linalg.solve(_mT(xp, R), B))


@defop("linalg_lstsq", n_in=2, nout=4, jvp="transpose", batch="loop")
def _lstsq(xp, A, B, rcond, driver, vector):
    if vector:
        B = B[..., None]
    m, n = A.shape[-2:]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    empty = xp.zeros((0,), dtype=A.dtype)
    if driver == "gels":
        X, rank, S = _gels(xp, A, B), xp.zeros((0,), dtype=np.int64), empty
    else:
        X, rank, S = _min_norm(xp, A, B, rcond)
        if driver == "gelsy":
            S = empty
    residuals = empty
    if m > n and driver != "gelsy" and (driver == "gels" or bool(xp.all(rank == n))):
        residuals = xp.sum(xp.abs(xp.matmul(A, X) - B) ** 2, axis=-2)
        residuals = xp.broadcast_to(residuals, batch + residuals.shape[-1:])
    X = xp.broadcast_to(X, batch + X.shape[-2:])
    return (X[..., 0] if vector else X), residuals, rank, S


def _lstsq_pinv(xp, ans, g, A, first):
    """``pinv(A)``, an SVD, computed once for the two rules (535 x 1069 float32: one of the
    step's three SVDs, ~1/3 of its time)."""
    return _shared(xp, ans[0], g[0], lambda: xp.linalg_pinv(A, _eps(A) * max(A.shape[-2:])),
                   first)


def _lstsq_backward_A(xp, g, ans, A, B, rcond, driver, vector):
    """The solution's part through ``X = pinv(A) B`` (PyTorch's ``pinv_backward``); the
    residuals' is ``2 (A X - B) X^T`` (at the minimum, ``X``'s own change does not count)."""
    gX, gR = g[0], g[1]
    X, Bm = (ans[0][..., None], B[..., None]) if vector else (ans[0], B)
    gX = gX[..., None] if vector else gX
    rtol = _eps(A) * max(A.shape[-2:])
    P = _lstsq_pinv(xp, ans, g, A, first=True)
    gA = _pinv_backward(xp, xp.matmul(gX, _mT(xp, Bm)), P, A, 0.0, rtol, False)
    if gR.shape[-1:] == X.shape[-1:] and gR.ndim:
        gA = gA + 2 * xp.matmul((xp.matmul(A, X) - Bm) * gR[..., None, :], _mT(xp, X))
    return gA


def _lstsq_backward_B(xp, g, ans, A, B, rcond, driver, vector):
    gX, gR = g[0], g[1]
    X = ans[0][..., None] if vector else ans[0]
    gX = gX[..., None] if vector else gX
    gB = xp.matmul(_mT(xp, _lstsq_pinv(xp, ans, g, A, first=False)), gX)
    if gR.shape[-1:] == X.shape[-1:] and gR.ndim:
        Bm = B[..., None] if vector else B
        gB = gB - 2 * (xp.matmul(A, X) - Bm) * gR[..., None, :]
    return gB[..., 0] if vector else gB


_lstsq.defvjp(real_only("linalg.lstsq", _lstsq_backward_A),
              real_only("linalg.lstsq", _lstsq_backward_B))
_lstsq.saved_outputs = (0,)
_xp.register_extra("linalg_pinv", lambda xp, A, rtol: _pinv.forward(xp, A, 0.0, rtol, False),
                   lambda A, rtol: linalg_pinv(A, rtol=rtol))
_LstsqResult = _reduction.return_type("linalg_lstsq",
                                      ("solution", "residuals", "rank", "singular_values"))


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (``driver`` 'gelsy', the default, 'gelsd',
    'gelss': the minimum-norm one, singular values below ``rcond`` times the largest read as
    zero; 'gels': by QR, ``A`` of full rank) with the residuals (drivers but 'gelsy', tall
    full-rank ``A``), the rank (not 'gels') and the singular values ('gelsd', 'gelss')."""
    name = "torch.linalg.lstsq"
    if not isinstance(A, Tensor) or A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype._word} and other's dtype {B.dtype._word}")
    vector = B.ndim == A.ndim - 1
    if A.shape[-2] != (B.shape[-1] if vector else B.shape[-2]):
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-{1 if vector else 2})")
    if A.dtype.category < 2:
        raise RuntimeError("This function doesn't handle types other than float and double")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    if rcond is None:
        rcond = _eps(A._data) * max(A.shape[-2:])
    solution, residuals, rank, singular_values = _lstsq(A, B, float(rcond), driver, vector)
    return _LstsqResult((solution, residuals, rank, singular_values.detach()))  # (no gradient)
