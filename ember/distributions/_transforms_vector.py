"""Transforms of whole vectors and matrices: softmax and stick breaking onto the simplex,
Cholesky factors (``LowerCholeskyTransform``, ``PositiveDefiniteTransform``,
``CorrCholeskyTransform``), and ``CatTransform``/``StackTransform`` applying a different
transform to each slice of a tensor. Re-exported by ``transforms.py``.
"""
from __future__ import annotations

import math

from .. import _creation, linalg
from .._tensor import Size
from .._typeinfo import finfo
from ..nn import functional as F
from ..ops import shape as shape_ops
from . import constraints
from ._transform_base import ParameterFreeTransform, Transform, _clipped_sigmoid
from .utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform"]


def _needs_dims(shape, n):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(ParameterFreeTransform):
    """``y = softmax(x)`` over the last dim (not injective: the inverse is ``log y``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        e = (x - x.max(-1, keepdim=True)[0]).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _needs_dims(shape, 1)
        return shape

    inverse_shape = forward_shape


def _stick_offsets(k, like):
    """``log(k), log(k-1), ..., log(1)``: shifts that make ``x = 0`` the simplex's centre."""
    return (k + 1 - like.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(ParameterFreeTransform):
    """A bijection from ``R^K`` onto the ``K+1``-simplex: each coordinate (a shifted sigmoid)
    takes its fraction of the stick left by the ones before it."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offsets(x.shape[-1], x))
        left = (1 - z).cumprod(-1)  # the stick remaining after each break
        return F.pad(z, [0, 1], value=1) * F.pad(left, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        remaining = (1 - head.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return head.log() - remaining.log() + _stick_offsets(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offsets(x.shape[-1], x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _needs_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        _needs_dims(shape, 1)
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(ParameterFreeTransform):
    """Any square matrix to a lower-triangular one with positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated (not injective)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(ParameterFreeTransform):
    """Any square matrix to a positive definite one, ``L L^T`` with ``L`` from
    ``LowerCholeskyTransform``; the inverse takes the Cholesky factor."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(ParameterFreeTransform):
    """A bijection from ``R^(n(n-1)/2)`` onto Cholesky factors of ``n x n`` correlation
    matrices. Each entry, through ``tanh``, is a partial correlation in ``(-1, 1)``; row by
    row these break the unit norm of the row like a stick (so each row has norm 1 and the
    diagonal is what is left)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        left = (1 - r * r).sqrt().cumprod(-1)  # sqrt of the squared norm left, per column
        eye = _creation.eye(r.shape[-1], dtype=x.dtype, device=x.device)
        return (r + eye) * F.pad(left[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left_before = F.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # the stick-breaking part: the Jacobian is triangular, with the square roots of the
        # norms left on its diagonal (those right of the sub-diagonal)
        left = 1 - (y * y).cumsum(-1)
        stick = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        # tanh's part: log(1 - tanh(x)^2), in the form stable for large |x|
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape):
        _needs_dims(shape, 1)
        m = shape[-1]
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (n, n))

    def inverse_shape(self, shape):
        _needs_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return Size(tuple(shape[:-2]) + (n * (n - 1) // 2,))


def _check_slice_dim(dim, x):
    if not -x.dim() <= dim < x.dim():
        raise AssertionError
    return dim


class CatTransform(Transform):
    """``tseq[i]`` applied to the ``i``-th consecutive slice (of ``lengths[i]``) along ``dim``
    (a ``cat`` of differently transformed pieces)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, fns, x):
        dim = _check_slice_dim(self.dim, x)
        if x.size(dim) != self.length:
            raise AssertionError
        out, start = [], 0
        for fn, length in zip(fns, self.lengths):
            out.append(fn(x.narrow(dim, start, length)))
            start += length
        return shape_ops.cat(out, dim)

    def _call(self, x):
        return self._pieces(self.transforms, x)

    def _inverse(self, y):
        return self._pieces([t.inv for t in self.transforms], y)

    def log_abs_det_jacobian(self, x, y):
        dim = _check_slice_dim(self.dim, x)
        terms, start = [], 0
        for t, length in zip(self.transforms, self.lengths):
            term = t.log_abs_det_jacobian(x.narrow(dim, start, length),
                                          y.narrow(dim, start, length))
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
            start += length
        # the cat dim, counted from the right, survives in the log-Jacobian only when it is
        # a batch dim; inside the event the pieces' log-Jacobians add up
        dim = (dim - x.dim() if dim >= 0 else dim) + self.event_dim
        if dim < 0:
            return shape_ops.cat(terms, dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to index ``i`` along ``dim`` (a ``stack`` of transformed slices)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _apply(self, fns, x):
        _check_slice_dim(self.dim, x)
        if x.size(self.dim) != len(self.transforms):
            raise AssertionError
        return shape_ops.stack([fn(s) for s, fn in zip(self._slices(x), fns)], self.dim)

    def _call(self, x):
        return self._apply(self.transforms, x)

    def _inverse(self, y):
        return self._apply([t.inv for t in self.transforms], y)

    def log_abs_det_jacobian(self, x, y):
        _check_slice_dim(self.dim, x)
        if x.size(self.dim) != len(self.transforms) or y.size(self.dim) != len(self.transforms):
            raise AssertionError
        terms = [t.log_abs_det_jacobian(a, b) for a, b, t in
                 zip(self._slices(x), self._slices(y), self.transforms)]
        return shape_ops.stack(terms, self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
