"""Indexing: ``x[key]``, ``x[key] = v``, and the gather / scatter / index / mask families.

Keys are applied as PyTorch applies them: the basic parts (integers, slices, ``None``, ``...``,
Python bools) become a chain of views (``x[0, 1:]`` is ``SliceBackward0`` over
``SelectBackward0``), then the advanced parts (integer and boolean tensors, lists) index the
view in one ``IndexBackward0``. Assignment writes into that view in place, giving the base a
``CopySlices`` node, or through ``index_put_`` for advanced keys.

Every op here reads or writes the entries of its input at a NumPy index *key* (a tuple of
slices and integer arrays): ``gather``, ``index_select``, ``take`` and ``masked_select`` are
reads whose derivative adds the gradient back at the key (repeated indices accumulate);
``scatter``, ``index_copy``, ``index_put``... are writes whose derivative reads the gradient at
the key for the written values and zeroes it there for the input.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtypes, _errors, _xp
from .._broadcast import broadcast_shapes
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad_mode
from ..autograd.graph import Node, gradient_edge, new_node
from ..autograd.views import as_view
from . import batching
from . import shape as _shape
from .autocast import autocast_op
from .registry import defop, saves_also
from .shape.helpers import _embed
from .shape.slices import slice_view
from .shape.views import _alias

# --------------------------------------------------------------------------- key helpers


def _own(index):
    """A private copy of an index array: nodes keep it, and the caller's tensor may be
    modified in place before the backward runs."""
    return index.copy()


def _zeroed(xp, g, key):
    """``g`` with the entries at ``key`` set to zero (the gradient of overwritten entries)."""
    g = g.copy() if hasattr(g, "copy") else g.clone()
    g[key] = 0
    return g


def _block(key):
    """The leading block of ``src`` that a scatter with this key reads."""
    shape = np.broadcast_shapes(*(k.shape for k in key if not isinstance(k, slice)))
    return tuple(slice(0, n) for n in shape)


def _dim_key(ndim, dim, index):
    """The key selecting ``index`` along ``dim`` (``index_select``, ``index_add``...)."""
    return (slice(None),) * dim + (index,) if ndim else ()


def _gather_key(xp, index, dim, ndim):
    """The key of ``gather``/``scatter``: entry ``i`` of ``index`` addresses ``(..., index[i],
    ...)`` with ``index[i]`` at ``dim`` and ``i``'s own coordinates elsewhere."""
    if index.ndim == 0:
        return (index,) if ndim == 1 else ()
    n = index.ndim
    return tuple(index if d == dim else
                 xp.reshape(xp.arange(index.shape[d]), (-1,) + (1,) * (n - 1 - d))
                 for d in range(n))


def _ufunc_at(xp, name, out, key, values):
    """``out[key] = name(out[key], values)`` with repeated indices applied one by one."""
    if name == "add":
        xp.add_at(out, key, values)
    elif xp is _xp.NUMPY:
        getattr(np, name).at(out, key, values)
    else:  # CuPy has ``at`` for few ufuncs (not multiply): do it on the host
        host = xp.asnumpy(out)
        getattr(np, name).at(host, tuple(xp.asnumpy(k) if not isinstance(k, slice) else k
                                         for k in key), xp.asnumpy(values))
        out[...] = xp.asarray(host)


# --------------------------------------------------------------------------- reads


def _read(xp, input, key, shape):
    return (input if input.shape == shape else xp.broadcast_to(input, shape))[key]


def _read_rule(xp, g, ans, input, key, shape):
    return xp.index_add_zeros(g, shape, key)


_index = defop("index", n_in=1, jvp="linear")(_read).defvjp(_read_rule)
_gather = defop("gather", n_in=1, jvp="linear")(_read).defvjp(_read_rule)
_index_select = defop("index_select", n_in=1, jvp="linear")(_read).defvjp(_read_rule)
_masked_select = defop("masked_select", n_in=1, jvp="linear")(_read).defvjp(_read_rule)


