"""Indexing ops that write: ``x[key] = v`` (``setitem``), ``index_put``, ``copy_``, ``fill_``,
``zero_``, ``index_add`` / ``index_copy`` / ``index_fill``, ``masked_fill`` /
``masked_scatter``, ``put`` (the scatter family: ``scattering.py``).

A write's derivative reads the gradient at the key for the values written and zeroes it there
for the input. ``x[key] = v`` writes into the view ``x[key]`` in place, giving the base a
``CopySlices`` node, or through ``index_put_`` for advanced keys.
"""
from __future__ import annotations

import math

from ... import _dtypes, _errors, _xp
from ..._broadcast import broadcast_shapes
from ..._tensor import Tensor, _wrap_dim
from .. import batching
from ..autocast import autocast_op
from ..registry import defop, public, saves_also
from ..shape.layout import to_dtype
from ..shape.views import expand, unsqueeze, view
from .keys import (
    _advanced_key,
    _apply_basic,
    _array_entry,
    _check_mask,
    _check_same_dtype,
    _check_scalar_index,
    _check_slices,
    _dim_key,
    _first_out_of_range,
    _flat_index,
    _indexed_shape,
    _own,
    _size,
    _tensors_in,
    _zeroed,
)
from .reading import add_at

# --------------------------------------------------------------------------- writes


@defop("index_put", n_in=2, jvp="linear", batch="loop")
def _index_put(xp, input, values, key, accumulate):
    out = input.copy()
    if accumulate:
        add_at(xp, out, key, values)
    else:
        out[key] = values
    return out


_index_put.defvjp(
    lambda xp, g, ans, input, values, key, accumulate: g if accumulate else _zeroed(xp, g, key),
    lambda xp, g, ans, input, values, key, accumulate: g[key])


def _into_batched(op, args, levels):
    """The batching rule of ``copy``: pointwise, the result expanded to the written tensor's
    batch (every sample is written)."""
    return batching.pointwise(op, args, levels, like_first=True)


def _fill_batched(op, args, levels):
    """The batching rule of ``fill`` with a 0-d tensor: each sample's value expanded over it."""
    input, value = args
    shape = tuple(batching.physical(input, levels, expand=True).shape)
    return batching.wrap(batching.physical(value, levels, input.ndim).expand(shape).to(
        input.dtype), levels)


@defop("copy", n_in=2, jvp="linear", batch=_into_batched)
def _copy(xp, input, src):
    src = xp.asarray(src, dtype=input.dtype)
    return xp.broadcast_to(src, broadcast_shapes(input.shape, src.shape)).copy()


_copy.defvjp(lambda xp, g, ans, input, src: xp.zeros_like(g),
             lambda xp, g, ans, input, src: g)
_copy.node_cls.__name__ = _copy.node_cls.__qualname__ = "CopyBackwards"


@defop("fill", n_in=2, overload=3, jvp="linear", batch=_fill_batched)
def _fill(xp, input, value):
    return xp.full_like(input, value)


_fill.defvjp(lambda xp, g, ans, input, value: xp.zeros_like(g),
             lambda xp, g, ans, input, value: xp.sum(g))


@defop("fill", n_in=1, overload=2, jvp="transpose", batch="unchanged")
def _fill_scalar(xp, input, value):
    return xp.full_like(input, value)


_fill_scalar.defvjp(lambda xp, g, ans, input, value: xp.zeros_like(g))


@defop("zero", n_in=1, jvp="transpose", batch="unchanged")
def _zero(xp, input):
    return xp.zeros_like(input)


_zero.defvjp(lambda xp, g, ans, input: xp.zeros_like(g))



@defop("index_add", n_in=2, jvp="linear", batch="loop", inplace=True)
def _index_add(xp, input, source, key, alpha):
    out = input.copy()
    add_at(xp, out, key, source if alpha == 1 else source * alpha)
    return out


