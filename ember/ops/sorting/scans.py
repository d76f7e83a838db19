"""Scans along one dim: ``cumsum``, ``cumprod`` (exact with zeros), ``logcumsumexp``, and the
running extrema ``cummax`` / ``cummin`` with the index where each was reached.
"""
from __future__ import annotations

import numpy as np

from ... import _dtypes, _xp
from ..._tensor import Tensor, _wrap_dim
from ..reduction import _api_dtype
from ..reduction.common import _accumulation_dtype, _raw, return_type
from ..registry import array_api, defop, public

# --------------------------------------------------------------------------- scans


# The scans' rules call ``xp.flip``: on Tensors that is the shape family's ``flip``.


def _reversed_cumsum(xp, g, dim):
    return xp.flip(xp.cumsum(xp.flip(g, axis=dim), axis=dim), axis=dim)


@defop("cumsum", n_in=1, jvp="linear", batch="moved")
def _cumsum(xp, input, dim, dtype):
    return xp.cumsum(input, axis=dim, dtype=dtype) if input.ndim else input.astype(dtype)


_cumsum.defvjp(lambda xp, g, ans, input, dim, dtype:
               g if g.ndim == 0 or g.shape[dim] == 1 else _reversed_cumsum(xp, g, dim))


@defop("cumprod", n_in=1, jvp="transpose", batch="moved")
def _cumprod(xp, input, dim, dtype):
    return xp.cumprod(input, axis=dim, dtype=dtype) if input.ndim else input.astype(dtype)


def _cumprod_rule(xp, g, ans, input, dim, dtype):
    """``sum_{j >= k} g_j * prod_{i <= j, i != k} x_i`` for each position ``k`` along ``dim``."""
    if input.ndim == 0 or input.shape[dim] == 1:
        return g
    if not (input == 0).any():
        return _reversed_cumsum(xp, g * ans, dim) / input
    if isinstance(input, Tensor):  # recording (double backward): the differentiable form
        return _cumprod_grad_with_zeros_differentiable(xp, g, input, dim)
    return _cumprod_grad_with_zeros(xp, g, ans, input, dim)


def _cumprod_grad_with_zeros(xp, g, ans, input, dim):
    """The rule's sum in O(n) when zeros occur (raw arrays).

    Before the first zero of a slice the usual ``reversed_cumsum(g * ans) / x`` holds; at the
    first zero ``k`` it is ``prod(x[:k]) * sum_{j >= k} g_j * prod(x[k+1:j+1])``, where the
    products stop at the second zero; from there on every output contains a zero.
    """
    n = input.shape[dim]
    zeros_so_far = xp.cumsum(input == 0, axis=dim)
    before = zeros_so_far == 0
    grad = xp.where(before, _reversed_cumsum(xp, xp.where(before, g * ans, 0), dim)
                    / xp.where(before, input, 1), 0)
    first_zero = (input == 0) & (zeros_so_far == 1)
    after_first = (zeros_so_far == 1) & ~first_zero
    partial = xp.cumprod(xp.where(after_first, input, 1), axis=dim)
    tail = xp.sum(partial * xp.where(zeros_so_far == 1, g, 0), axis=dim, keepdims=True)
    head = (slice(None),) * dim
    ones = xp.ones_like(ans[head + (slice(0, 1),)])
    before_k = xp.concatenate([ones, ans[head + (slice(0, n - 1),)]], dim)  # prod(x[:k])
    return xp.where(first_zero, tail * before_k, grad)


def _cumprod_grad_with_zeros_differentiable(xp, g, input, dim):
    """The rule's sum as an O(n^2) expression of ``input`` (itself differentiable)."""
    n = input.shape[dim]
    raw = _xp.namespace_of(input._data)
    diagonal = Tensor._make(raw.eye(n, dtype=bool), None, False)
    j_from_k = Tensor._make(raw.triu(raw.ones((n, n), dtype=bool)), None, False)
    x = xp.expand_dims(xp.swapaxes(input, dim, -1), -2)              # (..., 1, n)
    omit_k = xp.where(diagonal, 1, x)                                 # row k: x with x_k = 1
    partial = xp.cumprod(omit_k, axis=-1)                             # [k, j]: prod_{i<=j, i!=k}
    terms = xp.where(j_from_k, partial, 0) * xp.expand_dims(xp.swapaxes(g, dim, -1), -2)
    return xp.swapaxes(xp.sum(terms, axis=-1), dim, -1)


