"""Indexing ops that read: ``x[key]`` (``getitem``), ``gather``, ``take_along_dim``,
``index_select``, ``masked_select``, ``take``, ``nonzero`` / ``argwhere``.

A read's derivative adds the gradient back at the key it read (repeated indices accumulate:
``xp.index_add_zeros``, declared here).
"""
from __future__ import annotations

import math

import numpy as np

from ... import _dtypes, _xp
from ..._broadcast import broadcast_shapes
from ..._tensor import Tensor, _wrap_dim
from ...autograd.views import as_view
from .. import batching
from ..registry import defop, public, saves_also
from ..shape.views import _alias, expand, reshape
from .keys import (
    _advanced_key,
    _apply_basic,
    _apply_select,
    _apply_slice,
    _check_bounds,
    _check_mask,
    _check_scalar_index,
    _classify,
    _dim_key,
    _first_out_of_range,
    _flat_index,
    _own,
    _scatter_args,
    _size,
    _tensors_in,
)

# --------------------------------------------------------------------------- reads


def _read(xp, input, key, shape):
    return (input if input.shape == shape else xp.broadcast_to(input, shape))[key]


def _read_rule(xp, g, ans, input, key, shape):
    return xp.index_add_zeros(g, shape, key)


# Under vmap the reads broadcast the input to ``shape`` first; ``index`` undoes NumPy's
# placement of separated advanced indices.
_READ = batching.moved(rank_from="shape")
_index = defop("index", n_in=1, jvp="linear",
               batch=batching.moved(rank_from="shape", advanced_index=True))(_read)
_index.defvjp(_read_rule)


def _gather_read(xp, input, key, shape):
    """gather's read: every dim indexed by an integer array. On a large NumPy array, by the
    flat positions and one ``take`` (3x faster than NumPy's indexing by a tuple of arrays,
    which broadcasts and checks each of them per element)."""
    if type(input) is np.ndarray and input.shape == shape and input.size >= _ADD_AT_BELOW:
        flat = _flat_positions(key, shape, checked=True)
        if flat is not None:
            return np.take(input, flat)
    return _read(xp, input, key, shape)


def _flat_positions(key, shape, checked=False):
    """The flat (C-order) positions ``key`` (one integer array per dim, broadcasting) picks
    in an array of ``shape``; None where an index is out of range (NumPy's indexing raises
    PyTorch's IndexError then) or ``key`` is not of that form. ``checked``: the indices are
    known in range and not negative (``gather`` checked them)."""
    if len(key) != len(shape) or not all(type(k) is np.ndarray and k.dtype.kind in "iu"
                                         for k in key):
        return None
    flat, stride = None, 1
    for k, n in zip(key[::-1], shape[::-1]):
        if k.size and not checked:
            low, high = k.min(), k.max()
            if low < -n or high >= n:
                return None
            if low < 0:
                k = np.where(k < 0, k + n, k)
        term = k * stride if stride != 1 else k
        flat = term if flat is None else flat + term
        stride *= n
    return flat


_gather = defop("gather", n_in=1, jvp="linear", batch=_READ)(_gather_read).defvjp(_read_rule)
_index_select = defop("index_select", n_in=1, jvp="linear", batch=_READ)(_read).defvjp(_read_rule)
_masked_select = defop("masked_select", n_in=1, jvp="linear", batch=_READ)(_read).defvjp(_read_rule)


