"""The products added into an input, ``beta * input + alpha * product``: ``addmm``, ``addmv``,
``baddbmm``, ``addbmm`` and ``addr`` (ops with their rules and public wrappers), and their
in-place method forms (``x.addmm_(...)``). The plain products they build on are in
``products.py``.
"""
from __future__ import annotations

from ... import _errors
from ..._tensor import Tensor, _wrap_dim
from .. import reduction as _reduction
from .. import shape as _shape
from ..autocast import autocast_op
from ..registry import defop
from ._common import _in_vmap, _mT
from .products import _check_batch2, _column_major, _mat1_grad, _mat2_grad, _matmul, matmul


def _scaled(x, s):
    return x if s == 1 else x * s


def _add_scaled(input, product, beta, alpha):
    """``beta * input + alpha * product``; with ``beta == 0`` the input is ignored (even nan).
    Forwards only: the new array ``product`` takes the sum in place (no second result array)."""
    product = _scaled(product, alpha)
    if beta != 0:
        product += _scaled(input, beta)
    return product


def _integral_scalars(input, beta, alpha):
    """Integer tensors take ``beta`` and ``alpha`` truncated to integers, as PyTorch does."""
    if input._data.dtype.kind in "biu":
        return int(beta), int(alpha)
    return beta, alpha


def _check_expandable(input, shape):
    """PyTorch's error when ``input`` does not broadcast to the product's ``shape``."""
    sizes = tuple(input.shape)
    lead = len(shape) - len(sizes)
    if lead < 0:
        _shape.expand(input, *shape)  # raises: too few sizes
    for i in range(len(shape) - 1, lead - 1, -1):
        n = sizes[i - lead]
        if n != 1 and n != shape[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[i]}) must match the existing size "
                f"({n}) at non-singleton dimension {i}.  Target sizes: {list(shape)}.  "
                f"Tensor sizes: {list(sizes)}")


def _in_place(fn, name):
    """``x.fn_(...)``: ``fn`` computed out of place and written into ``x``, whose shape the
    result must have (the product's shape is not broadcast back)."""
    def compute(input, *args, **kwargs):
        out = fn(input, *args, **kwargs)
        if out.shape != input.shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(input.shape)} and "
                               f"output tensor size {list(out.shape)} should match")
        return out

    def method(self, *args, **kwargs):
        return self._inplace(compute, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


@defop("addmm", n_in=3, jvp="transpose", batch="matmul", inplace=_in_place)
def _addmm(xp, input, mat1, mat2, beta, alpha, column_major):
    """``column_major``: as for ``mm``, of ``mat1`` and ``mat2``."""
    return _add_scaled(input, _matmul(xp, mat1, mat2), beta, alpha)


_addmm.defvjp(
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major: _scaled(g, beta),
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major:
        _scaled(_mat1_grad(xp, g, mat2, column_major[0]), alpha),
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major:
        _scaled(_mat2_grad(xp, g, mat1, column_major[1]), alpha))


@_addmm.public
@autocast_op("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape."""
    # (the shapes of plain tensors read off their arrays: each Linear of a small model calls
    # this, and the checks cost a third of its product)
    shapes = _shape_of(mat1), _shape_of(mat2)
    for name, shape in zip(("mat1", "mat2"), shapes):
        if len(shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(shape)}-D tensor")
    (a0, a1), (b0, b1) = shapes
    if a1 != b0:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(a0=a0, a1=a1, b0=b0, b1=b1))
    dtype = mat2._data.dtype  # (a batched tensor's is its samples')
    if mat1._data.dtype != dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {mat1.dtype._word} "
                           f"and {mat2.dtype._word}")
    if input._data.dtype != dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {input.dtype._word} "
                           f"and {mat2.dtype._word}")
    sizes = _shape_of(input)
    if sizes != (b1,) and sizes != (a0, b1):  # (a Linear's bias, or a full input: they fit)
        _check_expandable(input, (a0, b1))
    return _addmm(input, mat1, mat2, *_integral_scalars(input, beta, alpha),
                  (_column_major(mat1), _column_major(mat2)))


def _shape_of(t):
    """``t``'s shape as a tuple: its array's, for a tensor (a Parameter too) whose class keeps
    Tensor's ``shape`` (a batched tensor's is not its array's)."""
    return t._data.shape if type(t).shape is _TENSOR_SHAPE else tuple(t.shape)


_TENSOR_SHAPE = Tensor.shape