_cumprod.defvjp(_cumprod_rule)


def _scan(name, op, input, dim, dtype):
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}")
    dtype = _dtypes.as_dtype(dtype, name)
    return op(input, _wrap_dim(dim, input.ndim), _accumulation_dtype(input, dtype))


@public(inplace=True)
def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``; integers accumulate in int64."""
    return _scan("cumsum", _cumsum, input, dim, dtype)


array_api("cumsum")(lambda x, axis=None, dtype=None: cumsum(x, axis, dtype=_api_dtype(dtype)))


@public(inplace=True)
def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``; integers accumulate in int64; gradients exact at zeros."""
    return _scan("cumprod", _cumprod, input, dim, dtype)


array_api("cumprod")(lambda x, axis=None, dtype=None: cumprod(x, axis,
                                                             dtype=_api_dtype(dtype)))


@defop("logcumsumexp", n_in=1, batch="moved")
def _logcumsumexp(xp, input, dim):
    if input.ndim == 0:
        return input.copy()
    return xp.logaddexp.accumulate(input, axis=dim)  # stable, and exact at -inf / inf


def _reversed_logcumsumexp(xp, x, dim):
    return xp.flip(_running_logcumsumexp(xp, xp.flip(x, axis=dim), dim), axis=dim)


def _logcumsumexp_rule(xp, g, ans, input, dim):
    """PyTorch's stable form of ``sum_{j >= k} g_j * exp(x_k - ans_j)``: the positive and the
    negative parts of ``g`` summed in log space."""
    if g.ndim == 0 or g.shape[dim] == 1 and type(g) is np.ndarray:
        return g  # (recorded, the formula runs: the gradient depends on the input, as PyTorch's)
    lowest = float(np.finfo(_raw(g).dtype).min)
    log_abs = xp.log(xp.abs(g))
    positive = xp.where(g > 0, log_abs, lowest)
    negative = xp.where(g < 0, log_abs, lowest)
    return (xp.exp(_reversed_logcumsumexp(xp, positive - ans, dim) + input)
            - xp.exp(_reversed_logcumsumexp(xp, negative - ans, dim) + input))


def _logcumsumexp_jvp(xp, t, ans, input, dim):
    """``sum_{i <= j} exp(x_i - ans_j) * t_i``, the positive and negative parts of ``t``
    summed in log space (as the VJP rule does), so no weight underflows."""
    if input.ndim == 0:
        return t
    lowest = float(np.finfo(_raw(t).dtype).min)
    log_abs = xp.log(xp.abs(t))
    positive = xp.where(t > 0, log_abs, lowest)
    negative = xp.where(t < 0, log_abs, lowest)
    return (xp.exp(_running_logcumsumexp(xp, positive + input, dim) - ans)
            - xp.exp(_running_logcumsumexp(xp, negative + input, dim) - ans))


def _running_logcumsumexp(xp, x, dim):
    if isinstance(x, Tensor):
        return logcumsumexp(x, dim)
    return _logcumsumexp.forward(xp, x, dim)


_logcumsumexp.defvjp(_logcumsumexp_rule)
_logcumsumexp.defjvp(_logcumsumexp_jvp)