@defop("index_add_zeros", n_in=1, jvp="linear", batch="moved")
def _index_add_zeros(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""
    out = xp.zeros(shape, dtype=g.dtype)
    add_at(xp, out, key, g, zeroed=True)
    return out


def add_at(xp, out, key, values, zeroed=False):
    """``xp.add_at(out, key, values)``; where one index vector picks slices of a NumPy array,
    by ``_add_slices_along`` (``zeroed``: ``out`` holds zeros, so a slice added once is
    written)."""
    axis = (_single_index_axis(key) if out.ndim > 1 and type(values) is np.ndarray
            and values.size >= _ADD_AT_BELOW else None)
    if axis is not None and values.shape != (  # (values that broadcast: add.at's)
            out.shape[:axis] + (key[axis].size,) + out.shape[axis + 1:]):
        axis = None
    if axis is None or not _add_slices_along(out, values, key[axis], axis, zeroed):
        if not (type(out) is np.ndarray and _add_by_count(out, key, values, zeroed)):
            xp.add_at(out, key, values)


_COUNTED = (np.dtype(np.float32), np.dtype(np.float64))


def _add_by_count(out, key, values, zeroed):
    """``np.add.at(out, key, values)`` for a key of integer arrays only (``gather``'s, every
    dim indexed) and many values of a real float array, by one ``np.bincount`` over the flat
    positions (~8x faster: add.at takes ~35 ns per element): False where it does not apply.
    bincount adds in the values' order, as add.at, in float64 (exact for float64; for
    float32 the sums are rounded once instead of per addition)."""
    if (out.dtype not in _COUNTED or type(values) is not np.ndarray
            or values.size * 4 < out.size or values.size < _ADD_AT_BELOW):
        return False
    flat = _flat_positions(key, out.shape)
    if flat is None:
        return False
    flat, values = np.broadcast_arrays(flat, values)
    total = np.bincount(flat.reshape(-1), weights=values.reshape(-1), minlength=out.size)
    total = total.reshape(out.shape).astype(out.dtype, copy=False)
    if zeroed:
        out[...] = total
    else:
        out += total
    return True


_STEPS_AT_MOST = 16  # beyond: add.at (each step of ``_add_slices_along`` is one NumPy call)
_ADD_AT_BELOW = 4096  # smaller gradients: add.at's one call costs less than the sort and steps


def _single_index_axis(key):
    """The axis of the one index vector in ``key`` when every other entry is a full slice
    (``index_select``, ``x[i]``, ``repeat_interleave``), else None."""
    axis = None
    for d, k in enumerate(key):
        if isinstance(k, slice):
            if k != slice(None):
                return None
        elif axis is None and getattr(k, "ndim", 0) == 1 and k.dtype.kind in "iu":
            axis = d
        else:
            return None
    return axis


def _add_slices_along(out, g, index, axis, zeroed=True):
    """``out[..., index[j], ...] += g[..., j, ...]`` (NumPy, ``out`` of 2 dims or more, of
    zeros where ``zeroed``), or False where the indices are both many and repeated often.

    ``np.add.at`` adds element by element: on a 2-d gradient 10-40x slower than copying it (its
    fast path is 1-d only). A stable sort of the index vector alone (not of the slices) gives
    two ways with a NumPy call per step, whichever has fewer steps (and for 16 slices or fewer,
    one step per slice, without the sort):
    - layers: each slice's first occurrence in the first, its second in the next...; within a
      layer the indices are distinct, so one fancy ``+=`` adds it, and each sum still runs
      in index order, as ``add.at``'s;
    - distinct indices (few, repeated often): the slices of each summed by one ``sum``.
    """
    m, n = index.size, out.shape[axis]
    if m == 0:
        return True
    if index.min() < 0:
        index = np.where(index < 0, index + n, index)
    head = (slice(None),) * axis
    if m <= _STEPS_AT_MOST:  # few slices: one by one, in add.at's order (a strided add each,
        for k, j in enumerate(index.tolist()):  # not a fancy index along a later axis: 28
            out[head + (j,)] += g[head + (k,)]  # -> 1 ms for 3 slices of (333332, 3))
        return True
    order = np.argsort(index, kind="stable")
    ranked = index[order]
    starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
    run_start = np.zeros(m, dtype=np.int64)
    run_start[starts] = starts
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m) - np.maximum.accumulate(run_start)
    layers = int(rank.max()) + 1
    if layers == 1 and zeroed:
        out[head + (index,)] = g
    elif layers <= _STEPS_AT_MOST:
        for layer in range(layers):
            pick = np.flatnonzero(rank == layer)
            out[head + (index[pick],)] += np.take(g, pick, axis=axis)
    elif starts.size <= _STEPS_AT_MOST:
        for a, b in zip(starts.tolist(), starts[1:].tolist() + [m]):
            at = head + (int(ranked[a]),)
            total = np.take(g, order[a:b], axis=axis).sum(axis)
            if zeroed:
                out[at] = total
            else:
                out[at] += total
    else:
        return False
    return True


_index_add_zeros.defvjp(lambda xp, gg, ans, g, shape, key: gg[key])
_xp.register_extra("index_add_zeros", _index_add_zeros.forward, _index_add_zeros)



# --------------------------------------------------------------------------- gather / scatter


