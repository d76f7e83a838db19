"""Layers as PyTorch's fused ops: pooling, normalization, upsampling, padding, embedding.

Every forward works on raw arrays, vectorised over output positions (one pass per kernel tap),
and every derivative is an op or array-API code, so derivatives of any order work:

- Pooling windows, interpolation stencils and pads are described per spatial dim as *taps*:
  for each tap, the input index read by every output position (and a mask where a window
  reaches into the padding). Average pooling, adaptive average pooling, upsampling and
  reflection/replication padding are linear maps built from taps; the gradient of each is its
  transpose (a ``*_backward`` op, a scatter-add), whose own gradient is the forward op again.
- Max pooling keeps PyTorch's flat in-plane index of each window's maximum (the first maximum
  in window order, or the last NaN); its gradient scatters by those indices and the scatter's
  gradient gathers by them.
- ``constant_pad_nd``'s gradient is ``constant_pad_nd`` with the pads negated.
- The native norms' derivatives are PyTorch's closed forms in array-API code.

What PyTorch saves besides the inputs (max pooling's indices, the norms' mean and rstd) the
forward writes into a ``saved`` dict parameter; rules never read the output, so in-place ops
on it (``relu_`` after a norm or a pool) stay legal, as in PyTorch.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from .. import _array_api, _xp
from .registry import defop


def _tensor_cls():
    from .._tensor import Tensor  # not at import time: ember._tensor imports the op families
    return Tensor


def _raw(x):
    """The raw array of a Tensor (an integer output such as indices, seen in a rule)."""
    return x._data if isinstance(x, _tensor_cls()) else x


def _apply(op, xp, *args):
    """``op`` recorded when a rule runs on Tensors (``create_graph=True``), else its forward."""
    if _array_api.is_tensor_namespace(xp):
        return op(*args)
    return op.forward(xp, *args)


def _zeros_rule(xp, g, ans, grad, input, *params):
    """A ``*_backward`` op's derivative in ``input``, which it reads only for its shape."""
    return xp.zeros_like(input)


def _lowest(dtype):
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


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


def _adaptive_taps(n, out):
    """Taps of PyTorch's adaptive windows ``[floor(i*n/out), ceil((i+1)*n/out))``."""
    i = np.arange(out)
    start, end = i * n // out, -(-(i + 1) * n // out)
    taps = []
    for t in range(int((end - start).max()) if out else 0):
        c = start + t
        inside = c < end
        taps.append((np.minimum(c, n - 1), None if inside.all() else inside))
    return taps, end - start


def _along(a, axis, ndim):
    """A 1-d array shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = -1
    return a.reshape(shape)


def _gathered_windows(xp, x, taps, prefix=()):
    """Yield (taps chosen, values of ``x`` there, mask or None) over all tap combinations in
    window order (row-major over the kernel), gathering along one dim at a time."""
    nd = len(taps)
    if len(prefix) == nd:
        yield prefix, x, _tap_mask(xp, taps, prefix, x.ndim)
        return
    axis = x.ndim - nd + len(prefix)
    for t, (index, _) in enumerate(taps[len(prefix)]):
        yield from _gathered_windows(xp, xp.take(x, xp.asarray(index), axis=axis), taps,
                                     prefix + (t,))


def _tap_mask(xp, taps, chosen, ndim):
    """Where the chosen taps all fall inside the input (None: everywhere)."""
    nd = len(taps)
    mask = None
    for i, t in enumerate(chosen):
        m = taps[i][t][1]
        if m is not None:
            m = xp.asarray(_along(m, ndim - nd + i, ndim))
            mask = m if mask is None else mask & m
    return mask


def _strided_windows(xp, x, kernel, stride, padding, dilation, outs):
    """Like ``_gathered_windows`` for regular windows: strided views (no copies) of ``x``,
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


def _map(xp, x, dims):
    """Apply a separable linear map: per trailing dim (input length, taps), a sum over taps."""
    nd = len(dims)
    for i, (_, taps) in enumerate(dims):
        axis = x.ndim - nd + i
        acc = None
        for index, weight, mask, _ in taps:
            v = xp.take(x, xp.asarray(index), axis=axis)
            if weight is not None:
                v = v * xp.asarray(_along(weight, axis, x.ndim))
            if mask is not None:
                v = xp.where(xp.asarray(_along(mask, axis, x.ndim)), v, 0)
            acc = v if acc is None else acc + v
        x = acc if acc is not None else xp.take(x, xp.asarray(np.zeros(0, np.int64)), axis=axis)
    return x


