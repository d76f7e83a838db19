"""Matrix products: the ops ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot`` and ``linalg_cross``,
each with its rules and its public wrapper, and the composites PyTorch builds from them, step
for step so that graphs and grad_fn names match: ``matmul``'s dispatch, ``outer``/``ger``,
``inner``, ``matrix_power``, ``linalg.multi_dot`` and ``linalg.vecdot``. The products that
add into an input (``addmm``...) are in ``addmm.py``; contractions (``einsum``, ``tensordot``,
``kron``) in ``einsum.py``.
"""
from __future__ import annotations

import numpy as np

from ... import _dtypes, _errors, _xp
from ..._broadcast import broadcast_shapes as _broadcast_shapes
from ..._creation import eye
from ..._tensor import Tensor, _wrap_dim
from .. import batching
from .. import shape as _shape
from ..autocast import autocast_op
from ..operands import _check_tensor
from ..registry import defop, public
from ..shape.views import _squeeze_matmul, _unsafe_view
from ._common import _check_matrix, _mT, _recording
from .solvers import linalg_inv


def _matmul(xp, a, b):
    """``xp.matmul(a, b)``, but ``np.dot`` (the same product) for two NumPy matrices of inner
    dimension 1: NumPy 2's matmul leaves BLAS there, as in a batch of one's weight gradient
    (an outer product), and is then 5 to 10 times slower. Elsewhere matmul is the faster of
    the two (OpenBLAS, float32, 1 thread: a Linear's (512, 192) @ (192, 64).T 70 -> 55 us,
    the input gradient 78 -> 55 us; never slower, from 4x3 to 1024x1024)."""
    if xp is _xp.NUMPY and a.ndim == 2 and b.ndim == 2:
        if a.shape[0] > 1 and a.strides[0] == 0:
            return _repeated(xp, _matmul(xp, a[:1], b), a.shape[0])
        if a.shape[1] == 1:
            return np.dot(a, b)
    return xp.matmul(a, b)


def _repeated(xp, row, n):
    """``row`` (a leading dim of 1) repeated ``n`` times, as a new array: the product of an
    operand whose entries along that dim are all one (stride 0: an expand, as jacfwd's primal
    is per basis vector) computed once instead of ``n`` times."""
    return xp.broadcast_to(row, (n,) + tuple(row.shape[1:])).copy()


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


def _no_bool(kernel, t, size=1):
    """PyTorch's products have no kernel for bool tensors (``size``: the result's: an empty
    one is made without calling the kernel)."""
    if t.dtype is _dtypes.bool and size:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


@defop("mm", n_in=2, promote=True, jvp="multilinear", batch="matmul")
def _mm(xp, input, mat2, column_major):
    """``column_major``: whether each matrix is stored column by column (its gradient will be)."""
    return _matmul(xp, input, mat2)


_mm.defvjp(lambda xp, g, ans, input, mat2, column_major:
           _mat1_grad(xp, g, mat2, column_major[0]),
           lambda xp, g, ans, input, mat2, column_major:
           _mat2_grad(xp, g, input, column_major[1]))


def _sparse_operand(a, b):
    """Whether a product has a sparse COO operand (``ember.sparse``): a sparse first one
    multiplies as ``torch.sparse.mm`` does (its ``@``); a sparse second one is refused."""
    if type(a) is Tensor and type(b) is Tensor:  # (the common case, two type tests)
        return False
    if getattr(b, "is_sparse", False) and not getattr(a, "is_sparse", False):
        raise NotImplementedError("ember: a dense @ sparse product is not implemented (sparse "
                                  "@ dense is: torch.sparse.mm, or transpose both)")
    return getattr(a, "is_sparse", False)


@_mm.public
@autocast_op("mm")
def mm(input, mat2):
    """Matrix product of two 2-d tensors."""
    if _sparse_operand(input, mat2):
        return input @ mat2
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(_errors.MATMUL_SHAPES.format(
            a0=input.shape[0], a1=input.shape[1], b0=mat2.shape[0], b1=mat2.shape[1]))
    if input.dtype != mat2.dtype:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{input.dtype._cpp_name} != {mat2.dtype._cpp_name}")
    _no_bool("addmm_impl_cpu_", input, input.shape[0] * mat2.shape[1])
    return _mm(input, mat2, (_column_major(input), _column_major(mat2)))