def _gather_batched(fn, input, dim, index, *, sparse_grad=False):
    """gather under vmap with an index per sample: input and index expanded to the whole batch
    (the batch dims lead both, and gather pairs them entry by entry), ``dim`` moved past them;
    one call. (A 0-d input or index, read as one entry, loops.)"""
    if not batching.is_batched(index):  # (the read op's own rule: an index shared by all)
        return fn(input, dim, index, sparse_grad=sparse_grad)
    if input.ndim == 0 or index.ndim == 0:
        return batching.loop(fn, (input, dim, index), dict(sparse_grad=sparse_grad))
    levels = batching._union((input, index))
    d = _wrap_dim(dim, input.ndim) + len(levels)
    out = fn(batching.physical(input, levels, expand=True), d,
             batching.physical(index, levels, expand=True), sparse_grad=sparse_grad)
    return batching.wrap(out, levels)


@public
@batching.per_sample_with(_gather_batched)
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` (for ``dim=0``); index has input's rank."""
    key = _scatter_args("gather", input, dim, index)
    # A 0-d input is read as a vector of one entry when the index is a vector.
    # (PyTorch's gather, take and masked_select also save their input, for its metadata)
    return saves_also(_gather(input, key, (1,) if input.ndim < len(key) else input.shape),
                      index, input)



@public
def take_along_dim(input, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``input`` (flattened when ``dim`` is None)."""
    if indices.dtype != _dtypes.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype._word}")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = _wrap_dim(dim, input.ndim)
    shape = list(broadcast_shapes(*(t.shape[:d] + (1,) + t.shape[d + 1:]
                                    for t in (input, indices))))
    shape[d] = input.shape[d]
    input = expand(input, shape)
    shape[d] = indices.shape[d]
    # PyTorch gathers with a broadcast copy of the indices: later writes to them are harmless.
    return gather(input, d, expand(indices, shape).clone())


# --------------------------------------------------------------------------- index_*


@public
@batching.reads_data(2, "index")
def index_select(input, dim, index):
    """The entries at ``index`` (a vector) along ``dim``; repeated indices repeat entries."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = _own(index._data, flat=True)
    size = _size(input, d)
    bad = _first_out_of_range(idx, 0, size)
    if bad is not None:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    if input.ndim == 0 and idx.size != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    return saves_also(_index_select(input, _dim_key(input.ndim, d, idx), input.shape), index)



@public
def masked_select(input, mask):
    """The entries of ``input`` where ``mask`` holds, as a vector (both broadcast)."""
    _check_mask(mask, "masked_select: expected BoolTensor for mask")
    # A 0-d result selects from a 1-element vector: the output is always 1-d.
    shape = broadcast_shapes(tuple(mask.shape), tuple(input.shape)) or (1,)
    m = mask._data
    xp = _xp.namespace_of(m)
    return saves_also(_masked_select(input, xp.nonzero(xp.broadcast_to(m, shape)), shape), mask,
                      input)



@defop("take", n_in=1, jvp="linear", batch="loop")
def _take(xp, input, index, in_shape):
    return xp.reshape(input, (-1,))[index]


_take.defvjp(lambda xp, g, ans, input, index, in_shape: xp.reshape(
    xp.index_add_zeros(g, (math.prod(in_shape),), (index,)), in_shape))



@_take.public
@batching.reads_data(1, "index")
def take(input, index):
    """The entries of the flattened ``input`` at ``index`` (shaped like ``index``)."""
    return saves_also(_take(input, _flat_index("take", input, index), input.shape), index, input)



# --------------------------------------------------------------------------- nonzero


@public
def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero entries: an ``(n, ndim)`` int64 tensor, or one vector per dim."""
    data = input._data
    xp = _xp.namespace_of(data)
    if as_tuple:
        found = xp.nonzero(data.reshape(1) if data.ndim == 0 else data)
        return tuple(Tensor._make(i.astype("int64"), None, False) for i in found)
    return Tensor._make(xp.argwhere(data).astype("int64"), None, False)


@public
def argwhere(input):
    return nonzero(input)



def getitem(x, key):
    """``x[key]``."""
    if batching.state.depth and batching.is_batched(*(key if isinstance(key, tuple) else (key,))):
        return _getitem_batched(x, key)
    if type(key) is tuple and type(x) is Tensor and _ints_and_slices(key, x._data.ndim):
        # The common basic key (an RNN's ``emb[:, t, :]``, makemore's ``padded[:, j:j + T]``):
        # its selects and slices, without classifying each entry (a third of the general
        # path's cost)
        out, dim = x, 0
        for position, k in enumerate(key):
            if type(k) is int:
                out = _apply_select(out, dim, k, position)
            else:
                out, dim = _apply_slice(out, dim, k, False), dim + 1
        return as_view(_alias(x), x, lambda xp, a: a) if out is x else out
    if type(key) is slice and type(x) is Tensor and x._data.ndim:
        # a lone slice (a language model's windows, ``data[i:i + block_size]``): one view,
        # as the general path below makes it (a forced slice), without classifying the key
        return _apply_slice(x, 0, key, True)
    lone_slice = isinstance(key, slice)  # x[:] is a slice, x[:, :] (or x[(slice(None),)]) not
    _check_scalar_index(x, key)
    if not isinstance(key, tuple):
        key = (key,)
    if len(key) == 1 and key[0] is Ellipsis:
        return as_view(_alias(x), x, lambda xp, a: a)
    out, advanced = _apply_basic(x, key, lone_slice)
    if advanced:
        return saves_also(_index(out, _advanced_key(out, advanced), out.shape),
                          *_tensors_in(key))
    if out is x:
        return as_view(_alias(x), x, lambda xp, a: a)
    return out


def _ints_and_slices(key, ndim):
    """Whether ``key`` holds only ints and slices, one to ``ndim`` of them: a key
    ``_apply_basic`` reads as selects and slices alone."""
    for k in key:
        if type(k) is not int and type(k) is not slice:
            return False
    return 0 < len(key) <= ndim


def _getitem_batched(x, key):
    """``x[key]`` under vmap with index tensors that differ per sample: one NumPy advanced
    index of the whole batch, whose batch dims are indexed by aranges (masks, whose selections
    differ in size per sample, run the per-sample loop)."""
    entries = key if isinstance(key, tuple) else (key,)
    per_sample = [type(k) is batching.BatchedTensor for k in entries]
    if any(p and k.dtype not in (_dtypes.int64, _dtypes.int32)
           for p, k in zip(per_sample, entries)):
        return batching.loop(getitem, (x, key))
    # The basic part applied as usual, a one-element stand-in for each per-sample index.
    stand_in = tuple(np.zeros(1, np.int64) if p else k for p, k in zip(per_sample, entries))
    out, advanced = _apply_basic(x, stand_in, False)
    kinds = [_classify(k)[0] for k in stand_in]
    sources = [k for k, kind in zip(entries, kinds) if kind in ("array", "bool")]
    if any(kind != "index" for _, kind, _ in advanced):
        return batching.loop(getitem, (x, key))
    levels = batching._union((x, *entries))
    nb = len(levels)
    rank = max(s.ndim if isinstance(s, Tensor) else np.ndim(a)
               for s, (_, _, a) in zip(sources, advanced))
    value = batching.physical(out, levels, expand=True)
    xp = _xp.namespace_of(value._data)
    phys = [slice(None)] * value.ndim
    for k, level in enumerate(levels):  # batch dim k indexed by an arange over it
        n = batching.batch_size(level)
        phys[k] = xp.arange(n).reshape((1,) * k + (n,) + (1,) * (nb - 1 - k + rank))
    dims = []
    for source, (dim, _, arr) in zip(sources, advanced):
        if type(source) is batching.BatchedTensor:
            arr = batching.physical(source, levels, rank)._data
        else:
            arr = xp.asarray(arr).reshape((1,) * (nb + rank - np.ndim(arr)) + np.shape(arr))
        phys[nb + dim] = _own(arr)
        dims.append(dim)
    arrays = [phys[nb + d] for d in dims]
    _check_bounds(xp, arrays, [value.shape[nb + d] for d in dims],
                  np.broadcast_shapes(*(a.shape for a in arrays + phys[:nb])))
    result = _index(value, tuple(phys), tuple(value.shape))
    if dims == list(range(dims[0], dims[0] + len(dims))) and dims[0] > 0:
        # adjacent index tensors after some dims: their result dims go where they were
        block = tuple(range(nb, nb + rank))
        result = result.movedim(block, tuple(d + dims[0] for d in block))
    return batching.wrap(result, levels)
