"""Reductions and their derivatives (the full family comes with the op-surface issue)."""
from __future__ import annotations

import math

from .. import _dtypes
from .._tensor import _wrap_dim
from .registry import defop


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def _expand_back(xp, g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim and dims:
        g = xp.reshape(g, _kept_shape(shape, dims))
    return xp.broadcast_to(g, shape)


@defop("sum", n_in=1)
def _sum_all(xp, input, shape, dtype):
    return xp.sum(input, dtype=dtype)


_sum_all.defvjp(lambda xp, g, ans, input, shape, dtype: xp.broadcast_to(g, shape))


@defop("sum", n_in=1, overload=1)
def _sum_dim(xp, input, dims, keepdim, shape, dtype):
    return xp.sum(input, axis=dims, keepdims=keepdim, dtype=dtype)


_sum_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape, dtype:
                _expand_back(xp, g, shape, dims, keepdim))


@defop("mean", n_in=1)
def _mean_all(xp, input, shape):
    return xp.mean(input)


_mean_all.defvjp(lambda xp, g, ans, input, shape:
                 xp.broadcast_to(g / math.prod(shape), shape))


@defop("mean", n_in=1, overload=1)
def _mean_dim(xp, input, dims, keepdim, shape):
    return xp.mean(input, axis=dims, keepdims=keepdim)


_mean_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape:
                 _expand_back(xp, g / math.prod(shape[d] for d in dims), shape, dims, keepdim))


def _dims(dim, ndim):
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype.np
    if input._data.dtype.kind in "biu":
        return _dtypes.int64.np
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim`` (an int or tuple); integers sum to int64."""
    dt = _sum_dtype(input, dtype)
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return _sum_all(input, input.shape, dt)
    return _sum_dim(input, _dims(dim, input.ndim), keepdim, input.shape, dt)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean; floating and complex inputs only, as in PyTorch."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {input.dtype._legacy[:-6]}")
    if dim is None:
        return _mean_all(input, input.shape)
    return _mean_dim(input, _dims(dim, input.ndim), keepdim, input.shape)



def _logical_reduce(name):
    @defop(name, n_in=1)
    def reduce(xp, input, axis, keepdim):
        return getattr(xp, name)(input, axis=axis, keepdims=keepdim)

    def public(input, dim=None, keepdim=False):
        axis = None if dim is None else _dims(dim, input.ndim)
        return reduce(input, axis, keepdim)
    public.__name__ = name
    public.__doc__ = f"Whether {name} elements (over ``dim``) are true, as a bool tensor."
    return public


all = _logical_reduce("all")  # noqa: A001 - PyTorch's name
any = _logical_reduce("any")  # noqa: A001


# --------------------------------------------------------------------------- the family's surface
__all__ = ["sum", "mean", "all", "any"]
METHODS = {name: globals()[name] for name in __all__}
INPLACE = ()
ARRAY_API = {
    "sum": lambda x, axis=None, keepdims=False, dtype=None: sum(
        x, dim=axis, keepdim=keepdims, dtype=_api_dtype(dtype)),
    "mean": lambda x, axis=None, keepdims=False: mean(x, dim=axis, keepdim=keepdims),
}


def _api_dtype(dtype):
    return dtype if dtype is None or isinstance(dtype, _dtypes.dtype) else \
        _dtypes.from_numpy_dtype(dtype)