@defop("addmv", n_in=3, jvp="transpose", batch="matmul", inplace=_in_place)
def _addmv(xp, input, mat, vec, beta, alpha):
    return _add_scaled(input, xp.matmul(mat, vec), beta, alpha)


_addmv.defvjp(
    lambda xp, g, ans, input, mat, vec, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, mat, vec, beta, alpha:
        _scaled(xp.reshape(g, (-1, 1)) * xp.reshape(vec, (1, -1)), alpha),
    lambda xp, g, ans, input, mat, vec, beta, alpha: _scaled(xp.matmul(mat.T, g), alpha))


@_addmv.public
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    if input.ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError("vector + matrix @ vector expected, got "
                           f"{input.ndim}, {mat.ndim}, {vec.ndim}")
    n = input.shape[0] if input.ndim else 1
    if mat.shape[1] != vec.shape[0] or n not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({mat.shape[0]}x{mat.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    if not input.dtype == mat.dtype == vec.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{input.dtype._word}, {mat.dtype._word}, and {vec.dtype._word}")
    return _addmv(input, mat, vec, *_integral_scalars(input, beta, alpha))


@defop("baddbmm", n_in=3, jvp="transpose", batch="matmul", inplace=_in_place)
def _baddbmm(xp, input, batch1, batch2, beta, alpha):
    return _add_scaled(input, xp.matmul(batch1, batch2), beta, alpha)


_baddbmm.defvjp(
    lambda xp, g, ans, input, batch1, batch2, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(g, _mT(xp, batch2)), alpha),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(_mT(xp, batch1), g), alpha))


@_baddbmm.public
@autocast_op("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            _wrap_dim(2, t.ndim)  # fewer dims: PyTorch's IndexError, from reading size(2)
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_batch2(batch1, batch2)
    if input.dtype != batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {input.dtype._cpp_name}, "
                           f"batch1: {batch1.dtype._cpp_name}, batch2: {batch2.dtype._cpp_name}")
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype._word} but found "
                           f"{batch2.dtype._word}")
    _check_expandable(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _baddbmm(input, batch1, batch2, *_integral_scalars(input, beta, alpha))


@defop("addbmm", n_in=3, jvp="transpose", batch="loop", inplace=_in_place)
def _addbmm(xp, input, batch1, batch2, beta, alpha):
    return _add_scaled(input, xp.sum(xp.matmul(batch1, batch2), axis=0), beta, alpha)


_addbmm.defvjp(
    lambda xp, g, ans, input, batch1, batch2, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(xp.expand_dims(g, 0), _mT(xp, batch2)), alpha),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(_mT(xp, batch1), xp.expand_dims(g, 0)), alpha))


@_addbmm.public
@autocast_op("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    _check_expandable(input, (batch1.shape[_wrap_dim(1, batch1.ndim)],
                              batch2.shape[_wrap_dim(2, batch2.ndim)]))
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    for a, b in ((input, batch1), (batch1, batch2)):
        if a.dtype != b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {a.dtype._word} "
                               f"and {b.dtype._word}")
    beta, alpha = _integral_scalars(input, beta, alpha)
    if _in_vmap(input, batch1, batch2):  # ops that batch: the product summed over its batch
        product = _scaled(_reduction.sum(matmul(batch1, batch2), 0), alpha)
        return product if beta == 0 else product + _scaled(input, beta)
    return _addbmm(input, batch1, batch2, beta, alpha)


@defop("addr", n_in=3, promote=True, jvp="transpose", batch="matmul",
       inplace=_in_place)
def _addr(xp, input, vec1, vec2, beta, alpha):
    if vec1.dtype == bool:  # (promoted: all three are bool) PyTorch's logical form
        product = vec1[:, None] & vec2[None, :] if alpha else xp.zeros(
            (vec1.shape[0], vec2.shape[0]), dtype=bool)
        return product if not beta else input | product
    product = alpha * (vec1[:, None] * vec2[None, :])
    return product if beta == 0 else beta * input + product


_addr.defvjp(lambda xp, g, ans, input, vec1, vec2, beta, alpha: g * beta,
             lambda xp, g, ans, input, vec1, vec2, beta, alpha: alpha * (g @ vec2),
             lambda xp, g, ans, input, vec1, vec2, beta, alpha: alpha * (vec1 @ g))


@_addr.public
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``; ``input`` is ignored when ``beta`` is 0."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"{name} must be a 1-dimensional tensor, got {t.ndim}-D")
    _check_expandable(input, (vec1.shape[0], vec2.shape[0]))
    return _addr(input, vec1, vec2, beta, alpha)