@defop("index_add_zeros", n_in=1, jvp="linear")
def _index_add_zeros(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""
    out = xp.zeros(shape, dtype=g.dtype)
    xp.add_at(out, key, g)
    return out


_index_add_zeros.defvjp(lambda xp, gg, ans, g, shape, key: gg[key])
_xp.register_extra("index_add_zeros", _index_add_zeros.forward, _index_add_zeros)


@defop("select", n_in=1, jvp="linear")
def _select(xp, input, key, shape):
    return input[key]


_select.defvjp(lambda xp, g, ans, input, key, shape: _embed(xp, g, shape, key))


# --------------------------------------------------------------------------- writes


@defop("index_put", n_in=2, jvp="linear")
def _index_put(xp, input, values, key, accumulate):
    out = input.copy()
    if accumulate:
        xp.add_at(out, key, values)
    else:
        out[key] = values
    return out


_index_put.defvjp(
    lambda xp, g, ans, input, values, key, accumulate: g if accumulate else _zeroed(xp, g, key),
    lambda xp, g, ans, input, values, key, accumulate: g[key])


@defop("copy", n_in=2, jvp="linear")
def _copy(xp, input, src):
    src = xp.asarray(src, dtype=input.dtype)
    return xp.broadcast_to(src, broadcast_shapes(input.shape, src.shape)).copy()


_copy.defvjp(lambda xp, g, ans, input, src: xp.zeros_like(g),
             lambda xp, g, ans, input, src: g)
_copy.node_cls.__name__ = _copy.node_cls.__qualname__ = "CopyBackwards"


@defop("fill", n_in=2, overload=3, jvp="linear")
def _fill(xp, input, value):
    return xp.full_like(input, value)


_fill.defvjp(lambda xp, g, ans, input, value: xp.zeros_like(g),
             lambda xp, g, ans, input, value: xp.sum(g))


@defop("fill", n_in=1, overload=2, jvp="transpose")
def _fill_scalar(xp, input, value):
    return xp.full_like(input, value)


_fill_scalar.defvjp(lambda xp, g, ans, input, value: xp.zeros_like(g))


@defop("zero", n_in=1, jvp="transpose")
def _zero(xp, input):
    return xp.zeros_like(input)


_zero.defvjp(lambda xp, g, ans, input: xp.zeros_like(g))


def _src_rule(name):
    """The derivative for the ``src`` of a scatter: the gradient read where it was written."""
    def rule(xp, g, ans, input, src, key, src_shape, *params):
        grad = g[key]
        if tuple(grad.shape) != tuple(src_shape):  # PyTorch's engine refuses it too
            raise RuntimeError(f"Function {name} returned an invalid gradient at index 1 - got "
                               f"{list(grad.shape)} but expected shape compatible with "
                               f"{list(src_shape)}")
        return grad
    return rule


@defop("scatter", n_in=2, jvp="linear")
def _scatter(xp, input, src, key, src_shape):
    out = input.copy()
    out[key] = src[_block(key)]
    return out


_scatter.defvjp(lambda xp, g, ans, input, src, key, src_shape: _zeroed(xp, g, key),
                _src_rule("ScatterBackward0"))


@defop("scatter", n_in=1, overload=1, jvp="transpose")
def _scatter_value(xp, input, key, value):
    out = input.copy()
    out[key] = value
    return out


_scatter_value.defvjp(lambda xp, g, ans, input, key, value: _zeroed(xp, g, key))


@defop("scatter_add", n_in=2, jvp="linear")
def _scatter_add(xp, input, src, key, src_shape):
    out = input.copy()
    xp.add_at(out, key, src[_block(key)])
    return out


_scatter_add.defvjp(lambda xp, g, ans, input, src, key, src_shape: g,
                    _src_rule("ScatterAddBackward0"))


def _reduce_identity(reduce, dtype):
    """The value an entry starts from when the input's own entry is left out."""
    floating = dtype.kind in "fc"
    if reduce == "amax":
        return -np.inf if floating else np.iinfo(dtype).min
    if reduce == "amin":
        return np.inf if floating else np.iinfo(dtype).max
    return 1 if reduce == "prod" else 0


def _scatter_counts(xp, key, shape, include_self, like):
    """How many values reduce into each entry (the input's own one included if it is); entries
    nothing reduces into count 1."""
    ones = xp.new_zeros(like, _shape_of(key)) + 1
    n = xp.index_add_zeros(ones, shape, key) + (1 if include_self else 0)
    return xp.where(n == 0, n + 1, n)


def _shape_of(key):
    return tuple(s.stop for s in _block(key))


@defop("scatter_reduce", n_in=2, jvp="transpose")
def _scatter_reduce(xp, input, src, key, src_shape, reduce, include_self):
    out = input.copy()
    src = src[_block(key)]
    if not include_self:
        out[key] = _reduce_identity(reduce, out.dtype)
    _ufunc_at(xp, {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
                   "amin": "minimum"}[reduce], out, key, src)
    if reduce == "mean":
        count = xp.zeros(out.shape, dtype=out.dtype)
        xp.add_at(count, key, 1)
        count = xp.maximum(count + (1 if include_self else 0), 1)
        out = out / count if out.dtype.kind in "fc" else xp.floor_divide(out, count)
    return out


_xp.register_extra("scatter_reduce_at", _scatter_reduce.forward, _scatter_reduce)


def _scatter_reduce_self(xp, g, ans, input, src, key, src_shape, reduce, include_self):
    """PyTorch's derivative for ``input`` (zero where it was excluded from the reduction)."""
    if reduce == "mean":
        g = g / _scatter_counts(xp, key, input.shape, include_self, g)
    elif reduce == "prod":
        # The product of the other factors, without dividing by a zero input.
        masked = xp.where(input == 0, input * 0 + 1, input)
        g = g * xp.scatter_reduce_at(masked, src, key, src_shape, reduce, include_self) / masked
    elif reduce in ("amax", "amin"):
        g = (input == ans) * g / _ties(xp, ans, input, src, key)
    return g if include_self else _zeroed(xp, g, key)


def _ties(xp, ans, input, src, key):
    """How many values equal each result of ``amax``/``amin`` (they share its gradient)."""
    src_wins = xp.astype(src[_block(key)] == ans[key], ans.dtype)  # (a count: no gradient)
    return (input == ans) + xp.index_add_zeros(src_wins, ans.shape, key)


def _scatter_reduce_src(xp, g, ans, input, src, key, src_shape, reduce, include_self):
    grad = _src_rule("ScatterReduceBackward0")(xp, g, ans, input, src, key, src_shape)
    if reduce == "mean":
        return grad / _scatter_counts(xp, key, input.shape, include_self, g)[key]
    if reduce == "prod":
        zero = src == 0
        zeros_there = xp.index_add_zeros(zero * (src * 0 + 1), input.shape, key)[key]
        lone_zero = zero & (zeros_there == 1)
        # A lone zero's derivative is the product of the others: redo the product without it.
        without = xp.scatter_reduce_at(input, xp.where(lone_zero, src * 0 + 1, src), key,
                                       src_shape, reduce, include_self)
        return xp.where(lone_zero, (g * without)[key],
                        (g * ans)[key] / xp.where(zero, src * 0 + 1, src))
    if reduce in ("amax", "amin"):
        share = (g / _ties(xp, ans, input, src, key))[key]
        return (src == ans[key]) * share
    return grad


_scatter_reduce.defvjp(_scatter_reduce_self, _scatter_reduce_src)


@defop("index_add", n_in=2, jvp="linear")
def _index_add(xp, input, source, key, alpha):
    out = input.copy()
    xp.add_at(out, key, source if alpha == 1 else source * alpha)
    return out


_index_add.defvjp(lambda xp, g, ans, input, source, key, alpha: g,
                  lambda xp, g, ans, input, source, key, alpha:
                      g[key] if alpha == 1 else g[key] * alpha)


@defop("index_copy", n_in=2, jvp="linear")
def _index_copy(xp, input, source, key):
    out = input.copy()
    out[key] = source
    return out


_index_copy.defvjp(lambda xp, g, ans, input, source, key: _zeroed(xp, g, key),
                   lambda xp, g, ans, input, source, key: g[key])


def _fill_at(xp, input, value, key):
    out = input.copy()
    out[key] = value
    return out


_index_fill = defop("index_fill", n_in=1, jvp="transpose")(
    lambda xp, input, key, value: _fill_at(xp, input, value, key))
_index_fill.defvjp(lambda xp, g, ans, input, key, value: _zeroed(xp, g, key))
_index_fill_tensor = defop("index_fill", n_in=2, overload=1, jvp="linear")(_fill_at)
_index_fill_tensor.defvjp(lambda xp, g, ans, input, value, key: _zeroed(xp, g, key),
                          lambda xp, g, ans, input, value, key: xp.sum(g[key]))


def _mask_fill(xp, input, value, mask):
    return xp.where(mask, xp.asarray(value, dtype=input.dtype), input)


_masked_fill = defop("masked_fill", n_in=1, jvp="transpose")(
    lambda xp, input, mask, value: _mask_fill(xp, input, value, mask))
# (``xp.where(mask, 0, g)``, not ``g * 0``: an infinite gradient where filled stays 0, not NaN)
_masked_fill.defvjp(lambda xp, g, ans, input, mask, value: xp.where(mask, 0, g))
_masked_fill_tensor = defop("masked_fill", n_in=2, overload=1, jvp="linear")(_mask_fill)
_masked_fill_tensor.defvjp(lambda xp, g, ans, input, value, mask: xp.where(mask, 0, g),
                           lambda xp, g, ans, input, value, mask: xp.sum(xp.where(mask, g, 0)))


@defop("masked_scatter", n_in=2, jvp="linear")
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


@defop("take", n_in=1, jvp="linear")
def _take(xp, input, index, in_shape):
    return xp.reshape(input, (-1,))[index]


_take.defvjp(lambda xp, g, ans, input, index, in_shape: xp.reshape(
    xp.index_add_zeros(g, (math.prod(in_shape),), (index,)), in_shape))


@defop("put", n_in=2, jvp="linear")
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


# --------------------------------------------------------------------------- argument checks


def _dtype_name(t):
    return t.dtype._legacy[:-6]  # 'FloatTensor' -> 'Float'


def _first_out_of_range(index, lo, hi):
    """The first entry of ``index`` outside ``[lo, hi)`` (C order), or None."""
    bad = index[(index < lo) | (index >= hi)]
    return None if bad.size == 0 else int(bad.reshape(-1)[0])


def _size(t, d):
    """PyTorch's ``ensure_nonempty_size``: a 0-d tensor has one entry along its one dim."""
    return 1 if t.ndim == 0 else t.shape[_wrap_dim(d, t.ndim)]


def _scatter_args(name, input, dim, index, src=None):
    """PyTorch's checks for gather/scatter (dtype, rank, sizes, index values); the key."""
    d = _wrap_dim(dim, input.ndim)
    idx = index._data
    if idx.size and index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    n = max(input.ndim, 1)
    if n != max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    xp = _xp.namespace_of(idx)
    key = _gather_key(xp, idx.astype("int64"), d, input.ndim)  # a copy: see _own
    if idx.size == 0:
        return key
    larger = [k for k in range(n) if k != d and _size(index, k) > _size(input, k)]
    if name == "gather":
        if larger:
            raise RuntimeError(
                f"Size does not match at dimension {larger[0]} expected index "
                f"{list(index.shape)} to be no larger than self {list(input.shape)} apart from "
                f"dimension {d}")
    elif isinstance(src, Tensor):
        if larger or any(_size(index, k) > _size(src, k) for k in range(n)):
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(input.shape)} apart from dimension {d} and to be no larger size than "
                f"src {list(src.shape)}")
    elif larger:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(input.shape)} apart from dimension {d}")
    size = _size(input, d)
    bad = _first_out_of_range(idx, 0, size)
    if bad is not None:
        raise RuntimeError(_errors.INDEX_RANGE.format(index=bad, dim=d, size=size))
    return key


