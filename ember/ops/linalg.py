"""Linear algebra: matrix products, contractions, diagonals, decompositions and their derivatives.

The module has four parts:

- products (``mm``, ``bmm``, ``mv``, ``dot``, ``addmm``..., and ``matmul``'s dispatch);
- contractions built from those, step for step as PyTorch builds them (``einsum``,
  ``tensordot``, ``kron``, ``outer``), so their graphs, grad_fn names and rounding match;
- diagonals and triangles (``diagonal`` is a view; ``diag``, ``diag_embed``, ``trace``,
  ``tril``, ``triu``);
- the ``torch.linalg`` functions (``linalg_inv``, ``linalg_svd``...; ``ember.linalg`` exports
  them under their short names, as ``torch.linalg`` does). Decompositions run on NumPy's LAPACK
  and differentiate with PyTorch's formulas (``FunctionsManual.cpp``), written once against
  the array namespace so second derivatives come from recording the first ones.

Gradients are for real inputs (complex inputs run forward only).
"""
from __future__ import annotations

import operator
import string
from collections import Counter

import numpy as np

from .. import _array_api, _dtypes, _errors, _xp
from .._broadcast import broadcast_shapes as _broadcast_shapes
from .._tensor import Tensor, _wrap_dim
from ..autograd.views import as_view
from . import reduction as _reduction
from . import shape as _shape
from .autocast import autocast_op
from .registry import defop


def _mT(xp, x):
    """The matrix transpose of the last two dims (the adjoint, for the real inputs we derive)."""
    return xp.swapaxes(x, -1, -2)


def _recording(xp):
    """Whether a derivative rule is being recorded (``create_graph=True``) rather than run."""
    return _array_api.is_tensor_namespace(xp)


def _absent(xp, g):
    """Whether ``g`` is the zero stand-in for an output that received no gradient.

    PyTorch skips the terms of undefined output gradients; skipping an all-zero gradient is the
    same in exact arithmetic and avoids 0/0 at degenerate spectra (repeated singular values).
    A recorded gradient that may itself be differentiated is never skipped.
    """
    if _recording(xp) and g.requires_grad:
        return False
    return not bool(xp.any(g != 0))


def _matmul(xp, a, b):
    """``xp.matmul(a, b)``, but ``np.dot`` (the same product) for two NumPy matrices: NumPy 2's
    matmul leaves BLAS when the inner dimension is 1, as in a batch of one's weight gradient
    (an outer product), and is then 5 to 10 times slower."""
    if xp is _xp.NUMPY and a.ndim == 2 and b.ndim == 2:
        return np.dot(a, b)
    return xp.matmul(a, b)


def _column_major(t):
    """Whether matrix ``t`` is stored column by column, as a transposed weight ``W.t()`` is
    (PyTorch's test: strides ``(1, rows)``)."""
    a = t._data
    return a.strides == (a.itemsize, a.itemsize * a.shape[0])


def _mat1_grad(xp, g, mat2, column_major):
    """``g @ mat2.T``, the gradient of ``mat1`` in ``mat1 @ mat2``, stored column by column
    (as ``(mat2 @ g.T).T``) when ``mat1`` is: PyTorch's ``mm_mat1_backward``."""
    return _matmul(xp, mat2, g.T).T if column_major else _matmul(xp, g, mat2.T)


def _mat2_grad(xp, g, mat1, column_major):
    """``mat1.T @ g``, the gradient of ``mat2``, stored column by column when ``mat2`` is:
    PyTorch's ``mm_mat2_backward``. For ``linear``'s ``W.t()``, the weight's gradient then comes
    out row-major like the weight, with no transposing copy downstream (NumPy's are slow)."""
    return _matmul(xp, g.T, mat1).T if column_major else _matmul(xp, mat1.T, g)


def _word(t):
    """PyTorch's scalar type name of a tensor: 'Float', 'Double', 'Long'..."""
    return t.dtype._legacy[:-6]


def _cpp(t):
    """The C++ type name some kernels print: 'float', 'double', 'long int'..."""
    name = t.dtype._c_name
    return {"long": "long int", "short": "short int"}.get(name, name)


# --------------------------------------------------------------------------- matrix products


@defop("mm", n_in=2, promote=True, jvp="multilinear")
def _mm(xp, input, mat2, column_major):
    """``column_major``: whether each matrix is stored column by column (its gradient will be)."""
    return _matmul(xp, input, mat2)


_mm.defvjp(lambda xp, g, ans, input, mat2, column_major:
           _mat1_grad(xp, g, mat2, column_major[0]),
           lambda xp, g, ans, input, mat2, column_major:
           _mat2_grad(xp, g, input, column_major[1]))


@defop("mv", promote=True, jvp="multilinear")
def _mv(xp, input, vec):
    return xp.matmul(input, vec)


_mv.defvjp(lambda xp, g, ans, input, vec: xp.reshape(g, (-1, 1)) * xp.reshape(vec, (1, -1)),
           lambda xp, g, ans, input, vec: xp.matmul(input.T, g))


@defop("dot", promote=True, jvp="multilinear")
def _dot(xp, input, other):
    return xp.matmul(input, other)


_dot.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@defop("vdot", jvp="multilinear")
def _vdot(xp, input, other):
    return xp.vdot(input, other)


_vdot.defvjp(lambda xp, g, ans, input, other: g * other,
             lambda xp, g, ans, input, other: g * input)


@defop("bmm", promote=True, jvp="multilinear")
def _bmm(xp, input, mat2):
    return xp.matmul(input, mat2)


_bmm.defvjp(lambda xp, g, ans, input, mat2: xp.matmul(g, _mT(xp, mat2)),
            lambda xp, g, ans, input, mat2: xp.matmul(_mT(xp, input), g))


def _scaled(x, s):
    return x if s == 1 else x * s


def _add_scaled(input, product, beta, alpha):
    """``beta * input + alpha * product``; with ``beta == 0`` the input is ignored (even nan).
    Forwards only: the new array ``product`` takes the sum in place (no second result array)."""
    product = _scaled(product, alpha)
    if beta != 0:
        product += _scaled(input, beta)
    return product


@defop("addmm", n_in=3, jvp="transpose")
def _addmm(xp, input, mat1, mat2, beta, alpha, column_major):
    """``column_major``: as for ``mm``, of ``mat1`` and ``mat2``."""
    return _add_scaled(input, _matmul(xp, mat1, mat2), beta, alpha)


_addmm.defvjp(
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major: _scaled(g, beta),
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major:
        _scaled(_mat1_grad(xp, g, mat2, column_major[0]), alpha),
    lambda xp, g, ans, input, mat1, mat2, beta, alpha, column_major:
        _scaled(_mat2_grad(xp, g, mat1, column_major[1]), alpha))


@defop("addmv", n_in=3, jvp="transpose")
def _addmv(xp, input, mat, vec, beta, alpha):
    return _add_scaled(input, xp.matmul(mat, vec), beta, alpha)


_addmv.defvjp(
    lambda xp, g, ans, input, mat, vec, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, mat, vec, beta, alpha:
        _scaled(xp.reshape(g, (-1, 1)) * xp.reshape(vec, (1, -1)), alpha),
    lambda xp, g, ans, input, mat, vec, beta, alpha: _scaled(xp.matmul(mat.T, g), alpha))


@defop("baddbmm", n_in=3, jvp="transpose")
def _baddbmm(xp, input, batch1, batch2, beta, alpha):
    return _add_scaled(input, xp.matmul(batch1, batch2), beta, alpha)


_baddbmm.defvjp(
    lambda xp, g, ans, input, batch1, batch2, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(g, _mT(xp, batch2)), alpha),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(_mT(xp, batch1), g), alpha))


@autocast_op("mm")
def mm(input, mat2):
    """Matrix product of two 2-d tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(
            a0=input.shape[0], a1=input.shape[1], b0=mat2.shape[0], b1=mat2.shape[1]))
    if input.dtype != mat2.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp(input)} != {_cpp(mat2)}")
    _no_bool("addmm_impl_cpu_", input, input.shape[0] * mat2.shape[1])
    return _mm(input, mat2, (_column_major(input), _column_major(mat2)))


def _no_bool(kernel, t, size=1):
    """PyTorch's products have no kernel for bool tensors (``size``: the result's: an empty
    one is made without calling the kernel)."""
    if t.dtype is _dtypes.bool and size:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


@autocast_op("bmm")
def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors ``(b, n, k) @ (b, k, m)``."""
    for name, t in (("batch1", input), ("batch2", mat2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_batch2(input, mat2)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {_word(input)} but found {_word(mat2)}")
    _no_bool("bmm", input, input.shape[0] * input.shape[1] * mat2.shape[2])
    return _bmm(input, mat2)


def _check_batch2(batch1, batch2):
    want = [batch1.shape[0], batch1.shape[2]]
    got = [batch2.shape[0], batch2.shape[1]]
    if want != got:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"{want} but got: {got}.")


def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), "
                           f"mat ({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype != vec.dtype:  # PyTorch runs addmv into a vector of vec's dtype
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_word(vec)}, {_word(input)}, and {_word(vec)}")
    _no_bool("addmv_impl_cpu", input, input.shape[0])
    return _mv(input, vec)


