"""What the indexing ops share: index keys and PyTorch's checks of them.

The NumPy key helpers (``_own``, ``_zeroed``, ``_dim_key``, ``_gather_key``), the argument
checks of gather / scatter / index_* / masks / flat indices, and the parsing of ``x[key]``:
its basic part applied as a chain of views (``SelectBackward0`` over ``SliceBackward0``...),
its advanced part turned into one NumPy key. ``reading.py``, ``scattering.py`` and
``writing.py`` build their ops on it.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import _dtypes, _errors, _recording, _xp
from ..._broadcast import broadcast_shapes
from ..._tensor import Tensor, _wrap_dim
from ...autograd.views import as_view
from ..registry import defop
from ..shape.helpers import _add_at, _embed
from ..shape.slices import slice_view
from ..shape.views import unsqueeze

# --------------------------------------------------------------------------- key helpers


def _own(index, flat=False):
    """A private copy of an index array (``flat``: as a vector): nodes keep it, and the
    caller's tensor may be modified in place before the backward runs. (A call compiled mode
    records.)"""
    return _recording.opaque(_flat_copy if flat else _copy, index)


def _copy(array):
    return array.copy()


def _flat_copy(array):
    return array.reshape(-1).copy()


def _zeroed(xp, g, key):
    """``g`` with the entries at ``key`` set to zero (the gradient of overwritten entries)."""
    g = g.copy() if hasattr(g, "copy") else g.clone()
    g[key] = 0
    return g



def _dim_key(ndim, dim, index):
    """The key selecting ``index`` along ``dim`` (``index_select``, ``index_add``...)."""
    return (slice(None),) * dim + (index,) if ndim else ()


def _int64_gather_key(xp, index, dim, ndim):
    """``_gather_key`` of an int64 copy of ``index``."""
    return _gather_key(xp, index.astype("int64"), dim, ndim)


def _gather_key(xp, index, dim, ndim):
    """The key of ``gather``/``scatter``: entry ``i`` of ``index`` addresses ``(..., index[i],
    ...)`` with ``index[i]`` at ``dim`` and ``i``'s own coordinates elsewhere."""
    if index.ndim == 0:
        return (index,) if ndim == 1 else ()
    n = index.ndim
    return tuple(index if d == dim else
                 xp.reshape(xp.arange(index.shape[d]), (-1,) + (1,) * (n - 1 - d))
                 for d in range(n))



@defop("select", n_in=1, jvp="linear", batch="moved")
def _select(xp, input, key, shape):
    return input[key]


_select.defvjp(lambda xp, g, ans, input, key, shape: _embed(xp, g, shape, key))
_select.defvjp_into(_add_at)



# --------------------------------------------------------------------------- argument checks


def _first_out_of_range(index, lo, hi):
    """The first entry of ``index`` outside ``[lo, hi)`` (C order), or None. (Compiled mode
    replays the check: ``_recording.expect``.)"""
    return _recording.expect(_out_of_range, index, lo, hi)


def _out_of_range(index, lo, hi):
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
    key = _recording.opaque(_int64_gather_key, xp, idx, d, input.ndim)  # a copy: see _own
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



def _check_mask(mask, message):
    if mask.dtype != _dtypes.bool:
        raise RuntimeError(message)



# --------------------------------------------------------------------------- flat indices


def _flat_index(name, input, index):
    """``index`` as positions in the flattened ``input``, checked as PyTorch checks them."""
    if index.dtype != _dtypes.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{index.dtype._word}")
    n = input.numel()
    bad = _first_out_of_range(index._data, -n, n)
    if bad is not None:
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         "elements.")
    return _own(index._data)



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
    """A list key as an array (made from Python values only: compiled mode keeps it)."""
    arr = np.asarray([e.item() if isinstance(e, Tensor) else e for e in k]) if k else \
        np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "f" and arr.size == 0:
        arr = arr.astype(np.int64)
    return _recording.fixed(arr)


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
            out, dim = unsqueeze(out, dim), dim + 1
        elif kind == "bool":
            out = unsqueeze(out, dim)
            advanced.append((dim, "mask", _recording.fixed(np.array([v]))))
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
    _recording.expect(_check_bounds, xp, [key[d] for d in dims], [t.shape[d] for d in dims],
                      shape)
    while key and isinstance(key[-1], slice):
        key.pop()  # trailing full slices are implied
    return tuple(key)


def _check_bounds(xp, arrays, sizes, shape):
    """PyTorch's bounds check: entry by entry of the broadcast indices, each index in turn.

    The error names the index's position among the index tensors.
    """
    if all(a.size == 0 or (int(a.min()) >= -n and int(a.max()) < n)
           for a, n in zip(arrays, sizes)):
        return  # (all in range: two reductions each, not the entry-by-entry flags)
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



def _tensors_in(key):
    """The index tensors of a key (a tensor or a tuple of entries), for ``saves_also``."""
    return [k for k in (key if isinstance(key, tuple) else (key,)) if isinstance(k, Tensor)]
