"""Adaptive pooling one spatial dim at a time: PyTorch's windows ``[floor(i*n/out),
ceil((i+1)*n/out))`` as a table, and each window reduced by a tree of neighbour pairs.

Why this shape: max and sum over a box are separable (reduce the last dim's windows, then the
dim before over the results, ...), so the work is one pass over the input plus passes over ever
smaller partial results, instead of one pass per cell of the box. A window's elements sit along
one axis of a view (a reshape when the windows tile the dim, else one gather); NumPy reduces
short runs along an axis element by element (``argmax`` of rows of 16 costs ~100 ns a row, and a
strided view with a large stride touches a cache line per element), so each level of the tree
combines neighbours ``v[0::2]`` and ``v[1::2]``, which reads the data once in memory order.

The max keeps PyTorch's choice: the first maximum of the window in row-major order, or its last
NaN. Reducing the last dim first keeps that: within a row the tree picks the first maximum (a
right element wins only when greater, or NaN), then across rows the first row holding the
window's maximum, which holds its first maximum in row-major order (likewise the last NaN).

Used by ``pooling.py``.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from ._taps import _along, apply_dense


@functools.lru_cache(maxsize=512)
def adaptive_windows(n, out):
    """The windows of one dim: ``index`` (out, L), window i's positions in order with the last
    repeated past its end; ``mask`` (out, L), False on those repeats (None when there are
    none); ``lengths`` (out,)."""
    i = np.arange(out)
    start, end = i * n // out, -(-(i + 1) * n // out)
    lengths = end - start
    width = int(lengths.max()) if out else 0
    index = np.minimum(start[:, None] + np.arange(width), end[:, None] - 1)
    mask = None if (lengths == width).all() else np.arange(width) < lengths[:, None]
    return index, mask, lengths


@functools.lru_cache(maxsize=512)
def adaptive_cover(n, out):
    """The transpose of ``adaptive_windows``: ``index`` (n, M), the windows holding each input
    position (the last repeated), ``mask`` (n, M) False on repeats (None when there are none)."""
    i = np.arange(out)
    start, end = i * n // out, -(-(i + 1) * n // out)
    j = np.arange(n)
    first = np.searchsorted(end, j, side="right")  # the first window ending after j
    last = np.searchsorted(start, j, side="right") - 1  # the last window starting at or before j
    counts = last - first + 1
    width = int(counts.max()) if n else 0
    index = np.minimum(first[:, None] + np.arange(width), last[:, None])
    mask = None if (counts == width).all() else np.arange(width) < counts[:, None]
    return index, mask


def _windowed(xp, x, axis, index):
    """``x`` with ``axis`` (length n) split into (out, L): window i's elements along axis + 1.
    A reshape (no copy) when the windows tile the dim, else one gather."""
    out, width = index.shape
    split = x.shape[:axis] + (out, width) + x.shape[axis + 1:]
    if out * width == x.shape[axis] and (index.reshape(-1) == np.arange(out * width)).all():
        return x.reshape(split)
    return xp.take(x, xp.asarray(index.reshape(-1)), axis=axis).reshape(split)


def _key(axis, item):
    return (slice(None),) * axis + (item,)


def _pairs(v, axis):
    """The even and odd elements along ``axis`` (of even length) as views."""
    return v[_key(axis, slice(0, None, 2))], v[_key(axis, slice(1, None, 2))]


def tree_reduce(xp, v, axis, combine, reduce_pair):
    """Reduce ``v`` along ``axis`` by neighbour pairs, in order: an odd element out at a level
    is set aside and folded in at the end (it follows everything before it)."""
    rest = []
    while v[0].shape[axis] > 1:
        parts = v
        length = parts[0].shape[axis]
        if length % 2:
            rest.append(tuple(p[_key(axis, slice(length - 1, length))] for p in parts))
            parts = tuple(p[_key(axis, slice(0, length - 1))] for p in parts)
        v = reduce_pair(*(half for p in parts for half in _pairs(p, axis)))
    for r in reversed(rest):
        v = combine(v, r)
    return tuple(p[_key(axis, 0)] for p in v)


def window_max(xp, v, axis, nan):
    """Max of ``v`` along ``axis`` and its position there (int64): (values, positions).

    Only ufuncs on the strided views (NumPy's ``where`` and masked ``copyto`` of short strided
    runs are ~30x slower): a node's value is the ``maximum`` of its two (NaN if either is, as
    the rule wants), its position the right one's where that one is greater or NaN. The values
    are then read from ``v`` at the positions, so they are the chosen elements bit for bit
    (``maximum`` may return either of -0.0 and +0.0)."""
    length = v.shape[axis]
    at = xp.asarray(_along(np.arange(length, dtype=np.min_scalar_type(max(length - 1, 0))),
                           axis, v.ndim))
    at = xp.broadcast_to(at, v.shape)

    def pick(left, right):
        (lv, la), (rv, ra) = left, right
        right_wins = rv > lv
        if nan:
            right_wins |= xp.isnan(rv)
        return xp.maximum(lv, rv), la + right_wins * (ra - la)

    _, positions = tree_reduce(xp, (v, at), axis, pick,
                               lambda lv, rv, la, ra: pick((lv, la), (rv, ra)))
    positions = xp.expand_dims(positions.astype(np.int64), axis)
    values = xp.take_along_axis(v, positions, axis)
    return values[_key(axis, 0)], positions[_key(axis, 0)]


def window_sum(xp, v, axis):
    """Sum of ``v`` along ``axis`` (pairwise, in order)."""
    if v.shape[axis] == 1:
        return v[_key(axis, 0)].copy()
    (total,) = tree_reduce(xp, (v,), axis, lambda a, b: (a[0] + b[0],),
                           lambda a, b: (a + b,))
    return total


def _front(xp, x, plane, output_size):
    """``x`` with its last dim moved first (a copy) when that dim is reduced, and the axis each
    plane dim then sits at. Its windows then run along the outermost axis, so every step of a
    tree works on long contiguous rows: along the innermost axis each step would be a loop of a
    few elements per row (~5x slower at 1M elements than the transposing copy)."""
    nd = len(plane)
    lead = x.ndim - nd
    if plane[-1] == output_size[-1]:
        return x, [lead + i for i in range(nd)], False
    x = xp.ascontiguousarray(xp.moveaxis(x, -1, 0))
    return x, [lead + i + 1 for i in range(nd - 1)] + [0], True


def _back(xp, x, moved):
    return xp.ascontiguousarray(xp.moveaxis(x, 0, -1)) if moved else x


def adaptive_max(xp, x, output_size):
    """Adaptive max pooling of the trailing ``len(output_size)`` dims: (values, flat in-plane
    index of each window's maximum, int64)."""
    nd = len(output_size)
    lead = x.ndim - nd
    plane = x.shape[lead:]
    shape = x.shape[:lead] + tuple(output_size)
    if 0 in shape:
        return xp.empty(shape, dtype=x.dtype), xp.empty(shape, dtype=np.int64)
    if _few_large_windows(plane, output_size):
        return _max_by_window(xp, x, plane, output_size)
    nan = x.dtype.kind in "fc" and bool(xp.isnan(x).any())
    x, axes, moved = _front(xp, x, plane, output_size)
    offset = None  # flat in-plane offset of the chosen element along the dims reduced so far
    whole = []  # dims kept whole: each output position is its input position
    for i in reversed(range(nd)):
        n, out = plane[i], output_size[i]
        step, axis = math.prod(plane[i + 1:]), axes[i]
        if n == out:
            whole.append(xp.asarray(_along(np.arange(n) * step, axis, x.ndim)))
            continue
        index, _, _ = adaptive_windows(n, out)
        x, at = window_max(xp, _windowed(xp, x, axis, index), axis + 1, nan)
        pos = xp.take(xp.asarray(index.reshape(-1) * step),
                      at + xp.asarray(_along(np.arange(out) * index.shape[1], axis, at.ndim)))
        if offset is not None:  # the offsets along later dims of the chosen rows
            moved_offset = _windowed(xp, offset, axis, index)
            pos += xp.take_along_axis(moved_offset, xp.expand_dims(at, axis + 1), axis + 1)[
                _key(axis + 1, 0)]
        offset = pos
    if offset is None:  # nothing reduced: the values are the input's
        x = x.copy()
    for w in whole:
        offset = w if offset is None else offset + w
    offset = xp.broadcast_to(offset, x.shape)
    return _back(xp, x, moved), xp.ascontiguousarray(_back(xp, offset, moved), dtype=np.int64)


_FEW_WINDOWS = 64


def _few_large_windows(plane, output_size):
    """Whether a plane has few windows (at most ``_FEW_WINDOWS``), of 16 elements or more on
    average: then ``_max_by_window`` reduces each on its own."""
    reduced = [(n, o) for n, o in zip(plane, output_size) if n != o]
    count = math.prod(o for _, o in reduced)
    size = math.prod(n for n, _ in reduced)
    return bool(reduced) and count <= _FEW_WINDOWS and size >= 16 * count


def _max_by_window(xp, x, plane, output_size):
    """``adaptive_max`` one window at a time (a Python loop over the few windows of a plane):
    the window's box of every plane, its reduced dims flattened in row-major order (one copy),
    and ``argmax`` over them, which gives the first maximum in row-major order. A window whose
    maximum is NaN takes its last NaN instead, as PyTorch does. Two reads of the input in all,
    where the trees take a dozen passes over ever smaller copies (4x faster for a (3, 4) output
    of 1M elements)."""
    nd = len(plane)
    lead = x.ndim - nd
    kept = [i for i in range(nd) if plane[i] == output_size[i]]
    reduced = [i for i in range(nd) if plane[i] != output_size[i]]
    steps = [math.prod(plane[i + 1:]) for i in range(nd)]
    shape = x.shape[:lead] + tuple(output_size)
    out, index = xp.empty(shape, dtype=x.dtype), xp.empty(shape, dtype=np.int64)
    base = 0  # the kept dims' part of each flat index, shaped like a window's results
    for j, i in enumerate(kept):
        base = base + xp.asarray(_along(np.arange(plane[i]) * steps[i], j, len(kept)))
    windows = [adaptive_windows(plane[i], output_size[i]) for i in reduced]
    inner = list(range(lead, lead + len(kept)))
    for cell in itertools.product(*(range(output_size[i]) for i in reduced)):
        box, dest = [slice(None)] * nd, [slice(None)] * nd
        lengths = []
        for i, c, (idx, _, lens) in zip(reduced, cell, windows):
            box[i] = slice(int(idx[c, 0]), int(idx[c, 0] + lens[c]))
            dest[i] = c
            lengths.append(int(lens[c]))
        sub = xp.moveaxis(x[(Ellipsis, *box)], [lead + i for i in kept], inner)
        rows = sub.reshape(sub.shape[:lead + len(kept)] + (-1,))
        at = xp.argmax(rows, axis=-1)[..., None]
        values = xp.take_along_axis(rows, at, -1)
        if x.dtype.kind in "fc":
            nan = xp.isnan(values)
            if nan.any():  # the last NaN: the first of the reversed rows
                last = rows.shape[-1] - 1 - xp.argmax(xp.isnan(rows[..., ::-1]), axis=-1)
                at = xp.where(nan, last[..., None], at)
                values = xp.take_along_axis(rows, at, -1)
        at = at[..., 0]
        flat = base
        for i, n, (idx, _, _), c in reversed(list(zip(reduced, lengths, windows, cell))):
            flat = flat + (int(idx[c, 0]) + at % n) * steps[i]
            at = at // n
        out[(Ellipsis, *dest)] = values[..., 0]
        index[(Ellipsis, *dest)] = flat
    return out, index


def adaptive_sum(xp, x, output_size):
    """The sum over each adaptive window of the trailing ``len(output_size)`` dims."""
    nd = len(output_size)
    lead = x.ndim - nd
    plane = x.shape[lead:]
    if x.size == 0 or 0 in output_size:
        return xp.zeros(x.shape[:lead] + tuple(output_size), dtype=x.dtype)
    if type(x) is np.ndarray and x.dtype.char in "fd":
        if _few_large_windows(plane, output_size):
            total = _matrix_sum(x, plane, output_size, transpose=False)
            if total is not None:
                return total
        if all(o <= n for n, o in zip(plane, output_size)):
            return _reduceat_sum(x, lead, plane, output_size)
    x, axes, moved = _front(xp, x, plane, output_size)
    for i in reversed(range(nd)):
        n, out = plane[i], output_size[i]
        if n == out:
            continue
        axis = axes[i]
        index, mask, _ = adaptive_windows(n, out)
        v = _windowed(xp, x, axis, index)
        if mask is not None:  # the repeats past a window's end count nothing (``v`` is a copy)
            for t in np.flatnonzero(~mask.all(axis=0)):
                xp.copyto(v[_key(axis + 1, int(t))], 0, where=xp.asarray(
                    _along(~mask[:, t], axis, v.ndim - 1)))
        x = window_sum(xp, v, axis + 1)
    return _back(xp, x, moved)


@functools.lru_cache(maxsize=64)  # (out x n float64 each: fewer kept than the index tables)
def _membership(n, out):
    """The (out, n) matrix of ones where input position j is in window i."""
    index, mask, _ = adaptive_windows(n, out)
    rows = np.broadcast_to(np.arange(out)[:, None], index.shape)
    kept = ... if mask is None else mask  # (the padding repeats a window's last position:
    m = np.zeros((out, n))                # assigning its 0 would erase that position's 1)
    m[rows[kept], index[kept]] = 1
    m.flags.writeable = False
    return m


def _matrix_sum(x, plane, output_size, transpose):
    """``adaptive_sum`` (or, ``transpose``, ``adaptive_sum_transpose`` of ``x`` the windows'
    values) of a NumPy array whose plane has few large windows, as products with each dim's
    membership matrix (``apply_dense``): one read of the input, 3-4x faster than
    ``add.reduceat`` along a middle dim. None where an infinity would meet a 0."""
    mats = [None if n == o else _membership(n, o).astype(x.dtype)
            for n, o in zip(plane, output_size)]
    return apply_dense(x, [m if m is None or not transpose else m.T for m in mats])


def _reduceat_sum(x, lead, plane, output_size):
    """``adaptive_sum`` of a NumPy array whose windows shrink every dim: one ``add.reduceat``
    per dim over the windows' bounds ``[s0, e0, s1, e1, ..., s_last]``, keeping every other
    sum (2-10x the trees' speed at 1M elements: no copies, each element read once per dim).
    Windows overlap by at most one element, and ``e_i <= n - 1`` when ``out <= n``."""
    for i, (n, out) in enumerate(zip(plane, output_size)):
        if n == out:
            continue
        index, _, lengths = adaptive_windows(n, out)
        starts = index[:, 0]
        bounds = np.empty(2 * out - 1, dtype=np.intp)
        bounds[0::2], bounds[1::2] = starts, (starts + lengths)[:-1]
        x = np.add.reduceat(x, bounds, axis=lead + i)[_key(lead + i, slice(None, None, 2))]
    return np.ascontiguousarray(x)


def adaptive_sum_transpose(xp, g, plane):
    """The transpose of ``adaptive_sum``: each window's value added back over the window,
    as a gather from each input position's first window, plus the few positions that more
    windows hold (windows overlap by at most one element when they are longer than one)."""
    nd = len(plane)
    lead = g.ndim - nd
    if g.size == 0 or 0 in plane:
        return xp.zeros(g.shape[:lead] + tuple(plane), dtype=g.dtype)
    if type(g) is np.ndarray and g.dtype.char in "fd" and _few_large_windows(plane,
                                                                           g.shape[lead:]):
        total = _matrix_sum(g, plane, g.shape[lead:], transpose=True)
        if total is not None:
            return total
    for i in range(nd):
        n, out = plane[i], g.shape[lead + i]
        if n == out:
            continue
        axis = lead + i
        index, mask = adaptive_cover(n, out)
        total = xp.take(g, xp.asarray(index[:, 0]), axis=axis)
        for t in range(1, index.shape[1]):
            js = np.arange(n) if mask is None else np.flatnonzero(mask[:, t])
            total[_key(axis, xp.asarray(js))] += xp.take(g, xp.asarray(index[js, t]), axis=axis)
        g = total
    return g
