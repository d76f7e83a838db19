"""Array namespaces handed to op forwards and derivative rules.

- ``NUMPY`` (and the CuPy one): the raw namespaces, used by forwards and by rules in an
  ordinary backward: the library module plus a few *extras*.
- ember's array-API namespace over Tensors (``ember/_array_api.py``), used by rules under
  ``create_graph=True`` so that their computation is recorded.

Extras are the non-standard functions rules may call (``sigmoid``, ``add_at``, ...). Each is
registered once with ``register_extra(name, raw, tensor_level)``: ``raw(xp, *args)`` serves
the raw namespaces and ``tensor_level`` (usually an ember op) the Tensor namespace.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from . import _device, _recording

EXTRAS = {}
_namespaces = []


def _raw_namespace(mod):
    ns = types.SimpleNamespace(**{k: getattr(mod, k) for k in dir(mod) if not k.startswith("__")})
    ns.astype = lambda x, dtype: x.astype(dtype)
    ns.name = mod.__name__
    if mod is np:
        vars(ns).update(_NUMPY_SHORTCUTS)
    for name, (raw, _) in EXTRAS.items():
        setattr(ns, name, functools.partial(raw, ns))
    _namespaces.append(ns)
    return ns


def writable(a):
    """A writable alias of the read-only NumPy view ``a`` (``expand``'s broadcast views are
    made read-only): PyTorch writes through such a view when no two of its elements share
    memory, and refuses with its own error when some do."""
    if a.size == 0:
        return np.empty(a.shape, a.dtype)  # nothing to write
    if any(step == 0 and n > 1 for step, n in zip(a.strides, a.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable:
        return a  # the user's own read-only memory: NumPy's error says so
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    flat = root.reshape(-1).view(np.uint8) if root.flags.c_contiguous else None
    if flat is None:
        return a
    return np.ndarray(a.shape, a.dtype, buffer=flat, offset=offset, strides=a.strides)


def register_extra(name, raw, tensor_level):
    """Make ``name`` callable from rules in every namespace (see module docstring)."""
    EXTRAS[name] = (raw, tensor_level)
    for ns in _namespaces:
        setattr(ns, name, functools.partial(raw, ns))


def _add_at(xp, out, key, values):
    if xp.name == "numpy":
        np.add.at(out, key, values)
    else:
        import cupyx
        cupyx.scatter_add(out, key, values)


# ---------------------------------------------------------------- NumPy without its wrappers
# NumPy's Python-level functions (``np.sum`` -> ``_wrapreduction`` -> ``np.add.reduce``,
# ``np.broadcast_to`` -> ``nditer``, ...) spend 2-19 us per call before any work; on the small
# arrays of a training step that is more than the work. For an ``ndarray`` each shortcut below
# does what the function does, by the C-level method or ufunc the function ends in; anything
# else (scalars, lists, other keyword arguments) goes to NumPy's own function.

_ND = np.ndarray


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if type(a) is _ND and not kwargs:
        return np.add.reduce(a, axis, dtype, out, keepdims)
    return np.sum(a, axis, dtype, out, keepdims=keepdims, **kwargs)


def _max(a, axis=None, out=None, keepdims=False, **kwargs):
    if type(a) is _ND and not kwargs:
        return np.maximum.reduce(a, axis, None, out, keepdims)
    return np.max(a, axis, out, keepdims=keepdims, **kwargs)


def _min(a, axis=None, out=None, keepdims=False, **kwargs):
    if type(a) is _ND and not kwargs:
        return np.minimum.reduce(a, axis, None, out, keepdims)
    return np.min(a, axis, out, keepdims=keepdims, **kwargs)


def _reshape(a, shape, **kwargs):
    if type(a) is _ND and not kwargs:
        return a.reshape(shape)
    return np.reshape(a, shape, **kwargs)


def _swapaxes(a, axis1, axis2):
    return a.swapaxes(axis1, axis2) if type(a) is _ND else np.swapaxes(a, axis1, axis2)


def _expand_dims(a, axis):
    if type(a) is _ND and type(axis) is int and -a.ndim - 1 <= axis <= a.ndim:
        shape = list(a.shape)
        shape.insert(axis if axis >= 0 else axis + a.ndim + 1, 1)
        return a.reshape(shape)
    return np.expand_dims(a, axis)


def _broadcast_to(a, shape):
    """A read-only view of ``a`` with zero strides along the broadcast dims, as NumPy's."""
    if type(a) is _ND and a.flags.c_contiguous:
        shape = (shape,) if type(shape) is int else tuple(shape)
        lead = len(shape) - a.ndim
        if lead >= 0 and (not shape or min(shape) >= 0):
            strides = [0] * lead
            for n, m, stride in zip(a.shape, shape[lead:], a.strides):
                if n == 1:
                    strides.append(0)
                elif n == m:
                    strides.append(stride)
                else:
                    break  # NumPy raises its error
            else:
                out = np.ndarray(shape, a.dtype, a, 0, strides)
                out.setflags(write=False)
                return out
    return np.broadcast_to(a, shape)