_index_add.defvjp(lambda xp, g, ans, input, source, key, alpha: g,
                  lambda xp, g, ans, input, source, key, alpha:
                      g[key] if alpha == 1 else g[key] * alpha)


@_index_add.public
@batching.reads_data(2, "index")
def index_add(input, dim, index, source, *, alpha=1):
    """Add ``alpha * source`` into a copy of ``input`` at ``index`` along ``dim``."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {index.dtype._word} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._word}")
    _check_same_dtype(f"index_add_(): self ({input.dtype._word}) and source "
                      f"({source.dtype._word}) must have the same scalar type", input, source)
    idx = _own(index._data, flat=True)
    _check_slices("index_add_", input, d, idx, source)
    bad = _first_out_of_range(idx, 0, _size(input, d))
    if bad is not None:
        if input.ndim <= 1:  # PyTorch's one-dimensional kernel words it so
            raise IndexError("index out of range in self")
        raise RuntimeError(_errors.INDEX_RANGE.format(index=bad, dim=d, size=_size(input, d)))
    return saves_also(_index_add(input, source, _dim_key(input.ndim, d, idx), alpha), index)


@defop("index_copy", n_in=2, jvp="linear", batch="loop", inplace=True)
def _index_copy(xp, input, source, key):
    out = input.copy()
    out[key] = source
    return out


_index_copy.defvjp(lambda xp, g, ans, input, source, key: _zeroed(xp, g, key),
                   lambda xp, g, ans, input, source, key: g[key])


@_index_copy.public
@autocast_op("index_copy")
@batching.reads_data(2, "index")
def index_copy(input, dim, index, source):
    """Copy ``source`` into a copy of ``input`` at ``index`` along ``dim`` (last write wins)."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype != _dtypes.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{index.dtype._word}")
    _check_same_dtype("index_copy_(): self and source expected to have the same dtype, but got "
                      f"(self) {input.dtype._word} and (source) {source.dtype._word}",
                      input, source)
    idx = _own(index._data, flat=True)
    _check_slices("index_copy_", input, d, idx, source)
    size = _size(input, d)
    bad = _first_out_of_range(idx, 0, size)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                         f"size {size}")
    return saves_also(_index_copy(input, source, _dim_key(input.ndim, d, idx)), index)


def _fill_at(xp, input, value, key):
    out = input.copy()
    out[key] = value
    return out


_index_fill = defop("index_fill", n_in=1, jvp="transpose", batch="loop")(
    lambda xp, input, key, value: _fill_at(xp, input, value, key))
_index_fill.defvjp(lambda xp, g, ans, input, key, value: _zeroed(xp, g, key))
_index_fill_tensor = defop("index_fill", n_in=2, overload=1, jvp="linear", batch="loop")(_fill_at)
_index_fill_tensor.defvjp(lambda xp, g, ans, input, value, key: _zeroed(xp, g, key),
                          lambda xp, g, ans, input, value, key: xp.sum(g[key]))


@public(inplace=True)  # (the op of each overload above)
@batching.reads_data(2, "index")
def index_fill(input, dim, index, value):
    """A copy of ``input`` with the entries at ``index`` along ``dim`` set to ``value``."""
    d = _wrap_dim(dim, input.ndim)
    if index.dtype != _dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    idx = _own(index._data, flat=True)
    size = _size(input, d)
    bad = _first_out_of_range(idx, -size, size)
    if bad is not None:
        raise IndexError(_errors.INDEX_RANGE.format(index=bad, dim=d, size=size))
    xp = _xp.namespace_of(idx)
    key = _dim_key(input.ndim, d, xp.unique(idx % size))  # each entry filled once
    if isinstance(value, Tensor):
        return saves_also(_index_fill_tensor(input, to_dtype(value, input.dtype), key),
                          index)
    return saves_also(_index_fill(input, key, value), index)


# --------------------------------------------------------------------------- masks


def _mask_fill(xp, input, value, mask):
    return xp.where(mask, xp.asarray(value, dtype=input.dtype), input)


