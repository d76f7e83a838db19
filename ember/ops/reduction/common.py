"""What the reductions share: dims and shapes (``_dims``, ``_unreduce``...), PyTorch's errors
for empty reductions, the accumulation dtype, and the ``torch.return_types.X`` classes of
results that come as named tuples (``return_type``; ``ops/sorting/`` and ``linalg`` use them too),
and the array API's spelling of a reduction (``_api_reduction``).
"""
from __future__ import annotations

import math
import operator
import types

from ... import _dtypes
from ..._tensor import Tensor, _wrap_dim

# --------------------------------------------------------------------------- dims and shapes


def _dims(dim, ndim):
    """``dim`` (an int or a sequence) as sorted non-negative dims; a 0-d tensor has none."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    for k, d in enumerate(wrapped):
        if d in wrapped[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(wrapped)) if ndim else ()


def _no_dims(dim):
    return dim is None or (not isinstance(dim, int) and len(dim) == 0)


def _all_dims(dim, ndim):
    """``_dims``, where ``None`` or an empty sequence means every dim."""
    return tuple(range(ndim)) if _no_dims(dim) else _dims(dim, ndim)


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def _count(shape, dims):
    """How many elements each reduction over ``dims`` combines."""
    return math.prod(shape[d] for d in dims)


def _unreduce(xp, g, shape, dims, keepdim):
    """``g`` (a reduction over ``dims`` of a tensor of ``shape``) with the reduced dims back."""
    if not keepdim and dims:
        g = xp.reshape(g, _kept_shape(shape, dims))
    return g


def _expand_back(xp, g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    return xp.broadcast_to(_unreduce(xp, g, shape, dims, keepdim), shape)


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


def _check_nonempty(name, input, dim):
    """PyTorch's error for reducing an empty dim by an op without identity (max, ...); it
    names the first such dim as the caller spelled it (``dim`` an int or a sequence)."""
    for d in (dim,) if isinstance(dim, int) else dim:
        if input.ndim and input.shape[_wrap_dim(d, input.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _no_dim_error(name, suffix=" Specify the reduction dim with the 'dim' argument."):
    return f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{suffix}"


def _accumulation_dtype(input, dtype):
    """The dtype of sum/prod/cumsum: ``dtype`` if given, int64 for integers and bools."""
    if dtype is not None:
        return dtype.np
    return _dtypes.int64.np if input._data.dtype.kind in "biu" else input._data.dtype


# --------------------------------------------------------------------------- return types

return_types = types.SimpleNamespace()  # ``ember.return_types.max`` etc., as ``torch.return_types``


class _ReturnType(tuple):
    """Base of the ``torch.return_types.X`` classes: a tuple whose items are also attributes."""

    __slots__ = ()
    __match_args__ = ()

    def __new__(cls, sequence):
        items = tuple(sequence)
        n = len(cls.__match_args__)
        if len(items) != n:
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a {n}-sequence "
                            f"({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):
        fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self))
        return f"torch.return_types.{type(self).__name__}(\n{fields})"

    def __reduce__(self):
        return type(self), (tuple(self),)


def return_type(name, fields):
    """The class ``torch.return_types.<name>`` with item names ``fields`` (made once)."""
    cls = getattr(return_types, name, None)
    if cls is None:
        namespace = {"__slots__": (), "__match_args__": tuple(fields), "n_fields": len(fields),
                     "n_sequence_fields": len(fields), "n_unnamed_fields": 0}
        namespace.update({f: property(operator.itemgetter(i)) for i, f in enumerate(fields)})
        cls = type(name, (_ReturnType,), namespace)
        cls.__module__, cls.__qualname__ = __package__, f"return_types.{name}"  # picklable
        setattr(return_types, name, cls)
    return cls


# --------------------------------------------------------------------------- the array API


def _api_dtype(dtype):
    return dtype if dtype is None or isinstance(dtype, _dtypes.dtype) else \
        _dtypes.from_numpy_dtype(dtype)


def _api_reduction(fn):
    """``fn`` with the array API's spelling; there ``axis=()`` reduces nothing (in PyTorch an
    empty ``dim`` means every dim)."""
    def reduce(x, axis=None, keepdims=False, dtype=None):
        if axis == ():
            return x if dtype is None else x.to(_api_dtype(dtype))
        extra = {} if dtype is None else {"dtype": _api_dtype(dtype)}
        return fn(x, axis, keepdims, **extra)
    return reduce
