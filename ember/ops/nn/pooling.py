"""Pooling as PyTorch's fused ops: max, average and adaptive pooling over taps
(``_taps.py``), and max unpooling. ``ember/nn/functional/pooling.py`` checks the arguments.

- Max pooling keeps PyTorch's flat in-plane index of each window's maximum (the first maximum
  in window order, or the last NaN); its gradient scatters by those indices and the scatter's
  gradient gathers by them. What PyTorch saves besides the inputs (the indices) the forward
  writes into a ``saved`` dict parameter; rules never read the output, so in-place ops on it
  stay legal, as in PyTorch.
- Average and adaptive average pooling are linear maps of taps; the gradient of each is its
  transpose, whose own gradient is the forward op again.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..._tensor import Tensor
from ..indexing import gather
from ..registry import defop
from ._common import _apply, _zeros_rule
from ._taps import (
    _along,
    _map,
    _map_transpose,
    _plane_gather,
    _plane_scatter,
    _strided_windows,
    _tap,
    _window_taps,
    pool_output_size,
)
from ._windows import adaptive_max, adaptive_sum, adaptive_sum_transpose, adaptive_windows

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

    @defop(name, n_in=1, jvp="transpose", batch="fold")
    def forward(xp, input, kernel, stride, padding, dilation, ceil_mode, saved):
        out, saved["indices"] = _max_pool_raw(xp, input, kernel, stride, padding, dilation,
                                              ceil_mode)
        return out

    @defop(name + "_backward", n_in=2, jvp="transpose", batch="loop")
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

    @defop(name, n_in=1, jvp="transpose", batch="fold")
    def forward(xp, input, output_size, saved):
        out, saved["indices"] = adaptive_max(xp, input, output_size)
        return out

    @defop(name + "_backward", n_in=2, jvp="transpose", batch="loop")
    def backward(xp, grad, input, indices):
        plane = input.shape[input.ndim - nd:]
        return _plane_scatter(xp, grad, indices, plane, _tiled(plane, grad.shape[grad.ndim - nd:]))

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

    @defop(name, n_in=1, jvp="transpose", batch="fold")
    def forward(xp, input, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        dims, divisor = _avg_plan(input.shape[input.ndim - nd:], kernel, stride, padding,
                                  ceil_mode, count_include_pad, divisor_override)
        return _divide(_map(xp, input, dims), _cast(xp, divisor, input.dtype))

    @defop(name + "_backward", n_in=2, jvp="transpose", batch="loop")
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


def _tiled(plane, output_size):
    """Whether the adaptive windows tile the plane (no two share an input position)."""
    return all(o and n % o == 0 for n, o in zip(plane, output_size))


@functools.lru_cache(maxsize=256)
def _adaptive_divisor(plane, output_size):
    return _outer([adaptive_windows(n, o)[2] for n, o in zip(plane, output_size)])


def _adaptive_avg_pool_ops(nd):
    name = f"adaptive_avg_pool{nd}d"

    @defop(name, n_in=1, jvp="transpose", batch="fold")
    def forward(xp, input, output_size):
        divisor = _adaptive_divisor(input.shape[input.ndim - nd:], output_size)
        return _divide(adaptive_sum(xp, input, output_size), _cast(xp, divisor, input.dtype))

    @defop(name + "_backward", n_in=2, jvp="transpose", batch="loop")
    def backward(xp, grad, input):
        plane = input.shape[input.ndim - nd:]
        divisor = _adaptive_divisor(plane, grad.shape[grad.ndim - nd:])
        return adaptive_sum_transpose(xp, grad / _cast(xp, divisor, grad.dtype), plane)

    forward.defvjp(lambda xp, g, ans, input, output_size: _apply(backward, xp, g, input))
    backward.defvjp(lambda xp, g, ans, grad, input:
                    _apply(forward, xp, g, tuple(grad.shape[grad.ndim - nd:])), _zeros_rule)
    return forward


_adaptive_avg_pool2d = _adaptive_avg_pool_ops(2)
_adaptive_avg_pool3d = _adaptive_avg_pool_ops(3)


# --------------------------------------------------------------------------- unpool
# ``max_unpool2d`` / ``max_unpool3d``: the partial inverse of max pooling. Each input value
# goes to the position its index names in its (N, C) plane of a zero output; the derivative
# gathers the output gradient back from those positions (a ``gather`` when recorded, so
# differentiable again). Nodes ``MaxUnpool2DBackward0`` / ``MaxUnpool3DBackward0``, as PyTorch's;
# ``max_unpool1d`` is ``max_unpool2d`` of an unsqueezed input, as in PyTorch.


def _scatter(xp, input, indices, size):
    lead = input.shape[:input.ndim - len(size)]
    planes = input.reshape(lead + (-1,))
    out = xp.zeros(lead + (int(np.prod(size)),), dtype=input.dtype)
    xp.put_along_axis(out, indices.reshape(lead + (-1,)), planes, axis=-1)
    return out.reshape(lead + tuple(size))


def _gather_rule(xp, g, ans, input, indices, size):
    lead = tuple(input.shape[:input.ndim - len(size)])
    where = indices.reshape(lead + (-1,))
    planes = xp.reshape(g, lead + (-1,))
    if isinstance(planes, Tensor):  # under create_graph: recorded, as a gather
        flat = gather(planes, -1, Tensor._make(where, None, False))
    else:
        flat = xp.take_along_axis(planes, where, -1)
    return xp.reshape(flat, tuple(input.shape))


_max_unpool2d = defop("max_unpool2d", n_in=1, jvp="linear", batch="loop")(_scatter)
_max_unpool2d.defvjp(_gather_rule)
_max_unpool3d = defop("max_unpool3d", n_in=1, jvp="linear", batch="loop")(_scatter)
_max_unpool3d.defvjp(_gather_rule)
