"""``Wishart``: distributions over positive definite matrices, ``sum_k x_k x_k^T`` for ``df``
Gaussian vectors of covariance ``Sigma`` (``df`` may be any real above ``p - 1``).

Parametrised, like ``MultivariateNormal``, by one of ``covariance_matrix``,
``precision_matrix`` or ``scale_tril``, kept as the factor ``L``. Samples use the Bartlett
decomposition ``L A A^T L^T`` with ``A`` lower triangular: chi draws (reparameterised through
``Chi2``) on the diagonal, standard normals below it.
"""
from __future__ import annotations

import math
import warnings
from numbers import Number

from .. import _creation, linalg
from .._tensor import Size
from .._typeinfo import finfo
from ..ops import selection
from ..ops import shape as shape_ops
from . import constraints
from .distribution import _EMPTY
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import _standard_normal, lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma, ``sum_{i<p} digamma(x - i/2)``."""
    halves = _creation.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - halves).digamma().sum(-1)


def _cholesky_solve(b, L):
    """``(L L^T)^-1 b`` by two triangular solves."""
    y = linalg.solve_triangular(L, b, upper=False)
    return linalg.solve_triangular(L.mT, y, upper=True)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom and scale matrix ``Sigma``."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = _creation.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = shape_ops.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        full = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """The chi-squared variables of the Bartlett diagonal: ``df - i`` for row ``i``."""
        p = self._event_shape[-1]
        rows = _creation.arange(p, dtype=self._unbroadcasted_scale_tril.dtype,
                                device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - rows.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            cov_shape = batch_shape + self.event_shape
            new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
            new.df = self.df.expand(batch_shape)
            for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
                if name in self.__dict__:
                    setattr(new, name, self.__dict__[name].expand(cov_shape))
            new._event_shape = self.event_shape
            new._dist_chi2 = new._chi2(batch_shape)
        return self._expanded(Wishart, batch_shape, _instance, set_params)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        eye = _creation.eye(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return _cholesky_solve(eye, L).expand(self._batch_shape + self._event_shape)

    def _per_batch(self, x):
        return x.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._per_batch(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = selection.where(factor <= 0, math.nan, factor)
        return self._per_batch(factor) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._per_batch(self.df) * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        chi = chi.clamp(min=finfo(chi.dtype).eps)  # a zero would make the draw singular
        below = _standard_normal(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                 like=chi)
        a = vec_to_tril_matrix(below, diag=-1) + chi.diag_embed()
        factor = self._unbroadcasted_scale_tril @ a
        return factor @ factor.mT

    def rsample(self, sample_shape=_EMPTY, max_try_correction=None):
        """Bartlett draws; a draw that is numerically singular (possible for ``df`` near
        ``p - 1``) is redrawn up to ``max_try_correction`` (10) times, with a warning."""
        if max_try_correction is None:
            max_try_correction = 10
        sample = self._bartlett(Size(sample_shape))
        singular = ~self.support.check(sample.detach())
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                fresh = self._bartlett(Size(sample_shape))
                keep = singular.reshape(tuple(singular.shape) + (1, 1))
                sample = selection.where(keep, fresh, sample)
                singular = ~self.support.check(sample.detach())
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        log_det_l = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = _cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_l) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_l) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        shape = y + (p + 1) / 2
        return shape * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + shape.mvlgamma(p)