_masked_fill = defop("masked_fill", n_in=1, jvp="transpose", batch="loop")(
    lambda xp, input, mask, value: _mask_fill(xp, input, value, mask))
# (``xp.where(mask, 0, g)``, not ``g * 0``: an infinite gradient where filled stays 0, not NaN)
_masked_fill.defvjp(lambda xp, g, ans, input, mask, value: xp.where(mask, 0, g))
_masked_fill_tensor = defop("masked_fill", n_in=2, overload=1, jvp="linear",
                            batch="loop")(_mask_fill)
_masked_fill_tensor.defvjp(lambda xp, g, ans, input, value, mask: xp.where(mask, 0, g),
                           lambda xp, g, ans, input, value, mask: xp.sum(xp.where(mask, g, 0)))


@public(inplace=True)  # (the op of each overload above)
@batching.per_sample_with(batching.lined_up_first)
def masked_fill(input, mask, value):
    """``input`` with ``value`` where ``mask`` holds (input and mask broadcast together)."""
    _check_mask(mask, "masked_fill_ only supports boolean masks, but got mask with dtype "
                      f"{_mask_dtype_words(mask)}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    m = _own(mask._data)
    broadcast_shapes(m.shape, tuple(input.shape))
    if isinstance(value, Tensor):
        return saves_also(_masked_fill_tensor(input, to_dtype(value, input.dtype), m),
                          mask)
    return saves_also(_masked_fill(input, m, value), mask)


def _mask_dtype_words(mask):
    """The C++ type name PyTorch prints in masked_fill's message (``long int``...)."""
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "float32": "float", "float64": "double",
            "float16": "c10::Half"}.get(mask._data.dtype.name, mask._data.dtype.name)


@defop("masked_scatter", n_in=2, jvp="linear", batch="loop", inplace=True)
def _masked_scatter(xp, input, source, mask, source_shape):
    out = xp.broadcast_to(input, mask.shape).copy()
    out[mask] = xp.reshape(source, (-1,))[:int(mask.sum())]
    return out


def _masked_scatter_source(xp, g, ans, input, source, mask, source_shape):
    """The gradient of the source entries used, in order; zero for those left over."""
    used = g[mask]
    rest = xp.new_zeros(g, (math.prod(source_shape) - used.shape[0],))
    return xp.reshape(xp.concatenate([used, rest], axis=0), source_shape)


_masked_scatter.defvjp(
    lambda xp, g, ans, input, source, mask, source_shape: xp.where(mask, g * 0, g),
    _masked_scatter_source)


@_masked_scatter.public
@batching.reads_data(1, "mask")
def masked_scatter(input, mask, source):
    """``input`` with the first entries of ``source``, in order, where ``mask`` holds."""
    _check_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with dtype "
                      f"{mask.dtype._word}")
    if source.dtype != input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype._word} and {source.dtype._word}")
    shape = broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    m = mask._data
    xp = _xp.namespace_of(m)
    m = xp.broadcast_to(m, shape).copy()
    if int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return saves_also(_masked_scatter(input, source, m, tuple(source.shape)), mask)


@defop("put", n_in=2, jvp="linear", batch="loop", inplace=True)
def _put(xp, input, source, index, accumulate, source_shape):
    out = input.copy()
    flat = out.reshape(-1)  # a view: the copy is contiguous
    if accumulate:
        xp.add_at(flat, (index,), xp.reshape(source, (-1,)))
    else:
        flat[index] = xp.reshape(source, (-1,))
    return out


def _put_self(xp, g, ans, input, source, index, accumulate, source_shape):
    if accumulate:
        return g
    g = g.copy() if hasattr(g, "copy") else g.clone()
    xp.reshape(g, (-1,))[index] = 0
    return g


_put.defvjp(_put_self, lambda xp, g, ans, input, source, index, accumulate, source_shape:
            xp.reshape(xp.reshape(g, (-1,))[index], source_shape))