def _check_batch2(batch1, batch2):
    want = [batch1.shape[0], batch1.shape[2]]
    got = [batch2.shape[0], batch2.shape[1]]
    if want != got:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"{want} but got: {got}.")


def _stack_matmul(xp, a, b):
    """``xp.matmul(a, b)`` of stacks of matrices ``(s, n, k) @ (s, k, m)``, in the forms BLAS
    runs fast. NumPy's matmul computes one product per entry of the stack, so a stack that is
    one matrix repeated (stride 0: an expand, as ``vmap(grad)`` sees a parameter per sample)
    becomes one GEMM over the other stack's rows (a 64-sample batch against a 9216x128 weight:
    20x faster; where those rows would need a copy, the loop is faster), two such stacks one
    product; and an inner dim of 1 (per-sample outer products: a weight's per-sample
    gradient) is a broadcast multiply, the same one product per element (NumPy's matmul leaves
    BLAS there: 2x slower). A recorded rule (``xp`` of Tensors) comes back here as ``bmm``."""
    if _recording(xp):
        return xp.matmul(a, b)
    s, n, k = a.shape
    if k == 1:  # into a C-ordered ``out``: NumPy then writes it in order (a * b measured
        out = xp.empty((s, n, b.shape[2]), dtype=xp.result_type(a, b))  # 1x to 3.8x
        return xp.multiply(a, b, out=out)  # slower at (64, 9216, 1) x (64, 1, 128))
    if s > 1 and b.strides[0] == 0:
        if a.strides[0] == 0:  # both the same throughout: one product
            return _repeated(xp, _matmul(xp, a[0], b[0])[None], s)
        if a.strides[0] == a.strides[1] * n or n == 1:  # (rows that fold without a copy)
            return _matmul(xp, a.reshape(s * n, k), b[0]).reshape(s, n, b.shape[2])
    return xp.matmul(a, b)


@defop("bmm", promote=True, jvp="multilinear", batch="matmul")
def _bmm(xp, input, mat2):
    return _stack_matmul(xp, input, mat2)


_bmm.defvjp(lambda xp, g, ans, input, mat2: _stack_matmul(xp, g, _mT(xp, mat2)),
            lambda xp, g, ans, input, mat2: _stack_matmul(xp, _mT(xp, input), g))


@_bmm.public
@autocast_op("bmm")
def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors ``(b, n, k) @ (b, k, m)``."""
    for name, t in (("batch1", input), ("batch2", mat2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_batch2(input, mat2)
    if input.dtype != mat2.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._word} but found {mat2.dtype._word}")
    _no_bool("bmm", input, input.shape[0] * input.shape[1] * mat2.shape[2])
    return _bmm(input, mat2)


@defop("mv", promote=True, jvp="multilinear", batch="matmul")
def _mv(xp, input, vec):
    return xp.matmul(input, vec)


_mv.defvjp(lambda xp, g, ans, input, vec: xp.reshape(g, (-1, 1)) * xp.reshape(vec, (1, -1)),
           lambda xp, g, ans, input, vec: xp.matmul(input.T, g))


@_mv.public
def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), "
                           f"mat ({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype != vec.dtype:  # PyTorch runs addmv into a vector of vec's dtype
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{vec.dtype._word}, {input.dtype._word}, and {vec.dtype._word}")
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
                           f"{input.dtype._word} and {other.dtype._word}")


@defop("dot", promote=True, jvp="multilinear", batch="matmul")
def _dot(xp, input, other):
    return xp.matmul(input, other)


_dot.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@_dot.public
def dot(input, other):
    """Inner product of two 1-d tensors."""
    _check_vectors(input, other)
    _no_bool("dot", input)
    return _dot(input, other)


@defop("vdot", jvp="multilinear", batch="matmul")
def _vdot(xp, input, other):
    return xp.vdot(input, other)


_vdot.defvjp(lambda xp, g, ans, input, other: g * other,
             lambda xp, g, ans, input, other: g * input)


@_vdot.public
def vdot(input, other):
    """Inner product of two 1-d tensors, conjugating the first (the same as ``dot`` for reals)."""
    _check_vectors(input, other)
    return _vdot(input, other)


@public
def outer(input, vec2):
    """Outer product of two vectors: ``input[:, None] * vec2``."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return _shape.reshape(input, input.shape[0], 1) * vec2