def _check_vectors(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    n, m = input.shape[0], other.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    if input.dtype != other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_word(input)} and {_word(other)}")


def dot(input, other):
    """Inner product of two 1-d tensors."""
    _check_vectors(input, other)
    _no_bool("dot", input)
    return _dot(input, other)


def vdot(input, other):
    """Inner product of two 1-d tensors, conjugating the first (the same as ``dot`` for reals)."""
    _check_vectors(input, other)
    return _vdot(input, other)


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


@autocast_op("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product's shape."""
    shapes = mat1.shape, mat2.shape
    for name, shape in zip(("mat1", "mat2"), shapes):
        if len(shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(shape)}-D tensor")
    (a0, a1), (b0, b1) = shapes
    if a1 != b0:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(a0=a0, a1=a1, b0=b0, b1=b1))
    dtype = mat2._data.dtype  # (a batched tensor's is its samples')
    if mat1._data.dtype != dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_word(mat1)} "
                           f"and {_word(mat2)}")
    if input._data.dtype != dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(input)} "
                           f"and {_word(mat2)}")
    _check_expandable(input, (a0, b1))
    return _addmm(input, mat1, mat2, *_integral_scalars(input, beta, alpha),
                  (_column_major(mat1), _column_major(mat2)))


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
                           f"{_word(input)}, {_word(mat)}, and {_word(vec)}")
    return _addmv(input, mat, vec, *_integral_scalars(input, beta, alpha))


