"""``max_unpool2d`` / ``max_unpool3d``: the partial inverse of max pooling. Each input value
goes to the position its index names in its (N, C) plane of a zero output; the derivative
gathers the output gradient back from those positions (a ``gather`` when recorded, so
differentiable again). Nodes ``MaxUnpool2DBackward0`` / ``MaxUnpool3DBackward0``, as PyTorch's;
``max_unpool1d`` is ``max_unpool2d`` of an unsqueezed input, as in PyTorch."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .indexing import gather
from .registry import defop

__all__ = []
METHODS = {}
INPLACE = ()


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


_max_unpool2d = defop("max_unpool2d", n_in=1, jvp="linear")(_scatter)
_max_unpool2d.defvjp(_gather_rule)
_max_unpool3d = defop("max_unpool3d", n_in=1, jvp="linear")(_scatter)
_max_unpool3d.defvjp(_gather_rule)