def _check_same_dtype(message, input, other):
    if other.dtype != input.dtype:
        raise RuntimeError(message)


def _check_slices(name, input, d, index, source):
    """``index_add``/``index_copy``: ``source`` is ``input`` with dim ``d`` of ``len(index)``."""
    if source.ndim != input.ndim and source.ndim and input.ndim:
        if name == "index_copy_":
            raise IndexError("index_copy_(): When source and destination are not scalars, their "
                             f"dimensionality must match. Source dimensionality ({source.ndim}), "
                             f"destination dimensionality ({input.ndim})")
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source "
                           f"tensor with dim {source.ndim}")
    n = _size(source, d)
    if index.size != n:
        msg = (f"index_copy_(): Number of indices ({index.size}) should be equal to "
               f"source.size(dim) ({n})" if name == "index_copy_" else
               f"index_add_(): Number of indices ({index.size}) should be equal to "
               f"source.size(dim): ({n}), for dim: {d}")
        raise (IndexError if name == "index_copy_" else RuntimeError)(msg)
    for k in range(input.ndim):
        if k != d and source.ndim and source.shape[k] != input.shape[k]:
            if name == "index_copy_":
                raise RuntimeError(
                    "index_copy_(): Source/destination tensor must have same slice shapes. "
                    f"Destination slice shape: {_slice_shape(input, d)} at dimension {d} and "
                    f"source slice shape: {_slice_shape(source, d)} at dimension 0.")
            raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                               f"specified dimension. Got self.shape = {list(input.shape)} "
                               f"source.shape = {list(source.shape)}")