def _map_transpose(xp, g, dims):
    """The transpose of ``_map``: each tap's share of ``g`` added back at its index."""
    nd = len(dims)
    for i in reversed(range(nd)):
        n, taps = dims[i]
        axis = g.ndim - nd + i
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
    return g


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
    if unique:
        out = xp.zeros(math.prod(lead) * size, dtype=grad.dtype)
        out[flat] = grad.reshape(-1)
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
        from .indexing import gather
        flat = xp.reshape(g, lead + (-1,))
        index = _tensor_cls()._make(indices.reshape(lead + (-1,)), None, False)
        return xp.reshape(gather(flat, len(lead), index), tuple(indices.shape))
    size = math.prod(g.shape[g.ndim - nd:])
    return xp.take(g.reshape(-1), _plane_offsets(xp, indices, nd, size)).reshape(indices.shape)


# --------------------------------------------------------------------------- max pooling


def _max_windows(xp, x, windows, coords, firsts):
    """Max and flat in-plane index over ``windows``, with PyTorch's tie and NaN rules.

    ``windows`` yields (taps, values, mask) per kernel offset in window order; ``coords[i][t]``
    is the input coordinate tap ``t`` of dim ``i`` reads for each output position, and
    ``firsts[i]`` the first one inside the input. A later tap is chosen if its value is
    greater than the running maximum or NaN, so ties keep the first position and NaN the last;
    an all ``-inf`` window reports its first position inside the input.

    The loop keeps the running maximum and the number of the chosen tap (taps come in
    increasing order, so choosing tap k is a ``maximum`` with k): NumPy's ``where`` and masked
    copies branch on every element and are several times slower. Then each output's index is
    looked up by its tap number, and its value read from ``x`` there (so bit for bit the chosen
    element: ``maximum`` may return either of +0.0 and -0.0).
    """
    nd = len(coords)
    plane = x.shape[x.ndim - nd:]
    steps = [math.prod(plane[i + 1:]) for i in range(nd)]
    outs = tuple(len(f) for f in firsts)
    shape = x.shape[:x.ndim - nd] + outs

    def flat(per_dim):
        return xp.broadcast_to(xp.asarray(sum(_along(c * st, i, nd) for i, (c, st) in
                                              enumerate(zip(per_dim, steps)))), outs)
    if 0 in shape:
        return xp.empty(shape, dtype=x.dtype), xp.empty(shape, dtype=np.int64)
    nan = x.dtype.kind in "fc" and bool(xp.isnan(x).any())
    n_taps = math.prod(len(c) for c in coords)
    best, table = None, [flat(firsts)]  # the flat index each tap reads, per output position
    chosen = xp.zeros(shape, dtype=np.min_scalar_type(n_taps - 1))
    for k, (taps, v, mask) in enumerate(windows):
        if best is None:  # the first tap is inside every window or holds the lowest value
            best = v.copy()
            continue
        table.append(flat([coords[i][t] for i, t in enumerate(taps)]))
        update = v > best
        if nan:
            update |= xp.isnan(v)
        if mask is None:
            xp.maximum(best, v, out=best)
        else:
            update &= mask
            xp.copyto(best, v, where=update)
        xp.maximum(chosen, xp.multiply(update, k, dtype=chosen.dtype), out=chosen)
    size = math.prod(outs)
    pick = chosen.astype(np.int64)
    pick *= size
    pick += xp.arange(size).reshape(outs)
    index = xp.take(xp.stack(table).reshape(-1), pick)
    return _plane_gather(xp, x, index, nd), index


def _pool_outs(plane, kernel, stride, padding, dilation, ceil_mode):
    return [pool_output_size(n, k, s, p, d, ceil_mode)
            for n, k, s, p, d in zip(plane, kernel, stride, padding, dilation)]