@autocast_op("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            _wrap_dim(2, t.ndim)  # fewer dims: PyTorch's IndexError, from reading size(2)
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_batch2(batch1, batch2)
    if input.dtype != batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input)}, batch1: "
                           f"{_cpp(batch1)}, batch2: {_cpp(batch2)}")
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(f"expected scalar type {_word(batch1)} but found {_word(batch2)}")
    _check_expandable(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _baddbmm(input, batch1, batch2, *_integral_scalars(input, beta, alpha))


def outer(input, vec2):
    """Outer product of two vectors: ``input[:, None] * vec2``."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return _shape.reshape(input, input.shape[0], 1) * vec2


def ger(input, vec2):
    """``outer``, under its deprecated name (PyTorch warns on each call)."""
    _errors.warn("torch.ger is deprecated and will be removed in a future PyTorch release. Use "
                 "torch.outer instead.")
    return outer(input, vec2)


@autocast_op("matmul")
def matmul(input, other):
    """PyTorch's ``matmul``: dot, mv, mm and vector-matrix products; a batch against a matrix
    or vector folded into one ``mm``/``mv``; broadcast batches through ``bmm``."""
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    if a == 1 and b == 2:
        out = mm(_shape.unsqueeze(input, 0), other)
        return _shape._squeeze_matmul(out, 0, out.shape)
    if a == 2 and b == 2:
        return mm(input, other)
    if _should_fold(input, other):
        return _folded(input, other)
    return _batched(input, other)


def _should_fold(input, other):
    """Whether the product is one ``mm``/``mv`` of the larger operand flattened to a matrix:
    when that needs no copy, or always when the smaller operand requires grad (its gradient
    is then one matrix product instead of a sum over a broadcast batch)."""
    larger = input.ndim >= other.ndim
    big, small = (input, other) if larger else (other, input)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if input.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    shape, strides = list(big.shape), list(big.stride())
    if not larger:  # the operand folded is other.mT: its last two dims swapped
        shape[-2], shape[-1] = shape[-1], shape[-2]
        strides[-2], strides[-1] = strides[-1], strides[-2]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def _folded(input, other):
    transpose = other.ndim > input.ndim
    t1 = other.mT if transpose else input
    t2 = other if not transpose else (input.t() if input.ndim == 2 else input)
    shape = tuple(t1.shape[:-1])
    folded = _shape.reshape(t1, int(np.prod(shape)), t1.shape[-1])
    if t2.ndim == 1:
        return _shape._unsafe_view(mv(folded, t2), shape, (folded.shape[0],))
    product = mm(folded, t2)
    out = _shape._unsafe_view(product, shape + (t2.shape[1],), product.shape)
    return _shape.contiguous(out.mT) if transpose else out


def _batched(input, other):
    """Broadcast the batch dims, flatten them into one, ``bmm``, view back."""
    from .._broadcast import broadcast_shapes
    a, b = input.ndim, other.ndim
    n, m1 = (input.shape[-2] if a > 1 else 1), input.shape[-1]
    m2, p = (other.shape[-2], other.shape[-1]) if b > 1 else (other.shape[0], 1)
    batch1, batch2 = tuple(input.shape[:max(a - 2, 0)]), tuple(other.shape[:max(b - 2, 0)])
    if a == 3 and b == 3 and batch1[0] != batch2[0]:  # a batch of one that requires grad
        if batch1[0] == 1 and input.requires_grad:
            return matmul(_shape.squeeze(input, 0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, _shape.squeeze(other, 0))
    batch = broadcast_shapes(batch1, batch2)
    size = int(np.prod(batch))
    x = _shape.reshape(_shape.expand(input, batch + (n, m1)), size, n, m1)
    if b == 1:
        y = _shape.unsqueeze(_shape.reshape(_shape.expand(other, batch + (m2,)), size, m2), 2)
    else:
        y = _shape.reshape(_shape.expand(other, batch + (m2, p)), size, m2, p)
    out = bmm(x, y)
    if b == 1:
        out = _shape.squeeze(out, -1)
    shape = batch + ((n,) if a > 1 else ()) + ((p,) if b > 1 else ())
    return _shape._unsafe_view(out, shape, out.shape)


# --------------------------------------------------------------------------- contractions


def _permute(input, dims):
    return _shape.permute(input, tuple(dims))


def _sum_keep(t, dims):
    return _reduction.sum(t, tuple(dims), True)


def _sumproduct_pair(left, right, sum_dims):
    """``(left * right).sum(sum_dims, keepdim=True)`` as one ``bmm``, as PyTorch computes it.

    Both operands have the same number of dims (missing ones are 1). Dims are split into those
    kept by both (``lro``), by one side (``lo``, ``ro``) and summed ones; each operand is
    permuted and flattened to a batch of matrices, multiplied, and the product viewed and
    permuted back.
    """
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = _sum_keep(left, (i,))
            elif sr:
                right = _sum_keep(right, (i,))
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] +
                [1] * len(sum_dims) + [right.shape[d] for d in ro])
    out_order = lro + lo + list(sum_dims) + ro
    left = _shape.reshape(_permute(left, out_order), lro_size, lo_size, sum_size)
    right = _shape.reshape(_permute(right, lro + list(sum_dims) + ro + lo),
                           lro_size, sum_size, ro_size)
    result = _shape.view(bmm(left, right), out_size)
    back = [0] * len(out_order)
    for position, d in enumerate(out_order):
        back[d] = position
    return _permute(result, back)


_ELLIPSIS = "..."


def _parse_lhs(lhs, n_ops):
    """Each operand's labels (letters, or ``...``), with PyTorch's errors."""
    labels = [[]]
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            op = len(labels) - 1
            if _ELLIPSIS in labels[-1]:
                raise RuntimeError(f"einsum(): found '.' for operand {op} for which an ellipsis "
                                   "was already found")
            if lhs[i:i + 3] != _ELLIPSIS:
                raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part of "
                                   "any ellipsis")
            labels[-1].append(_ELLIPSIS)
            i += 2
        elif c == ",":
            labels.append([])
            if len(labels) > n_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
        elif c != " ":
            if c not in string.ascii_letters:
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            labels[-1].append(c)
        i += 1
    if len(labels) != n_ops:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _parse_rhs(rhs, offset, counts, ell_ndim):
    """Output positions of labels (and where ``...`` starts), from the explicit output."""
    position, ell_index, has_ell = {}, None, False
    i, perm = 0, 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if has_ell:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if rhs[i:i + 3] != _ELLIPSIS:
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            ell_index, has_ell = perm, True
            perm += ell_ndim
            i += 2
        elif c != " ":
            if c not in string.ascii_letters:
                raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} "
                                   "in the equation string, subscripts must be in [a-zA-Z]")
            if not counts[c] or c in position:
                why = ("appears more than once in the output" if c in position else
                       "does not appear in the equation for any input operand")
                raise RuntimeError(f"einsum(): output subscript {c} {why}")
            position[c] = perm
            perm += 1
        i += 1
    return position, ell_index, perm


def _align(i, op, labels, position, ell_index, ell_ndim, n_dims, sizes, ell_sizes, counts):
    """Operand ``i`` with repeated labels diagonalised, missing ones unsqueezed, all permuted
    to the common order ``position``; records label sizes and how many operands have each."""
    perm = [-1] * n_dims
    dim = 0
    for label in labels:
        if label == _ELLIPSIS:
            covered = op.ndim - (len(labels) - 1)
            for j in range(ell_ndim - covered, ell_ndim):
                size = op.shape[dim]
                if size != 1:
                    if ell_sizes[j] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                            f"size {size} which does not broadcast with previously seen "
                            f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                    ell_sizes[j] = size
                    counts[ell_index + j] += 1
                perm[ell_index + j] = dim
                dim += 1
        elif perm[position[label]] == -1:
            size = op.shape[dim]
            if size != 1:
                if sizes.get(label, 1) not in (1, size):
                    raise RuntimeError(
                        f"einsum(): subscript {label} has size {size} for operand {i} which "
                        f"does not broadcast with previously seen size {sizes[label]}")
                sizes[label] = size
                counts[position[label]] += 1
            perm[position[label]] = dim
            dim += 1
        else:
            first = perm[position[label]]
            if op.shape[dim] != op.shape[first]:
                raise RuntimeError(
                    f"einsum(): subscript {label} is repeated for operand {i} but the sizes "
                    f"don't match, {op.shape[dim]} != {op.shape[first]}")
            op = _shape.movedim(diagonal(op, 0, first, dim), -1, first)
    for k, d in enumerate(perm):
        if d == -1:
            op = _shape.unsqueeze(op, dim)
            perm[k] = dim
            dim += 1
    return _permute(op, perm)


def einsum(*args):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``, implicit outputs, ``...``, repeated
    labels (``'ii->i'``), any number of operands, and the sublist form
    ``einsum(a, [0, 1], b, [1, 2])``. Operands are contracted left to right."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    return _einsum(equation, operands)


def _sublist_equation(args):
    def label(n):
        if n is Ellipsis:
            return _ELLIPSIS
        if 0 <= n < 52:
            return string.ascii_letters[(n + 26) % 52]
        raise ValueError("einsum(): subscript in subscript list is not within the valid "
                         "range [0, 52)")
    equation = ",".join("".join(label(n) for n in sub) for sub in args[1::2])
    if len(args) % 2:
        equation += "->" + "".join(label(n) for n in args[-1])
        return equation, list(args[:-1:2])
    return equation, list(args[::2])


def _einsum(equation, operands):
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    lhs, arrow, rhs = equation.partition("->")
    labels = _parse_lhs(lhs, len(operands))
    counts = Counter(lab for ls in labels for lab in ls if lab != _ELLIPSIS)
    ell_ndim = 0
    for i, (op, ls) in enumerate(zip(operands, labels)):
        n = len(ls) - (_ELLIPSIS in ls)
        if _ELLIPSIS in ls:
            ell_ndim = max(ell_ndim, op.ndim - n)
            if n > op.ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) "
                                   f"is more than the number of dimensions ({op.ndim}) for "
                                   f"operand {i}")
        elif n != op.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({op.ndim}) for operand {i} "
                               "and no ellipsis was given")
    # Common dim order: output dims first (labels in output order, or implicitly the labels
    # seen once, sorted), then the ones to sum out; '...' sits where the output puts it.
    if arrow:
        position, ell_index, out_ndim = _parse_rhs(rhs, len(lhs) + 2, counts, ell_ndim)
    else:
        once = sorted(lab for lab, n in counts.items() if n == 1)
        position = {lab: ell_ndim + k for k, lab in enumerate(once)}
        ell_index, out_ndim = 0, ell_ndim + len(once)
    n_dims = out_ndim
    if ell_index is None:
        ell_index, n_dims = n_dims, n_dims + ell_ndim
    for lab in sorted(counts):
        if lab not in position:
            position[lab] = n_dims
            n_dims += 1
    sizes, ell_sizes, dim_counts = {}, [1] * ell_ndim, [0] * n_dims
    ops = [_align(i, op, ls, position, ell_index, ell_ndim, n_dims, sizes, ell_sizes, dim_counts)
           for i, (op, ls) in enumerate(zip(operands, labels))]
    while len(ops) > 1:  # contract left to right; sum a dim once no other operand has it
        a, b = ops.pop(0), ops.pop(0)
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_ndim, n_dims):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = _sum_keep(a, a_sum)
        if b_sum:
            b = _sum_keep(b, b_sum)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))
    result = ops[0]
    if n_dims > out_ndim:
        if len(operands) > 1:
            return _shape.view(result, result.shape[:out_ndim])
        return _reduction.sum(result, tuple(range(out_ndim, n_dims)))
    return result


def tensordot(a, b, dims=2):
    """Contract ``dims`` (an int: the last ``dims`` of ``a`` with the first of ``b``; or two
    lists of dims) as one matrix product."""
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    else:
        dims = operator.index(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    return _tensordot(a, b, dims_a, dims_b)


def _tensordot(a, b, dims_a, dims_b):
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2 = a, b
    csize = 1
    for i, (da, db) in enumerate(zip(dims_a, dims_b)):
        da, db = _wrap_dim(da, a.ndim), _wrap_dim(db, b.ndim)
        dims_a[i], dims_b[i] = da, db
        s1, s2 = a.shape[da], b.shape[db]
        if s2 == 1:  # a broadcast dim is summed right away
            t1 = _reduction.sum(t1, da, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = _reduction.sum(t2, db, True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size "
                                   f"{s1} in dim {da} and second has size {s2} in dim {db}")
            csize *= s1
    _distinct(dims_a)
    _distinct(dims_b)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size1 = int(np.prod([t1.shape[d] for d in free_a]))
    size2 = int(np.prod([t2.shape[d] for d in free_b]))
    out_shape = [t1.shape[d] for d in free_a] + [t2.shape[d] for d in free_b]
    t1 = _permute(t1, free_a + dims_a)
    t2 = _permute(t2, dims_b + free_b)
    if size1 != 1 or size2 != 1:
        product = mm(_shape.reshape(t1, size1, csize), _shape.reshape(t2, csize, size2))
    elif t1.is_contiguous() and t2.is_contiguous():  # a full contraction is a dot product
        product = dot(_shape.reshape(t1, -1), _shape.reshape(t2, -1))
    else:
        product = _reduction.sum(_shape.squeeze(t1) * _shape.squeeze(t2), dtype=t1.dtype)
    return _shape.reshape(product, out_shape)


def _distinct(dims):
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)


def kron(input, other):
    """Kronecker product: every element of ``input`` times the whole of ``other``."""
    ndim = max(input.ndim, other.ndim)
    pad_a, pad_b = ndim - input.ndim, ndim - other.ndim
    shape_a, shape_b, shape = [], [], []
    for i in range(ndim):
        sa = input.shape[i - pad_a] if i >= pad_a else 1
        sb = other.shape[i - pad_b] if i >= pad_b else 1
        shape_a += [sa, 1]
        shape_b += [1, sb]
        shape.append(sa * sb)
    product = (_shape._unsafe_view(input, tuple(shape_a), input.shape) *
               _shape._unsafe_view(other, tuple(shape_b), other.shape))
    return _shape._unsafe_view(product, tuple(shape), product.shape)


# --------------------------------------------------------------------------- diagonals, triangles


def _writable_diagonal(xp, a, offset=0, axis1=0, axis2=1):
    """``xp.diagonal`` as a writable view (NumPy hands out read-only diagonals)."""
    d = xp.diagonal(a, offset, axis1, axis2)
    flags = getattr(d, "flags", None)
    if flags is not None and not getattr(flags, "writeable", True) and a.flags.writeable:
        d.flags.writeable = True
    return d


@defop("diagonal", n_in=1, jvp="linear")
def _diagonal(xp, input, offset, dim1, dim2, shape):
    return _writable_diagonal(xp, input, offset, dim1, dim2)


_diagonal.defvjp(lambda xp, g, ans, input, offset, dim1, dim2, shape:
                 xp.diagonal_backward(g, shape, offset, dim1, dim2))

# ``diag`` of a matrix copies the diagonal; PyTorch names that node DiagonalBackward0_copy.
_diagonal_copy = defop("diagonal", n_in=1, jvp="linear")(
    lambda xp, input, offset, dim1, dim2, shape: xp.diagonal(input, offset, dim1, dim2).copy())
_diagonal_copy.defvjp(*_diagonal.rules)
_diagonal_copy.node_cls.__name__ = _diagonal_copy.node_cls.__qualname__ = "DiagonalBackward0_copy"


@defop("diagonal_backward", n_in=1, jvp="linear")
def _diagonal_backward(xp, grad, shape, offset, dim1, dim2):
    """Zeros of ``shape`` with ``grad`` on the diagonal: the derivative of ``diagonal``."""
    out = xp.zeros(shape, dtype=grad.dtype)
    _writable_diagonal(xp, out, offset, dim1, dim2)[...] = grad
    return out


_diagonal_backward.defvjp(lambda xp, gg, ans, grad, shape, offset, dim1, dim2:
                          xp.diagonal(gg, offset, dim1, dim2))


@defop("diag_embed", n_in=1, jvp="linear")
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


def _diagonal_dims(ndim, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the (``dim1``, ``dim2``) planes, as a view, appended as the
    last dim (``offset > 0``: above the main diagonal)."""
    d1, d2 = _diagonal_dims(input.ndim, dim1, dim2)
    out = _diagonal(input, offset, d1, d2, input.shape)
    return as_view(out, input, lambda xp, a: xp.diagonal_view(a, offset, d1, d2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``, ``dim2`` of the result) with the last dim of ``input`` on
    their diagonal ``offset``; zeros elsewhere."""
    d1, d2 = _diagonal_dims(input.ndim + 1, dim1, dim2)
    return _diag_embed(input, offset, d1, d2)


def diag(input, diagonal=0):
    """A vector -> the matrix with it on diagonal ``diagonal``; a matrix -> that diagonal."""
    if input.ndim == 1:
        return _diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal_copy(input, diagonal, 0, 1, input.shape)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@defop("trace", n_in=1, jvp="linear")
def _trace(xp, input, shape):
    out = xp.trace(input)
    return out.astype(np.int64) if out.dtype.kind in "iub" else out


_trace.defvjp(lambda xp, g, ans, input, shape: xp.diagonal_backward(g, shape, 0, 0, 1))


@autocast_op("trace")
def trace(input):
    """Sum of the main diagonal of a matrix (integers sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.category == 0:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _trace(input, input.shape)


@defop("tril", n_in=1, jvp="linear")
def _tril(xp, input, diagonal):
    return xp.tril(input, diagonal)


_tril.defvjp(lambda xp, g, ans, input, diagonal: xp.tril(g, diagonal))


@defop("triu", n_in=1, jvp="linear")
def _triu(xp, input, diagonal):
    return xp.triu(input, diagonal)


_triu.defvjp(lambda xp, g, ans, input, diagonal: xp.triu(g, diagonal))


def tril(input, diagonal=0):
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims."""
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _tril(input, diagonal)


def triu(input, diagonal=0):
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _triu(input, diagonal)


_xp.register_extra("diagonal_view", _writable_diagonal, diagonal)
_xp.register_extra("diagonal_backward", _diagonal_backward.forward, _diagonal_backward)
_xp.register_extra("diag_embed", lambda xp, v, offset=0, dim1=-2, dim2=-1: _diag_embed.forward(
    xp, v, offset, dim1 % (v.ndim + 1), dim2 % (v.ndim + 1)), diag_embed)


# --------------------------------------------------------------------------- linalg: checks, LU


class _LinAlgError(RuntimeError):
    """A linear-algebra failure on well-formed input: a singular matrix, one that is not
    positive-definite... (``torch.linalg.LinAlgError``)."""


def _check_matrix(A, name, square=True):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _check_floating(A, name):
    if A.dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_word(A)}")
    if A.dtype.itemsize < 4:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_word(A)}")


def _lu(a):
    """LU factors with partial pivoting of a batch of matrices, computed like LAPACK's unblocked
    ``getrf`` (which NumPy does not expose): ``(lu, perm, sign, info)`` with
    ``a[..., perm, :] = L @ U``, ``sign`` the permutation's sign and ``info`` the (1-based)
    first zero pivot, 0 if none. Used where LAPACK's own factors show through: error messages,
    exact determinants, and results at singular matrices."""
    n = a.shape[-1]
    lu = np.array(a).reshape(-1, n, n)
    b = np.arange(len(lu))
    perm = np.broadcast_to(np.arange(n), lu.shape[:2]).copy()
    sign = np.ones(len(lu), dtype=lu.dtype)
    info = np.zeros(len(lu), dtype=np.int64)
    for k in range(n):
        p = k + np.argmax(np.abs(lu[:, k:, k]), axis=1)
        zero = lu[b, p, k] == 0  # nothing to pivot on: LAPACK notes it and moves on
        info[(info == 0) & zero] = k + 1
        p = np.where(zero, k, p)
        sign[p != k] *= -1
        for arr in (lu, perm):
            row = arr[b, k].copy()
            arr[b, k] = arr[b, p]
            arr[b, p] = row
        lu[:, k + 1:, k] /= np.where(zero, 1, lu[:, k, k])[:, None]
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, k, None, k + 1:]
    batch = a.shape[:-2]
    return lu.reshape(a.shape), perm.reshape(batch + (n,)), sign.reshape(batch), \
        info.reshape(batch)


def _zero_pivot(a):
    return int(_lu(a)[3])


def _lu_det(a):
    """Determinants as PyTorch computes them: the product of the pivots of ``a^T``'s LU factors
    (NumPy's ``det`` goes through logarithms and misses exact results: ``-2.0000000000000004``
    for ``[[1, 2], [3, 4]]``)."""
    lu, _, sign, _ = _lu(np.swapaxes(a, -1, -2))
    return np.prod(np.diagonal(lu, 0, -2, -1), axis=-1) * sign


def _lu_solve_transposed(a, b, nudge=False):
    """``a^{-T} b`` for one matrix, with the LU factors of ``a^T`` and plain substitution as in
    LAPACK's ``getrs``: at a singular ``a`` this gives the infinities and NaNs PyTorch gives, or
    with ``nudge`` (zero pivots replaced by eps, as PyTorch's ``det`` backward does) the
    signed zeros it gives."""
    lu, perm, _, _ = _lu(a.T)
    if nudge:
        pivots = _writable_diagonal(np, lu, 0, -2, -1)
        pivots[pivots == 0] = np.finfo(lu.dtype).eps
    x = np.array(b[perm], dtype=lu.dtype)
    for k in range(len(perm)):  # the unit lower triangle
        x[k + 1:] -= lu[k + 1:, k, None] * x[k]
    for k in range(len(perm) - 1, -1, -1):  # the upper one
        x[k] /= lu[k, k]
        x[:k] -= lu[:k, k, None] * x[k]
    return x


def _per_matrix(xp, values, A, mask, fn):
    """``values`` (one per matrix of ``A``) with ``fn(matrix, value)`` where ``mask`` holds,
    computed on the host."""
    host = (lambda x: x) if isinstance(A, np.ndarray) else (lambda x: x.get())
    out = np.array(host(values))
    flat = out.reshape((-1,) + out.shape[A.ndim - 2:])
    mats = host(A).reshape((-1,) + A.shape[-2:])
    for i in np.flatnonzero(host(mask)):
        flat[i] = fn(mats[i], flat[i])
    return out if isinstance(A, np.ndarray) else xp.asarray(out)


def _solve_singular(xp, A, rhs, singular, nudge):
    """``A^{-T} rhs``: by LAPACK where ``A`` is regular, by ember's own LU (and its infinities)
    where it is ``singular``."""
    eye = xp.broadcast_to(xp.eye(A.shape[-1], dtype=A.dtype), A.shape)
    regular = xp.linalg_solve(_mT(xp, xp.where(singular[..., None, None], eye, A)), rhs)
    at_singular = _per_matrix(xp, rhs, A, singular,
                              lambda a, b: _lu_solve_transposed(a, b, nudge))
    return xp.where(singular[..., None, None], at_singular, regular)


def _not_positive_definite(a):
    """LAPACK ``potrf``'s ``info``: the order of the first leading minor that is not
    positive-definite, 0 if there is none."""
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _failure(name, A, info, message):
    """The error for the first matrix of ``A`` that ``info`` finds failing (PyTorch names the
    batch element of batched inputs)."""
    A = A if isinstance(A, np.ndarray) else A.get()
    infos = [info(matrix) for matrix in A.reshape((-1,) + A.shape[-2:])]
    failing = [b for b, i in enumerate(infos) if i]
    # Without a failing one, LAPACK met a zero that our factors missed by a rounding.
    batch, position = (failing[0], infos[failing[0]]) if failing else (0, A.shape[-1])
    prefix = f"(Batch element {batch}): " if A.ndim > 2 else ""
    return _LinAlgError(f"{name}: {prefix}{message.format(position)}")


_SINGULAR = ("The diagonal element {} is zero, the inversion could not be completed because "
             "the input matrix is singular.")
_SOLVE_SINGULAR = "The solver failed because the input matrix is singular."
_NOT_PD = ("The factorization could not be completed because the input is not positive-definite "
           "(the leading minor of order {} is not positive-definite).")


def _eps(x):
    return float(np.finfo(getattr(x.dtype, "np", x.dtype)).eps)


def _diagonal_rhs(xp, d, n):
    """``d[..., None, None] * I_n`` as a batch of diagonal matrices."""
    return xp.diag_embed(xp.broadcast_to(d[..., None], tuple(d.shape) + (n,)))


def _masked(xp, mask, if_true, if_false, *args):
    """``if_true`` on the batch elements where ``mask`` holds, ``if_false`` on the others,
    reassembled (each runs only on its own elements, as PyTorch's ``masked_fmap``)."""
    hits = int(xp.sum(mask))
    if hits == int(np.prod(mask.shape)):
        return if_true(*args)
    if hits == 0:
        return if_false(*args)
    out = xp.zeros_like(args[0])
    out[mask] = if_true(*(a[mask] for a in args))
    out[~mask] = if_false(*(a[~mask] for a in args))
    return out


# --------------------------------------------------------------------------- inv, det, slogdet


@defop("linalg_inv_ex", n_in=1, jvp="transpose")
def _inv(xp, A):
    try:
        return xp.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise _failure("linalg.inv", A, _zero_pivot, _SINGULAR) from None


_inv.defvjp(lambda xp, g, ans, A: -xp.matmul(_mT(xp, ans), xp.matmul(g, _mT(xp, ans))))


@autocast_op("linalg_inv")
def linalg_inv(A):
    """The inverse of a (batch of) square matrices."""
    _check_matrix(A, "linalg.inv")
    _check_floating(A, "linalg.inv")
    return _inv(A)


# Up to this size determinants come from ember's own LU factors (exact where PyTorch's are);
# beyond, from LAPACK through NumPy, whose Python-free factorisation is then much faster.
_EXACT_DET_MAX = 16


@defop("linalg_det", n_in=1, jvp="transpose")
def _det(xp, A):
    if isinstance(A, np.ndarray) and A.shape[-1] <= _EXACT_DET_MAX:
        return _lu_det(A)
    return xp.linalg.det(A)


def _det_backward(xp, g, ans, A):
    """``g * det(A) * A^{-T}``: by a solve, and at singular matrices as PyTorch does.

    A plain backward nudges the zero pivots of the LU factors, so exactly singular matrices
    get a zero gradient. A recorded one (``create_graph``) must stay differentiable: it solves
    where ``det`` is clearly non-zero and elsewhere uses the adjugate from an SVD.
    """
    d = g * ans
    n = A.shape[-1]
    if not _recording(xp):
        singular = xp.broadcast_to(ans == 0, d.shape)
        if not xp.any(singular):
            return xp.linalg_solve(_mT(xp, A), _diagonal_rhs(xp, d, n))
        return _solve_singular(xp, A, _diagonal_rhs(xp, d, n), singular, nudge=True)
    singular = xp.abs(ans) < 100 * _eps(A)
    return _masked(xp, singular, lambda A, d, g: _det_adjugate(xp, A, g),
                   lambda A, d, g: xp.linalg_solve(_mT(xp, A), _diagonal_rhs(xp, d, n)),
                   A, d, g)


def _det_adjugate(xp, A, g):
    """``g * adj(A)^T`` from ``A = U diag(S) Vh``, defined for singular ``A`` too."""
    U, S, Vh = xp.linalg_svd(A)
    alpha = xp.linalg_det(U) * xp.linalg_det(Vh) * g
    k = S.shape[-1]
    columns = [S[..., j] for j in range(k)]
    others = []  # the product of all singular values but the i-th
    for i in range(k):
        p = xp.ones_like(columns[0])
        for j in range(k):
            if j != i:
                p = p * columns[j]
        others.append(p)
    D = alpha[..., None] * xp.stack(others, axis=-1)
    return xp.matmul(U * D[..., None, :], Vh)


_det.defvjp(_det_backward)


def linalg_det(A):
    """The determinant of a (batch of) square matrices."""
    _check_matrix(A, "linalg.det")
    _check_floating(A, "linalg.det")
    return _det(A)


@defop("linalg_slogdet", n_in=1, nout=2, jvp="transpose")
def _slogdet(xp, A):
    sign, logabsdet = xp.linalg.slogdet(A)
    if xp.any(sign == 0):
        sign = _per_matrix(xp, sign, A, sign == 0, lambda a, _: np.copysign(0, _lu_det(a)))
    return sign, logabsdet


def _slogdet_backward(xp, g, ans, A):
    """``g_logabsdet * A^{-T}`` (the sign's gradient is zero for real matrices).

    There is no derivative at singular matrices: a recorded backward raises there, as
    PyTorch's does; a plain one gives the infinities of PyTorch's LU solve.
    """
    rhs = _diagonal_rhs(xp, g[1], A.shape[-1])
    singular = ans[0] == 0
    if _recording(xp) or not xp.any(singular):
        return xp.linalg_solve(_mT(xp, A), rhs)
    return _solve_singular(xp, A, rhs, singular, nudge=False)


_slogdet.defvjp(_slogdet_backward)
_slogdet.saved_outputs = (0,)  # the sign (derivatives.yaml)
_SlogdetResult = _reduction.return_type("linalg_slogdet", ("sign", "logabsdet"))


def linalg_slogdet(A):
    """``(sign, log|det|)`` of a (batch of) square matrices; sign 0 and -inf when singular."""
    _check_matrix(A, "linalg.slogdet")
    _check_floating(A, "linalg.slogdet")
    return _SlogdetResult(_slogdet(A))


# --------------------------------------------------------------------------- solvers


def _vector_rhs(A_shape, B_shape):
    """Whether ``B`` is a (batch of) vectors for ``solve``: 1-d, or ``A``'s shape less one dim."""
    return len(B_shape) == 1 or (len(B_shape) == len(A_shape) - 1 and
                                 tuple(B_shape) == tuple(A_shape[:-1]))


def _solve_matrices(xp, A, B, left):
    """``A^{-1} B`` (``left``) or ``B A^{-1}``, for batches of matrices ``B``."""
    if left:
        return xp.linalg.solve(A, B)
    return _mT(xp, xp.linalg.solve(_mT(xp, A), _mT(xp, B)))


def _solve_raw(xp, A, B, left=True):
    if _vector_rhs(A.shape, B.shape):
        return _solve_matrices(xp, A, B[..., None], left)[..., 0]
    return _solve_matrices(xp, A, B, left)


@defop("linalg_solve_ex", n_in=2, jvp="transpose")
def _solve(xp, A, B, left):
    try:
        return _solve_raw(xp, A, B, left)
    except np.linalg.LinAlgError:
        raise _failure("torch.linalg.solve", A, _zero_pivot, _SOLVE_SINGULAR) from None


def _solve_backward_A(xp, g, ans, A, B, left):
    gB = xp.linalg_solve(_mT(xp, A), g, left=left)
    if _vector_rhs(A.shape, ans.shape):
        return -(gB[..., :, None] * ans[..., None, :])
    return -xp.matmul(gB, _mT(xp, ans)) if left else -xp.matmul(_mT(xp, ans), gB)


_solve.defvjp(_solve_backward_A,
              lambda xp, g, ans, A, B, left: xp.linalg_solve(_mT(xp, A), g, left=left))


@autocast_op("linalg_solve")
def linalg_solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (or ``X A = B`` with ``left=False``); ``B`` may be a
    (batch of) vectors; batch dims broadcast."""
    _check_matrix(A, "linalg.solve")
    _check_floating(A, "linalg.solve")
    if A.dtype != B.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_word(A)} and B of type {_word(B)} instead")
    vector = _vector_rhs(A.shape, B.shape)
    if B.ndim == 0 or (B.ndim < 2 and not vector):
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    rows, cols = (B.shape[-1], 1) if vector else (B.shape[-2], B.shape[-1])
    if (left and rows != A.shape[-1]) or (not left and (1 if vector else cols) != A.shape[-1]):
        n = A.shape[-1]
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {rows}x{cols})")
    from .._broadcast import broadcast_shapes
    matrix = 1 if vector else 2
    broadcast_shapes(tuple(B.shape[:B.ndim - matrix]), tuple(A.shape[:-2]))
    return _solve(A, B, left)


def _triangle(xp, A, upper, unitriangular):
    T = xp.triu(A) if upper else xp.tril(A)
    if unitriangular:
        T = T.copy()
        _writable_diagonal(xp, T, 0, -2, -1)[...] = 1
    return T


def _substitute(xp, T, B, upper):
    """``T^{-1} B`` by substitution, for triangular ``T`` that LU refuses (a zero diagonal):
    the divisions by zero give infinities as LAPACK's ``trsm`` does."""
    X = xp.zeros(xp.broadcast_shapes(T.shape[:-2], B.shape[:-2]) + B.shape[-2:],
                 dtype=np.result_type(T.dtype, B.dtype))
    n = T.shape[-1]
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        rest = xp.matmul(T[..., i:i + 1, :], X)[..., 0, :]
        X[..., i, :] = (B[..., i, :] - rest) / T[..., i, i, None]
    return X


def _solve_triangular_raw(xp, A, B, upper, left=True, unitriangular=False):
    T = _triangle(xp, A, upper, unitriangular)
    if not left:  # X T = B  <=>  T^T X^T = B^T, and T^T is triangular the other way
        return _mT(xp, _solve_triangular_raw(xp, _mT(xp, T), _mT(xp, B), not upper))
    try:
        return xp.linalg.solve(T, B)
    except np.linalg.LinAlgError:
        return _substitute(xp, T, B, upper)


@defop("linalg_solve_triangular", n_in=2, jvp="transpose")
def _solve_triangular(xp, A, B, upper, left, unitriangular):
    return _solve_triangular_raw(xp, A, B, upper, left, unitriangular)


def _solve_triangular_gB(xp, g, A, upper, left, unitriangular):
    return xp.linalg_solve_triangular(_mT(xp, A), g, upper=not upper, left=left,
                                      unitriangular=unitriangular)


def _solve_triangular_gA(xp, g, ans, A, B, upper, left, unitriangular):
    gB = _solve_triangular_gB(xp, g, A, upper, left, unitriangular)
    gA = -xp.matmul(gB, _mT(xp, ans)) if left else -xp.matmul(_mT(xp, ans), gB)
    return xp.triu(gA, int(unitriangular)) if upper else xp.tril(gA, -int(unitriangular))


_solve_triangular.defvjp(
    _solve_triangular_gA,
    lambda xp, g, ans, A, B, upper, left, unitriangular:
        _solve_triangular_gB(xp, g, A, upper, left, unitriangular))


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The solution of ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``; only
    its ``upper`` or lower triangle is read (with ones on the diagonal if ``unitriangular``)."""
    name = "linalg.solve_triangular"
    _check_floating(A, name)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_matrix(A, name)
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of "
                           f"type {_word(A)} and B of type {_word(B)} instead")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return _solve_triangular(A, B, upper, left, unitriangular)


# --------------------------------------------------------------------------- factorizations


@defop("linalg_cholesky_ex", n_in=1, jvp="transpose")
def _cholesky(xp, A, upper):
    try:
        L = xp.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise _failure("linalg.cholesky", A, _not_positive_definite, _NOT_PD) from None
    return _mT(xp, L).copy() if upper else L


def _cholesky_backward(xp, g, ans, A, upper):
    """PyTorch's ``cholesky_backward`` (Murray, arXiv:1602.07527): with ``phi(X)`` the lower
    triangle of ``X`` with its diagonal halved, ``gA = L^{-T} sym(phi(L^T gL)) L^{-1} / 2``."""
    L, gL = (_mT(xp, ans), _mT(xp, g)) if upper else (ans, g)
    gA = xp.tril(xp.matmul(_mT(xp, L), gL))
    gA = 0.5 * (gA + _mT(xp, xp.tril(gA, -1)))
    gA = xp.linalg_solve_triangular(_mT(xp, L), gA, upper=True)
    return xp.linalg_solve_triangular(L, gA, upper=False, left=False)


_cholesky.defvjp(_cholesky_backward)


@autocast_op("linalg_cholesky")
def linalg_cholesky(A, *, upper=False):
    """The lower triangular ``L`` with ``A = L L^T`` (``upper=True``: ``U = L^T``) of a
    symmetric positive-definite matrix."""
    _check_matrix(A, "linalg.cholesky")
    _check_floating(A, "linalg.cholesky")
    return _cholesky(A, upper)


@defop("linalg_qr", n_in=1, nout=2, jvp="transpose")
def _qr(xp, A, mode):
    if mode == "r":
        return xp.zeros((0,), dtype=A.dtype), xp.linalg.qr(A, mode="r")
    Q, R = xp.linalg.qr(A, mode=mode)
    return Q, R


def _qr_backward(xp, g, ans, A, mode):
    """PyTorch's ``linalg_qr_backward``: for ``m >= n``,
    ``gA = (gQ + Q copyltu(triu(gR R^T - Q^T gQ))) R^{-T}``; wide matrices add the part of
    ``A`` beyond the first ``m`` columns."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    (Q, R), (gQ, gR) = ans, g
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    gA = xp.matmul(gR, _mT(xp, R)) - xp.matmul(_mT(xp, Q), gQ)
    if m >= n:
        gA = xp.matmul(Q, xp.triu(gA) + _mT(xp, xp.triu(gA, 1))) + gQ
        return xp.linalg_solve_triangular(_mT(xp, R), gA, upper=False, left=False)
    gA = xp.matmul(Q, xp.tril(_mT(xp, gA) - gA))
    gA = xp.linalg_solve_triangular(_mT(xp, R[..., :m]), gA, upper=False, left=False)
    return xp.concat([gA, xp.zeros_like(R[..., m:])], axis=-1) + xp.matmul(Q, gR)


_qr.defvjp(_qr_backward)
_QrResult = _reduction.return_type("linalg_qr", ("Q", "R"))


@autocast_op("linalg_qr")
def linalg_qr(A, mode="reduced"):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns and ``R`` upper triangular;
    ``mode`` 'reduced', 'complete', or 'r' (``R`` only; ``Q`` is empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _check_matrix(A, "linalg.qr", square=False)
    _check_floating(A, "linalg.qr")
    return _QrResult(_qr(A, mode))


@defop("linalg_eigh", n_in=1, nout=2, jvp="transpose")
def _eigh(xp, A, UPLO):
    L, V = xp.linalg.eigh(A, UPLO=UPLO)
    return L, V


def _eigh_backward(xp, g, ans, A, UPLO):
    """PyTorch's ``linalg_eig_backward`` for symmetric matrices:
    ``gA = V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i``."""
    (L, V), (gL, gV) = ans, g
    if _absent(xp, gV):  # eigenvalues only: no division by eigenvalue gaps
        return xp.matmul(V * gL[..., None, :], _mT(xp, V))
    VtgV = xp.matmul(_mT(xp, V), gV)
    VtgV = 0.5 * (VtgV - _mT(xp, VtgV))
    E = L[..., None, :] - L[..., :, None] + xp.diag_embed(xp.ones_like(L))
    return xp.matmul(V, xp.matmul(VtgV / E + xp.diag_embed(gL), _mT(xp, V)))


_eigh.defvjp(_eigh_backward)
_EighResult = _reduction.return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


def _check_uplo(UPLO):
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


@autocast_op("linalg_eigh")
def linalg_eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix, read from
    its lower (``UPLO='L'``) or upper triangle."""
    _check_matrix(A, "linalg.eigh")
    _check_floating(A, "linalg.eigh")
    return _EighResult(_eigh(A, _check_uplo(UPLO)))


@autocast_op("linalg_eigvalsh")
def linalg_eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric matrix."""
    _check_matrix(A, "linalg.eigh")
    _check_floating(A, "linalg.eigh")
    return _eigh(A, _check_uplo(UPLO))[0]


@defop("linalg_svd", n_in=1, nout=3, jvp="transpose")
def _svd(xp, A, full_matrices):
    U, S, Vh = xp.linalg.svd(A, full_matrices=full_matrices)
    return U, S, Vh


def _svd_backward(xp, g, ans, A, full_matrices):
    """PyTorch's ``svd_backward`` for real matrices (distinct singular values; full rank when
    rectangular). With ``skew(X) = X - X^T`` and ``E_jk = S_k^2 - S_j^2``:
    ``gA = U [(skew(U^T gU) / E) S + S (skew(V^T gV) / E) + diag(gS)] V^T``, plus the parts
    of ``gU`` (tall) or ``gVh`` (wide) outside the span of ``U`` or ``V``."""
    (U, S, Vh), (gU, gS, gVh) = ans, g
    k = S.shape[-1]
    if full_matrices:  # only the first k singular vectors are determined by A
        U, Vh, gU, gVh = U[..., :k], Vh[..., :k, :], gU[..., :k], gVh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    use_U, use_V = not _absent(xp, gU), not _absent(xp, gVh)
    if not (use_U or use_V):  # singular values only (svdvals, norms)
        return (xp.matmul(U, gS[..., :, None] * Vh) if m >= n else
                xp.matmul(U * gS[..., None, :], Vh))
    S2 = S * S
    E = S2[..., None, :] - S2[..., :, None] + xp.diag_embed(xp.ones_like(S))
    if use_U:
        UtgU = xp.matmul(_mT(xp, U), gU)
        UtgU = UtgU - _mT(xp, UtgU)
    if use_V:
        VtgV = xp.matmul(Vh, _mT(xp, gVh))
        VtgV = VtgV - _mT(xp, VtgV)
    if use_U and use_V:
        inner = (UtgU * S[..., None, :] + S[..., :, None] * VtgV) / E
    elif use_U:
        inner = (UtgU / E) * S[..., None, :]
    else:
        inner = S[..., :, None] * (VtgV / E)
    inner = inner + xp.diag_embed(gS)
    if m > n and use_U:
        gUSinv = gU / S[..., None, :]
        gA = xp.matmul(U, inner) + gUSinv - xp.matmul(U, xp.matmul(_mT(xp, U), gUSinv))
        return xp.matmul(gA, Vh)
    if m < n and use_V:
        SinvgVh = gVh / S[..., :, None]
        gA = xp.matmul(inner, Vh) + SinvgVh - xp.matmul(xp.matmul(SinvgVh, _mT(xp, Vh)), Vh)
        return xp.matmul(U, gA)
    if m >= n:
        return xp.matmul(U, xp.matmul(inner, Vh))
    return xp.matmul(xp.matmul(U, inner), Vh)


_svd.defvjp(_svd_backward)
_SvdResult = _reduction.return_type("linalg_svd", ("U", "S", "Vh"))


@autocast_op("linalg_svd")
def linalg_svd(A, full_matrices=True, *, driver=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending; the singular
    vectors are defined up to sign, so differentiate only sign-invariant functions of them."""
    _check_matrix(A, "linalg.svd", square=False)
    _check_floating(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    return _SvdResult(_svd(A, full_matrices))


@autocast_op("linalg_svdvals")
def linalg_svdvals(A, *, driver=None):
    """The singular values of a (batch of) matrices, descending."""
    _check_matrix(A, "linalg.svd", square=False)
    _check_floating(A, "linalg.svd")
    return _svd(A, False)[1]


@defop("linalg_pinv", n_in=1, jvp="transpose")
def _pinv(xp, A, atol, rtol, hermitian):
    if hermitian:
        L, V = xp.linalg.eigh(A)
        magnitude = xp.abs(L)
        tol = xp.maximum(atol, rtol * xp.max(magnitude, axis=-1, keepdims=True))
        inverse = xp.where(magnitude > tol, 1 / xp.where(L == 0, 1, L), 0).astype(A.dtype)
        return xp.matmul(V * inverse[..., None, :], _mT(xp, V))
    U, S, Vh = xp.linalg.svd(A, full_matrices=False)
    tol = xp.maximum(atol, rtol * S[..., :1])
    inverse = xp.where(S > tol, 1 / xp.where(S == 0, 1, S), 0).astype(A.dtype)
    return xp.matmul(_mT(xp, Vh) * inverse[..., None, :], _mT(xp, U))


def _pinv_backward(xp, g, ans, A, atol, rtol, hermitian):
    """PyTorch's ``pinv_backward`` (the derivative of ``A^+`` where its rank is constant)."""
    P, Pt, gt = ans, _mT(xp, ans), _mT(xp, g)
    m, n = A.shape[-2], A.shape[-1]
    if m <= n:
        K = xp.matmul(gt, P)
        KPt = xp.matmul(K, Pt)
        return (-_mT(xp, xp.matmul(P, K)) + KPt - xp.matmul(xp.matmul(A, P), KPt) +
                xp.matmul(xp.matmul(Pt, P), gt - xp.matmul(K, A)))
    K = xp.matmul(P, gt)
    PtK = xp.matmul(Pt, K)
    return (-_mT(xp, xp.matmul(K, P)) + xp.matmul(xp.matmul(gt - xp.matmul(A, K), P), Pt) +
            PtK - xp.matmul(xp.matmul(PtK, P), A))


_pinv.defvjp(_pinv_backward)


def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (``hermitian``: the eigendecomposition);
    singular values below ``max(atol, rtol * largest)`` count as zero (``rtol`` defaults to
    ``eps * max(m, n)`` unless ``atol > 0`` is given)."""
    if A.ndim < 2 or A.dtype.category < 2 or A.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({_word(A)}{{{list(A.shape)}}}): expected a tensor with "
                           "2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    atol = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol = 0.0 if atol > 0 else _eps(A._data) * max(A.shape[-2:])
    return _pinv(A, atol, float(rtol), hermitian)


# --------------------------------------------------------------------------- powers, norms


def linalg_matrix_power(A, n):
    """``A`` multiplied by itself ``n`` times (``n < 0``: powers of the inverse), by repeated
    squaring; ``n = 0`` gives identity matrices."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError("linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_matrix(A, "linalg.matrix_power")
    if n == 0:
        out = _shape.clone(A)
        from .._creation import eye
        return out.copy_(eye(A.shape[-1], dtype=A.dtype, device=A.device))
    if n == 1:
        return _shape.clone(A)
    if n == -1:
        return linalg_inv(A)
    a = linalg_inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    square, result = None, None
    while n:  # binary powering, least significant bit first
        n, bit = divmod(n, 2)
        square = a if square is None else matmul(square, square)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


def _norm_order(ord):
    return ord if isinstance(ord, str) else f"{float(ord):g}"


def _matrix_norm_dims(A, dim, dtype, name="linalg.matrix_norm"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_word(A)}")
    if dtype is not None and dtype.category < 2:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dtype._legacy[:-6]}")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def _to_back(A, d0, d1, dtype):
    """``A`` (cast to ``dtype``) with dims ``d0``, ``d1`` moved last, and the way back."""
    order = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
    back = [order.index(d) for d in range(A.ndim)]
    if dtype is not None:
        A = A.to(dtype)
    return _permute(A, order), back


def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms over dims ``dim``: 'fro', 'nuc' (sum of singular values), 2 / -2 (largest /
    smallest singular value), 1 / -1 (max / min column sum of ``|A|``), inf / -inf (rows)."""
    inf = float("inf")
    supported = ord in ("fro", "nuc") if isinstance(ord, str) else abs(ord) in (1, 2, inf)
    if not supported:
        raise RuntimeError(f"linalg.matrix_norm: Order {_norm_order(ord)} not supported.")
    d0, d1 = _matrix_norm_dims(A, dim, dtype)
    if ord == "fro":
        return _reduction.vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord == "nuc" or abs(ord) == 2:
        permuted, back = _to_back(A, d0, d1, dtype)
        S = linalg_svdvals(permuted)
        result = (_reduction.sum(S, -1, keepdim) if ord == "nuc" else
                  (_reduction.amax if ord > 0 else _reduction.amin)(S, -1, keepdim))
        if keepdim:
            result = _permute(_shape.unsqueeze(result, -1), back)
        return result
    if abs(ord) == inf:  # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = _reduction.vector_norm(A, 1, (d0,), keepdim, dtype=dtype)
    return (_reduction.amax if ord > 0 else _reduction.amin)(sums, d1, keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (``dim`` an int, or 1-d input) or a matrix norm (``dim`` a pair, or 2-d
    input) of order ``ord``; without ``ord``, the 2-norm of all elements."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str) or ord is not None and (
            dim is not None and len(dim) == 2 or dim is None and A.ndim == 2):
        return linalg_matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return _reduction.vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# --------------------------------------------------------------------------- top-level aliases


def det(input):
    """The determinant (``torch.linalg.det``)."""
    return linalg_det(input)


@autocast_op("inverse")
def inverse(input):
    """The inverse (``torch.linalg.inv``)."""
    return linalg_inv(input)


def slogdet(input):
    """``(sign, log|det|)`` (``torch.linalg.slogdet``, as ``torch.return_types.slogdet``)."""
    _check_matrix(input, "linalg.slogdet")
    _check_floating(input, "linalg.slogdet")
    return _reduction.return_type("slogdet", ("sign", "logabsdet"))(_slogdet(input))


def logdet(input):
    """``log(det(input))``: NaN for a negative determinant, -inf for a singular matrix."""
    _check_matrix(input, "logdet")
    _check_floating(input, "logdet")
    sign, logabsdet = _slogdet(input)
    from .pointwise import where
    return where(sign == -1, float("nan"), logabsdet)


def matrix_power(input, n):
    """``input`` to the integer power ``n`` (``torch.linalg.matrix_power``)."""
    return linalg_matrix_power(input, n)


_xp.register_extra("linalg_solve", _solve_raw, linalg_solve)
_xp.register_extra("linalg_solve_triangular", _solve_triangular_raw, linalg_solve_triangular)
_xp.register_extra("linalg_svd", lambda xp, A, full_matrices=True: tuple(
    xp.linalg.svd(A, full_matrices=full_matrices)), linalg_svd)
_xp.register_extra("linalg_det", lambda xp, A: xp.linalg.det(A), linalg_det)


def _in_place(fn):
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
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


# --------------------------------------------------------------------------- cross, addr, inner


@defop("linalg_cross", promote=True, n_in=2, jvp="multilinear")
def _cross(xp, input, other, dim):
    return xp.cross(input, other, axis=dim)


_cross.defvjp(lambda xp, g, ans, input, other, dim: xp.linalg_cross(other, g, dim),
              lambda xp, g, ans, input, other, dim: xp.linalg_cross(g, input, dim))
_xp.register_extra("linalg_cross", _cross.forward, lambda input, other, dim:
                   _cross(input, other, dim))


def linalg_cross(input, other, *, dim=-1):
    """``torch.linalg.cross``: the cross product of 3-vectors along ``dim`` (broadcast)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = _broadcast_shapes(input.shape, other.shape)
    d = _wrap_dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    return _cross(input, other, d)


def cross(input, other, dim=None):
    """``torch.cross``: as ``linalg.cross``; without ``dim``, the first dim of size 3."""
    if dim is None:
        _errors.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release.")
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


@defop("addr", n_in=3, promote=True, jvp="transpose")
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


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``; ``input`` is ignored when ``beta`` is 0."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"{name} must be a 1-dimensional tensor, got {t.ndim}-D")
    _check_expandable(input, (vec1.shape[0], vec2.shape[0]))
    return _addr(input, vec1, vec2, beta, alpha)


def inner(input, other):
    """The sum of products over the last dims: ``input[..., k] * other[..., k]`` summed."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.ndim == other.ndim == 1:
        return _shape.view(dot(input, other), ())
    out = mm(_shape.reshape(input, -1, k), _shape.reshape(other, -1, k).t())
    return _shape.view(out, input.shape[:-1] + other.shape[:-1])


def diagflat(input, offset=0):
    """The matrix with ``input`` (flattened) on its diagonal ``offset``."""
    return _diag_embed(_shape.reshape(input, -1), offset, 0, 1)


# --------------------------------------------------------------------------- addbmm, cdist


@defop("addbmm", n_in=3, jvp="transpose")
def _addbmm(xp, input, batch1, batch2, beta, alpha):
    return _add_scaled(input, xp.sum(xp.matmul(batch1, batch2), axis=0), beta, alpha)


_addbmm.defvjp(
    lambda xp, g, ans, input, batch1, batch2, beta, alpha: _scaled(g, beta),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(xp.expand_dims(g, 0), _mT(xp, batch2)), alpha),
    lambda xp, g, ans, input, batch1, batch2, beta, alpha:
        _scaled(xp.matmul(_mT(xp, batch1), xp.expand_dims(g, 0)), alpha))


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
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(a)} "
                               f"and {_word(b)}")
    beta, alpha = _integral_scalars(input, beta, alpha)
    if _in_vmap(input, batch1, batch2):  # ops that batch: the product summed over its batch
        product = _scaled(_reduction.sum(matmul(batch1, batch2), 0), alpha)
        return product if beta == 0 else product + _scaled(input, beta)
    return _addbmm(input, batch1, batch2, beta, alpha)


def _in_vmap(*tensors):
    """Whether any tensor is batched by ``vmap``: ops without a batching rule of their own are
    then written with ops that have one (rather than run once per sample)."""
    return any(getattr(t, "_levels", None) for t in tensors)


def _pairwise_diff(xp, x1, x2):
    """``x1[..., i, :] - x2[..., j, :]`` at ``[..., i, j, :]``."""
    return xp.expand_dims(x1, -2) - xp.expand_dims(x2, -3)


def _cdist_forward(xp, x1, x2, p):
    diff = xp.abs(_pairwise_diff(xp, x1, x2))
    if p == 0:
        return xp.sum(diff != 0, axis=-1).astype(x1.dtype)
    if p == 1:
        return xp.sum(diff, axis=-1)
    if p == 2:
        return xp.sqrt(xp.sum(diff * diff, axis=-1))
    if p == float("inf"):
        return xp.max(diff, axis=-1) if diff.shape[-1] else xp.sum(diff, axis=-1)
    return xp.sum(diff ** p, axis=-1) ** (1 / p)


def _cdist_grad(xp, g, ans, x1, x2, p):
    """PyTorch's ``_cdist_backward``: the gradient for ``x1``, zero where a distance is zero
    (and, for ``p < 1``, where a coordinate difference is); at ``p = inf`` every coordinate
    that attains the maximum gets the whole gradient."""
    if p == 0:
        return xp.zeros_like(x1)
    diff = _pairwise_diff(xp, x1, x2)
    dist = xp.expand_dims(ans, -1)
    if p == 1:
        term = xp.sign(diff)
    elif p == float("inf"):
        term = xp.where(xp.abs(diff) == dist, xp.sign(diff), 0)
    else:
        zero = dist == 0
        safe = xp.where(zero, 1, dist)
        if p == 2:
            term = xp.where(zero, 0, diff / safe)
        elif p < 1:
            zero = zero | (diff == 0)
            abs_diff = xp.where(zero, 1, xp.abs(diff))
            term = xp.where(zero, 0, xp.sign(diff) * (abs_diff / safe) ** (p - 1))
        elif p < 2:
            term = xp.where(zero, 0, xp.sign(diff) * (xp.abs(diff) / safe) ** (p - 1))
        else:
            term = xp.where(zero, 0, diff * xp.abs(diff) ** (p - 2) / safe ** (p - 1))
    return xp.sum(xp.expand_dims(g, -1) * term, axis=-2)


@defop("cdist", n_in=2, jvp="transpose")
def _cdist(xp, x1, x2, p):
    return _cdist_forward(xp, x1, x2, p)


_cdist.defvjp(lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, g, ans, x1, x2, p),
              lambda xp, g, ans, x1, x2, p: _cdist_grad(xp, _mT(xp, g), _mT(xp, ans), x2, x1, p))


@defop("euclidean_dist", n_in=2, jvp="transpose")
def _euclidean_dist(xp, x1, x2):
    return _cdist_forward(xp, x1, x2, 2)


_euclidean_dist.defvjp(
    lambda xp, g, ans, x1, x2: _cdist_grad(xp, g, ans, x1, x2, 2),
    lambda xp, g, ans, x1, x2: _cdist_grad(xp, _mT(xp, g), _mT(xp, ans), x2, x1, 2))

def _cdist_composite(x1, x2, p):
    """``cdist`` from ops that batch, with the same first derivatives: the vector norm of the
    differences, except that at ``p = inf`` every tied maximum gets the whole gradient."""
    diff = _shape.unsqueeze(x1, -2) - _shape.unsqueeze(x2, -3)
    if p != float("inf"):
        return _reduction.vector_norm(diff, p, -1)
    a = diff.abs()
    top = _reduction.amax(a.detach(), -1, keepdim=True)
    return _shape.squeeze(top + _reduction.sum((a == top) * (a - a.detach()), -1,
                                               keepdim=True), -1)


_CDIST_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


@autocast_op("cdist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """Distances between the rows of ``x1`` and of ``x2`` (batched over leading dims) in the
    ``p``-norm. As in PyTorch, ``p = 2`` on more than 25 rows (or with
    ``'use_mm_for_euclid_dist'``) records ``EuclideanDistBackward0``, computed the direct way
    (PyTorch's matrix-product form loses digits to cancellation)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not _dtypes.is_floating(t._data.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_word(t)}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_word(x1)} but found {_word(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = _broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    r1, r2 = x1.shape[-2], x2.shape[-2]
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in _CDIST_MODES[:2] and (r1 > 25 or r2 > 25)))
    if _in_vmap(x1, x2):
        return _cdist_composite(x1, x2, float(p))
    if not mm:
        return _cdist(x1, x2, float(p))
    if batch:
        n = int(np.prod(batch))
        x1 = _shape.reshape(_shape.expand(x1, batch + tuple(x1.shape[-2:])), (n, r1, -1))
        x2 = _shape.reshape(_shape.expand(x2, batch + tuple(x2.shape[-2:])), (n, r2, -1))
    return _shape.view(_euclidean_dist(x1, x2), batch + (r1, r2))


# --------------------------------------------------------------------------- the family's surface
__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmv",
           "baddbmm", "einsum", "tensordot", "kron", "trace", "diag", "diagonal", "diag_embed",
           "tril", "triu", "det", "inverse", "slogdet", "logdet", "matrix_power", "cross",
           "addr", "inner", "diagflat", "addbmm", "cdist"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("einsum", "tensordot", "cdist")}
METHODS.update({name + "_": _in_place(globals()[name])
                for name in ("addmm", "addmv", "baddbmm", "addr", "addbmm")})
INPLACE = ("tril", "triu")
ARRAY_API = {}
