"""Reductions that pick values: ``max`` / ``min`` (full, over a dim with indices, or the
elementwise form), ``amax`` / ``amin``, ``aminmax``, ``argmax`` / ``argmin``.

Their gradient goes to the positions picked, through the private ``scatter`` / ``gather`` pair
here (the sort, topk, median... of ``ops/sorting/`` use it too); ties of a full max and of amax
share it equally.
"""
from __future__ import annotations

import numpy as np

from ... import _array_api, _recording, _xp
from ..._tensor import Tensor, _wrap_dim
from .. import batching, pointwise
from ..registry import array_api, defop, public
from .common import (
    _all_dims,
    _api_reduction,
    _check_nonempty,
    _no_dim_error,
    _no_dims,
    _raw,
    _unreduce,
    return_type,
)

# --------------------------------------------------------------------------- value selection


@defop("scatter", n_in=2, jvp="linear", batch="loop")
def _scatter(xp, base, src, index, axis, shape):
    """``src`` written at ``index`` along ``axis`` into a tensor of ``shape`` filled with ``base``.

    ``index`` holds distinct positions along ``axis`` (a selection: argmax, a permutation,
    top-k), so no two writes collide and the derivative is a plain gather.
    """
    out = xp.full(shape, base, dtype=src.dtype)
    xp.put_along_axis(out, index, src, axis)
    return out


_scatter.defvjp(None, lambda xp, g, ans, base, src, index, axis, shape:
                xp.gather_along_axis(g, index, axis, shape))


@defop("gather", n_in=1, jvp="linear", batch=batching.moved(rank_from="shape"))
def _gather(xp, input, index, axis, shape):
    """The values of ``input`` (of ``shape``) at ``index`` along ``axis`` (see ``_scatter``)."""
    return xp.take_along_axis(input, index, axis=axis)


_gather.defvjp(lambda xp, g, ans, input, index, axis, shape:
               xp.scatter_along_axis(g, index, axis, shape))

_xp.register_extra(
    "scatter_along_axis",
    lambda xp, src, index, axis, shape: _scatter.forward(xp, 0, src, index, axis, shape),
    lambda src, index, axis, shape: _scatter(0, src, _raw(index), axis, shape))
_xp.register_extra(
    "gather_along_axis",
    lambda xp, input, index, axis, shape: _gather.forward(xp, input, index, axis, shape),
    lambda input, index, axis, shape: _gather(input, _raw(index), axis, shape))


def _unselect(xp, g, index, dim, keepdim, shape):
    """The gradient of selecting ``index`` along ``dim`` of a tensor of ``shape``."""
    if not shape:
        return g
    index = _raw(index)
    if not keepdim:
        kept = index.shape[:dim] + (1,) + index.shape[dim:]
        # (recording its graph, the raw index is reshaped by a call compiled mode records)
        index = (_recording.opaque(_reshaped, index, kept) if _array_api.is_tensor_namespace(xp)
                 else index.reshape(kept))
        g = xp.reshape(g, kept)
    return xp.scatter_along_axis(g, index, dim, shape)


def _reshaped(array, shape):
    return array.reshape(shape)


def picked(xp, input, index, dim, keepdim):
    """``(values, indices)`` of a reduction that picks one element along ``dim`` (max, min,
    mode): ``index`` has ``dim`` kept (size 1); both lose it unless ``keepdim``."""
    values = xp.take_along_axis(input, index, axis=dim)
    if not keepdim:
        values, index = xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index


def _evenly_distribute(xp, g, ans, input):
    """Full max/min/median: tied inputs share the gradient; a NaN result goes to the NaNs."""
    mask = (input != input) if ans != ans else (input == ans)
    # (filled in, as PyTorch's CPU kernel does: an infinite g leaves the others 0, not NaN)
    return xp.where(mask, g / int(mask.sum()), 0)



# --------------------------------------------------------------------------- max, min, arg*