def _slice_shape(t, d):
    return " ".join(str(n) for k, n in enumerate(t.shape) if k != d)


# --------------------------------------------------------------------------- gather / scatter


def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j][k] = input[index[i][j][k]][j][k]`` (for ``dim=0``); index has input's rank."""
    key = _scatter_args("gather", input, dim, index)
    # A 0-d input is read as a vector of one entry when the index is a vector.
    # (PyTorch's gather, take and masked_select also save their input, for its metadata)
    return saves_also(_gather(input, key, (1,) if input.ndim < len(key) else input.shape),
                      index, input)


def _scatter_reduce_arg(reduce, kind):
    """The deprecated ``reduce=`` of ``scatter``: 'add' or 'multiply'."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if kind == "src":
        _errors.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                     "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                     "instead for more reduction options.")


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Write ``src`` (or the number ``value``) into a copy of ``input`` at ``index`` along ``dim``.

    Where indices repeat, the last write wins.
    """
    if src is None:
        src = value
    if reduce is not None:
        _scatter_reduce_arg(reduce, "src" if isinstance(src, Tensor) else "value")
    key = _scatter_args("scatter", input, dim, index, src)
    if reduce is not None:
        return _scatter_legacy(input, src, key, reduce)
    if isinstance(src, Tensor):
        return saves_also(_scatter(input, src, key, tuple(src.shape)), index)
    return saves_also(_scatter_value(input, key, src), index)


