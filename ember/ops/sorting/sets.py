"""Sets and counts, not differentiable: ``unique`` / ``unique_consecutive``, ``bincount``,
``histc``, ``searchsorted`` / ``bucketize``, ``isin``; and ``_word``, the dtype's name in
PyTorch's messages, which the scans and the order statistics use too.
"""
from __future__ import annotations

import numpy as np

from ... import _xp
from ..._tensor import Tensor, _wrap_dim
from ...autograd import grad_mode
from ...autograd.graph import Node, gradient_edge, new_node
from ..operands import _underivable
from ..registry import public

# --------------------------------------------------------------------------- sets and counts
# Not differentiable. ``unique`` records PyTorch's node for a float input that requires grad,
# whose backward refuses; ``bincount`` with such weights records the ``NotImplemented`` node.


def _refusing_node(name, aten):
    """A node class named ``name`` whose backward raises PyTorch's "not implemented" error."""

    def apply(self, grad_outputs, create_graph):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")

    return type(name, (Node,), {"__slots__": (), "apply": apply, "release": lambda self: None})


_REFUSING = {aten: _refusing_node(node, aten) for aten, node in (
    ("_unique2", "Unique2Backward0"), ("unique_dim", "UniqueDimBackward0"),
    ("unique_consecutive", "UniqueConsecutiveBackward0"))}


def _int64(xp, a):
    return Tensor._make(xp.asarray(a, dtype=np.int64), None, False)


def _unique_result(aten, input, values, inverse, counts, return_inverse, return_counts):
    """``values`` (with the refusing node where PyTorch records one), then what was asked."""
    xp = _xp.namespace_of(input._data)
    out = Tensor._make(values, None, False)
    if input.requires_grad and grad_mode._state.grad:
        node = new_node(_REFUSING[aten], (gradient_edge(input),))
        out = Tensor._make(values, node, True)
    extra = ([_int64(xp, inverse)] if return_inverse else []) + \
        ([_int64(xp, counts)] if return_counts else [])
    return (out, *extra) if extra else out


def _slices_along(xp, a, dim):
    """``a`` with ``dim`` first and the rest flattened: one row per slice along ``dim``."""
    return xp.reshape(xp.moveaxis(a, dim, 0), (a.shape[dim], a.size // max(a.shape[dim], 1)))


def _check_unique_dim(input, dim):
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    if input.numel() == 0 and input.shape[d] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    return d


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along ``dim``), sorted (PyTorch's CPU kernel sorts
    whatever ``sorted`` says); each NaN is distinct. Optionally the index of each input element
    in the result and each result's count."""
    a = input._data
    xp = _xp.namespace_of(a)
    if dim is None:
        values, inverse, counts = xp.unique(xp.reshape(a, (-1,)), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        return _unique_result("_unique2", input, values, xp.reshape(inverse, a.shape), counts,
                              return_inverse, return_counts)
    d = _check_unique_dim(input, dim)
    rows = _slices_along(xp, a, d)
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        keep = xp.arange(min(rows.shape[0], 1 if rows.shape[1] == 0 else 0))
        inverse = xp.zeros(rows.shape[0], dtype=np.int64)
        counts = xp.full(keep.shape, rows.shape[0], dtype=np.int64)
    else:  # rows in lexicographic order, then runs of equal rows
        order = xp.lexsort(rows.T[::-1])
        ordered = rows[order]
        starts = xp.concatenate([[True], xp.any(ordered[1:] != ordered[:-1], axis=1)])
        group = xp.cumsum(starts) - 1
        keep = order[starts]
        inverse = xp.empty_like(group)
        inverse[order] = group
        counts = xp.bincount(group)
    values = xp.take(a, keep, axis=d)
    return _unique_result("unique_dim", input, values, inverse, counts, return_inverse,
                          return_counts)


@public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The input with each run of equal consecutive elements (or slices along ``dim``)
    replaced by one; optionally the run index of each element and each run's length."""
    a = input._data
    xp = _xp.namespace_of(a)
    if dim is None:
        rows = xp.reshape(a, (-1, 1))
        shape = a.shape
    else:
        d = _check_unique_dim(input, dim)
        rows, shape = _slices_along(xp, a, d), (a.shape[d],)
    n = rows.shape[0]
    starts = xp.concatenate([xp.ones(min(n, 1), dtype=bool),
                             xp.any(rows[1:] != rows[:-1], axis=1)])
    group = xp.cumsum(starts) - 1
    keep = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([keep, [n]])) if n else keep
    values = a.reshape(-1)[keep] if dim is None else xp.take(a, keep, axis=d)
    return _unique_result("unique_consecutive", input, values, xp.reshape(group, shape), counts,
                          return_inverse, return_counts)


@public
def bincount(input, weights=None, minlength=0):
    """How often each value ``0..max`` occurs in a vector of non-negative integers (summing
    ``weights`` instead of ones: float32/float64 weights keep their dtype, others give
    float64)."""
    a = input._data
    xp = _xp.namespace_of(a)
    if a.dtype == np.bool_ or a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{input.dtype._word}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _int64(xp, xp.bincount(a, minlength=minlength))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    counts = xp.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(dtype)
    return _underivable(Tensor._make(counts, None, False), "bincount", weights)


def _edge_text(v):
    """A range end as PyTorch's C++ stream prints it."""
    return "-nan" if v != v else f"{v:g}"


@public
def histc(input, bins=100, min=0, max=0):
    """A histogram of the elements in ``bins`` equal bins over ``[min, max]`` (the elements'
    own range when both are equal); elements outside the range are ignored."""
    a = input._data
    xp = _xp.namespace_of(a)
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{input.dtype._word}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = a.dtype.type(min), a.dtype.type(max)
    if lo == hi and a.size:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_edge_text(float(lo))}, "
                           f"{_edge_text(float(hi))}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = xp.reshape(a, (-1,))
    x = x[(x >= lo) & (x <= hi)]
    pos = ((x - lo) / (hi - lo) * a.dtype.type(bins)).astype(np.int64)  # in the input dtype
    counts = xp.bincount(xp.minimum(pos, bins - 1), minlength=bins)
    return Tensor._make(counts.astype(a.dtype), None, False)


