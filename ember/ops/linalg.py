"""Matrix products and their derivatives; ``matmul`` dispatches like PyTorch's."""
from __future__ import annotations

from .. import _errors
from . import shape as _shape
from .registry import defop


@defop("mm", promote=True)
def _mm(xp, input, mat2):
    return xp.matmul(input, mat2)


_mm.defvjp(lambda xp, g, ans, input, mat2: xp.matmul(g, mat2.T),
           lambda xp, g, ans, input, mat2: xp.matmul(input.T, g))


@defop("mv", promote=True)
def _mv(xp, input, vec):
    return xp.matmul(input, vec)


_mv.defvjp(lambda xp, g, ans, input, vec: xp.reshape(g, (-1, 1)) * xp.reshape(vec, (1, -1)),
           lambda xp, g, ans, input, vec: xp.matmul(input.T, g))


@defop("dot", promote=True)
def _dot(xp, input, other):
    return xp.matmul(input, other)


_dot.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@defop("bmm", promote=True)
def _bmm(xp, input, mat2):
    return xp.matmul(input, mat2)


_bmm.defvjp(lambda xp, g, ans, input, mat2: xp.matmul(g, xp.swapaxes(mat2, -1, -2)),
            lambda xp, g, ans, input, mat2: xp.matmul(xp.swapaxes(input, -1, -2), g))


def _check_dtypes(a, b, name):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected {name} to have the same dtype, but got: "
                           f"{a.dtype._legacy[:-6]} != {b.dtype._legacy[:-6]}"
                           if name != "mat1 and mat2" else
                           f"{name} must have the same dtype, but got "
                           f"{a.dtype._legacy[:-6]} and {b.dtype._legacy[:-6]}")


def mm(input, mat2):
    """Matrix product of two 2-d tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        bad = input if input.ndim != 2 else mat2
        raise RuntimeError(f"{'self' if bad is input else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(
            a0=input.shape[0], a1=input.shape[1], b0=mat2.shape[0], b1=mat2.shape[1]))
    _check_dtypes(input, mat2, "mat1 and mat2")
    return _mm(input, mat2)


def matmul(input, other):
    """PyTorch's ``matmul``: dot, mv, mm, vector-matrix and broadcast batched products."""
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        if input.shape[0] != other.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] "
                               f"and src [{other.shape[0]}] to have the same number of "
                               "elements, but got "
                               f"{input.shape[0]} and {other.shape[0]} elements respectively")
        _check_dtypes(input, other, "1D tensors")
        return _dot(input, other)
    if a == 2 and b == 1:
        if input.shape[1] != other.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                               f"({input.shape[0]}x{input.shape[1]}), vec ({other.shape[0]})")
        return _mv(input, other)
    if a == 1 and b == 2:
        out = mm(_shape.unsqueeze(input, 0), other)
        return _shape._squeeze_matmul(out, 0, out.shape)
    if a == 2 and b == 2:
        return mm(input, other)
    return _batched(input, other)


def _batched(input, other):
    """Broadcast batch dims, fold them into one, ``bmm``, unfold (PyTorch's route)."""
    from .._broadcast import broadcast_shapes
    x = _shape.unsqueeze(input, 0) if input.ndim == 1 else input
    y = _shape.unsqueeze(other, -1) if other.ndim == 1 else other
    if x.shape[-1] != y.shape[-2]:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(
            a0=x.numel() // x.shape[-1], a1=x.shape[-1], b0=y.shape[-2], b1=y.shape[-1]))
    batch = broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    n, k, m = x.shape[-2], x.shape[-1], y.shape[-1]
    nb = 1
    for s in batch:
        nb *= s
    x3 = _shape.reshape(x.expand(*batch, n, k), nb, n, k)
    y3 = _shape.reshape(y.expand(*batch, k, m), nb, k, m)
    out = _bmm(x3, y3)
    shape = batch + ((n,) if input.ndim > 1 else ()) + ((m,) if other.ndim > 1 else ())
    return _shape._unsafe_view(out, shape, out.shape)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["matmul", "mm"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = ()