class _NotImplemented(Node):
    """The grad_fn of a result PyTorch computes but cannot differentiate: running it raises."""

    __slots__ = ("_message",)

    def apply(self, grad_outputs, create_graph):
        raise RuntimeError(self._message)

    def release(self):
        pass


_NotImplemented.__name__ = _NotImplemented.__qualname__ = "NotImplemented"


def _scatter_legacy(input, src, key, reduce):
    """``scatter(..., reduce='add'|'multiply')``: its result gets PyTorch's ``NotImplemented``
    grad_fn, whose backward raises."""
    xp = _xp.namespace_of(input._data)
    out = input._data.copy()
    values = src._data[_block(key)] if isinstance(src, Tensor) else src
    _ufunc_at(xp, "add" if reduce == "add" else "multiply", out, key,
              xp.broadcast_to(xp.asarray(values, dtype=out.dtype), _shape_of(key)))
    inputs = [t for t in (input, src) if isinstance(t, Tensor)]
    if not (grad_mode._state.grad and any(t.requires_grad for t in inputs)):
        return Tensor._make(out, None, False)
    node = new_node(_NotImplemented, tuple(gradient_edge(t) for t in inputs))
    node._message = "derivative for aten::scatter is not implemented"
    return Tensor._make(out, node, True)


def scatter_add(input, dim, index, src):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim`` (repeats accumulate)."""
    key = _scatter_args("scatter", input, dim, index, src)
    return saves_also(_scatter_add(input, src, key, tuple(src.shape)), index)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim``.

    ``reduce``: 'sum', 'prod', 'mean', 'amax' or 'amin'; ``include_self``: whether the input's
    own entries take part. Ties of amax/amin share the gradient equally, as in PyTorch.
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    key = _scatter_args("scatter", input, dim, index, src)
    return saves_also(_scatter_reduce(input, src, key, tuple(src.shape), reduce, include_self),
                      index)


def take_along_dim(input, indices, dim=None):
    """``gather`` with ``indices`` broadcast against ``input`` (flattened when ``dim`` is None)."""
    if indices.dtype != _dtypes.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype_name(indices)}")
    if dim is None:
        return gather(_shape.reshape(input, (-1,)), 0, _shape.reshape(indices, (-1,)))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = _wrap_dim(dim, input.ndim)
    shape = list(broadcast_shapes(*(t.shape[:d] + (1,) + t.shape[d + 1:]
                                    for t in (input, indices))))
    shape[d] = input.shape[d]
    input = _shape.expand(input, shape)
    shape[d] = indices.shape[d]
    # PyTorch gathers with a broadcast copy of the indices: later writes to them are harmless.
    return gather(input, d, _shape.expand(indices, shape).clone())


# --------------------------------------------------------------------------- index_*


def index_select(input, dim, index):
    """The entries at ``index`` (a vector) along ``dim``; repeated indices repeat entries."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = _own(index._data.reshape(-1))
    size = _size(input, d)
    bad = _first_out_of_range(idx, 0, size)
    if bad is not None:
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    if input.ndim == 0 and idx.size != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    return saves_also(_index_select(input, _dim_key(input.ndim, d, idx), input.shape), index)


