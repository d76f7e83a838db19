"""Lookups of ``torch.nn.functional``: ``one_hot``, ``embedding`` (with ``max_norm``
renormalisation) and ``embedding_bag``; kernels in ``ember/ops/nn/sparse.py``.
"""
from __future__ import annotations

import numpy as np

from ... import _creation, _dtypes, _recording, _xp
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops import batching
from ...ops.nn import sparse as _layers
from ...ops.registry import saves_also
from ._common import per_sample_with


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices -> int64 one-hot vectors in a new last dim."""
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    v = tensor.numpy().astype(np.int64)
    if num_classes == -1:
        num_classes = int(v.max()) + 1 if v.size else 0
    if v.size and v.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if v.size and v.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _creation.tensor((v[..., None] == np.arange(num_classes)).astype(np.int64))


def _embedding_batched(fn, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                       scale_grad_by_freq=False, sparse=False):
    """embedding under vmap: any shape of indices picks rows, so batched indices are just more
    indices; a weight per sample (per-sample gradients) is indexed per sample — the same rows
    and gradients while no padding row, renormalization or frequency scaling is asked for
    (those loop)."""
    options = (padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    if batching.is_batched(weight):
        if padding_idx is None and max_norm is None and not scale_grad_by_freq:
            return weight[input]
        return batching.loop(fn, (input, weight, *options))
    return batching.wrap(fn(input._value, weight, *options), input._levels)


@per_sample_with(_embedding_batched)
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by ``input``; ``padding_idx`` rows get no gradient."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype is not _dtypes.int64 and input.dtype is not _dtypes.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{input.dtype._legacy} instead (while checking arguments for "
                           "embedding)")
    if sparse:
        raise NotImplementedError("ember: embedding with sparse=True (sparse gradients)")
    # The node keeps int64 indices as they are (an int32 copy otherwise): an in-place write
    # to ``input`` moves its version, which the node checks (``saves_also``), as PyTorch does.
    indices = input._data
    if indices.dtype != np.int64:
        indices = indices.astype(np.int64)
    _recording.expect(_check_embedding_indices, indices, weight.shape[0])
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    return saves_also(_layers._embedding(weight, indices, weight.shape[0], padding_idx,
                                         bool(scale_grad_by_freq)), input)


def _check_embedding_indices(indices, n):
    """PyTorch's error for an index outside ``[0, n)`` (checked again by each replay)."""
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise IndexError("index out of range in self")


def _check_bag_indices(indices, n_rows):
    if indices.size and (indices.min() < 0 or indices.max() >= n_rows):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")


def _embedding_renorm(weight, indices, max_norm, norm_type):
    """Rescale in place the rows ``indices`` uses whose norm exceeds ``max_norm``."""
    xp = _xp.namespace_of(indices)
    rows = xp.unique(indices)
    data = weight._data[rows]
    norms = xp.linalg.norm(data.astype(np.float64), ord=norm_type, axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    wrap = Tensor._make
    with no_grad():  # an in-place write: the weight's version moves, as in PyTorch
        weight.detach()[wrap(rows, None, False)] = wrap(data * scale[:, None], None, False)


def _embedding_bag_batched(fn, input, weight, offsets=None, max_norm=None, *args, **kwargs):
    """embedding_bag under vmap: a weight or per-sample weights per sample go through the bag
    kernel's own batching rule; batched indices or offsets, ``max`` mode and ``max_norm`` read
    data (bag boundaries, each bag's maximal rows, row norms) and loop."""
    mode = args[3] if len(args) > 3 else kwargs.get("mode", "mean")
    if batching.is_batched(input, offsets) or mode == "max" or max_norm is not None:
        return batching.loop(fn, (input, weight, offsets, max_norm, *args), kwargs)
    return fn(input, weight, offsets, max_norm, *args, **kwargs)


@per_sample_with(_embedding_bag_batched)
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The ``sum``, ``mean`` or ``max`` of each bag of embedding rows: bags are the rows of a
    2-D ``input``, or the runs of a 1-D ``input`` starting at ``offsets``.
    ``per_sample_weights`` (mode ``sum``) scales each row; ``padding_idx`` entries are left
    out of their bag (and of its count); an empty bag gives zeros.

    ``scale_grad_by_freq`` scales each index's gradient by 1 / (its count in ``input``), as
    PyTorch documents; PyTorch 2.13's CPU kernel scales by other counts (for ``[1, 2, 4, 5, 4,
    3, 2, 9, 0, 0]`` it gives row 1 half and row 2 double the sum's gradient), which ember does
    not copy."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            kind = "<class 'torch.Tensor'>" if hasattr(offsets, "_data") else type(offsets)
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {kind}")
        offsets = _creation.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        if mode == "max":
            raise ValueError("max mode does not support sparse weights")
        raise NotImplementedError("ember: embedding_bag with sparse=True (sparse gradients)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if input.dtype is not _dtypes.int64 and input.dtype is not _dtypes.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{input.dtype._legacy} instead (while checking arguments for "
                           "embedding_bag)")
    n_rows = weight.shape[0]
    if padding_idx is not None:
        if not -n_rows <= padding_idx < n_rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{n_rows} through {n_rows - 1}, but got {padding_idx}")
        padding_idx %= n_rows
    indices = input._data.astype(np.int64)  # private copies: the node keeps them
    starts = offsets._data.astype(np.int64)
    n = indices.size
    if starts.size and starts[0] != 0:
        word = "Long" if offsets._data.dtype == np.int64 else "Int"
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(starts[0])}\n"
                           f"[ torch.{word}Tensor{{}} ]")
    if starts.size and starts[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(starts[-1])}")
    if include_last_offset:  # (PyTorch's CPU kernel lets a short last offset through and
        # returns means over the wrong counts; its message for a bad last offset is raised here)
        if starts.size == 0 or starts[-1] != n:
            raise RuntimeError("Your input appears to be incorrect: the last offset value "
                               "should be the size of the indices tensor, but it seems not to "
                               "be the case.")
        starts = starts[:-1]
    _recording.expect(_check_bag_indices, indices, n_rows)
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    nbags = starts.size
    bag_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    keep = np.ones(n, bool) if padding_idx is None else indices != padding_idx
    counts = np.bincount(bag_of[keep], minlength=nbags)
    dtype = weight._data.dtype
    coef = keep.astype(dtype).reshape(-1, 1)
    divisor = np.ones((nbags, 1), dtype)
    if mode == "mean":
        divisor = np.maximum(counts, 1).astype(dtype).reshape(-1, 1)
    elif mode == "max":  # each bag's first maximal entry, per column
        rows = weight._data[indices]
        best = np.full((nbags, rows.shape[1]), -np.inf, dtype)
        np.maximum.at(best, bag_of[keep], rows[keep])
        hit = keep[:, None] & (rows == best[bag_of])
        first = np.full(best.shape, n, np.int64)
        np.minimum.at(first, bag_of, np.where(hit, np.arange(n)[:, None], n))
        coef = (np.arange(n)[:, None] == first[bag_of]).astype(dtype)
    if per_sample_weights is None:  # (PyTorch's node has the slot all the same: None)
        per_sample_weights = _creation.ones(n, dtype=weight.dtype)
    out = _layers._embedding_bag(weight, per_sample_weights, indices, bag_of, nbags, coef,
                                 divisor, bool(scale_grad_by_freq))
    return saves_also(out, input, offsets)