def _extreme_ops(name):
    """The ops of ``max`` or ``min``: full (ties share), over a dim (with indices), amax."""

    @defop(name, n_in=1, overload=1, jvp="transpose", batch=batching.whole(
        lambda v, nb, p: getattr(batching.flat(v, nb), "a" + name)(-1)))
    def full(xp, input):
        return getattr(xp, name)(input)

    full.defvjp(_evenly_distribute)

    @defop(name, n_in=1, nout=2, jvp="transpose", batch="moved")
    def over_dim(xp, input, dim, keepdim, shape):
        if input.ndim == 0:
            return input.copy(), xp.zeros((), dtype=np.int64)
        return picked(xp, input, getattr(xp, "arg" + name)(input, axis=dim, keepdims=True),
                      dim, keepdim)

    over_dim.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
                    _unselect(xp, g[0], ans[1], dim, keepdim, shape))
    over_dim.saved_outputs = (1,)  # the indices only

    @defop("a" + name, n_in=1, jvp="transpose", batch="moved")
    def amax(xp, input, dims, keepdim):
        return getattr(xp, name)(input, axis=dims, keepdims=keepdim)

    def amax_rule(xp, g, ans, input, dims, keepdim):
        g, ans = (_unreduce(xp, t, input.shape, dims, keepdim) for t in (g, ans))
        mask = input == ans
        return g / xp.astype(xp.sum(mask, axis=dims, keepdims=True), g.dtype) * mask

    amax.defvjp(amax_rule)
    return full, over_dim, amax


_max_all, _max_dim, _amax = _extreme_ops("max")
_min_all, _min_dim, _amin = _extreme_ops("min")


def _extreme(name, full, over_dim, binary):
    fields = return_type(name, ("values", "indices"))

    def public(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return binary()(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(_no_dim_error(name))
            return full(input)
        d = _wrap_dim(dim, input.ndim)
        _check_nonempty(name, input, d)
        return fields(over_dim(input, d, keepdim, input.shape))

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"``{name}(input)``: the {name}imum element (tied elements share the gradient).\n"
        f"``{name}(input, dim, keepdim=False)``: ``(values, indices)`` of the {name}ima along "
        f"``dim`` (the first one on ties; the gradient goes to it).\n"
        f"``{name}(input, other)``: the elementwise {name}imum, as ``torch.{name}imum``.")
    return public


def _pointwise(name):
    def get():
        return getattr(pointwise, name)
    return get


max = public(_extreme("max", _max_all, _max_dim,  # noqa: A001 - PyTorch's name
                      _pointwise("maximum")))
min = public(_extreme("min", _min_all, _min_dim,  # noqa: A001
                      _pointwise("minimum")))


def _amax_public(name, op):
    def public(input, dim=(), keepdim=False):
        if _no_dims(dim) and input.numel() == 0:
            raise RuntimeError(_no_dim_error(name))
        _check_nonempty(name, input, dim)
        return op(input, _all_dims(dim, input.ndim), keepdim)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"The {name[1:]}imum over ``dim`` (every dim by default); tied elements "
                      "share the gradient equally.")
    return op.public(public)


amax = _amax_public("amax", _amax)
amin = _amax_public("amin", _amin)
array_api("max")(_api_reduction(amax))
array_api("min")(_api_reduction(amin))


@defop("aminmax", n_in=1, nout=2, jvp="transpose", batch="moved")
def _aminmax(xp, input, dims, keepdim):
    return xp.min(input, axis=dims, keepdims=keepdim), xp.max(input, axis=dims, keepdims=keepdim)


_aminmax.defvjp(lambda xp, g, ans, input, dims, keepdim:
                _amin.rules[0](xp, g[0], ans[0], input, dims, keepdim) +
                _amax.rules[0](xp, g[1], ans[1], input, dims, keepdim))


@_aminmax.public
def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (every dim by default); ties share the gradient."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        d = _wrap_dim(dim, input.ndim)
        dims = (d,) if input.ndim else ()
        _check_nonempty("aminmax", input, dim)
    return return_type("aminmax", ("min", "max"))(_aminmax(input, dims, keepdim))


def _arg_op(name):
    @defop(name, n_in=1, batch=batching.moved(dim_required=True))
    def op(xp, input, dim, keepdim):
        if input.ndim == 0:
            return xp.zeros((), dtype=np.int64)
        return getattr(xp, name)(input, axis=dim, keepdims=keepdim)

    def public(input, dim=None, keepdim=False):
        if input._data.dtype == np.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if input.numel() == 0:
                raise IndexError(_no_dim_error(name, ""))
            return op(input, None, keepdim)
        d = _wrap_dim(dim, input.ndim)
        _check_nonempty(name, input, d)
        return op(input, d, keepdim)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"Index of the {name[3:]}imum (the first on ties), over the flattened "
                      "input or along ``dim``; int64, without gradient.")
    return op.public(public)


argmax = _arg_op("argmax")
argmin = _arg_op("argmin")
array_api("argmax")(lambda x, axis=None, keepdims=False: argmax(x, axis, keepdims))
array_api("argmin")(lambda x, axis=None, keepdims=False: argmin(x, axis, keepdims))
