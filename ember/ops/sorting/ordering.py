"""Sorting and order statistics along one dim: ``sort`` / ``argsort`` / ``msort``, ``topk``,
``kthvalue`` (PyTorch's quickselect, so ties pick the same element), ``median`` and ``mode``.

Values go back to the positions they were taken from through the reductions' ``_unselect``;
indices are int64; equal elements keep their order and NaN sorts as the largest value.
"""
from __future__ import annotations

import numpy as np

from ... import _device
from ..._tensor import _wrap_dim
from .. import batching
from .._cpp_sort import mode_index
from ..reduction.common import _check_nonempty, return_type
from ..reduction.extremes import _evenly_distribute, _unselect, picked
from ..registry import array_api, defop, public

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



# --------------------------------------------------------------------------- selection kernels
# topk, kthvalue and median need one rank of each slice, not the whole order: a partition
# (O(n), SIMD in NumPy) finds the value at that rank, comparisons with it find the positions.
# That replaces a stable argsort of every slice (40x the time of the partition at 1M float32).
# The slices are rows of the input with ``dim`` moved last; the results equal the stable
# sort's, ties included (the first positions among equal elements; NaN as the largest value).

_PARTITION_FROM = 64  # shorter slices: one argsort costs less than the partition's few steps


def _rows(xp, input, dim):
    """``input`` with ``dim`` last, contiguous (NumPy's partition along a strided dim is ~2x
    slower than on a copy)."""
    return xp.ascontiguousarray(xp.moveaxis(input, dim, -1))


def _equal(x, v):
    """``x == v`` where NaN equals NaN (the sorts' order puts all NaN together)."""
    same = x == v
    if x.dtype.kind in "fc":
        same |= (x != x) & (v != v)
    return same


def _at_rank(xp, rows, rank):
    """The value of rank ``rank`` (0 = smallest, NaN largest) of each row, keeping the dim."""
    return xp.partition(rows, rank, axis=-1)[..., rank:rank + 1]


def _topk_positions(xp, rows, k, largest):
    """The positions of the ``k`` largest (smallest) elements of each row, in the stable
    sort's order: all elements beyond the k-th value, then the first of those equal to it."""
    n = rows.shape[-1]
    pivot = _at_rank(xp, rows, n - k if largest else k - 1)
    floats = rows.dtype.kind == "f"
    chosen = None
    if not (floats and bool(xp.isnan(rows).any())):
        # the usual case, no NaN, the k-th value not tied beyond k: one comparison finds all
        reached = rows >= pivot if largest else rows <= pivot
        if bool((xp.count_nonzero(reached, axis=-1) == k).all()):
            chosen = reached
    if chosen is None:
        beyond = rows > pivot if largest else rows < pivot
        if floats:  # NaN is above every number
            nan, nan_pivot = rows != rows, pivot != pivot
            beyond |= nan & ~nan_pivot if largest else ~nan & nan_pivot
        equal = _equal(rows, pivot)
        wanted = k - xp.sum(beyond, axis=-1, keepdims=True)
        if bool((xp.sum(equal, axis=-1, keepdims=True) > wanted).any()):  # more ties than
            equal &= xp.cumsum(equal, axis=-1) <= wanted                  # wanted
        chosen = beyond | equal
    # (flat: NumPy's 2-d nonzero is 30x slower; each row holds k of them, in order)
    chosen = (xp.flatnonzero(chosen) % n).reshape(rows.shape[:-1] + (k,))
    order = _order(xp, xp.take_along_axis(rows, chosen, axis=-1), -1, largest)
    return xp.take_along_axis(chosen, order, axis=-1)


def _first(xp, mask):
    """The first position along the last dim where ``mask`` holds, keeping the dim."""
    return xp.argmax(mask, axis=-1, keepdims=True)


def _rank_positions(xp, rows, rank):
    """Where the stable sort puts rank ``rank`` of each row: the value there occurs once (the
    usual case: its first occurrence), or it is tied and the stable sort takes its j-th
    occurrence, j = ``rank`` less the count of smaller elements."""
    value = _at_rank(xp, rows, rank)
    equal = _equal(rows, value)
    index = _first(xp, equal)
    tied = xp.sum(equal, axis=-1, keepdims=True) > 1
    if bool(tied.any()):
        smaller = rows < value
        if rows.dtype.kind == "f":  # every number is below NaN
            smaller |= (rows == rows) & (value != value)
        j = rank - xp.sum(smaller, axis=-1, keepdims=True)
        index = xp.where(tied, _first(xp, xp.cumsum(equal, axis=-1) > j), index)
    return index


# --------------------------------------------------------------------------- sort, argsort


@defop("sort", n_in=1, nout=2, jvp="transpose", batch="moved")
def _sort(xp, input, dim, descending):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    index = _order(xp, input, dim, descending)
    return xp.take_along_axis(input, index, axis=dim), index


_sort.defvjp(lambda xp, g, ans, input, dim, descending:
             _unselect(xp, g[0], ans[1], dim, True, g[0].shape))

# ``sort(..., stable=...)`` is PyTorch's second overload (SortBackward1), whatever the flag.
_sort_stable = defop("sort", n_in=1, nout=2, overload=1, jvp="transpose",
                     batch="moved")(_sort.forward)
