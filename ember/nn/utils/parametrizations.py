"""``nn.utils.parametrizations``: weight_norm, spectral_norm and orthogonal, as parametrizations.

Each registers a module with ``parametrize.register_parametrization`` (see ``parametrize.py``),
so the state_dict keys, the ``Parametrized<Class>`` class and ``remove_parametrizations`` are
PyTorch's:

- ``weight_norm``: ``weight = g * v / ||v||`` (the norm over every dim but ``dim``); the
  originals are ``original0`` (g) and ``original1`` (v).
- ``spectral_norm``: ``weight / sigma``, ``sigma`` the largest singular value of the weight
  seen as a matrix (``dim`` first, the rest flattened), estimated by power iteration on the
  buffers ``_u``, ``_v``: in training mode every read runs ``n_power_iterations`` more steps;
  in eval mode the vectors are used as they are. A 1-d weight is just normalized.
- ``orthogonal``: a matrix (or batch) kept orthogonal (unitary): ``Q = base @ map(X)`` where
  ``map`` is the matrix exponential or the Cayley transform of the skew part of ``X``, or a
  product of Householder reflections; ``base`` is the orthogonalized weight at registration
  (QR with a non-negative diagonal), so the module starts from the nearest such weight.
"""
from __future__ import annotations

import enum
import math

from ... import _creation, linalg
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.shape import cat
from .. import functional as F
from ..module import Module
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim``, kept broadcastable (the whole norm, a
    0-d tensor, for ``dim=-1``)."""
    if dim == -1:
        return v.norm()
    others = tuple(d for d in range(v.ndim) if d != dim)
    if not others:
        return v.abs()
    return (v * v.conj()).real.sum(others, keepdim=True).sqrt() if v.is_complex() else \
        v.pow(2).sum(others, keepdim=True).sqrt()


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as a magnitude ``g`` times a direction ``v / ||v||``
    (``original0`` and ``original1``); ``dim=None`` takes the norm of the whole tensor."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---------------------------------------------------------------------------- spectral norm


def _as_matrix(weight, dim):
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.flatten(1)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = _as_matrix(weight, self.dim)
            h, w = mat.shape
            u = mat.new_empty(h).normal_(0, 1)
            v = mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)  # a good estimate from the start

    def _power_method(self, mat, steps):
        """``steps`` power iterations, in place on the buffers ``_u`` and ``_v``."""
        with no_grad():
            for _ in range(steps):
                self._u.copy_(F.normalize(linalg.matmul(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(linalg.matmul(mat.mH, self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the buffers change at the next read
        sigma = u.conj().dot(linalg.matmul(mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` divided by its spectral norm (see the module
    docstring). ``dim`` defaults to 1 for transposed convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) \
            else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---------------------------------------------------------------------------- orthogonal



class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


def _eye_like(x, n):
    return _creation.eye(n, dtype=x.dtype, device=x.device)


def _matrix_exp(a):
    """``exp(a)`` of a (batch of) square matrices, by scaling and squaring: a Taylor series
    of ``a / 2**s`` with ``||a / 2**s||_1 <= 1/2`` (18 terms leave under 1e-22 of the
    result), squared ``s`` times. Made of matmuls, so autograd differentiates it."""
    n = a.shape[-1]
    with no_grad():
        norm = float(a.abs().sum(-2).amax()) if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    b = a / (2.0 ** s) if s else a
    eye = _eye_like(a, n)
    result = eye
    for k in range(18, 0, -1):  # Horner: I + b/1 (I + b/2 (I + ...))
        result = eye + linalg.matmul(b, result) / k
    for _ in range(s):
        result = linalg.matmul(result, result)
    return result


def _householder_product(a, tau):
    """The first ``k`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H`` with ``v_i``
    column ``i`` of ``a`` below the diagonal and 1 on it."""
    n, k = a.shape[-2], a.shape[-1]
    below = _creation.ones(n, k, dtype=a.dtype, device=a.device).tril(-1)
    v_all = a * below + _eye_like(a, n)[:, :k]
    q = _eye_like(a, n)[:, :k].expand(*a.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = v_all[..., :, i:i + 1]
        q = q - tau[..., i, None, None] * linalg.matmul(v, linalg.matmul(v.mH, q))
    return q


def _orthonormalized(q):
    """The Q of ``q = QR`` (``q`` tall) with R's diagonal made non-negative."""
    qq, r = linalg.qr(q)
    return qq * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eps = 10 * n * (2.220446049250313e-16 if q.dtype.itemsize >= 8 and not q.is_complex()
                    or q.dtype.itemsize >= 16 else 1.1920928955078125e-07)
    return bool((linalg.matmul(q.mH, q) - _eye_like(q, k)).abs().le(eps).all())


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = cat([x, x.new_zeros(*x.shape[:-2], n, n - k)], dim=-1)
            a = x - x.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _matrix_exp(a)
            else:
                eye = _eye_like(a, n)
                q = linalg.solve(eye - a / 2, eye + a / 2)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            q = linalg.matmul(self.base, q)
        return q.mT if transposed else q

    def right_inverse(self, q):
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        if n < k:
            q = q.mT
            n, k = k, n
        if "base" not in self._buffers:  # (householder is refused by ``orthogonal``)
            raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                      "or the Cayley parametrizations when "
                                      "use_trivialization=False.")
        if n == k:
            q = _orthonormalized(q) if not _is_orthogonal(q) else q.clone()
        else:
            extra = _creation.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
            q = _orthonormalized(cat([q, extra], dim=-1))
        self.base = q
        neg_eye = _creation.zeros_like(q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep ``module.<name>`` (a matrix or batch of them) orthogonal, or unitary (see the
    module docstring). ``orthogonal_map``: "matrix_exp" (the default for square or complex
    weights), "cayley" or "householder" (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or \
            weight.is_complex() else "householder"
    orth_map = getattr(_OrthMaps, orthogonal_map, None)
    if orth_map is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    if orthogonal_map == "householder" and not use_trivialization:
        raise NotImplementedError("orthogonal(orthogonal_map='householder', "
                                  "use_trivialization=False) is not supported by ember (it "
                                  "needs torch.geqrf)")
    orth = _Orthogonal(weight, orth_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
