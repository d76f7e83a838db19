"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``).

``broadcast_all`` turns numbers and tensors into tensors of one broadcast shape,
``logits_to_probs`` / ``probs_to_logits`` convert between the two parametrisations,
``clamp_probs`` keeps probabilities a float epsilon away from 0 and 1, and ``lazy_property``
computes a derived parameter on first access and caches it in the instance's ``__dict__``
(so ``repr`` and argument validation can tell given parameters from derived ones).
"""
from __future__ import annotations

import math
from numbers import Number

import numpy as np

from .. import _creation, _dtypes
from .._tensor import Tensor
from .._typeinfo import finfo
from ..autograd.grad_mode import enable_grad
from ..nn import functional as F
from ..ops import shape as shape_ops
from ..ops import unary

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni, as torch.distributions.utils has


def broadcast_all(*values):
    """Tensors of one broadcast shape from tensors and Python numbers.

    Numbers take the dtype (and device) of the first tensor argument, or the default dtype when
    every argument is a number, as PyTorch's ``broadcast_all`` does.
    """
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    if first is None:
        options = {"dtype": _dtypes.get_default_dtype()}
    else:
        options = {"dtype": first.dtype, "device": first.device}
    tensors = [v if isinstance(v, Tensor) else _creation.tensor(v, **options) for v in values]
    return shape_ops.broadcast_tensors(*tensors)


def family(instance, shared_base):
    """The class in ``instance``'s lineage that names ``shared_base`` among its bases: for a
    base that several distributions or transforms share (``LocationScale``), the family
    (``Normal``) whose ``expand`` checks a subclass's ``__init__`` or whose instances compare
    equal."""
    return next(c for c in type(instance).__mro__ if shared_base in c.__bases__)


def _standard_normal(shape, like):
    """Standard normal draws of ``shape`` in the dtype and on the device of the tensor
    ``like``: the noise of a reparameterised sample (from ember's generator, not PyTorch's
    stream)."""
    return _creation.randn(tuple(shape), dtype=like.dtype, device=like.device)


def _sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: sigmoid for a binary variable, softmax over the last dim else."""
    if is_binary:
        return unary.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped to ``[eps, 1 - eps]`` with ``eps`` the dtype's machine epsilon."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities (clamped first, so 0 and 1 give finite logits).

    Multi-class logits are ``log(p)`` (not renormalised); binary ones are ``log(p) - log1p(-p)``.
    """
    ps = clamp_probs(probs)
    if is_binary:
        return unary.log(ps) - unary.log1p(-ps)
    return unary.log(ps)


class lazy_property:
    """A derived attribute computed once per instance and stored in its ``__dict__``.

    Like PyTorch's, the computation runs with grad mode on (so a parameter derived inside
    ``no_grad`` still tracks gradients) and, being a non-data descriptor, is replaced by the
    cached value afterwards. Read on the class it returns itself, which is how
    ``Distribution.__init__`` recognises lazily constructed parameters.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = getattr(wrapped, "__doc__", None)
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value



class BinaryProbsOrLogits:
    """For a distribution given one event probability or its logit (``Bernoulli``,
    ``Binomial``, ``Geometric``, ...): the other is derived on first use and cached."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


def _tril_positions(n, diag):
    """Flat positions (row-major in an ``n x n`` matrix) of the entries on or below diagonal
    ``diag``, in row-major order: the layout of a packed triangular vector."""
    rows, cols = np.indices((n, n))
    return np.flatnonzero((cols - rows).reshape(-1) <= diag)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` on or below diagonal ``diag``, packed row by row along the last
    dim (a differentiable gather)."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    index = _creation.tensor(_tril_positions(n, diag), dtype=_dtypes.long, device=mat.device)
    return flat[..., index]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: an ``n x n`` matrix (``n`` solved from the packed
    length) with ``vec`` on and below diagonal ``diag`` and zeros above."""
    m = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b * b + 8 * m + 4 * abs(diag) * (diag + 1))) / 2
    if not abs(round(n) - n) < finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    # gather from vec with one zero appended: positions above the diagonal read that zero
    source = np.full(n * n, m)
    source[_tril_positions(n, diag)] = np.arange(m)
    zero = vec.new_zeros(tuple(vec.shape[:-1]) + (1,))
    padded = shape_ops.cat([vec, zero], -1)
    index = _creation.tensor(source, dtype=_dtypes.long, device=vec.device)
    return padded[..., index].reshape(tuple(vec.shape[:-1]) + (n, n))


def require_probs_or_logits(probs, logits):
    """PyTorch's ValueError unless exactly one of ``probs`` and ``logits`` is given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def expand_probs_or_logits(old, new, batch_shape):
    """``expand``'s copy of the ``probs`` and/or ``logits`` that ``old`` holds (the given one,
    and the other once computed), expanded to ``batch_shape``, into ``new`` with its
    ``_param``."""
    if "probs" in old.__dict__:
        new.probs = old.probs.expand(batch_shape)
        new._param = new.probs
    if "logits" in old.__dict__:
        new.logits = old.logits.expand(batch_shape)
        new._param = new.logits


def count_and_probs_or_logits(dist, total_count, probs, logits):
    """Set ``dist.total_count`` and ``dist.probs`` or ``dist.logits`` (exactly one given),
    broadcast together, the count in the parameter's dtype, and ``dist._param``: the
    constructor of the count distributions (Binomial, NegativeBinomial)."""
    require_probs_or_logits(probs, logits)
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    count, param = broadcast_all(total_count, given)
    dist.total_count = count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
