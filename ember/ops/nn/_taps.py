"""Pooling windows, interpolation stencils and pads described per spatial dim as *taps*:
for each tap, the input index read by every output position (and a mask where a window
reaches into the padding). Average pooling, upsampling and reflection/replication padding
are linear maps built from taps; the gradient of each is its transpose (a ``*_backward`` op, a
scatter-add), whose own gradient is the forward op again. (Adaptive pooling: ``_windows.py``.)

Used by ``pooling.py`` and ``resampling.py``.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ... import _array_api
from ..._tensor import Tensor
from ..indexing import gather
from ._common import _lowest

# --------------------------------------------------------------------------- taps


def pool_output_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (``ceil_mode`` windows must start inside the input)."""
    num = n + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _window_taps(n, k, s, p, d, out):
    """Taps of sliding windows over one dim: [(index, mask or None)], each of length ``out``."""
    base = np.arange(out) * s - p
    taps = []
    for t in range(k):
        c = base + t * d
        inside = (c >= 0) & (c < n)
        taps.append((np.clip(c, 0, n - 1), None if inside.all() else inside))
    return taps


def _along(a, axis, ndim):
    """A 1-d array shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = -1
    return a.reshape(shape)


def _strided_windows(xp, x, kernel, stride, padding, dilation, outs):
    """Yield (taps chosen, values of ``x`` there, None) over all tap combinations of regular
    windows in window order (row-major over the kernel): strided views (no copies) of ``x``,
    padded with its dtype's lowest value, which never wins a maximum."""
    nd = len(kernel)
    plane = x.shape[x.ndim - nd:]
    high = [max(0, (o - 1) * s + d * (k - 1) + 1 - n - p)
            for n, k, s, p, d, o in zip(plane, kernel, stride, padding, dilation, outs)]
    if any(padding) or any(high):
        padded = xp.full(x.shape[:x.ndim - nd] + tuple(
            n + p + h for n, p, h in zip(plane, padding, high)), _lowest(x.dtype), dtype=x.dtype)
        padded[(Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(padding, plane))] = x
        x = padded
    for chosen in itertools.product(*(range(k) for k in kernel)):
        key = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                    for t, d, s, o in zip(chosen, dilation, stride, outs))
        yield chosen, x[(Ellipsis,) + key], None


def _tap(index, weight=None, mask=None):
    """One tap of a separable linear map along a dim: output position j reads ``index[j]``
    (times ``weight[j]``; nothing where ``mask`` is False). Its transpose is precomputed as
    strided runs (see ``_strided_runs``)."""
    return index, weight, mask, _strided_runs(index, mask)


_FRONT_MIN = 1 << 15  # elements from which moving the last dim first pays for its two copies


def _axes(ndim, nd, front):
    """The axis each of the ``nd`` trailing dims sits at (the last one first if ``front``)."""
    lead = ndim - nd
    return [lead + i + 1 for i in range(nd - 1)] + [0] if front else \
        [lead + i for i in range(nd)]


def _front_last(xp, x, dim):
    """Whether to run a map with the last dim moved first: a tap along the innermost axis is
    a gather and ufuncs over runs of one element (``v * w`` with ``w`` varying along the
    row); moved first, each is a loop over whole contiguous slabs (linear upsampling along
    the last dim of 1M elements: 45 ms -> ~5 ms, the two transposing copies included). Only
    for weighted taps (interpolation) onto at least as many positions: measured, a shrinking
    dim (bilinear at 0.6) or pooling's unweighted taps lose more to the copies than they win."""
    n, taps = dim
    return taps is not None and x.size >= _FRONT_MIN and x.ndim > 1 and \
        len(taps[0][0]) >= n and any(w is not None for _, w, _, _ in taps)


def _map(xp, x, dims):
    """Apply a separable linear map: per trailing dim (input length, taps), a sum over taps."""
    nd = len(dims)
    front = _front_last(xp, x, dims[-1])
    if front:
        x = xp.ascontiguousarray(xp.moveaxis(x, -1, 0))
    for (_, taps), axis in zip(dims, _axes(x.ndim, nd, front)):
        acc = None
        for index, weight, mask, _ in taps:
            v = xp.take(x, xp.asarray(index), axis=axis)  # a new array: updated in place
            if weight is not None:
                v *= xp.asarray(_along(weight, axis, x.ndim))
            if mask is not None:
                v = xp.where(xp.asarray(_along(mask, axis, x.ndim)), v, 0)
            if acc is None:
                acc = v
            else:
                acc += v
        x = acc if acc is not None else xp.take(x, xp.asarray(np.zeros(0, np.int64)), axis=axis)
    return xp.ascontiguousarray(xp.moveaxis(x, 0, -1)) if front else x


