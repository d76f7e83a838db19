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

from .. import _device, _dtypes, _xp
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd.graph import Node, gradient_edge, new_node
from ._cpp_sort import mode_index
from .reduction import _api_dtype
from .reduction.common import _accumulation_dtype, _check_nonempty, _raw, return_type
from .reduction.extremes import _evenly_distribute, _unselect, picked
from .registry import defop

_sort_result = return_type("sort", ("values", "indices"))
_topk_result = return_type("topk", ("values", "indices"))
_kthvalue_result = return_type("kthvalue", ("values", "indices"))
_median_result = return_type("median", ("values", "indices"))
_mode_result = return_type("mode", ("values", "indices"))


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


@defop("logcumsumexp", n_in=1)
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


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow."""
    if not _dtypes.is_inexact(input._data.dtype):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_word(input)}'")
    d = _wrap_dim(dim, input.ndim)
    if getattr(input, "_levels", None) and input.ndim:  # inside vmap: ops that batch
        top = input.detach().amax(d, keepdim=True)
        top = top.masked_fill(~top.isfinite(), 0)
        return cumsum((input - top).exp(), d).log() + top
    return _logcumsumexp(input, d)


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
# These ops save only their indices (derivatives.yaml): their values may be written in place.
_sort.saved_outputs = _sort_stable.saved_outputs = (1,)


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
_topk.saved_outputs = (1,)


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
_kthvalue.saved_outputs = (1,)


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
_median_dim.saved_outputs = (1,)


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


# --------------------------------------------------------------------------- mode


@defop("mode", n_in=1, nout=2, jvp="transpose")
def _mode(xp, input, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    x = np.moveaxis(_device.to_numpy(input), dim, -1)
    index = mode_index(x.reshape(-1, x.shape[-1])).reshape(x.shape[:-1] + (1,))
    return picked(xp, input, xp.asarray(np.moveaxis(index, -1, dim)), dim, keepdim)


_mode.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
             _unselect(xp, g[0], ans[1], dim, keepdim, shape))
_mode.saved_outputs = (1,)


def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of those
    equally frequent) and where it occurs (the position PyTorch's CPU kernel reports)."""
    d = _wrap_dim(dim, input.ndim)
    if input.is_complex():
        raise NotImplementedError(f"\"mode_cpu\" not implemented for '{_word(input)}'")
    _check_nonempty("mode", input, d)
    return _mode_result(_mode(input, d, bool(keepdim), input.shape))


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
        if x.shape[0] == 0:  # an empty dim: empty results
            return input.copy(), xp.empty(input.shape, dtype=np.int64)
        values[0], indices[0] = x[0], 0
        for i in range(1, x.shape[0]):
            # PyTorch's kernel: a NaN always takes over (so the index moves to each later
            # NaN); otherwise the better value, unless a NaN is held
            prev = values[i - 1]
            take = (x[i] != x[i]) | (better(x[i], prev) & (prev == prev))
            values[i] = xp.where(take, x[i], values[i - 1])
            indices[i] = xp.where(take, i, indices[i - 1])
        return xp.moveaxis(values, 0, dim), xp.moveaxis(indices, 0, dim)

    def rule(xp, g, ans, input, dim):
        if input.ndim == 0:
            return g[0]
        return xp.index_add_zeros(g[0], input.shape, _scatter_key(_raw(ans[1]), dim))

    op.defvjp(rule)
    op.saved_outputs = (1,)  # and the input (derivatives.yaml: cummaxmin_backward)
    fields = return_type(name, ("values", "indices"))

    def public(input, dim):
        if input.ndim == 0 and dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        if input.is_complex():
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_word(input)}'")
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


# --------------------------------------------------------------------------- sets and counts
# Not differentiable. ``unique`` records PyTorch's node for a float input that requires grad,
# whose backward refuses; ``bincount`` with such weights records the ``NotImplemented`` node.


def _refusing_node(name, aten):
    """A node class named ``name`` whose backward raises PyTorch's "not implemented" error."""

    def apply(self, grad_outputs, create_graph):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")

    return type(name, (Node,), {"__slots__": (), "apply": apply, "release": lambda self: None})


_REFUSING = {aten: _refusing_node(node, aten) for aten, node in (
    ("_unique2", "Unique2Backward0"), ("unique_dim", "UniqueDimBackward0"),
    ("unique_consecutive", "UniqueConsecutiveBackward0"))}


def _int64(xp, a):
    return Tensor._make(xp.asarray(a, dtype=np.int64), None, False)


