"""Sparse COO tensors, the basics: ``torch.sparse_coo_tensor``, ``to_dense``/``to_sparse``,
``coalesce``, ``indices``/``values``/``_nnz``, ``torch.sparse.mm`` and ``torch.sparse.sum``.

A :class:`SparseCOOTensor` keeps PyTorch's COO form: ``indices`` (int64, ``sparse_dim x nnz``)
and ``values`` (``nnz x dense dims``) of a ``size``; duplicates sum. Everything it computes is
made of ember ops on ``values``, so gradients reach the values (``requires_grad``, ``.grad``
as a sparse tensor of the same pattern).

It is deliberately *not* an ember ``Tensor``: an op that has no sparse implementation must not
read it as a dense array. What is not listed here raises NotImplementedError naming the
feature (``isinstance(s, torch.Tensor)`` is False, unlike PyTorch).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation, _dtypes
from .._tensor import Size, Tensor, layout
from ..autograd.grad_mode import no_grad
from ..ops.shape import cat

__all__ = ["SparseCOOTensor", "sparse_coo_tensor", "mm", "sum", "sparse_coo"]

sparse_coo = layout("sparse_coo")


def _not_implemented(what):
    return NotImplementedError(f"ember: {what} is not implemented for sparse COO tensors "
                               "(supported: to_dense, coalesce, indices, values, _nnz, "
                               "torch.sparse.mm and @, torch.sparse.sum, t, multiplication "
                               "by a number, addition of sparse tensors)")


class SparseCOOTensor:
    """A sparse tensor in coordinate form (see the module docstring)."""

    is_sparse = True
    is_sparse_csr = False
    layout = sparse_coo

    def __init__(self, indices, values, size, coalesced=False):
        self._idx = indices
        self._vals = values
        self._size = Size(size)
        self._coalesced = coalesced

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self):
        return len(self._size)

    ndim = property(dim)

    @property
    def dtype(self):
        return self._vals.dtype

    @property
    def device(self):
        return self._vals.device

    def sparse_dim(self):
        return self._idx.shape[0]

    def dense_dim(self):
        return self._vals.ndim - 1

    def _nnz(self):
        return self._idx.shape[1]

    def numel(self):
        return math.prod(self._size)

    def is_coalesced(self):
        return self._coalesced

    @property
    def requires_grad(self):
        return self._vals.requires_grad

    def requires_grad_(self, requires_grad=True):
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        """The gradient with respect to the tensor, on its pattern (coalesced): at an index
        stored more than once every copy got the same gradient, the one the entry has."""
        g = self._vals.grad
        if g is None:
            return None
        if self._coalesced:
            return SparseCOOTensor(self._idx, g, self._size, True)
        idx, first = self._unique()[::2]
        return SparseCOOTensor(idx, g[_creation.tensor(first)], self._size, True)

    def _unique(self):
        """``(unique indices, inverse, first occurrence)`` of the stored indices, sorted."""
        shape = tuple(self._size[:self.sparse_dim()])
        flat = np.ravel_multi_index(tuple(np.asarray(self._idx.numpy())), shape)
        unique, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
        idx = np.stack(np.unravel_index(unique, shape)).astype(np.int64)
        return (_creation.tensor(idx.reshape(len(shape), -1), device=self.device),
                inverse.astype(np.int64), first.astype(np.int64))

    @property
    def grad_fn(self):
        return self._vals.grad_fn

    def _indices(self):
        return self._idx

    def _values(self):
        return self._vals

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._idx

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._vals

    # ------------------------------------------------------------------ conversions
    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (duplicates summed); differentiable in the values."""
        dense = _creation.zeros(tuple(self._size), dtype=self.dtype, device=self.device)
        if self._nnz():
            dense = dense.index_put(tuple(self._idx), self._vals, accumulate=True)
        return dense if dtype is None else dense.to(dtype)

    def coalesce(self):
        """Indices sorted and unique, the values of duplicates summed."""
        if self._coalesced:
            return self
        nnz = self._nnz()
        if nnz == 0:
            return SparseCOOTensor(self._idx, self._vals, self._size, True)
        indices, inverse, _ = self._unique()
        zeros = _creation.zeros((indices.shape[1],) + tuple(self._vals.shape[1:]),
                                dtype=self.dtype, device=self.device)
        values = zeros.index_add(0, _creation.tensor(inverse, device=self.device), self._vals)
        return SparseCOOTensor(indices, values, self._size, True)

    def to_sparse(self, *args, **kwargs):
        if args or kwargs.get("layout") not in (None, sparse_coo):
            raise _not_implemented("converting to another sparse layout")
        return self

    def to(self, *args, **kwargs):
        raise _not_implemented("Tensor.to")

    def detach(self):
        return SparseCOOTensor(self._idx, self._vals.detach(), self._size, self._coalesced)

    def clone(self):
        return SparseCOOTensor(self._idx.clone(), self._vals.clone(), self._size,
                               self._coalesced)

    def double(self):
        return SparseCOOTensor(self._idx, self._vals.double(), self._size, self._coalesced)

    def float(self):
        return SparseCOOTensor(self._idx, self._vals.float(), self._size, self._coalesced)

    def t(self):
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise _not_implemented("t() beyond 2-d matrices")
        return SparseCOOTensor(self._idx.flip(0), self._vals, (self._size[1], self._size[0]))

    # ------------------------------------------------------------------ arithmetic
    def __mul__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return SparseCOOTensor(self._idx, self._vals * other, self._size, self._coalesced)
        raise _not_implemented("multiplication by anything but a Python number")

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __add__(self, other):
        if not isinstance(other, SparseCOOTensor):
            raise _not_implemented("addition of a dense tensor or a number")
        if other._size != self._size or other.dense_dim() != self.dense_dim():
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {list(self._size)} while other has size "
                               f"{list(other._size)} (FYI: op2-sparse addition does not "
                               "currently support broadcasting)")
        return SparseCOOTensor(cat([self._idx, other._idx], 1),
                               cat([self._vals, other._vals.to(self.dtype)], 0),
                               self._size).coalesce()

    def __sub__(self, other):
        return self + (-other) if isinstance(other, SparseCOOTensor) else self.__add__(other)

    def __radd__(self, other):
        raise _not_implemented("addition of a dense tensor or a number")

    def __array__(self, dtype=None, copy=None):
        raise _not_implemented("conversion to a NumPy array (call to_dense() first)")

    def numpy(self, *, force=False):
        raise _not_implemented("numpy() (call to_dense() first)")

    def __matmul__(self, other):
        if isinstance(other, Tensor) and other.ndim == 1:  # matrix @ vector, as matmul's
            return mm(self, other.unsqueeze(1)).squeeze(1)
        return mm(self, other)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name.startswith("_"):  # an ember op reading it as a dense tensor
            raise _not_implemented("this operation (a dense op given a sparse tensor)")
        raise _not_implemented(f"Tensor.{name}")

    def __repr__(self):
        return _repr(self)