def index_add(input, dim, index, source, *, alpha=1):
    """Add ``alpha * source`` into a copy of ``input`` at ``index`` along ``dim``."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_dtype_name(index)} and size: "
                         f"{list(index.shape)}")
    if index.dtype not in (_dtypes.int64, _dtypes.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype_name(index)}")
    _check_same_dtype(f"index_add_(): self ({_dtype_name(input)}) and source "
                      f"({_dtype_name(source)}) must have the same scalar type", input, source)
    idx = _own(index._data.reshape(-1))
    _check_slices("index_add_", input, d, idx, source)
    bad = _first_out_of_range(idx, 0, _size(input, d))
    if bad is not None:
        if input.ndim <= 1:  # PyTorch's one-dimensional kernel words it so
            raise IndexError("index out of range in self")
        raise RuntimeError(_errors.INDEX_RANGE.format(index=bad, dim=d, size=_size(input, d)))
    return saves_also(_index_add(input, source, _dim_key(input.ndim, d, idx), alpha), index)


@autocast_op("index_copy")
def index_copy(input, dim, index, source):
    """Copy ``source`` into a copy of ``input`` at ``index`` along ``dim`` (last write wins)."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype != _dtypes.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtype_name(index)}")
    _check_same_dtype("index_copy_(): self and source expected to have the same dtype, but got "
                      f"(self) {_dtype_name(input)} and (source) {_dtype_name(source)}",
                      input, source)
    idx = _own(index._data.reshape(-1))
    _check_slices("index_copy_", input, d, idx, source)
    size = _size(input, d)
    bad = _first_out_of_range(idx, 0, size)
    if bad is not None:
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                         f"size {size}")
    return saves_also(_index_copy(input, source, _dim_key(input.ndim, d, idx)), index)


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
    idx = _own(index._data.reshape(-1))
    size = _size(input, d)
    bad = _first_out_of_range(idx, -size, size)
    if bad is not None:
        raise IndexError(_errors.INDEX_RANGE.format(index=bad, dim=d, size=size))
    xp = _xp.namespace_of(idx)
    key = _dim_key(input.ndim, d, xp.unique(idx % size))  # each entry filled once
    if isinstance(value, Tensor):
        return saves_also(_index_fill_tensor(input, _shape.to_dtype(value, input.dtype), key),
                          index)
    return saves_also(_index_fill(input, key, value), index)


# --------------------------------------------------------------------------- masks


def _check_mask(mask, message):
    if mask.dtype != _dtypes.bool:
        raise RuntimeError(message)


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
        return saves_also(_masked_fill_tensor(input, _shape.to_dtype(value, input.dtype), m),
                          mask)
    return saves_also(_masked_fill(input, m, value), mask)


def _mask_dtype_words(mask):
    """The C++ type name PyTorch prints in masked_fill's message (``long int``...)."""
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "float32": "float", "float64": "double",
            "float16": "c10::Half"}.get(mask._data.dtype.name, mask._data.dtype.name)


def masked_select(input, mask):
    """The entries of ``input`` where ``mask`` holds, as a vector (both broadcast)."""
    _check_mask(mask, "masked_select: expected BoolTensor for mask")
    # A 0-d result selects from a 1-element vector: the output is always 1-d.
    shape = broadcast_shapes(tuple(mask.shape), tuple(input.shape)) or (1,)
    m = mask._data
    xp = _xp.namespace_of(m)
    return saves_also(_masked_select(input, xp.nonzero(xp.broadcast_to(m, shape)), shape), mask,
                      input)


def masked_scatter(input, mask, source):
    """``input`` with the first entries of ``source``, in order, where ``mask`` holds."""
    _check_mask(mask, "masked_scatter_ only supports boolean masks, but got mask with dtype "
                      f"{_dtype_name(mask)}")
    if source.dtype != input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_dtype_name(input)} and {_dtype_name(source)}")
    shape = broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    m = mask._data
    xp = _xp.namespace_of(m)
    m = xp.broadcast_to(m, shape).copy()
    if int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return saves_also(_masked_scatter(input, source, m, tuple(source.shape)), mask)


# --------------------------------------------------------------------------- flat indices


