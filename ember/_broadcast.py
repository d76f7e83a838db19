"""Broadcasting, in one place: the shape rule (with PyTorch's error) and its gradient.

``sum_to`` undoes broadcasting on a gradient. The engine calls it once per input edge, so
derivative rules never deal with broadcasting themselves.
"""
from __future__ import annotations

import math

import numpy as np

from . import _errors

# NumPy sums a short trailing block of reduced axes one row at a time when a dim before it is
# kept (5.5 ms for (500000, 2) -> (500000, 1) in float32, against 0.4 ms for adding the two
# columns); below 8 entries its sum of real numbers adds them in order from 0, so adding the
# slices in order gives the same bits. (Complex sums pair up earlier
# and float16 sums accumulate in float32: NumPy's.)
_SHORT_AXIS = 8
_SLICES_MIN_SIZE = 4096
# The other way round, leading axes summed and a short tail kept, NumPy adds the array one
# row of the tail at a time (27 ms for (333332, 3) -> (3,) in float32); as blocks of about
# 8192 entries it adds a few dozen long rows, then sums the block: 0.8 ms, and each column
# is then a sum of partial sums, closer than NumPy's one running sum (1e-6 against 2e-5).
_SHORT_TAIL = 128
_HEAD_BLOCK = 8192
# Up to this many rows (a Linear's bias gradient at a batch of 512) the rows are summed instead
# by one matrix-vector product with ones (BLAS, which also adds each column in turn, in a few
# running sums): 1.6 against 14 us for (512, 27), 1.7 against 9.4 for (512, 64); a block of
# rows there is one block (or a few short ones), so they were no closer to the exact sum.
_HEAD_BLAS_ROWS = 1024


def broadcast_shapes(*shapes):
    """The shape all ``shapes`` broadcast to; PyTorch's RuntimeError when they cannot.

    As in PyTorch, the shapes are folded in one at a time, each pair compared from its last
    dim, so the error names the same sizes and dim as PyTorch's.
    """
    out = ()
    for s in shapes:
        ndim = max(len(out), len(s))
        a = (1,) * (ndim - len(out)) + tuple(out)
        b = (1,) * (ndim - len(s)) + tuple(s)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(_errors.BROADCAST.format(a=a[i], b=b[i], dim=i))
        out = tuple(n if m == 1 else m for m, n in zip(a, b))
    return out


def sum_to(xp, g, shape):
    """Sum the gradient ``g`` down to ``shape``, the shape of the input it belongs to.

    Works on raw arrays (``xp`` = numpy/cupy) and on ember Tensors (``xp`` = ember's array
    API namespace) alike, so double backward records it like any other op.
    """
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
    if (axes and type(g) is np.ndarray and g.size >= _SLICES_MIN_SIZE
            and (g.dtype.kind in "iu" or g.dtype.char in "fd")):
        head = sum_head(g, axes)
        if head is not None:
            return head.reshape(shape)
        g, axes = _sum_short_tail(g, axes)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if lead or g.shape != shape:
        g = xp.reshape(g, shape)
    return g


def _sum_short_tail(g, axes):
    """The trailing run of ``axes`` summed (keepdims) as a few array additions where it holds
    under 8 entries and a dim before it is kept; ``g`` and the axes still to sum."""
    ndim = g.ndim
    k = 0
    while k < len(axes) and axes[-1 - k] == ndim - 1 - k:
        k += 1
    block = math.prod(g.shape[ndim - k:])
    if k == ndim or block >= _SHORT_AXIS or not k:
        return g, axes
    rows = g.reshape(g.shape[:ndim - k] + (block,))
    out = np.add(rows[..., :1], 0, dtype=g.dtype)  # 0 + first, as NumPy's sum (-0.0 -> 0.0)
    for i in range(1, block):
        out += rows[..., i:i + 1]
    return out.reshape(g.shape[:ndim - k] + (1,) * k), axes[:len(axes) - k]


def sum_head(g, axes):
    """``g`` summed over ``axes`` (keepdims) when they are its leading axes, the tail it keeps
    is short and ``g`` a C-contiguous float32/float64 NumPy array of 4096 entries or more:
    blocks of rows added as long rows, then the block summed (see ``_SHORT_TAIL``), or up to
    ``_HEAD_BLAS_ROWS`` rows one product with ones; None otherwise."""
    m = len(axes)
    if (type(g) is not np.ndarray or g.size < _SLICES_MIN_SIZE or g.dtype.char not in "fd"
            or axes != tuple(range(m)) or m == g.ndim or not g.flags.c_contiguous):
        return None
    tail = math.prod(g.shape[m:])
    if tail >= _SHORT_TAIL or not tail:
        return None
    n = g.size // tail
    if n <= _HEAD_BLAS_ROWS:
        return (np.ones(n, g.dtype) @ g.reshape(n, tail)).reshape((1,) * m + g.shape[m:])
    k = max(_HEAD_BLOCK // tail, 1)  # rows per block
    q = n // k
    rows = g.reshape(n, tail)
    out = rows[:q * k].reshape(q, k * tail).sum(axis=0).reshape(k, tail).sum(axis=0)
    if q * k < n:
        out += rows[q * k:].sum(axis=0)
    return out.reshape((1,) * m + g.shape[m:])