def _indent(text, n):
    return text.replace("\n", "\n" + " " * n)


def _repr(s):
    values = repr(s._vals.detach())
    values = values.replace(f", dtype={s.dtype}", "")
    head = (f"tensor(indices={_indent(repr(s._idx), 15)},\n"
            f"       values={_indent(values, 14)},\n")
    items = [f"size={tuple(s._size)}", f"nnz={s._nnz()}"]
    if s.dtype is not _dtypes.get_default_dtype():
        items.append(f"dtype={s.dtype}")
    items.append("layout=torch.sparse_coo")
    if s.grad_fn is not None:
        items.append(f"grad_fn=<{type(s.grad_fn).__name__}>")
    elif s.requires_grad:
        items.append("requires_grad=True")
    lines, line = [], "       " + items[0]
    for item in items[1:]:
        if len(line) + len(", " + item) + 1 > 80:
            lines.append(line + ",")
            line = "       " + item
        else:
            line += ", " + item
    lines.append(line + ")")
    return head + "\n".join(lines)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values`` at ``indices`` (``sparse_dim x nnz``); ``size``
    defaults to the smallest that holds the indices. Indices are always checked against
    ``size`` (PyTorch's error)."""
    if not isinstance(indices, Tensor):
        indices = _creation.tensor(indices, dtype=_dtypes.int64)
    if not isinstance(values, Tensor):
        values = _creation.tensor(values, dtype=dtype)
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if indices.dtype != _dtypes.int64:
        indices = indices.long()
    sparse_dim, nnz = indices.shape
    if values.ndim == 0 or values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0] if values.ndim else 1}")
    idx = np.asarray(indices.numpy())
    if size is None:
        size = tuple(int(m) + 1 for m in idx.max(1)) if nnz else (0,) * sparse_dim
        size = size + tuple(values.shape[1:])
    size = tuple(size)
    if len(size) != sparse_dim + values.ndim - 1:
        raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + dense_dim "
                           f"({values.ndim - 1}), but got {len(size)}")
    for d in range(sparse_dim):
        if nnz and (idx[d].max() >= size[d] or idx[d].min() < 0):
            bad = idx[d].max() if idx[d].max() >= size[d] else idx[d].min()
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {bad}")
    if dtype is not None:
        values = values.to(dtype)
    if requires_grad:
        values = values.detach().requires_grad_()
    coalesced = bool(is_coalesced) or nnz <= 1
    return SparseCOOTensor(indices, values, size, coalesced)


