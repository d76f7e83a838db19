"""Contractions: ``einsum``, ``tensordot`` and ``kron``, built from ``bmm``/``mm``/``dot``,
permutes and views step for step as PyTorch builds them, so their graphs, grad_fn names and
rounding match PyTorch's. They have no op of their own.
"""
from __future__ import annotations

import operator
import string
from collections import Counter

import numpy as np

from ..._tensor import Tensor, _wrap_dim
from .. import reduction as _reduction
from .. import shape as _shape
from ..registry import public
from ..shape.views import _unsafe_view
from ._common import _permute
from .diagonals import diagonal
from .products import bmm, dot, mm


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


@public(method=False)
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


@public(method=False)
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


@public
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
    product = (_unsafe_view(input, tuple(shape_a), input.shape) *
               _unsafe_view(other, tuple(shape_b), other.shape))
    return _unsafe_view(product, tuple(shape), product.shape)