@_logcumsumexp.public
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow."""
    if not _dtypes.is_inexact(input._data.dtype):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype._word}'")
    d = _wrap_dim(dim, input.ndim)
    if getattr(input, "_levels", None) and input.ndim:  # inside vmap: ops that batch
        top = input.detach().amax(d, keepdim=True)
        top = top.masked_fill(~top.isfinite(), 0)
        return cumsum((input - top).exp(), d).log() + top
    return _logcumsumexp(input, d)



# --------------------------------------------------------------------------- running extrema


def _running_extreme(name, ufunc):
    """The op of ``cummax`` or ``cummin``: the running extreme along a dim and where it was
    last reached (a tie moves the index forward, as in PyTorch)."""

    @defop(name, n_in=1, nout=2, jvp="transpose", batch="moved")
    def op(xp, input, dim):
        if input.ndim == 0:
            return input.copy(), xp.zeros((), dtype=np.int64)
        if input.shape[dim] == 0:  # an empty dim: empty results
            return input.copy(), xp.empty(input.shape, dtype=np.int64)
        return _running_extreme_forward(xp, xp.moveaxis(input, dim, -1), ufunc(xp), dim)

    def rule(xp, g, ans, input, dim):
        if input.ndim == 0:
            return g[0]
        if type(g[0]) is np.ndarray:
            return _segment_sums(xp, g[0], ans[1], dim)
        return xp.index_add_zeros(g[0], input.shape, _scatter_key(_raw(ans[1]), dim))

    op.defvjp(rule)
    op.saved_outputs = (1,)  # and the input (derivatives.yaml: cummaxmin_backward)
    fields = return_type(name, ("values", "indices"))

    def public(input, dim):
        if input.ndim == 0 and dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        if input.is_complex():
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{input.dtype._word}'")
        return fields(op(input, _wrap_dim(dim, input.ndim)))
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"``(values, indices)``: the running {name[3:]}imum along ``dim`` and "
                      "the index where it was (last) reached.")
    return op.public(public)


def _running_extreme_forward(xp, x, extreme, dim):
    """The running extreme of ``x`` along its last dim and the index where it was last reached
    (``dim`` is where that dim goes back to).

    PyTorch's kernel steps along the dim: a NaN always takes over (so the index moves to each
    later NaN), otherwise a value at least as good takes over unless a NaN is held. That is
    ``extreme.accumulate`` (NaN propagates) for the values, and position ``i`` takes over where
    ``x[i]`` equals the running extreme there (or is NaN). One ufunc scan instead of a Python
    step per position: 1663 ms -> ~8 ms at 500,000 elements.
    """
    n = x.shape[-1]
    values = _running(xp, extreme, x)
    taken = x == values
    inexact = _dtypes.is_inexact(x.dtype)
    if inexact:
        taken |= x != x
    if type(taken) is np.ndarray:
        # each index: the last taking-over position, repeated up to the next one (a row's
        # first position always takes over, so no run crosses rows) -- a copy, not a scan
        starts = xp.flatnonzero(taken)
        indices = xp.repeat(starts % n, xp.diff(starts, append=taken.size)).reshape(x.shape)
    else:
        indices = _running(xp, xp.maximum, xp.where(taken, xp.arange(n), 0))
    if inexact and (values == 0).any():
        # the value is the element taken over (+0 / -0 as PyTorch's), whichever zero the
        # ufunc returned for a tie
        values = xp.take_along_axis(x, indices, axis=-1)
    return xp.moveaxis(values, -1, dim), xp.moveaxis(indices, -1, dim)


def _running(xp, extreme, x):
    """``extreme.accumulate`` along the last dim. NumPy's; elsewhere (CuPy offers accumulate
    for few ufuncs) by doubling: ``log2(n)`` steps, each the extreme of the running values
    and themselves shifted by 1, 2, 4... positions (NaN propagates as in the ufunc)."""
    if type(x) is np.ndarray:
        return extreme.accumulate(x, axis=-1)
    out, shift = x.copy(), 1
    while shift < x.shape[-1]:
        out[..., shift:] = extreme(out[..., shift:], out[..., :-shift])
        shift *= 2
    return out


def _segment_sums(xp, g, indices, dim):
    """The gradient of a running extreme (raw arrays): ``g`` summed onto the index each
    position took. The indices along the dim are runs that start where ``index == position``,
    so each sum is one ``add.reduceat`` over the runs (6 ms of ``add.at`` -> 1.5 ms at 500,000
    elements); everything else is zero."""
    n = g.shape[dim]
    g_last = xp.ascontiguousarray(xp.moveaxis(g, dim, -1)).reshape(-1)
    starts = xp.flatnonzero(xp.moveaxis(indices, dim, -1) == xp.arange(n))
    out = xp.zeros_like(g_last)
    out[starts] = xp.add.reduceat(g_last, starts)
    return xp.moveaxis(out.reshape(xp.moveaxis(g, dim, -1).shape), -1, dim)


def _scatter_key(index, dim):
    """The advanced-indexing key that sends each element to ``index`` along ``dim``."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


cummax = _running_extreme("cummax", lambda xp: xp.maximum)
cummin = _running_extreme("cummin", lambda xp: xp.minimum)
