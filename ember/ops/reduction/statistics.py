"""Statistics: the moments ``var`` / ``std`` / ``var_mean`` / ``std_mean`` (with Bessel's
correction and PyTorch's edge cases), and the covariance and correlation matrices ``cov`` /
``corrcoef``.
"""
from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from ... import _dtypes, _errors, _recording
from ..._tensor import Tensor
from ..pointwise import div
from ..registry import array_api, defop, public
from .common import _count, _dims, _expand_back, _unreduce

# --------------------------------------------------------------------------- variance


def _correction(name, unbiased, correction, dim):
    """PyTorch's ``correction`` from the legacy ``unbiased`` flag or itself (default 1)."""
    if unbiased is not None and correction is not None:
        got = "Tensor" + ("" if dim is None else f", {type(dim).__name__}")
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}, "
            "correction=int, unbiased=bool), but expected one of:\n"
            " * (Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, "
            "*, Tensor out = None)\n"
            " * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
            "bool keepdim = False, Tensor out = None)\n"
            " * (Tensor input, bool unbiased = True)\n")
    if unbiased is not None:
        return int(bool(unbiased))
    return 1 if correction is None else correction


def _mean_raw(xp, x, dims, keepdim):
    """The mean on raw arrays over ``dims`` (all if None or empty), NaN when empty."""
    axis = dims or None
    n = x.size if axis is None else _count(x.shape, axis)
    return xp.sum(x, axis=axis, keepdims=keepdim) / n


def _variance(xp, x, dims, correction, keepdim):
    axis = dims or None
    n = x.size if axis is None else _count(x.shape, axis)
    dev = x - _mean_raw(xp, x, axis, True)
    return xp.sum(dev * dev, axis=axis, keepdims=keepdim) / builtins.max(0, n - correction)


def _var_grad(xp, g, input, dims, correction, keepdim):
    """d var / d input: ``2 (x - mean) / (N - correction)``, PyTorch's form and edge cases.

    ``dims`` None is PyTorch's reduction without ``dim``. An empty ``dims`` reduces every dim
    too, but PyTorch's derivative then counts N as 1, and so does this one.
    """
    if dims is None:
        dof = math.prod(input.shape) - correction
        mean = xp.mean(input)
        if dof <= 0:  # infinite slope, NaN where x equals the mean (inf * 0)
            return g * xp.where(input == mean, math.nan, math.inf)
        return (2.0 / dof) * g * (input - mean)
    dof = _count(input.shape, dims) - correction
    g = _unreduce(xp, g, input.shape, dims, keepdim)
    scale = 2.0 / dof if dof else math.inf
    return scale * g * (input - xp.mean(input, axis=dims or None, keepdims=True))


def _std_grad(xp, g, ans, input, dims, correction, keepdim):
    return _var_grad(xp, xp.where(ans == 0, 0, g / (ans * 2)), input, dims, correction, keepdim)


def _mean_grad(xp, g, input, dims, keepdim):
    if not dims:
        return xp.broadcast_to(g / math.prod(input.shape), input.shape)
    return _expand_back(xp, g / _count(input.shape, dims), input.shape, dims, keepdim)


@defop("var", n_in=1, jvp="transpose", batch="moved")
def _var(xp, input, dims, correction, keepdim):
    return _variance(xp, input, dims, correction, keepdim)


_var.defvjp(lambda xp, g, ans, input, dims, correction, keepdim:
            _var_grad(xp, g, input, dims, correction, keepdim))


@defop("std", n_in=1, jvp="transpose", batch="moved")
def _std(xp, input, dims, correction, keepdim):
    return _variance(xp, input, dims, correction, keepdim) ** 0.5


_std.defvjp(_std_grad)


@defop("var_mean", n_in=1, nout=2, jvp="transpose", batch="moved", method=False)
def _var_mean(xp, input, dims, correction, keepdim):
    return (_variance(xp, input, dims, correction, keepdim),
            _mean_raw(xp, input, dims, keepdim))


def _with_mean_part(first, g_mean, input, dims, keepdim, xp):
    """A moment's gradient part plus the mean's, skipping either whose output gradient did
    not arrive (None: PyTorch's undefined gradient, see ``Op.missing_grads_as_none``)."""
    if g_mean is None:
        return first
    mean = _mean_grad(xp, g_mean, input, dims, keepdim)
    return mean if first is None else first + mean


