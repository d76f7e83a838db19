"""Indexing: ``x[key]`` (views for basic keys, copies for advanced ones) and ``x[key] = v``.

Basic keys become a chain of view ops, as in PyTorch (``x[0, 1:]`` is ``SliceBackward0`` over
``SelectBackward0``); advanced keys (integer/boolean tensors and lists) are one
``IndexBackward0``. Assignment through a basic key writes into the view in place, which gives
the base a ``CopySlices`` node; through an advanced key it is ``IndexPutBackward0``.
"""
from __future__ import annotations

import numpy as np

from .. import _errors, _xp
from .._broadcast import broadcast_shapes
from .._tensor import Tensor
from ..autograd.views import as_view
from . import shape as _shape
from .registry import defop


def _scatter_zeros(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` placed at ``key``: the derivative of any indexing."""
    out = xp.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


@defop("select", n_in=1)
def _select(xp, input, key, shape):
    return input[key]


_select.defvjp(lambda xp, g, ans, input, key, shape: _scatter_zeros(xp, g, shape, key))


@defop("slice", n_in=1)
def _slice(xp, input, key, shape):
    return input[key]


_slice.defvjp(lambda xp, g, ans, input, key, shape: _scatter_zeros(xp, g, shape, key))


@defop("index", n_in=1)
def _index(xp, input, key, shape):
    return input[key]


_index.defvjp(lambda xp, g, ans, input, key, shape: xp.index_add_zeros(g, shape, key))


@defop("index_add_zeros", n_in=1)
def _index_add_zeros(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` added at ``key`` (repeated indices accumulate)."""
    out = xp.zeros(shape, dtype=g.dtype)
    xp.add_at(out, key, g)
    return out


_index_add_zeros.defvjp(lambda xp, gg, ans, g, shape, key: gg[key])
_xp.register_extra("index_add_zeros", _index_add_zeros.forward, _index_add_zeros)


@defop("index_put", n_in=2, promote=False)
def _index_put(xp, input, values, key):
    out = input.copy()
    out[key] = values
    return out


def _index_put_self(xp, g, ans, input, values, key):
    g = g.copy() if hasattr(g, "copy") else g.clone()
    g[key] = 0
    return g


_index_put.defvjp(_index_put_self, lambda xp, g, ans, input, values, key: g[key])


@defop("copy", n_in=2)
def _copy(xp, input, src):
    src = xp.asarray(src, dtype=input.dtype)
    return xp.broadcast_to(src, broadcast_shapes(input.shape, src.shape)).copy()


_copy.defvjp(lambda xp, g, ans, input, src: xp.zeros_like(g),
             lambda xp, g, ans, input, src: g)
_copy.node_cls.__name__ = _copy.node_cls.__qualname__ = "CopyBackwards"


# --------------------------------------------------------------------------- key parsing


def _is_advanced(k):
    return isinstance(k, (list, Tensor, np.ndarray)) or (
        hasattr(k, "__cuda_array_interface__")) or isinstance(k, bool)


def _raw_key(k, xp_arr):
    if isinstance(k, Tensor):
        return k._data
    if isinstance(k, list):
        return np.asarray([_raw_key(e, xp_arr) if isinstance(e, Tensor) else e for e in k])
    return k


def _expand_ellipsis(key, ndim):
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if n_ell == 0:
        return list(key) + [slice(None)] * (ndim - used), False
    i = key.index(Ellipsis)
    return list(key[:i]) + [slice(None)] * (ndim - used) + list(key[i + 1:]), True


def getitem(x, key):
    """``x[key]``."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(_is_advanced(k) for k in key):
        raw = tuple(_raw_key(k, x._data) for k in key)
        _check_advanced(x, raw)
        return _index(x, raw, x.shape)
    if key == (Ellipsis,):
        return as_view(_shape._alias(x), x, lambda xp, a: a)
    parts, had_ellipsis = _expand_ellipsis(key, x.ndim)
    out = x
    dim = 0
    lone_slice = len(key) == 1 and isinstance(key[0], slice)
    for k in parts:
        if k is None:
            out = _shape.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            out, dim = _apply_slice(out, dim, k, lone_slice), dim + 1
        else:
            out = _apply_select(out, dim, k)
    if out is x:
        return as_view(_shape._alias(x), x, lambda xp, a: a)
    return out


def _apply_select(t, dim, index):
    index = int(index)
    size = t.shape[dim]
    if not -size <= index < size:
        raise IndexError(_errors.INDEX_RANGE.format(index=index, dim=dim, size=size))
    key = (slice(None),) * dim + (index % size, Ellipsis)
    return as_view(_select(t, key, t.shape), t, lambda xp, a: a[key])


def _apply_slice(t, dim, s, force):
    size = t.shape[dim]
    if s.step is not None and s.step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = s.indices(size)
    if start == 0 and stop == size and step == 1 and not force:
        return t
    key = (slice(None),) * dim + (slice(start, stop, step), Ellipsis)
    return as_view(_slice(t, key, t.shape), t, lambda xp, a: a[key])


def _check_advanced(x, raw):
    dim = 0
    for k in raw:
        if k is None or k is Ellipsis:
            dim += k is Ellipsis and 0
            continue
        if hasattr(k, "dtype") and k.dtype.kind in "iu":
            size = x.shape[dim] if dim < x.ndim else 0
            if k.size and (k.max() >= size or k.min() < -size):
                bad = int(k.max()) if k.max() >= size else int(k.min())
                raise IndexError(_errors.INDEX_RANGE.format(index=bad, dim=dim, size=size))
        if hasattr(k, "dtype") and k.dtype == bool:
            dim += k.ndim
        else:
            dim += 1


def setitem(x, key, value):
    """``x[key] = value``: an in-place write into a view, or ``index_put`` for advanced keys."""
    if not isinstance(key, tuple):
        key = (key,)
    if isinstance(value, Tensor) and value.is_cuda != x.is_cuda:
        value = value.to(x.device)
    if any(_is_advanced(k) for k in key):
        raw = tuple(_raw_key(k, x._data) for k in key)
        _check_advanced(x, raw)
        x._check_inplace()
        if isinstance(value, Tensor) and value._data.dtype != x._data.dtype:
            value = value.to(x.dtype)
        x._assign(_index_put(x, value, raw))
        return
    view = getitem(x, key)
    view._inplace(_copy, value)


# --------------------------------------------------------------------------- the family's surface
__all__ = []
METHODS = {}
INPLACE = ()
