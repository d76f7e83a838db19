"""Ops along one dim, in order: scans (cumsum, cumprod), sorting and order statistics (sort,
argsort, topk, kthvalue, median), with their derivatives.

Sorted and selected values are differentiable (the gradient goes back to the positions they
were taken from); indices are int64. Equal elements keep their order, as in PyTorch's CPU sort,
and NaN sorts as the largest value. Where PyTorch's choice among equal elements is its own
algorithm's (``median`` over a dim, ``kthvalue``'s quickselect), ember makes the same choice,
so the gradient lands on the same element.
"""
from __future__ import annotations

import numpy as np

from .. import _xp
from .._tensor import Tensor, _wrap_dim
from .reduction import (
    _accumulation_dtype,
    _api_dtype,
    _check_nonempty,
    _evenly_distribute,
    _raw,
    _unselect,
    return_type,
)
from .registry import defop

_sort_result = return_type("sort", ("values", "indices"))
_topk_result = return_type("topk", ("values", "indices"))
_kthvalue_result = return_type("kthvalue", ("values", "indices"))
_median_result = return_type("median", ("values", "indices"))


def _order(xp, x, axis, descending):
    """The stable sort order of ``x`` along ``axis``."""
    if not descending:
        return xp.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed input and reversing the result keeps equal elements in order.
    reversed_order = xp.argsort(xp.flip(x, axis=axis), axis=axis, kind="stable")
    return (x.shape[axis] - 1) - xp.flip(reversed_order, axis=axis)


def _along(dim, start, stop):
    return (slice(None),) * dim + (slice(start, stop),)


def _scalar_result(xp, input):
    """Sorting or selecting within a 0-d tensor: the element itself, at index 0."""
    return input.copy(), xp.zeros((), dtype=np.int64)


def _not_for_bool(input, kernel):
    if input._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


# --------------------------------------------------------------------------- scans


# The scans' rules call ``xp.flip``: on Tensors that is the shape family's ``flip``.


def _reversed_cumsum(xp, g, dim):
    return xp.flip(xp.cumsum(xp.flip(g, axis=dim), axis=dim), axis=dim)


@defop("cumsum", n_in=1, jvp="linear")
def _cumsum(xp, input, dim, dtype):
    return xp.cumsum(input, axis=dim, dtype=dtype) if input.ndim else input.astype(dtype)


_cumsum.defvjp(lambda xp, g, ans, input, dim, dtype:
               g if g.ndim == 0 or g.shape[dim] == 1 else _reversed_cumsum(xp, g, dim))


@defop("cumprod", n_in=1, jvp="transpose")
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
    return op(input, _wrap_dim(dim, input.ndim), _accumulation_dtype(input, dtype))


def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim``; integers accumulate in int64."""
    return _scan("cumsum", _cumsum, input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``; integers accumulate in int64; gradients exact at zeros."""
    return _scan("cumprod", _cumprod, input, dim, dtype)


# --------------------------------------------------------------------------- sort, argsort


@defop("sort", n_in=1, nout=2, jvp="transpose")
def _sort(xp, input, dim, descending):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    index = _order(xp, input, dim, descending)
    return xp.take_along_axis(input, index, axis=dim), index


_sort.defvjp(lambda xp, g, ans, input, dim, descending:
             _unselect(xp, g[0], ans[1], dim, True, g[0].shape))

# ``sort(..., stable=...)`` is PyTorch's second overload (SortBackward1), whatever the flag.
_sort_stable = defop("sort", n_in=1, nout=2, overload=1, jvp="transpose")(_sort.forward)
_sort_stable.defvjp(*_sort.rules)


@defop("argsort", n_in=1)
def _argsort(xp, input, dim, descending):
    if input.ndim == 0:
        return xp.zeros((), dtype=np.int64)
    return _order(xp, input, dim, descending)


def sort(input, dim=-1, descending=False, stable=None):
    """``(values, indices)`` sorted along ``dim``; always stable (equal elements keep order)."""
    op = _sort if stable is None else _sort_stable
    return _sort_result(op(input, _wrap_dim(dim, input.ndim), bool(descending)))


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)."""
    return _argsort(input, _wrap_dim(dim, input.ndim), bool(descending))


def msort(input):
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


# --------------------------------------------------------------------------- topk


@defop("topk", n_in=1, nout=2, jvp="transpose")
def _topk(xp, input, k, dim, largest, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    index = _order(xp, input, dim, largest)[_along(dim, 0, k)].copy()
    return xp.take_along_axis(input, index, axis=dim), index


_topk.defvjp(lambda xp, g, ans, input, k, dim, largest, shape:
             _unselect(xp, g[0], ans[1], dim, True, shape))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``, in order.

    Among equal elements the first ones are taken; PyTorch leaves that choice to its C++
    library's selection algorithm.
    """
    d = _wrap_dim(dim, input.ndim)
    if input._data.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if not 0 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return _topk_result(_topk(input, k, d, bool(largest), input.shape))


# --------------------------------------------------------------------------- kthvalue


def _greater(a, b):
    """PyTorch's quickselect order: NaN above everything."""
    return (a != a and b == b) or a > b