def _max_pool_raw(xp, x, kernel, stride, padding, dilation, ceil_mode):
    outs = _pool_outs(x.shape[x.ndim - len(kernel):], kernel, stride, padding, dilation,
                      ceil_mode)
    bases = [np.arange(o) * s - p for o, s, p in zip(outs, stride, padding)]
    coords = [[b + t * d for t in range(k)] for b, k, d in zip(bases, kernel, dilation)]
    firsts = [b + -(-np.maximum(-b, 0) // d) * d for b, d in zip(bases, dilation)]
    windows = _strided_windows(xp, x, kernel, stride, padding, dilation, outs)
    return _max_windows(xp, x, windows, coords, firsts)


def _disjoint(kernel, stride, dilation):
    """Whether no two windows share an input position."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))


def _max_pool_ops(nd):
    name = f"max_pool{nd}d_with_indices"

    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, kernel, stride, padding, dilation, ceil_mode, saved):
        out, saved["indices"] = _max_pool_raw(xp, input, kernel, stride, padding, dilation,
                                              ceil_mode)
        return out

    @defop(name + "_backward", n_in=2, jvp="transpose")
    def backward(xp, grad, input, kernel, stride, padding, dilation, ceil_mode, indices):
        return _plane_scatter(xp, grad, indices, input.shape[input.ndim - nd:],
                              _disjoint(kernel, stride, dilation))

    forward.defvjp(lambda xp, g, ans, input, kernel, stride, padding, dilation, ceil_mode,
                   saved: _apply(backward, xp, g, input, kernel, stride, padding, dilation,
                                 ceil_mode, saved["indices"]))
    backward.defvjp(lambda xp, g, ans, grad, input, kernel, stride, padding, dilation,
                    ceil_mode, indices: _plane_gather(xp, g, indices, nd), _zeros_rule)
    return forward


_max_pool2d = _max_pool_ops(2)
_max_pool3d = _max_pool_ops(3)


def _adaptive_max_pool_ops(nd):
    name = f"adaptive_max_pool{nd}d"

    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, output_size, saved):
        plane = input.shape[input.ndim - nd:]
        taps = [_adaptive_taps(n, o)[0] for n, o in zip(plane, output_size)]
        coords = [[index for index, _ in t] for t in taps]
        firsts = [np.arange(o) * n // o for n, o in zip(plane, output_size)]
        out, saved["indices"] = _max_windows(xp, input, _gathered_windows(xp, input, taps),
                                             coords, firsts)
        return out

    @defop(name + "_backward", n_in=2, jvp="transpose")
    def backward(xp, grad, input, indices):
        return _plane_scatter(xp, grad, indices, input.shape[input.ndim - nd:])

    forward.defvjp(lambda xp, g, ans, input, output_size, saved:
                   _apply(backward, xp, g, input, saved["indices"]))
    backward.defvjp(lambda xp, g, ans, grad, input, indices: _plane_gather(xp, g, indices, nd),
                    _zeros_rule)
    return forward


_adaptive_max_pool2d = _adaptive_max_pool_ops(2)
_adaptive_max_pool3d = _adaptive_max_pool_ops(3)


# --------------------------------------------------------------------------- average pooling


def _divide(total, divisor):
    """``total / divisor``; integer inputs divide truncating toward zero, as PyTorch does."""
    if total.dtype.kind in "fc":
        return total / divisor
    return (total / divisor).astype(total.dtype)


@functools.lru_cache(maxsize=256)
def _avg_plan(plane, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Unit-weight taps of the windows and the divisor of each output position."""
    outs = _pool_outs(plane, kernel, stride, padding, (1,) * len(plane), ceil_mode)
    dims = [(n, [_tap(index, mask=mask) for index, mask in _window_taps(n, k, s, p, 1, o)])
            for n, k, s, p, o in zip(plane, kernel, stride, padding, outs)]
    if divisor_override:
        return dims, divisor_override
    factors = []
    for n, k, s, p, o in zip(plane, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            factors.append(end - start)
        else:
            factors.append(np.minimum(end, n) - np.maximum(start, 0))
    return dims, _outer(factors)


def _outer(factors):
    """The product of per-dim factors over the grid of output positions."""
    nd = len(factors)
    return math.prod(_along(f, i, nd) for i, f in enumerate(factors))


def _cast(xp, divisor, dtype):
    if isinstance(divisor, np.ndarray):
        return xp.asarray(divisor.astype(dtype if dtype.kind in "fc" else np.float64))
    return divisor


def _avg_pool_ops(nd):
    name = f"avg_pool{nd}d"

    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        dims, divisor = _avg_plan(input.shape[input.ndim - nd:], kernel, stride, padding,
                                  ceil_mode, count_include_pad, divisor_override)
        return _divide(_map(xp, input, dims), _cast(xp, divisor, input.dtype))

    @defop(name + "_backward", n_in=2, jvp="transpose")
    def backward(xp, grad, input, kernel, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
        dims, divisor = _avg_plan(input.shape[input.ndim - nd:], kernel, stride, padding,
                                  ceil_mode, count_include_pad, divisor_override)
        return _map_transpose(xp, grad / _cast(xp, divisor, grad.dtype), dims)

    forward.defvjp(lambda xp, g, ans, input, kernel, stride, padding, ceil_mode,
                   count_include_pad, divisor_override:
                   _apply(backward, xp, g, input, kernel, stride, padding, ceil_mode,
                          count_include_pad, divisor_override))
    backward.defvjp(lambda xp, g, ans, grad, input, kernel, stride, padding, ceil_mode,
                    count_include_pad, divisor_override:
                    _apply(forward, xp, g, kernel, stride, padding, ceil_mode,
                           count_include_pad, divisor_override), _zeros_rule)
    return forward


_avg_pool2d = _avg_pool_ops(2)
_avg_pool3d = _avg_pool_ops(3)


@functools.lru_cache(maxsize=256)
def _adaptive_plan(plane, output_size):
    dims, factors = [], []
    for n, o in zip(plane, output_size):
        taps, lengths = _adaptive_taps(n, o)
        dims.append((n, [_tap(index, mask=mask) for index, mask in taps]))
        factors.append(lengths)
    return dims, _outer(factors)


def _adaptive_avg_pool_ops(nd):
    name = f"adaptive_avg_pool{nd}d"

    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, output_size):
        dims, divisor = _adaptive_plan(input.shape[input.ndim - nd:], output_size)
        return _divide(_map(xp, input, dims), _cast(xp, divisor, input.dtype))

    @defop(name + "_backward", n_in=2, jvp="transpose")
    def backward(xp, grad, input):
        dims, divisor = _adaptive_plan(input.shape[input.ndim - nd:], grad.shape[grad.ndim - nd:])
        return _map_transpose(xp, grad / _cast(xp, divisor, grad.dtype), dims)

    forward.defvjp(lambda xp, g, ans, input, output_size: _apply(backward, xp, g, input))
    backward.defvjp(lambda xp, g, ans, grad, input:
                    _apply(forward, xp, g, tuple(grad.shape[grad.ndim - nd:])), _zeros_rule)
    return forward


_adaptive_avg_pool2d = _adaptive_avg_pool_ops(2)
_adaptive_avg_pool3d = _adaptive_avg_pool_ops(3)


# --------------------------------------------------------------------------- upsampling


def _opmath(dtype):
    """The type PyTorch computes interpolation coordinates in (float for float32 and below)."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _nearest_taps(kind, n, out, scale, dtype, nd):
    """PyTorch's nearest source indices: its 2-d kernel computes them in float32 and copies or
    halves the index when the size stays or doubles; its 1-d/3-d kernel uses ``_opmath``."""
    i = np.arange(out)
    if nd == 2 and kind == "nearest" and out in (n, 2 * n):
        return [_tap(i if out == n else i >> 1)]
    t = np.float32 if nd == 2 else _opmath(dtype)
    s = t(1.0 / scale) if scale else t(n) / t(out)
    if kind == "nearest":
        src = i.astype(t) * s
    elif nd == 2:
        src = (i + 0.5) * np.float64(s)
    else:
        src = (i + 0.5).astype(t) * s
    return [_tap(np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n - 1))]


def _source_index(n, out, align_corners, scale, dtype, cubic=False):
    """PyTorch's ``area_pixel_compute_source_index`` for every output position."""
    t = _opmath(dtype)
    i = np.arange(out).astype(t)
    if align_corners:
        s = t((n - 1) / (out - 1)) if out > 1 else t(0)
        return s * i
    s = t(1.0 / scale) if scale else t(n) / t(out)
    src = s * (i + t(0.5)) - t(0.5)
    return src if cubic else np.maximum(src, t(0))


def _floor_and_lambda(src, n):
    index = np.minimum(np.floor(src).astype(np.int64), n - 1)
    return index, np.clip(src - index, 0, 1).astype(src.dtype)


def _linear_taps(n, out, align_corners, scale, dtype):
    if n == out:
        return [_tap(np.arange(out))]
    i0, lam = _floor_and_lambda(_source_index(n, out, align_corners, scale, dtype), n)
    i1 = i0 + (i0 < n - 1)
    return [_tap(i0, (1 - lam).astype(dtype)), _tap(i1, lam.astype(dtype))]


_A = -0.75  # PyTorch's bicubic kernel parameter


def _cubic_taps(n, out, align_corners, scale, dtype):
    i, t = _floor_and_lambda(_source_index(n, out, align_corners, scale, dtype, cubic=True), n)

    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return [_tap(np.clip(i - 1 + k, 0, n - 1), w.astype(dtype)) for k, w in enumerate(weights)]


@functools.lru_cache(maxsize=256)
def _upsample_plan(kind, plane, output_size, align_corners, scales, dtype):
    dims = []
    for k, (n, o) in enumerate(zip(plane, output_size)):
        scale = scales[k] if scales else None
        if kind.startswith("nearest"):
            taps = _nearest_taps(kind, n, o, scale, dtype, len(plane))
        elif kind == "cubic":
            taps = _cubic_taps(n, o, align_corners, scale, dtype)
        else:
            taps = _linear_taps(n, o, align_corners, scale, dtype)
        dims.append((n, taps))
    return dims


def _upsample_ops(name, kind, nd):
    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, input_size, output_size, align_corners, scales):
        return _map(xp, input, _upsample_plan(kind, input_size, output_size, align_corners,
                                              scales, input.dtype))

    @defop(name + "_backward", n_in=1, jvp="transpose")
    def backward(xp, grad, input_size, output_size, align_corners, scales):
        return _map_transpose(xp, grad, _upsample_plan(kind, input_size, output_size,
                                                       align_corners, scales, grad.dtype))

    forward.defvjp(lambda xp, g, ans, input, input_size, output_size, align_corners, scales:
                   _apply(backward, xp, g, input_size, output_size, align_corners, scales))
    backward.defvjp(lambda xp, g, ans, grad, input_size, output_size, align_corners, scales:
                    _apply(forward, xp, g, input_size, output_size, align_corners, scales))
    return forward


UPSAMPLE = {  # (mode, spatial dims) -> op
    ("nearest", 1): _upsample_ops("upsample_nearest1d", "nearest", 1),
    ("nearest", 2): _upsample_ops("upsample_nearest2d", "nearest", 2),
    ("nearest", 3): _upsample_ops("upsample_nearest3d", "nearest", 3),
    ("nearest-exact", 1): _upsample_ops("upsample_nearest_exact1d", "nearest_exact", 1),
    ("nearest-exact", 2): _upsample_ops("upsample_nearest_exact2d", "nearest_exact", 2),
    ("nearest-exact", 3): _upsample_ops("upsample_nearest_exact3d", "nearest_exact", 3),
    ("linear", 1): _upsample_ops("upsample_linear1d", "linear", 1),
    ("bilinear", 2): _upsample_ops("upsample_bilinear2d", "linear", 2),
    ("trilinear", 3): _upsample_ops("upsample_trilinear3d", "linear", 3),
    ("bicubic", 2): _upsample_ops("upsample_bicubic2d", "cubic", 2),
}


# --------------------------------------------------------------------------- padding


def _pad_index(mode, n, lo, hi):
    """The input index of each output position along a padded dim (pads may be negative)."""
    c = np.arange(-lo, n + hi)
    if mode == "reflect":
        c = np.abs(c)
        return np.where(c > n - 1, 2 * (n - 1) - c, c)
    return np.clip(c, 0, n - 1)


@functools.lru_cache(maxsize=256)
def _pad_plan(mode, plane, pad):
    """Per trailing dim (first to last) its taps; ``pad`` lists the last dim first."""
    nd = len(plane)
    return [(n, [_tap(_pad_index(mode, n, pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]))])
            for i, n in enumerate(plane)]


def _pad_ops(name, mode, nd):
    @defop(name, n_in=1, jvp="transpose")
    def forward(xp, input, pad):
        return _map(xp, input, _pad_plan(mode, input.shape[input.ndim - nd:], pad))

    @defop(name + "_backward", n_in=2, jvp="transpose")
    def backward(xp, grad, input, pad):
        return _map_transpose(xp, grad, _pad_plan(mode, input.shape[input.ndim - nd:], pad))

    forward.defvjp(lambda xp, g, ans, input, pad: _apply(backward, xp, g, input, pad))
    backward.defvjp(lambda xp, g, ans, grad, input, pad: _apply(forward, xp, g, pad),
                    _zeros_rule)
    return forward


PADS = {(mode, nd): _pad_ops(f"{prefix}_pad{nd}d", mode, nd)
        for mode, prefix in (("reflect", "reflection"), ("replicate", "replication"))
        for nd in (1, 2, 3)}


@defop("constant_pad_nd", n_in=1, jvp="transpose")
def _constant_pad_nd(xp, input, pad, value):
    """Pad the trailing ``len(pad) // 2`` dims (last dim first in ``pad``); negative pads crop."""
    nd = len(pad) // 2
    lead = input.ndim - nd
    src, dst, shape = [slice(None)] * lead, [slice(None)] * lead, list(input.shape[:lead])
    for i in range(nd):
        n = input.shape[lead + i]
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        kept = n - max(-lo, 0) - max(-hi, 0)
        src.append(slice(max(-lo, 0), max(-lo, 0) + kept))
        dst.append(slice(max(lo, 0), max(lo, 0) + kept))
        shape.append(n + lo + hi)
    out = xp.full(tuple(shape), value, dtype=input.dtype)
    out[tuple(dst)] = input[tuple(src)]
    return out


_constant_pad_nd.defvjp(lambda xp, g, ans, input, pad, value:
                        _apply(_constant_pad_nd, xp, g, tuple(-p for p in pad), 0))


# --------------------------------------------------------------------------- pixel shuffle


def _shuffle(x, r, down):
    """(*, C*r*r, H, W) <-> (*, C, H*r, W*r): PyTorch's pixel_shuffle (``down``: unshuffle)."""
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    k = len(lead)
    if down:
        y = x.reshape(lead + (c, h // r, r, w // r, r))
        y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
        out = y.reshape(lead + (c * r * r, h // r, w // r))
    else:
        y = x.reshape(lead + (c // (r * r), r, r, h, w))
        y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
        out = y.reshape(lead + (c // (r * r), h * r, w * r))
    return out.copy() if r == 1 else out  # the reshape copied unless nothing moved


@defop("pixel_shuffle", n_in=1, jvp="linear")
def _pixel_shuffle(xp, input, upscale_factor):
    return _shuffle(input, upscale_factor, False)


@defop("pixel_unshuffle", n_in=1, jvp="linear")
def _pixel_unshuffle(xp, input, downscale_factor):
    return _shuffle(input, downscale_factor, True)


_pixel_shuffle.defvjp(lambda xp, g, ans, input, upscale_factor:
                      _apply(_pixel_unshuffle, xp, g, upscale_factor))
_pixel_unshuffle.defvjp(lambda xp, g, ans, input, downscale_factor:
                        _apply(_pixel_shuffle, xp, g, downscale_factor))


# --------------------------------------------------------------------------- normalization


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def _moments(xp, x, axes, eps):
    """Mean, biased variance and 1/sqrt(variance + eps) over ``axes`` (kept as size-1 dims)."""
    mean = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    var = xp.mean(xc * xc, axis=axes, keepdims=True)
    return mean, var, 1 / xp.sqrt(var + eps)


def _stats(xp, x, axes, eps, saved):
    """The mean and rstd the forward saved; recomputed from ``x`` when the rule is recorded
    (``create_graph=True``), so that their dependence on ``x`` is differentiated too."""
    if _array_api.is_tensor_namespace(xp):
        mean, _, rstd = _moments(xp, x, axes, eps)
        return mean, rstd
    return saved["mean"], saved["rstd"]


def _normalized_grad(xp, gxhat, input, mean, rstd, axes, gain=None):
    """The input gradient of ``xhat = (input - mean) * rstd``, statistics over ``axes``:
    ``rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))``, in few passes. ``gain``
    (constant over ``axes``: a per-channel weight) multiplies ``gxhat`` and the result alike.
    """
    xc = input - mean
    scale = rstd * rstd * xp.mean(gxhat * xc, axis=axes, keepdims=True)
    dx = gxhat - xp.mean(gxhat, axis=axes, keepdims=True) - xc * scale
    return dx * (rstd if gain is None else gain * rstd)


@defop("native_layer_norm", n_in=3, jvp="transpose")
def _layer_norm(xp, input, weight, bias, axes, eps, saved):
    mean, _, rstd = _moments(xp, input, axes, eps)
    saved["mean"], saved["rstd"] = mean, rstd
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _ln_input_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    mean, rstd = _stats(xp, input, axes, eps, saved)
    gxhat = g if weight is None else g * weight
    return _normalized_grad(xp, gxhat, input, mean, rstd, axes)


def _ln_weight_rule(xp, g, ans, input, weight, bias, axes, eps, saved):
    mean, rstd = _stats(xp, input, axes, eps, saved)
    return xp.sum(g * (input - mean) * rstd, axis=_batch_axes(input, axes))


def _batch_axes(input, axes):
    return tuple(a for a in range(input.ndim) if a not in axes)


_layer_norm.defvjp(
    _ln_input_rule, _ln_weight_rule,
    lambda xp, g, ans, input, weight, bias, axes, eps, saved: xp.sum(
        g, axis=_batch_axes(input, axes)))


def _channel(xp, v, ndim):
    """A per-channel vector shaped to broadcast over (N, C, *)."""
    return xp.reshape(v, (1, -1) + (1,) * (ndim - 2))


def _channel_sum(xp, x):
    return xp.sum(x, axis=(0,) + tuple(range(2, x.ndim)))


def _grouped(xp, x, groups):
    return xp.reshape(x, (x.shape[0], groups, -1))


@defop("native_group_norm", n_in=3, jvp="transpose")
def _group_norm(xp, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, _, rstd = _moments(xp, x, (2,), eps)
    saved["mean"], saved["rstd"] = mean, rstd
    out = ((x - mean) * rstd).reshape(input.shape)
    if weight is not None:
        out = out * _channel(xp, weight, input.ndim)
    if bias is not None:
        out = out + _channel(xp, bias, input.ndim)
    return out


def _gn_input_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, rstd = _stats(xp, x, (2,), eps, saved)
    gxhat = g if weight is None else g * _channel(xp, weight, input.ndim)
    dx = _normalized_grad(xp, _grouped(xp, gxhat, groups), x, mean, rstd, (2,))
    return xp.reshape(dx, tuple(input.shape))


def _gn_weight_rule(xp, g, ans, input, weight, bias, groups, eps, saved):
    x = _grouped(xp, input, groups)
    mean, rstd = _stats(xp, x, (2,), eps, saved)
    return _channel_sum(xp, g * xp.reshape((x - mean) * rstd, tuple(input.shape)))


_group_norm.defvjp(
    _gn_input_rule, _gn_weight_rule,
    lambda xp, g, ans, input, weight, bias, groups, eps, saved: _channel_sum(xp, g))


@defop("native_batch_norm", n_in=3, jvp="transpose")
def _batch_norm(xp, input, weight, bias, running_mean, running_var, training, momentum, eps,
                saved):
    """Normalize per channel with batch statistics (training) or the running ones.

    In training the running statistics (raw arrays) are updated in place, as PyTorch's kernel
    does: ``(1 - momentum) * running + momentum * batch`` with the unbiased batch variance.
    """
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        mean, var, rstd = _moments(xp, input, axes, eps)
        if running_mean is not None:
            n = _count(input.shape, axes)
            running_mean[...] = (1 - momentum) * running_mean + momentum * mean.reshape(-1)
            running_var[...] = ((1 - momentum) * running_var
                                + momentum * n / (n - 1) * var.reshape(-1))
    else:
        mean = _channel(xp, running_mean.astype(input.dtype), input.ndim)
        rstd = 1 / xp.sqrt(_channel(xp, running_var.astype(input.dtype), input.ndim) + eps)
    saved["mean"], saved["rstd"] = mean, rstd
    scale = rstd if weight is None else rstd * _channel(xp, weight, input.ndim)
    out = (input - mean) * scale
    if bias is not None:
        out += _channel(xp, bias, input.ndim)
    return out


def _bn_stats(xp, input, training, eps, saved):
    if not training:  # the running statistics: constants
        return saved["mean"], saved["rstd"]
    return _stats(xp, input, (0,) + tuple(range(2, input.ndim)), eps, saved)


def _bn_input_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                   momentum, eps, saved):
    mean, rstd = _bn_stats(xp, input, training, eps, saved)
    gain = None if weight is None else _channel(xp, weight, input.ndim)
    if not training:  # the running statistics are constants
        return g * (rstd if gain is None else gain * rstd)
    return _normalized_grad(xp, g, input, mean, rstd, (0,) + tuple(range(2, input.ndim)), gain)


def _bn_weight_rule(xp, g, ans, input, weight, bias, running_mean, running_var, training,
                    momentum, eps, saved):
    mean, rstd = _bn_stats(xp, input, training, eps, saved)
    return _channel_sum(xp, g * (input - mean)) * rstd.reshape(-1)


_batch_norm.defvjp(
    _bn_input_rule, _bn_weight_rule,
    lambda xp, g, ans, input, weight, bias, running_mean, running_var, training, momentum, eps,
    saved: _channel_sum(xp, g))


# --------------------------------------------------------------------------- embedding


def _row_scale(xp, indices, num_weights, padding_idx, scale_grad_by_freq, dtype):
    """Per index: 0 for ``padding_idx``, else 1 or 1/frequency (``scale_grad_by_freq``)."""
    scale = xp.ones(indices.shape, dtype=dtype)
    if scale_grad_by_freq:
        counts = xp.bincount(indices.reshape(-1), minlength=num_weights)
        scale = scale / counts[indices].astype(dtype)
    if padding_idx >= 0:
        scale = xp.where(indices == padding_idx, 0, scale).astype(dtype)
    return scale


@defop("embedding", n_in=1, jvp="transpose")
def _embedding(xp, weight, indices, num_weights, padding_idx, scale_grad_by_freq):
    return xp.take(weight, indices, axis=0)


@defop("embedding_dense_backward", n_in=1, jvp="transpose")
def _embedding_backward(xp, grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The rows of ``grad`` summed into a (num_weights, dim) table at ``indices``."""
    d = grad.shape[-1]
    scale = _row_scale(xp, indices, num_weights, padding_idx, scale_grad_by_freq, grad.dtype)
    rows = grad.reshape(-1, d) * scale.reshape(-1, 1)
    flat = (indices.reshape(-1, 1) * d + xp.arange(d)).reshape(-1)
    out = xp.bincount(flat, weights=rows.reshape(-1), minlength=num_weights * d)
    return out.astype(grad.dtype).reshape(num_weights, d)


_embedding.defvjp(lambda xp, g, ans, weight, indices, num_weights, padding_idx,
                  scale_grad_by_freq: _apply(_embedding_backward, xp, g, indices, num_weights,
                                             padding_idx, scale_grad_by_freq))


def _embedding_backward_rule(xp, g, ans, grad, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    rows = _apply(_embedding, xp, g, indices, num_weights, padding_idx, scale_grad_by_freq)
    if padding_idx < 0 and not scale_grad_by_freq:
        return rows
    scale = _row_scale(_xp.namespace_of(indices), indices, num_weights, padding_idx,
                       scale_grad_by_freq, _raw(g).dtype)
    return rows * scale[..., None]


_embedding_backward.defvjp(_embedding_backward_rule)


# --------------------------------------------------------------------------- the family's surface
__all__ = []
METHODS = {}
INPLACE = ()