# A NumPy 2 ufunc with a Python number operand takes about twice as long as with a 0-d array
# of the other operand's dtype (2.0 vs 1.0 us on 3 floats): the number is converted to that
# dtype on every call. The result is the same, so small-tensor paths pass a cached constant.
_CONSTANTS = {}


@_recording.on_metadata
def constant(value, dtype):
    """``value`` as a read-only 0-d NumPy array of ``dtype`` (one per pair, cached)."""
    try:
        return _CONSTANTS[dtype][value]
    except KeyError:
        c = np.array(value, dtype)
        c.flags.writeable = False
        _CONSTANTS.setdefault(dtype, {})[value] = c
        return c


def _zeros_like(a, dtype=None, **kwargs):
    if type(a) is _ND and not kwargs and a.flags.c_contiguous:
        return np.zeros(a.shape, a.dtype if dtype is None else dtype)
    return np.zeros_like(a, dtype, **kwargs)


def _along_axis(shape, indices, axis):
    """The index NumPy's ``take_along_axis``/``put_along_axis`` build: ``indices`` along
    ``axis``, a range along every other dim (broadcast against it)."""
    ndim = len(shape)
    key = []
    for d, n in enumerate(shape):
        key.append(indices if d == axis else
                   np.arange(n).reshape((1,) * d + (-1,) + (1,) * (ndim - d - 1)))
    return tuple(key)


def _plain_along_axis(arr, indices, axis):
    return (type(arr) is _ND and type(indices) is _ND and indices.dtype.kind in "iu"
            and indices.ndim == arr.ndim and type(axis) is int and -arr.ndim <= axis < arr.ndim)


def _take_along_axis(arr, indices, axis=-1):
    if _plain_along_axis(arr, indices, axis):
        return arr[_along_axis(arr.shape, indices, axis % arr.ndim)]
    return np.take_along_axis(arr, indices, axis)


def _put_along_axis(arr, indices, values, axis):
    if _plain_along_axis(arr, indices, axis):
        arr[_along_axis(arr.shape, indices, axis % arr.ndim)] = values
    else:
        np.put_along_axis(arr, indices, values, axis)


def _ones(shape, dtype=None, **kwargs):
    return np.ones(shape, dtype, **kwargs) if kwargs else _filled(shape, dtype, 1)


def _full(shape, fill_value, dtype=None, **kwargs):
    if (kwargs or dtype is None or type(fill_value) not in (int, float, bool)
            or np.dtype(dtype).kind not in "fc"):
        return np.full(shape, fill_value, dtype, **kwargs)
    return _filled(shape, dtype, fill_value)


def _filled(shape, dtype, value):
    a = np.empty(shape, dtype)
    a.fill(value)
    return a


_NUMPY_SHORTCUTS = {
    "sum": _sum, "max": _max, "min": _min, "reshape": _reshape, "swapaxes": _swapaxes,
    "expand_dims": _expand_dims, "broadcast_to": _broadcast_to, "zeros_like": _zeros_like,
    "ones": _ones, "full": _full, "take_along_axis": _take_along_axis,
    "put_along_axis": _put_along_axis,
}

NUMPY = _raw_namespace(np)
register_extra("add_at", _add_at, None)
_CUPY = None


def namespace_of(array):
    """The raw namespace an array belongs to."""
    if isinstance(array, (np.ndarray, np.generic)):
        return NUMPY
    global _CUPY
    if _CUPY is None:
        _CUPY = _raw_namespace(_device._load_cupy())
    return _CUPY


def for_device(dev):
    if dev.type == "cpu":
        return NUMPY
    return namespace_of(_device.namespace(dev).empty(0))