def _quickselect(values, k):
    """The index PyTorch's CPU ``kthvalue`` reports: its quickselect (median-of-three pivot,
    Hoare partition), replayed on one slice. Only needed where the k-th value is tied."""
    arr, idx = list(values), list(range(len(values)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if _greater(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)
        if _greater(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if _greater(arr[lo], arr[hi]):
            swap(lo, hi)
        if _greater(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while _greater(pivot, arr[i]):
                i += 1
            j -= 1
            while _greater(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


@defop("kthvalue", n_in=1, nout=2, jvp="transpose")
def _kthvalue(xp, input, k, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    index = xp.argsort(input, axis=dim, kind="stable")[_along(dim, k - 1, k)]
    values = xp.take_along_axis(input, index, axis=dim)
    if isinstance(input, np.ndarray):
        same = (input == values) | ((input != input) & (values != values))
        tied = np.moveaxis(np.sum(same, axis=dim, keepdims=True) > 1, dim, -1)
        if tied.any():  # which of the equal elements PyTorch reports depends on its algorithm
            rows, index = np.moveaxis(input, dim, -1), np.moveaxis(index.copy(), dim, -1)
            for pos in np.argwhere(tied):
                row = tuple(pos[:-1])
                index[row + (0,)] = _quickselect(rows[row].tolist(), k - 1)
            index = np.moveaxis(index, -1, dim)
    if not keepdim:
        values, index = xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index.copy()


_kthvalue.defvjp(lambda xp, g, ans, input, k, dim, keepdim, shape:
                 _unselect(xp, g[0], ans[1], dim, keepdim, shape))


def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element along ``dim``."""
    d = _wrap_dim(dim, input.ndim)
    _not_for_bool(input, "kthvalue_cpu")
    _check_nonempty("kthvalue", input, d)
    if not 1 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kthvalue_result(_kthvalue(input, k, d, bool(keepdim), input.shape))


# --------------------------------------------------------------------------- median


@defop("median", n_in=1, jvp="transpose")
def _median_all(xp, input):
    flat = xp.reshape(input, (-1,))
    if flat.size == 0:  # PyTorch's NaN, or what NaN becomes as an integer
        fill = np.nan if input.dtype.kind == "f" else np.iinfo(input.dtype).min
        return xp.asarray(fill, dtype=input.dtype)
    if input.dtype.kind == "f" and xp.isnan(flat).any():
        return xp.asarray(np.nan, dtype=input.dtype)
    k = (flat.size - 1) // 2
    return xp.partition(flat, k)[k]


_median_all.defvjp(_evenly_distribute)


@defop("median", n_in=1, overload=1, nout=2, jvp="transpose")
def _median_dim(xp, input, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    n = input.shape[dim]
    order = xp.argsort(input, axis=dim, kind="stable")
    if input.dtype.kind == "f":  # a slice with NaN reports its first NaN (sorted right after
        valid = n - xp.sum(xp.isnan(input), axis=dim, keepdims=True)  # the numbers)
        index = xp.take_along_axis(order, xp.where(valid < n, valid, (n - 1) // 2), axis=dim)
    else:
        index = order[_along(dim, (n - 1) // 2, (n + 1) // 2)]
    values = xp.take_along_axis(input, index, axis=dim)
    if not keepdim:
        values, index = xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index.copy()


_median_dim.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
                   _unselect(xp, g[0], ans[1], dim, keepdim, shape))


def median(input, dim=None, keepdim=False):
    """The lower median of all elements (ties share the gradient), or ``(values, indices)``
    along ``dim``; NaN if a NaN is present."""
    if dim is None:
        _not_for_bool(input, "median_cpu")
        return _median_all(input)
    d = _wrap_dim(dim, input.ndim)
    _not_for_bool(input, "median_out")
    _check_nonempty("median", input, d)
    return _median_result(_median_dim(input, d, bool(keepdim), input.shape))


# --------------------------------------------------------------------------- running extrema


def _running_extreme(name, better):
    """The op of ``cummax`` or ``cummin``: the running extreme along a dim and where it was
    last reached (a tie moves the index forward, as in PyTorch)."""

    @defop(name, n_in=1, nout=2, jvp="transpose")
    def op(xp, input, dim):
        if input.ndim == 0:
            return input.copy(), xp.zeros((), dtype=np.int64)
        x = xp.moveaxis(input, dim, 0)
        values, indices = xp.empty_like(x), xp.empty(x.shape, dtype=np.int64)
        values[0], indices[0] = x[0], 0
        for i in range(1, x.shape[0]):
            take = better(x[i], values[i - 1]) | (x[i] != x[i])  # NaN, once seen, stays
            take &= values[i - 1] == values[i - 1]
            values[i] = xp.where(take, x[i], values[i - 1])
            indices[i] = xp.where(take, i, indices[i - 1])
        return xp.moveaxis(values, 0, dim), xp.moveaxis(indices, 0, dim)

    def rule(xp, g, ans, input, dim):
        if input.ndim == 0:
            return g[0]
        return xp.index_add_zeros(g[0], input.shape, _scatter_key(_raw(ans[1]), dim))

    op.defvjp(rule)
    fields = return_type(name, ("values", "indices"))

    def public(input, dim):
        return fields(op(input, _wrap_dim(dim, input.ndim)))
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"``(values, indices)``: the running {name[3:]}imum along ``dim`` and "
                      "the index where it was (last) reached.")
    return public


def _scatter_key(index, dim):
    """The advanced-indexing key that sends each element to ``index`` along ``dim``."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


cummax = _running_extreme("cummax", lambda a, b: a >= b)
cummin = _running_extreme("cummin", lambda a, b: a <= b)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["cumsum", "cumprod", "sort", "argsort", "msort", "topk", "kthvalue", "median",
           "cummax", "cummin"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = ("cumsum", "cumprod")
ARRAY_API = {
    "cumsum": lambda x, axis=None, dtype=None: cumsum(x, axis, dtype=_api_dtype(dtype)),
    "cumprod": lambda x, axis=None, dtype=None: cumprod(x, axis, dtype=_api_dtype(dtype)),
    "sort": lambda x, axis=-1, descending=False, stable=True: sort(x, axis, descending).values,
    "argsort": lambda x, axis=-1, descending=False, stable=True: argsort(x, axis, descending),
}
