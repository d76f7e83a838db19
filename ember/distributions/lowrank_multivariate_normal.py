"""``LowRankMultivariateNormal``: a Gaussian with covariance ``W W^T + diag(D)`` for a thin
``cov_factor`` ``W`` (n x m) and positive ``cov_diag`` ``D``.

Nothing n x n is formed for densities: with the m x m capacitance ``K = I + W^T D^-1 W`` and
its Cholesky factor, the Woodbury identity gives the Mahalanobis distance and the matrix
determinant lemma gives ``log det = log det K + sum log D``.
"""
from __future__ import annotations

import math

from .. import _creation, linalg
from .._tensor import Size
from ..ops import shape as shape_ops
from . import constraints
from .distribution import _EMPTY, Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(W, D):
    """Cholesky factor of ``I + W^T D^-1 W``."""
    m = W.size(-1)
    wt_dinv = W.mT / D.unsqueeze(-2)
    k = wt_dinv @ W + _creation.eye(m, dtype=W.dtype, device=W.device)
    return linalg.cholesky(k)


def _lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W^T + D) = log det K + sum log D`` (matrix determinant lemma)."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x = x^T D^-1 x - |K_L^-1 W^T D^-1 x|^2`` (Woodbury)."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """``N(loc, cov_factor cov_factor^T + diag(cov_diag))``, batched."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, diag_ = shape_ops.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            loc_shape = batch_shape + self.event_shape
            new.loc = self.loc.expand(loc_shape)
            new.cov_diag = self.cov_diag.expand(loc_shape)
            new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
            new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
            new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
            new._capacitance_tril = self._capacitance_tril
        return self._expanded(LowRankMultivariateNormal, batch_shape, _instance, set_params)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2: factor the bracket, scale its rows
        n = self._event_shape[0]
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        sqrt_d = D.sqrt().unsqueeze(-1)
        scaled = W / sqrt_d
        k = scaled @ scaled.mT + _creation.eye(n, dtype=W.dtype, device=W.device)
        tril = sqrt_d * linalg.cholesky(k)
        return tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        cov = W @ W.mT + D.diag_embed()
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - D^-1 W K^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv = W.mT / D.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = D.reciprocal().diag_embed() - a.mT @ a
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=_EMPTY):
        shape = Size(self._extended_shape(sample_shape))
        W = self._unbroadcasted_cov_factor
        eps_w = _standard_normal(shape[:-1] + W.shape[-1:], like=self.loc)
        eps_d = _standard_normal(shape, like=self.loc)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(W, D, value - self.loc, self._capacitance_tril)
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        log_det = _lowrank_logdet(W, D, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h.expand(self._batch_shape)