def _map_transpose(xp, g, dims):
    """The transpose of ``_map``: each tap's share of ``g`` added back at its index (a dim
    whose taps are None is left as it is: mapped already)."""
    nd = len(dims)
    front = _front_last(xp, g, dims[-1])
    if front:
        g = xp.ascontiguousarray(xp.moveaxis(g, -1, 0))
    axes = _axes(g.ndim, nd, front)
    for i in reversed(range(nd)):
        n, taps = dims[i]
        if taps is None:
            continue
        axis = axes[i]
        shape = list(g.shape)
        shape[axis] = n
        out = xp.zeros(tuple(shape), dtype=g.dtype)
        for index, weight, mask, runs in taps:
            v = g if weight is None else g * xp.asarray(_along(weight, axis, g.ndim))
            if runs is not None:
                _add_runs(out, v, runs, axis)
                continue
            if mask is not None:
                v = xp.where(xp.asarray(_along(mask, axis, g.ndim)), v, 0)
            out += _scatter_axis(xp, v, index, n, axis)
        g = out
    return xp.ascontiguousarray(xp.moveaxis(g, 0, -1)) if front else g


def dense(n, taps, dtype):
    """The (out, n) matrix of one dim's taps (weights summed where taps meet, as at a
    clamped border), or None where the dim is left as it is."""
    index = taps[0][0]
    if len(taps) == 1 and taps[0][1] is None and taps[0][2] is None and len(index) == n \
            and (index == np.arange(n)).all():
        return None
    m = np.zeros((len(index), n))
    rows = np.arange(len(index))
    for index, weight, mask, _ in taps:
        w = np.ones(len(index)) if weight is None else weight.astype(np.float64)
        np.add.at(m, (rows, index), w if mask is None else w * mask)
    return m.astype(dtype)


_DENSE_SIDE = 16  # the shorter side of a dim's matrix up to which a product beats the taps


def dense_friendly(mats):
    """Whether every non-identity matrix has a short side (``_DENSE_SIDE``): then a product
    costs at most ~32 flops per element of the larger side, a single BLAS pass."""
    return any(m is not None for m in mats) and all(
        m is None or min(m.shape) <= _DENSE_SIDE for m in mats)


def apply_dense(x, mats):
    """``x`` (NumPy, float) with each trailing dim mapped by its matrix (None: left as it
    is): a separable linear map as products (BLAS) instead of gathers and scatter-adds of
    taps (``_map``, ``_map_transpose``): one read of the large side (a transpose is the same
    call with the matrices transposed). The shrinking dims go first, the last dim first, and
    the growing ones after, the last dim last, so that the product over the full-size array
    is a single matrix product over its contiguous rows. A product multiplies the positions
    a row does not read by 0, which turns an infinity into NaN: None then (a non-finite ``x``
    or result: whichever is smaller is checked), for the exact paths to redo."""
    nd = len(mats)
    lead = x.ndim - nd
    dims = [i for i in range(nd) if mats[i] is not None]
    order = [i for i in reversed(dims) if mats[i].shape[0] < mats[i].shape[1]]
    order += [i for i in dims if i not in order]
    out_size = x.size // math.prod(mats[i].shape[1] for i in dims) * math.prod(
        mats[i].shape[0] for i in dims)
    check_input = x.size <= out_size  # (whichever side is smaller is checked for finiteness)
    if check_input and not np.isfinite(x).all():
        return None
    for i in order:
        m = mats[i]
        shape = x.shape
        pre, post = math.prod(shape[:lead + i]), math.prod(shape[lead + i + 1:])
        if post == 1:
            x = x.reshape(pre, -1) @ m.T
        else:
            x = np.matmul(m, x.reshape(pre, -1, post))
        x = x.reshape(shape[:lead + i] + (m.shape[0],) + shape[lead + i + 1:])
    return x if check_input or np.isfinite(x).all() else None


_MAX_RUNS = 24