def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
    """``Tensor.to_sparse()``: the nonzero entries of a dense tensor as sparse COO."""
    if args or layout not in (None, sparse_coo) or blocksize is not None or dense_dim:
        raise NotImplementedError("ember: to_sparse supports only the COO layout with every "
                                  "dim sparse")
    with no_grad():
        nonzero = self.nonzero()
    indices = nonzero.T.contiguous()
    values = self[tuple(indices)] if self.ndim else self.reshape(1)
    return SparseCOOTensor(indices, values, tuple(self.shape), True)


def _dense_to_dense(self, dtype=None, *, masked_grad=None):
    """``Tensor.to_dense()`` of a dense tensor: itself (a copy only for another dtype)."""
    return self if dtype is None else self.to(dtype)


Tensor.to_sparse = to_sparse
Tensor.to_dense = _dense_to_dense


def mm(mat1, mat2, reduce="sum"):
    """``sparse @ dense`` (a dense result, differentiable in both: the sparse one's gradient
    has its pattern) or ``sparse @ sparse`` (computed densely, a sparse result)."""
    if reduce != "sum":
        raise _not_implemented(f"torch.sparse.mm with reduce={reduce!r}")
    if not isinstance(mat1, SparseCOOTensor):
        raise _not_implemented("torch.sparse.mm with a dense first argument")
    if mat1.dim() != 2 or mat1.dense_dim() != 0:
        raise RuntimeError("mm: expected a 2-D sparse matrix")
    if isinstance(mat2, SparseCOOTensor):
        return mm(mat1, mat2.to_dense()).to_sparse()
    if mat2.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {mat1.shape[1]}, "
                           f"got {mat2.shape[0]}")
    if mat2.dtype != mat1.dtype:  # no promotion, as PyTorch's
        raise RuntimeError(f"expected scalar type {mat1.dtype._word} but found "
                           f"{mat2.dtype._word}")
    rows, cols = mat1._idx[0], mat1._idx[1]
    contrib = mat1._vals.unsqueeze(1) * mat2.index_select(0, cols)
    out = _creation.zeros((mat1.shape[0], mat2.shape[1]), dtype=contrib.dtype,
                          device=mat2.device)
    return out.index_add(0, rows, contrib)


def sum(input, dim=None, dtype=None):  # noqa: A001 - PyTorch's name
    """``torch.sparse.sum``: a dense 0-d tensor over every dim, else a sparse tensor."""
    if not isinstance(input, SparseCOOTensor):
        return input.sum() if dim is None else input.sum(dim)
    values = input._vals if dtype is None else input._vals.to(dtype)
    if dim is None:
        return values.sum()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(d % input.dim() for d in dims)
    dense = input.to_dense() if dtype is None else input.to_dense().to(dtype)
    result = dense.sum(dims)
    if len(dims) == input.dim():
        return result
    return to_sparse(result)