def _as_tensor_like(value, like):
    if isinstance(value, Tensor):
        return value
    return Tensor._make(_xp.namespace_of(like._data).asarray(value), None, False)


def _bounds_search(xp, boundaries, values, right, sorter):
    """PyTorch's binary search, vectorised: for each value the first index whose boundary is
    ``>= value`` (``> value`` with ``right``); NaN boundaries compare as PyTorch's do."""
    n = boundaries.shape[-1]
    if boundaries.ndim == 1:
        boundaries = boundaries[sorter] if sorter is not None else boundaries
        rows = xp.broadcast_to(boundaries, (values.size, n))
        vals = xp.reshape(values, (-1,))
    else:
        if sorter is not None:
            boundaries = xp.take_along_axis(boundaries, sorter, axis=-1)
        m = values.shape[-1]
        rows = xp.repeat(xp.reshape(boundaries, (boundaries.size // max(n, 1), n)), m, axis=0)
        vals = xp.reshape(values, (-1,))
    start = xp.zeros(vals.shape, dtype=np.int64)
    end = xp.full(vals.shape, n, dtype=np.int64)
    while True:
        active = start < end
        if not active.any():
            break
        mid = (start + end) // 2
        bd = xp.take_along_axis(rows, xp.minimum(mid, n - 1)[:, None], axis=1)[:, 0]
        go_right = ~(bd > vals) if right else ~(bd >= vals)
        start = xp.where(active & go_right, mid + 1, start)
        end = xp.where(active & ~go_right, mid, end)
    return xp.reshape(start, values.shape)


@public(method=False)
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where ``values`` would be inserted into the (last dim of) ``sorted_sequence`` to keep
    it sorted: the leftmost place, or the rightmost with ``right=True`` / ``side='right'``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    values = _as_tensor_like(values, sorted_sequence)
    b, v = sorted_sequence._data, values._data
    if b.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if b.ndim > 1 and (v.ndim != b.ndim or v.shape[:-1] != b.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(b.shape)} and input value tensor {list(v.shape)}")
    s = None
    if sorter is not None:
        s = sorter._data
        if s.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {sorter.dtype._word}")
        if s.shape != b.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(b.shape)}and got sorter "
                               f"tensor {list(s.shape)}")
    xp = _xp.namespace_of(b)
    index = _bounds_search(xp, b, v, bool(right), s)
    return Tensor._make(index.astype(np.int32 if out_int32 else np.int64), None, False)


@public(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element given the sorted 1-d ``boundaries`` (``right``: a value equal
    to a boundary goes to the bucket above it)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, _as_tensor_like(input, boundaries), out_int32=out_int32,
                        right=right)


@public(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (NaN never does);
    either may be a Python number."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            "isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one "
            "of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            "bool invert = False, Tensor out = None)\n * (Number element, Tensor test_elements,"
            " *, bool assume_unique = False, bool invert = False, Tensor out = None)\n * "
            "(Tensor elements, Number test_element, *, bool assume_unique = False, bool invert "
            "= False, Tensor out = None)\n")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements, test_elements = _as_tensor_like(elements, like), _as_tensor_like(test_elements, like)
    for t in (elements, test_elements):
        if t._data.dtype == np.bool_ or t._data.dtype.kind == "c":
            raise RuntimeError(f"Unsupported input type encountered for isin(): {t.dtype._word}")
    xp = _xp.namespace_of(elements._data)
    found = xp.isin(elements._data, test_elements._data, invert=bool(invert))
    return Tensor._make(xp.asarray(found, dtype=bool), None, False)