@public
def ger(input, vec2):
    """``outer``, under its deprecated name (PyTorch warns on each call)."""
    _errors.warn("torch.ger is deprecated and will be removed in a future PyTorch release. Use "
                 "torch.outer instead.")
    return outer(input, vec2)


@public
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


@public
@autocast_op("matmul")
def matmul(input, other):
    """PyTorch's ``matmul``: dot, mv, mm and vector-matrix products; a batch against a matrix
    or vector folded into one ``mm``/``mv``; broadcast batches through ``bmm``."""
    if _sparse_operand(input, other):
        return input @ other
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
        return _squeeze_matmul(out, 0, out.shape)
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
        return _unsafe_view(mv(folded, t2), shape, (folded.shape[0],))
    product = mm(folded, t2)
    out = _unsafe_view(product, shape + (t2.shape[1],), product.shape)
    return _shape.contiguous(out.mT) if transpose else out


def _batched(input, other):
    """Broadcast the batch dims, flatten them into one, ``bmm``, view back."""
    a, b = input.ndim, other.ndim
    n, m1 = (input.shape[-2] if a > 1 else 1), input.shape[-1]
    m2, p = (other.shape[-2], other.shape[-1]) if b > 1 else (other.shape[0], 1)
    batch1, batch2 = tuple(input.shape[:max(a - 2, 0)]), tuple(other.shape[:max(b - 2, 0)])
    if a == 3 and b == 3 and batch1[0] != batch2[0]:  # a batch of one that requires grad
        if batch1[0] == 1 and input.requires_grad:
            return matmul(_shape.squeeze(input, 0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, _shape.squeeze(other, 0))
    batch = _broadcast_shapes(batch1, batch2)
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
    return _unsafe_view(out, shape, out.shape)


def linalg_matrix_power(A, n):
    """``A`` multiplied by itself ``n`` times (``n < 0``: powers of the inverse), by repeated
    squaring; ``n = 0`` gives identity matrices."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError("linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_matrix(A, "linalg.matrix_power")
    if n == 0:
        out = _shape.clone(A)
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


@public
def matrix_power(input, n):
    """``input`` to the integer power ``n`` (``torch.linalg.matrix_power``)."""
    return linalg_matrix_power(input, n)


def _cross_batched(op, args, levels):
    """The batching rule of ``cross``: both operands lined up (plain ones too: NumPy counts the
    axis per operand)."""
    a, b, dim = args
    rank = max(a.ndim, b.ndim)
    return batching.wrap(op(batching.physical(a, levels, rank), batching.physical(b, levels, rank),
                            batching.shift(dim, rank, len(levels))), levels)


@defop("linalg_cross", promote=True, n_in=2, jvp="multilinear", batch=_cross_batched)
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


@public
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


def _chain_order(dims):
    """The cheapest parenthesization of matrices ``dims[i] x dims[i+1]`` (the classic
    dynamic program); ``split[i][j]``: where the product of ``i..j`` splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def linalg_multi_dot(tensors, *, out=None):
    """The product of 2-D matrices (the first and last may be 1-D vectors), multiplied in the
    cheapest order."""
    if out is not None:
        raise TypeError("multi_dot(): out= is not supported by ember")
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for t in tensors:
        _check_tensor("multi_dot", t)
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{last.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {first.dtype._cpp_name} and tensor {i} {t.dtype._cpp_name}")
    out_shape = ([first.shape[0]] if first.dim() == 2 else []) + \
        ([last.shape[1]] if last.dim() == 2 else [])
    mats = tensors[:]
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        a, b = mats[i], mats[i + 1]
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               "cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)

    return _chain_product(mats, split, 0, n - 1).view(out_shape)


def _chain_product(mats, split, i, j):
    """The product of ``mats[i..j]`` in the order ``split`` chose (a module function: a
    self-calling closure would be a reference cycle holding the matrices)."""
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain_product(mats, split, i, k).mm(_chain_product(mats, split, k + 1, j))


def linalg_vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim`` (conjugating ``x``), with broadcasting."""
    if out is not None:
        raise TypeError("vecdot(): out= is not supported by ember")
    _check_tensor("vecdot", x)
    _check_tensor("vecdot", y, "y", 2)
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype._word} and y of type "
                           f"{y.dtype._word} instead")
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)
