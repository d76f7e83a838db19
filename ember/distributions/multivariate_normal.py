"""``MultivariateNormal``: the Gaussian ``N(loc, Sigma)`` over vectors, batched.

Exactly one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (a lower
Cholesky factor ``L`` with ``Sigma = L L^T``) is given; ember keeps the factor ``L``
(unbroadcast) and derives the others lazily. ``log_prob`` uses the Mahalanobis distance from a
batched triangular solve and ``log det Sigma = 2 sum log diag L``; ``rsample`` is
``loc + L @ eps``. All of it is ember ops, so gradients (and second order) flow through.
"""
from __future__ import annotations

import math

from .. import _creation, linalg
from .._tensor import Size
from ..ops import shape as shape_ops
from ..ops.linalg import matmul
from . import constraints
from .distribution import _EMPTY, Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """``x^T (L L^T)^{-1} x`` over broadcast batch dims, by solving ``L y = x``."""
    y = linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^{-1}`` without forming the inverse.

    With ``J`` the flip of rows and columns, ``chol(J P J) = Lf`` gives ``P = U U^T`` for the
    upper-triangular ``U = J Lf J``; then ``P^{-1} = U^{-T} U^{-1}`` and ``U^{-T}`` is lower
    triangular with a positive diagonal, i.e. the factor wanted.
    """
    Lf = linalg.cholesky(shape_ops.flip(P, (-2, -1)))
    L_inv = shape_ops.flip(Lf, (-2, -1)).mT
    eye = _creation.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(L_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """A multivariate normal with mean ``loc`` and a covariance given one of three ways."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, matrix in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                             ("precision_matrix", precision_matrix)):
            if matrix is None:
                continue
            if matrix.dim() < 2:
                what = "scale_tril matrix" if name == "scale_tril" else name  # PyTorch's words
                raise ValueError(f"{what} must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = shape_ops.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
            setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(Size(batch_shape), event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            loc_shape = tuple(batch_shape) + tuple(self.event_shape)
            cov_shape = loc_shape + tuple(self.event_shape)
            new.loc = self.loc.expand(loc_shape)
            new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
            for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
                if name in self.__dict__:
                    setattr(new, name, self.__dict__[name].expand(cov_shape))
        return self._expanded(MultivariateNormal, batch_shape, _instance, set_params)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = _creation.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = linalg.solve_triangular(L, eye, upper=False)
        return matmul(L_inv.mT, L_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=_EMPTY):
        eps = _standard_normal(self._extended_shape(sample_shape), like=self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(tuple(self._batch_shape))
