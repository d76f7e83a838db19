"""Diagonals and triangles: ``diagonal`` (a view), ``diag``, ``diag_embed``, ``diagflat``,
``trace``, ``tril`` and ``triu``, with their rules, and the ``diagonal_view``,
``diagonal_backward`` and ``diag_embed`` extras that derivative rules elsewhere call.
"""
from __future__ import annotations

import numpy as np

from ... import _xp
from ..._tensor import _wrap_dim
from ...autograd.views import as_view
from .. import batching
from .. import shape as _shape
from ..autocast import autocast_op
from ..registry import defop, public
from ._common import _writable_diagonal


def _diagonal_dims(ndim, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@defop("diagonal", n_in=1, jvp="linear", batch="moved")
def _diagonal(xp, input, offset, dim1, dim2, shape):
    return _writable_diagonal(xp, input, offset, dim1, dim2)


_diagonal.defvjp(lambda xp, g, ans, input, offset, dim1, dim2, shape:
                 xp.diagonal_backward(g, shape, offset, dim1, dim2))


@_diagonal.public
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the (``dim1``, ``dim2``) planes, as a view, appended as the
    last dim (``offset > 0``: above the main diagonal)."""
    d1, d2 = _diagonal_dims(input.ndim, dim1, dim2)
    out = _diagonal(input, offset, d1, d2, input.shape)
    return as_view(out, input, lambda xp, a: xp.diagonal_view(a, offset, d1, d2))


_xp.register_extra("diagonal_view", _writable_diagonal, diagonal)


@defop("diagonal_backward", n_in=1, jvp="linear", batch="loop")
def _diagonal_backward(xp, grad, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``grad`` on the diagonal: the derivative of ``diagonal``."""
    out = xp.zeros(shape, dtype=grad.dtype)
    _writable_diagonal(xp, out, offset, dim1, dim2)[...] = grad
    return out


_diagonal_backward.defvjp(lambda xp, gg, ans, grad, shape, offset, dim1, dim2:
                          xp.diagonal(gg, offset, dim1, dim2))


_xp.register_extra("diagonal_backward", _diagonal_backward.forward, _diagonal_backward)


@defop("diag_embed", n_in=1, jvp="linear", batch=batching.moved(new_dim=True))
def _diag_embed(xp, input, offset, dim1, dim2):
    n = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = xp.zeros(shape, dtype=input.dtype)
    _writable_diagonal(xp, out, offset, dim1, dim2)[...] = input
    return out


_diag_embed.defvjp(lambda xp, g, ans, input, offset, dim1, dim2:
                   xp.diagonal(g, offset, dim1, dim2))


@_diag_embed.public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2`` of the result) with the last dim of ``input`` on
    their diagonal ``offset``; zeros elsewhere."""
    d1, d2 = _diagonal_dims(input.ndim + 1, dim1, dim2)
    return _diag_embed(input, offset, d1, d2)


_xp.register_extra("diag_embed", lambda xp, v, offset=0, dim1=-2, dim2=-1: _diag_embed.forward(
    xp, v, offset, dim1 % (v.ndim + 1), dim2 % (v.ndim + 1)), diag_embed)


# ``diag`` of a matrix copies the diagonal; PyTorch names that node DiagonalBackward0_copy.
_diagonal_copy = defop("diagonal", n_in=1, jvp="linear", batch="moved")(
    lambda xp, input, offset, dim1, dim2, shape: xp.diagonal(input, offset, dim1, dim2).copy())
_diagonal_copy.defvjp(*_diagonal.rules)
_diagonal_copy.node_cls.__name__ = _diagonal_copy.node_cls.__qualname__ = "DiagonalBackward0_copy"


@public
def diag(input, diagonal=0):
    """A vector -> the matrix with it on diagonal ``diagonal``; a matrix -> that diagonal."""
    if input.ndim == 1:
        return _diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal_copy(input, diagonal, 0, 1, input.shape)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@public
def diagflat(input, offset=0):
    """The matrix with ``input`` (flattened) on its diagonal ``offset``."""
    return _diag_embed(_shape.reshape(input, -1), offset, 0, 1)


@defop("trace", n_in=1, jvp="linear",
       batch=batching.whole(lambda v, nb, p: v.diagonal(dim1=-2, dim2=-1).sum(-1)))
def _trace(xp, input, shape):
    out = xp.trace(input)
    return out.astype(np.int64) if out.dtype.kind in "iub" else out


_trace.defvjp(lambda xp, g, ans, input, shape: xp.diagonal_backward(g, shape, 0, 0, 1))


@_trace.public
@autocast_op("trace")
def trace(input):
    """Sum of the main diagonal of a matrix (integers sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.category == 0:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _trace(input, input.shape)


@defop("tril", n_in=1, jvp="linear", batch="unchanged", inplace=True)
def _tril(xp, input, diagonal):
    return xp.tril(input, diagonal)


_tril.defvjp(lambda xp, g, ans, input, diagonal: xp.tril(g, diagonal))


@_tril.public
def tril(input, diagonal=0):
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims."""
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _tril(input, diagonal)


@defop("triu", n_in=1, jvp="linear", batch="unchanged", inplace=True)
def _triu(xp, input, diagonal):
    return xp.triu(input, diagonal)


_triu.defvjp(lambda xp, g, ans, input, diagonal: xp.triu(g, diagonal))


@_triu.public
def triu(input, diagonal=0):
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _triu(input, diagonal)