def _unique_result(aten, input, values, inverse, counts, return_inverse, return_counts):
    """``values`` (with the refusing node where PyTorch records one), then what was asked."""
    xp = _xp.namespace_of(input._data)
    out = Tensor._make(values, None, False)
    if input.requires_grad and grad_mode._state.grad:
        node = new_node(_REFUSING[aten], (gradient_edge(input),))
        out = Tensor._make(values, node, True)
    extra = ([_int64(xp, inverse)] if return_inverse else []) + \
        ([_int64(xp, counts)] if return_counts else [])
    return (out, *extra) if extra else out


def _slices_along(xp, a, dim):
    """``a`` with ``dim`` first and the rest flattened: one row per slice along ``dim``."""
    return xp.reshape(xp.moveaxis(a, dim, 0), (a.shape[dim], a.size // max(a.shape[dim], 1)))


def _check_unique_dim(input, dim):
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    if input.numel() == 0 and input.shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    return d


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along ``dim``), sorted (PyTorch's CPU kernel sorts
    whatever ``sorted`` says); each NaN is distinct. Optionally the index of each input element
    in the result and each result's count."""
    a = input._data
    xp = _xp.namespace_of(a)
    if dim is None:
        values, inverse, counts = xp.unique(xp.reshape(a, (-1,)), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        return _unique_result("_unique2", input, values, xp.reshape(inverse, a.shape), counts,
                              return_inverse, return_counts)
    d = _check_unique_dim(input, dim)
    rows = _slices_along(xp, a, d)
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        keep = xp.arange(min(rows.shape[0], 1 if rows.shape[1] == 0 else 0))
        inverse = xp.zeros(rows.shape[0], dtype=np.int64)
        counts = xp.full(keep.shape, rows.shape[0], dtype=np.int64)
    else:  # rows in lexicographic order, then runs of equal rows
        order = xp.lexsort(rows.T[::-1])
        ordered = rows[order]
        starts = xp.concatenate([[True], xp.any(ordered[1:] != ordered[:-1], axis=1)])
        group = xp.cumsum(starts) - 1
        keep = order[starts]
        inverse = xp.empty_like(group)
        inverse[order] = group
        counts = xp.bincount(group)
    values = xp.take(a, keep, axis=d)
    return _unique_result("unique_dim", input, values, inverse, counts, return_inverse,
                          return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The input with each run of equal consecutive elements (or slices along ``dim``)
    replaced by one; optionally the run index of each element and each run's length."""
    a = input._data
    xp = _xp.namespace_of(a)
    if dim is None:
        rows = xp.reshape(a, (-1, 1))
        shape = a.shape
    else:
        d = _check_unique_dim(input, dim)
        rows, shape = _slices_along(xp, a, d), (a.shape[d],)
    n = rows.shape[0]
    starts = xp.concatenate([xp.ones(min(n, 1), dtype=bool),
                             xp.any(rows[1:] != rows[:-1], axis=1)])
    group = xp.cumsum(starts) - 1
    keep = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([keep, [n]])) if n else keep
    values = a.reshape(-1)[keep] if dim is None else xp.take(a, keep, axis=d)
    return _unique_result("unique_consecutive", input, values, xp.reshape(group, shape), counts,
                          return_inverse, return_counts)


def bincount(input, weights=None, minlength=0):
    """How often each value ``0..max`` occurs in a vector of non-negative integers (summing
    ``weights`` instead of ones: float32/float64 weights keep their dtype, others give
    float64)."""
    from .operands import _underivable
    a = input._data
    xp = _xp.namespace_of(a)
    if a.dtype == np.bool_ or a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_word(input)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _int64(xp, xp.bincount(a, minlength=minlength))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    counts = xp.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(dtype)
    return _underivable(Tensor._make(counts, None, False), "bincount", weights)


def _word(t):
    return t.dtype._legacy[:-6]  # 'FloatTensor' -> 'Float'


def _edge_text(v):
    """A range end as PyTorch's C++ stream prints it."""
    return "-nan" if v != v else f"{v:g}"


def histc(input, bins=100, min=0, max=0):
    """A histogram of the elements in ``bins`` equal bins over ``[min, max]`` (the elements'
    own range when both are equal); elements outside the range are ignored."""
    a = input._data
    xp = _xp.namespace_of(a)
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_word(input)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = a.dtype.type(min), a.dtype.type(max)
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_edge_text(float(lo))}, "
                           f"{_edge_text(float(hi))}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = xp.reshape(a, (-1,))
    x = x[(x >= lo) & (x <= hi)]
    pos = ((x - lo) / (hi - lo) * a.dtype.type(bins)).astype(np.int64)  # in the input dtype
    counts = xp.bincount(xp.minimum(pos, bins - 1), minlength=bins)
    return Tensor._make(counts.astype(a.dtype), None, False)


def _as_tensor_like(value, like):
    if isinstance(value, Tensor):
        return value
    return Tensor._make(_xp.namespace_of(like._data).asarray(value), None, False)


def _bounds_search(xp, boundaries, values, right, sorter):
    """PyTorch's binary search, vectorised: for each value the first index whose boundary is
    ``>= value`` (``> value`` with ``right``); NaN boundaries compare as PyTorch's do."""
    n = boundaries.shape[-1]
    if boundaries.ndim == 1:
        boundaries = boundaries[sorter] if sorter is not None else boundaries
        rows = xp.broadcast_to(boundaries, (values.size, n))
        vals = xp.reshape(values, (-1,))
    else:
        if sorter is not None:
            boundaries = xp.take_along_axis(boundaries, sorter, axis=-1)
        m = values.shape[-1]
        rows = xp.repeat(xp.reshape(boundaries, (boundaries.size // max(n, 1), n)), m, axis=0)
        vals = xp.reshape(values, (-1,))
    start = xp.zeros(vals.shape, dtype=np.int64)
    end = xp.full(vals.shape, n, dtype=np.int64)
    while True:
        active = start < end
        if not active.any():
            break
        mid = (start + end) // 2
        bd = xp.take_along_axis(rows, xp.minimum(mid, n - 1)[:, None], axis=1)[:, 0]
        go_right = ~(bd > vals) if right else ~(bd >= vals)
        start = xp.where(active & go_right, mid + 1, start)
        end = xp.where(active & ~go_right, mid, end)
    return xp.reshape(start, values.shape)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``values`` would be inserted into the (last dim of) ``sorted_sequence`` to keep
    it sorted: the leftmost place, or the rightmost with ``right=True`` / ``side='right'``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    values = _as_tensor_like(values, sorted_sequence)
    b, v = sorted_sequence._data, values._data
    if b.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if b.ndim > 1 and (v.ndim != b.ndim or v.shape[:-1] != b.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(b.shape)} and input value tensor {list(v.shape)}")
    s = None
    if sorter is not None:
        s = sorter._data
        if s.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {_word(sorter)}")
        if s.shape != b.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(b.shape)}and got sorter "
                               f"tensor {list(s.shape)}")
    xp = _xp.namespace_of(b)
    index = _bounds_search(xp, b, v, bool(right), s)
    return Tensor._make(index.astype(np.int32 if out_int32 else np.int64), None, False)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element given the sorted 1-d ``boundaries`` (``right``: a value equal
    to a boundary goes to the bucket above it)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, _as_tensor_like(input, boundaries), out_int32=out_int32,
                        right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (NaN never does);
    either may be a Python number."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            "isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one "
            "of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n * (Number element, Tensor test_elements,"
            " *, bool assume_unique = False, bool invert = False, Tensor out = None)\n * "
            "(Tensor elements, Number test_element, *, bool assume_unique = False, bool invert "
            "= False, Tensor out = None)\n")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = _as_tensor_like(elements, like), _as_tensor_like(test_elements, like)
    for t in (elements, test_elements):
        if t._data.dtype == np.bool_ or t._data.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_word(t)}")
    xp = _xp.namespace_of(elements._data)
    found = xp.isin(elements._data, test_elements._data, invert=bool(invert))
    return Tensor._make(xp.asarray(found, dtype=bool), None, False)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["cumsum", "cumprod", "sort", "argsort", "msort", "topk", "kthvalue", "median", "mode",
           "cummax", "cummin", "logcumsumexp", "unique", "unique_consecutive", "bincount", "histc",
           "searchsorted", "bucketize", "isin"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("searchsorted", "bucketize", "isin")}
INPLACE = ("cumsum", "cumprod")
ARRAY_API = {
    "cumsum": lambda x, axis=None, dtype=None: cumsum(x, axis, dtype=_api_dtype(dtype)),
    "cumprod": lambda x, axis=None, dtype=None: cumprod(x, axis, dtype=_api_dtype(dtype)),
    "sort": lambda x, axis=-1, descending=False, stable=True: sort(x, axis, descending).values,
    "argsort": lambda x, axis=-1, descending=False, stable=True: argsort(x, axis, descending),
}
