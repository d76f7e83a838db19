"""Broadcasting, in one place: the shape rule (with PyTorch's error) and its gradient.

``sum_to`` undoes broadcasting on a gradient. The engine calls it once per input edge, so
derivative rules never deal with broadcasting themselves.
"""
from __future__ import annotations

from . import _errors


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
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if lead or g.shape != shape:
        g = xp.reshape(g, shape)
    return g
