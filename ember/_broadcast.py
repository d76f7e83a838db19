"""Broadcasting, in one place: the shape rule (with PyTorch's error) and its gradient.

``sum_to`` undoes broadcasting on a gradient. The engine calls it once per input edge, so
derivative rules never deal with broadcasting themselves.
"""
from __future__ import annotations

from . import _errors


def broadcast_shapes(*shapes):
    """The shape all ``shapes`` broadcast to; PyTorch's RuntimeError when they cannot."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        offset = ndim - len(s)
        for i, n in enumerate(s):
            j = offset + i
            if n != 1 and out[j] != n:
                if out[j] != 1:
                    raise RuntimeError(_errors.BROADCAST.format(a=out[j], b=n, dim=j))
                out[j] = n
            elif out[j] == 1:
                out[j] = n
    return tuple(out)


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
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if lead or g.shape != shape:
        g = xp.reshape(g, shape)
    return g