def _flat_index(name, input, index):
    """``index`` as positions in the flattened ``input``, checked as PyTorch checks them."""
    if index.dtype != _dtypes.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{_dtype_name(index)}")
    n = input.numel()
    bad = _first_out_of_range(index._data, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    return _own(index._data)


def take(input, index):
    """The entries of the flattened ``input`` at ``index`` (shaped like ``index``)."""
    return saves_also(_take(input, _flat_index("take", input, index), input.shape), index, input)


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (or added) at flat positions ``index``."""
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    if source.dtype != input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_dtype_name(input)} and source.dtype = "
                           f"{_dtype_name(source)}")
    return saves_also(_put(input, source, _flat_index("put_", input, index).reshape(-1),
                           accumulate, tuple(source.shape)), index)


# --------------------------------------------------------------------------- nonzero


def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero entries: an ``(n, ndim)`` int64 tensor, or one vector per dim."""
    data = input._data
    xp = _xp.namespace_of(data)
    if as_tuple:
        found = xp.nonzero(data.reshape(1) if data.ndim == 0 else data)
        return tuple(Tensor._make(i.astype("int64"), None, False) for i in found)
    return Tensor._make(xp.argwhere(data).astype("int64"), None, False)


def argwhere(input):
    return nonzero(input)


# --------------------------------------------------------------------------- x[key]


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _classify(k):
    """One key entry as ``(kind, value)``: none, ellipsis, bool, int, slice or array."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k)
    if _is_int(k):
        return "int", int(k)
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (Tensor, np.ndarray)) or hasattr(k, "__cuda_array_interface__"):
        arr = k._data if isinstance(k, Tensor) else k
        if arr.ndim == 0 and arr.dtype.kind in "iu":
            return "int", int(arr)
        if arr.ndim == 0 and arr.dtype == bool:
            return "bool", bool(arr)
        return "array", arr
    if isinstance(k, (list, tuple)):
        return "array", _list_index(k)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(k).__name__})")


def _list_index(k):
    arr = np.asarray([e.item() if isinstance(e, Tensor) else e for e in k]) if k else \
        np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "f" and arr.size == 0:
        arr = arr.astype(np.int64)
    return arr


def _array_entry(arr):
    """An array key entry as ``(kind, array)``: an integer index or a boolean mask."""
    if arr.dtype == np.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        return "mask", arr.astype(bool)
    if arr.dtype == bool:
        return "mask", arr
    if arr.dtype.kind not in "iu" or arr.dtype.itemsize < 4:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return "index", arr


def _apply_basic(x, key, force_slice):
    """Apply the basic part of ``key`` to ``x`` as views.

    Returns the view and the advanced entries left, as ``(dim, kind, array)`` with ``dim`` a
    dim of the view.
    """
    entries = [_classify(k) for k in key]
    entries = [(kind, v) if kind != "array" else _array_entry(v) for kind, v in entries]
    used = sum(v.ndim if kind == "mask" else 1 for kind, v in entries
               if kind in ("int", "slice", "index", "mask"))
    if used > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    out, dim, advanced, rest = x, 0, [], x.ndim - used
    for position, (kind, v) in enumerate(entries):
        if kind == "ellipsis":
            dim, rest = dim + rest, 0
        elif kind == "none":
            out, dim = _shape.unsqueeze(out, dim), dim + 1
        elif kind == "bool":
            out = _shape.unsqueeze(out, dim)
            advanced.append((dim, "mask", np.array([v])))
            dim += 1
        elif kind == "int":
            out = _apply_select(out, dim, v, position)
        elif kind == "slice":
            out, dim = _apply_slice(out, dim, v, force_slice), dim + 1
        else:
            advanced.append((dim, kind, v))
            dim += v.ndim if kind == "mask" else 1
    return out, advanced


def _apply_select(t, dim, index, position):
    """``t`` at ``index`` along ``dim`` (a view); errors name the position in the key."""
    size = t.shape[dim]
    if not -size <= index < size:
        raise IndexError(_errors.INDEX_RANGE.format(index=index, dim=position, size=size))
    key = (slice(None),) * dim + (index % size, Ellipsis)
    return as_view(_select(t, key, t.shape), t, lambda xp, a: a[key])


def _apply_slice(t, dim, s, force):
    size = t.shape[dim]
    if s.step is not None and s.step <= 0:
        raise ValueError("slice step cannot be zero" if s.step == 0 else
                         "step must be greater than zero")
    start, stop, step = s.indices(size)
    if not force and s.start in (None, 0) and step == 1 and (s.stop is None or s.stop >= size):
        return t  # PyTorch's test: the slice as written (``-1:`` of one element still slices)
    return slice_view(t, dim, start, stop, step)


def _advanced_key(t, advanced):
    """The NumPy key indexing ``t`` with the advanced entries (masks become their nonzeros)."""
    xp = _xp.namespace_of(t._data)
    key = [slice(None)] * t.ndim
    for dim, kind, arr in advanced:
        if kind == "mask":
            for j in range(arr.ndim):
                if arr.shape[j] != t.shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(arr.shape)} at index {j} does not match "
                        f"the shape of the indexed tensor {list(t.shape)} at index {dim + j}")
            key[dim:dim + arr.ndim] = xp.nonzero(xp.asarray(arr))
        else:
            key[dim] = _own(xp.asarray(arr))
    dims = [d for d, k in enumerate(key) if not isinstance(k, slice)]
    try:
        shape = broadcast_shapes(*(key[d].shape for d in dims))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(key[d].shape)) for d in dims)
                         ) from None
    _check_bounds(xp, [key[d] for d in dims], [t.shape[d] for d in dims], shape)
    while key and isinstance(key[-1], slice):
        key.pop()  # trailing full slices are implied
    return tuple(key)


def _check_bounds(xp, arrays, sizes, shape):
    """PyTorch's bounds check: entry by entry of the broadcast indices, each index in turn.

    The error names the index's position among the index tensors.
    """
    flags = xp.stack([xp.broadcast_to((a < -n) | (a >= n), shape).reshape(-1)
                      for a, n in zip(arrays, sizes)])
    if not flags.any():
        return
    entry = int(flags.any(axis=0).argmax())
    k = int(flags[:, entry].argmax())
    value = int(xp.broadcast_to(arrays[k], shape).reshape(-1)[entry])
    raise IndexError(_errors.INDEX_RANGE.format(index=value, dim=k, size=sizes[k]))


def _indexed_shape(shape, key):
    """The shape of ``a[key]`` for an array of ``shape`` (NumPy's and PyTorch's rule)."""
    arrays = [i for i, k in enumerate(key) if not isinstance(k, slice)]
    index_shape = list(broadcast_shapes(*(key[i].shape for i in arrays)))
    rest = [n for i, n in enumerate(shape) if i >= len(key) or isinstance(key[i], slice)]
    pos = arrays[0] if arrays == list(range(arrays[0], arrays[-1] + 1)) else 0
    return tuple(rest[:pos] + index_shape + rest[pos:])


def _check_scalar_index(x, key):
    """PyTorch's errors for ``x[i]`` on a 0-d ``x`` (a tuple key gets "too many indices")."""
    if x.ndim == 0 and isinstance(key, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if x.ndim == 0 and _is_int(key):
        if key == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(_errors.INDEX_RANGE.format(index=key, dim=0, size=0))


def getitem(x, key):
    """``x[key]``."""
    if batching.state.depth and batching.is_batched(*(key if isinstance(key, tuple) else (key,))):
        return _getitem_batched(x, key)
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
        value = _shape.view(value, _strip_leading_ones(value.shape))
        if value.shape != dst.shape:
            value = _shape.expand(value, dst.shape)
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
        _copy_to(_shape.unsqueeze(x, 0), value)
        return
    target, advanced = _apply_basic(x, key, False)
    if not advanced:
        _copy_to(target, value)
        return
    stripped = _strip_leading_ones(value.shape)
    if stripped != tuple(value.shape):
        value = _shape.view(value, stripped)
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
        values = _shape.to_dtype(values, t.dtype)
    _check_index_put(t, key, values)
    t._check_inplace()
    t._assign(saves_also(_index_put(t, values, key, accumulate), *indices))
    return t


def _tensors_in(key):
    """The index tensors of a key (a tensor or a tuple of entries), for ``saves_also``."""
    return [k for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, Tensor)]


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


def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` written (or added) at the tensor indices."""
    key = _index_put_key(input, indices)
    _check_index_put(input, key, values)
    return saves_also(_index_put(input, values, key, accumulate), *_tensors_in(tuple(indices)))


def _check_index_put(t, key, values):
    """PyTorch's checks for writing ``values`` at ``key``: same dtype, broadcastable shape."""
    if values.dtype != t.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_dtype_name(t)} for the destination and {_dtype_name(values)} "
                           "for the source.")
    shape = _indexed_shape(tuple(t.shape), key) if key else tuple(t.shape)
    vshape = tuple(values.shape)
    if len(vshape) > len(shape) or any(
            v not in (1, n) for v, n in zip(vshape[::-1], shape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(shape)}")


# --------------------------------------------------------------------------- the family's surface
__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "take_along_dim",
           "index_select", "index_add", "index_copy", "index_fill", "index_put", "masked_fill",
           "masked_select", "masked_scatter", "take", "put", "nonzero", "argwhere"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = ("scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
           "index_put", "masked_fill", "masked_scatter", "put")