@_put.public
@batching.reads_data(1, "index")
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    if source.dtype != input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype._word} and source.dtype = "
                           f"{source.dtype._word}")
    return saves_also(_put(input, source, _flat_index("put_", input, index).reshape(-1),
                           accumulate, tuple(source.shape)), index)



# --------------------------------------------------------------------------- x[key] = value


def _value_tensor(x, value):
    """``value`` as a tensor: a number becomes a 0-d tensor of ``x``'s dtype and device."""
    if isinstance(value, Tensor):
        return value.to(x.device) if value.is_cuda != x.is_cuda else value
    xp = _xp.namespace_of(x._data)
    return Tensor._make(xp.asarray(value, dtype=x._data.dtype), None, False)


def _copy_to(dst, value):
    """Write ``value`` into ``dst`` in place: a copy, a fill, or a broadcast copy."""
    if value.shape == dst.shape:
        dst._inplace(_copy, value)
    elif value.ndim == 0:
        dst._inplace(_fill, value)
    else:
        value = view(value, _strip_leading_ones(value.shape))
        if value.shape != dst.shape:
            value = expand(value, dst.shape)
        dst._inplace(_copy, value)


def _strip_leading_ones(shape):
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def setitem(x, key, value):
    """``x[key] = value``: an in-place write into a view, or ``index_put_`` for advanced keys."""
    _check_scalar_index(x, key)
    if not isinstance(key, tuple):
        key = (key,)
    value = _value_tensor(x, value)
    if len(key) == 1 and key[0] is False:
        return  # selects nothing
    if len(key) == 1 and (key[0] is None or key[0] is True):
        _copy_to(unsqueeze(x, 0), value)
        return
    target, advanced = _apply_basic(x, key, False)
    if not advanced:
        _copy_to(target, value)
        return
    stripped = _strip_leading_ones(value.shape)
    if stripped != tuple(value.shape):
        value = view(value, stripped)
    _index_put_(target, _advanced_key(target, advanced), value, False, _masked_fill_like(
        target, advanced, value), _tensors_in(key))


def _masked_fill_like(t, advanced, value):
    """Whether PyTorch serves this ``index_put_`` as a ``masked_fill_`` (no dtype check)."""
    return (value.numel() == 1 and not value.is_cuda and len(advanced) == 1
            and advanced[0][1] == "mask")


def _index_put_(t, key, values, accumulate, any_dtype=False, indices=()):
    """Write ``values`` into ``t`` at ``key`` (made from the tensors ``indices``) in place
    (``IndexPutBackward0``)."""
    if any_dtype:
        values = to_dtype(values, t.dtype)
    _check_index_put(t, key, values)
    t._check_inplace()
    t._assign(saves_also(_index_put(t, values, key, accumulate), *indices))
    return t



def _index_put_key(input, indices):
    indices = tuple(indices)
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(i).__name__}")
    entries = []
    dim = 0
    for i in indices:
        kind, arr = _array_entry(i._data)
        entries.append((dim, kind, arr))
        dim += arr.ndim if kind == "mask" else 1
    if dim > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} (got {dim})")
    return _advanced_key(input, entries)


@public(inplace=True)
@batching.reads_data(1, "indices")
def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (or added) at the tensor indices."""
    key = _index_put_key(input, indices)
    _check_index_put(input, key, values)
    return saves_also(_index_put(input, values, key, accumulate), *_tensors_in(tuple(indices)))


def _check_index_put(t, key, values):
    """PyTorch's checks for writing ``values`` at ``key``: same dtype, broadcastable shape."""
    if values.dtype != t.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{t.dtype._word} for the destination and {values.dtype._word} "
                           "for the source.")
    shape = _indexed_shape(tuple(t.shape), key) if key else tuple(t.shape)
    vshape = tuple(values.shape)
    if len(vshape) > len(shape) or any(
            v not in (1, n) for v, n in zip(vshape[::-1], shape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(shape)}")