_var_mean.defvjp(lambda xp, g, ans, input, dims, correction, keepdim: _with_mean_part(
    None if g[0] is None else _var_grad(xp, g[0], input, dims, correction, keepdim),
    g[1], input, dims, keepdim, xp))
_var_mean.missing_grads_as_none = True


@defop("std_mean", n_in=1, nout=2, jvp="transpose", batch="moved", method=False)
def _std_mean(xp, input, dims, correction, keepdim):
    return (_variance(xp, input, dims, correction, keepdim) ** 0.5,
            _mean_raw(xp, input, dims, keepdim))


_std_mean.defvjp(lambda xp, g, ans, input, dims, correction, keepdim: _with_mean_part(
    None if g[0] is None else _std_grad(xp, g[0], ans[0], input, dims, correction, keepdim),
    g[1], input, dims, keepdim, xp))
_std_mean.missing_grads_as_none = True
_std_mean.saved_outputs = (0,)  # the std only


def _moments(name, op):
    def public(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # the legacy overload var(input, unbiased)
            dim, unbiased = None, dim
        c = _correction(name, unbiased, correction, dim)
        if not _dtypes.is_inexact(input._data.dtype):
            what = "std and var" if name in ("std", "var") else name
            raise RuntimeError(f"{what} only support floating point and complex dtypes")
        dims = None if dim is None else _dims(dim, input.ndim)
        if input.ndim == 0:
            dims = None
        out_numel = math.prod(s for i, s in enumerate(input.shape) if dims and i not in dims)
        n = input.numel() // out_numel if out_numel else 0  # PyTorch's reduction factor
        if n - c <= 0:
            _errors.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                         "less than the reduction factor (input numel divided by output "
                         "numel).")
        return op(input, dims, c, keepdim)

    public.__name__ = public.__qualname__ = name
    return op.public(public)


var = _moments("var", _var)
std = _moments("std", _std)
var_mean = _moments("var_mean", _var_mean)
std_mean = _moments("std_mean", _std_mean)
var.__doc__ = ("Variance over ``dim`` (every dim by default) with Bessel's ``correction`` "
               "(default 1; the legacy ``unbiased=False`` means 0).")
std.__doc__ = "Standard deviation: the square root of :func:`var`, same arguments."
var_mean.__doc__ = "``(var, mean)`` in one pass, same arguments as :func:`var`."
std_mean.__doc__ = "``(std, mean)`` in one pass, same arguments as :func:`var`."
array_api("var")(lambda x, axis=None, correction=0, keepdims=False: var(
    x, axis, keepdim=keepdims, correction=correction))
array_api("std")(lambda x, axis=None, correction=0, keepdims=False: std(
    x, axis, keepdim=keepdims, correction=correction))



# --------------------------------------------------------------------------- covariance
# Composites, written as PyTorch writes them (Correlation.cpp), so the nodes recorded and the
# rounding are PyTorch's.
COV_DOF = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
           "number of observations.")


def _check_weights(weights, name):
    """cov()'s error for a negative weight (checked again by each compiled replay)."""
    if bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@public
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), optionally weighted by integer ``fweights`` and real ``aweights``."""
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    for name, weights, kind, what in (("fweights", fweights, "iu", "integral"),
                                      ("aweights", aweights, "f", "floating point")):
        if weights is None:
            continue
        if weights.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {weights.ndim} dimensions")
        if weights._data.dtype.kind not in kind or weights._data.dtype == np.bool_:
            raise RuntimeError(f"cov(): expected {name} to have {what} dtype but got {name} "
                               f"with {weights.dtype._word} dtype")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != {n}")
        if n:
            _recording.expect(_check_weights, weights._data, name)
        w = weights if w is None else w * weights
    if w is None:
        w_sum = Tensor._make(np.asarray(n, dtype=np.int64), None, False)
    else:
        w_sum = w.sum()
        if not bool(w_sum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div((x if w is None else x * w).sum(1), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - div((w * aweights).sum() * correction, w_sum)
    else:
        norm = w_sum - correction
    if bool(norm._data <= 0):
        warnings.warn(COV_DOF, UserWarning, stacklevel=2)
        norm = norm * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return div(c, norm).squeeze()


@public
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to ``[-1, 1]``."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:  # one variable: nan where the variance is nan, inf or 0, else 1
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)