def _strided_runs(index, mask=None):
    """Cover ``j -> index[j]`` (for the j where ``mask`` holds) with runs along which j and
    index[j] both step evenly: [(j0, dj, i0, di, count)], or None if that takes too many.

    The runs of every residue of j modulo a small period are tried (nearest upsampling by 2
    is two runs of period 2); adding ``g`` back along a run is one strided slice operation.
    """
    js = np.arange(len(index)) if mask is None else np.flatnonzero(mask)
    best = None
    for period in range(1, 9):
        runs = [run for r in range(min(period, len(js)))
                for run in _affine_runs(js[r::period], index[js[r::period]])]
        if best is None or len(runs) < len(best):
            best = runs
    return best if len(best) <= _MAX_RUNS else None


def _affine_runs(js, idx):
    """Greedy split of the pairs (js[k], idx[k]) into runs of constant steps."""
    runs, k, n = [], 0, len(js)
    while k < n:
        m = k + 1
        if m < n:
            dj, di = js[m] - js[k], idx[m] - idx[k]
            while m + 1 < n and js[m + 1] - js[m] == dj and idx[m + 1] - idx[m] == di:
                m += 1
        else:
            dj, di, m = 1, 0, k
        runs.append((int(js[k]), int(dj), int(idx[k]), int(di), m - k + 1))
        k = m + 1
    return runs


def _add_runs(out, values, runs, axis):
    """``out[..., i, ...] += values[..., j, ...]`` along ``axis`` for the (j, i) of ``runs``."""
    key = (slice(None),) * axis
    for j0, dj, i0, di, count in runs:
        src = values[key + (slice(j0, j0 + dj * (count - 1) + 1, dj),)]
        if di == 0:  # every j of the run reads the same input position
            out[key + (i0,)] += src.sum(axis=axis)
        else:
            stop = i0 + di * (count - 1) + (1 if di > 0 else -1)
            out[key + (slice(i0, None if stop < 0 else stop, di),)] += src


def _scatter_axis(xp, values, index, n, axis):
    """Zeros with length ``n`` along ``axis``, ``values`` added at ``index`` there."""
    v = xp.moveaxis(values, axis, -1)
    lead = v.shape[:-1]
    m = math.prod(lead)
    flat = (xp.arange(m)[:, None] * n + xp.asarray(index)[None, :]).reshape(-1)
    out = xp.bincount(flat, weights=v.reshape(-1), minlength=m * n)
    return xp.moveaxis(out.astype(values.dtype).reshape(lead + (n,)), -1, axis)


def _plane_offsets(xp, indices, nd, size):
    """Flat in-plane ``indices`` (..., *out) of planes of ``size`` elements as indices into
    all the planes, flattened: (planes, out positions)."""
    lead = indices.shape[:indices.ndim - nd]
    m = math.prod(lead)
    return indices.reshape(m, -1) + xp.arange(0, m * size, size)[:, None]


def _plane_scatter(xp, grad, indices, plane, unique=False):
    """Zeros of shape (..., *plane) with ``grad`` added at the flat in-plane ``indices``
    (``unique``: no index repeats within a plane, so plain assignment does)."""
    nd = len(plane)
    lead = indices.shape[:indices.ndim - nd]
    size = math.prod(plane)
    flat = _plane_offsets(xp, indices, nd, size).reshape(-1)
    if unique or type(grad) is np.ndarray:
        out = xp.zeros(math.prod(lead) * size, dtype=grad.dtype)
        if unique:
            out[flat] = grad.reshape(-1)
        else:  # (bincount adds in float64 over the whole output: 2-5x slower)
            np.add.at(out, flat, grad.reshape(-1))
    else:
        out = xp.bincount(flat, weights=grad.reshape(-1), minlength=math.prod(lead) * size)
        out = out.astype(grad.dtype)
    return out.reshape(lead + tuple(plane))


def _plane_gather(xp, g, indices, nd):
    """``g`` (..., *plane) read at the flat in-plane ``indices``: ``_plane_scatter``'s transpose.

    Recorded as PyTorch records it (``gather``, whose own derivative accumulates repeats).
    """
    lead = tuple(indices.shape[:indices.ndim - nd])
    if _array_api.is_tensor_namespace(xp):
        flat = xp.reshape(g, lead + (-1,))
        index = Tensor._make(indices.reshape(lead + (-1,)), None, False)
        return xp.reshape(gather(flat, len(lead), index), tuple(indices.shape))
    size = math.prod(g.shape[g.ndim - nd:])
    return xp.take(g.reshape(-1), _plane_offsets(xp, indices, nd, size)).reshape(indices.shape)