_sort_stable.defvjp(*_sort.rules)
# These ops save only their indices (derivatives.yaml): their values may be written in place.
_sort.saved_outputs = _sort_stable.saved_outputs = (1,)


@defop("argsort", n_in=1, batch="moved")
def _argsort(xp, input, dim, descending):
    if input.ndim == 0:
        return xp.zeros((), dtype=np.int64)
    return _order(xp, input, dim, descending)


@_argsort.public
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)."""
    return _argsort(input, _wrap_dim(dim, input.ndim), bool(descending))


array_api("argsort")(lambda x, axis=-1, descending=False, stable=True:
                     argsort(x, axis, descending))


@public
def sort(input, dim=-1, descending=False, stable=None):
    """``(values, indices)`` sorted along ``dim``; always stable (equal elements keep order)."""
    op = _sort if stable is None else _sort_stable
    return _sort_result(op(input, _wrap_dim(dim, input.ndim), bool(descending)))


array_api("sort")(lambda x, axis=-1, descending=False, stable=True:
                  sort(x, axis, descending).values)


@public
def msort(input):
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


# --------------------------------------------------------------------------- topk


@defop("topk", n_in=1, nout=2, jvp="transpose", batch="moved")
def _topk(xp, input, k, dim, largest, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    if k == 1 and (largest or input.dtype.kind != "f" or not xp.isnan(input).any()):
        # the first extreme; argmax counts NaN as the largest, as the sort does (argmin
        # would pick a NaN too: not the smallest)
        index = (xp.argmax if largest else xp.argmin)(input, axis=dim, keepdims=True)
    elif k == 0 or input.shape[dim] < _PARTITION_FROM:
        index = _order(xp, input, dim, largest)[_along(dim, 0, k)].copy()
    else:
        index = xp.moveaxis(_topk_positions(xp, _rows(xp, input, dim), k, largest), -1, dim)
    return xp.take_along_axis(input, index, axis=dim), index


_topk.defvjp(lambda xp, g, ans, input, k, dim, largest, shape:
             _unselect(xp, g[0], ans[1], dim, True, shape))
_topk.saved_outputs = (1,)


@_topk.public
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


@defop("kthvalue", n_in=1, nout=2, jvp="transpose", batch="moved")
def _kthvalue(xp, input, k, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    if input.shape[dim] < _PARTITION_FROM:
        index = xp.argsort(input, axis=dim, kind="stable")[_along(dim, k - 1, k)]
    else:
        index = xp.moveaxis(_rank_positions(xp, _rows(xp, input, dim), k - 1), -1, dim)
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


@_kthvalue.public
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)`` of the ``k``-th smallest element along ``dim``."""
    d = _wrap_dim(dim, input.ndim)
    _not_for_bool(input, "kthvalue_cpu")
    _check_nonempty("kthvalue", input, d)
    if not 1 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _kthvalue_result(_kthvalue(input, k, d, bool(keepdim), input.shape))


# --------------------------------------------------------------------------- median


@defop("median", n_in=1, jvp="transpose",
       batch=batching.whole(lambda v, nb, p: batching.flat(v, nb).median(-1).values))
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


@defop("median", n_in=1, overload=1, nout=2, jvp="transpose", batch="moved")
def _median_dim(xp, input, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    n = input.shape[dim]
    if n >= _PARTITION_FROM:
        index = xp.moveaxis(_median_positions(xp, _rows(xp, input, dim)), -1, dim)
        values = xp.take_along_axis(input, index, axis=dim)
        if not keepdim:
            values, index = xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
        return values, index
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


def _median_positions(xp, rows):
    """Where the stable sort puts the lower median of each row; a row with NaN: its first NaN
    (PyTorch's median ignores the rank there)."""
    index = _rank_positions(xp, rows, (rows.shape[-1] - 1) // 2)
    if rows.dtype.kind == "f":
        nan = rows != rows
        index = xp.where(nan.any(axis=-1, keepdims=True), _first(xp, nan), index)
    return index


_median_dim.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
                   _unselect(xp, g[0], ans[1], dim, keepdim, shape))
_median_dim.saved_outputs = (1,)


@public
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


@defop("mode", n_in=1, nout=2, jvp="transpose", batch="moved")
def _mode(xp, input, dim, keepdim, shape):
    if input.ndim == 0:
        return _scalar_result(xp, input)
    x = np.moveaxis(_device.to_numpy(input), dim, -1)
    index = mode_index(x.reshape(-1, x.shape[-1])).reshape(x.shape[:-1] + (1,))
    return picked(xp, input, xp.asarray(np.moveaxis(index, -1, dim)), dim, keepdim)


_mode.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
             _unselect(xp, g[0], ans[1], dim, keepdim, shape))
_mode.saved_outputs = (1,)


@_mode.public
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of those
    equally frequent) and where it occurs (the position PyTorch's CPU kernel reports)."""
    d = _wrap_dim(dim, input.ndim)
    if input.is_complex():
        raise NotImplementedError(f"\"mode_cpu\" not implemented for '{input.dtype._word}'")
    _check_nonempty("mode", input, d)
    return _mode_result(_mode(input, d, bool(keepdim), input.shape))
