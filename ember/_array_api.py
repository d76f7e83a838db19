"""ember's array-API namespace over Tensors (``Tensor.__array_namespace__``).

Derivative rules run against this namespace under ``create_graph=True``: the same rule text
that runs on raw NumPy arrays then runs on ember Tensors and is recorded, giving higher-order
derivatives. Names and keywords follow the array API standard (``axis``, ``keepdims``): the
op families declare those spellings (``ops/_surface.py``), other names resolve to ember's
function of the same name (``exp``, ``where``, ``matmul``...).
"""
from __future__ import annotations

import sys

from . import _creation, _dtypes, _xp
from ._upcalls import upcalls
from .ops import _surface


def __getattr__(name):
    """Array-API spellings from the op families, else ember's function of the same name."""
    import ember  # lazy: the package and its op families build on this namespace
    fn = _surface.ARRAY_API.get(name)
    extra = _xp.EXTRAS.get(name)
    if fn is None and extra is not None:
        fn = extra[1]
    if fn is None:
        fn = getattr(ember, name, None)
    if not callable(fn):
        raise AttributeError(f"ember's array namespace has no attribute {name!r}")
    globals()[name] = fn  # resolved once
    return fn


def zeros(shape, dtype=None, device=None):
    return _creation.zeros(tuple(shape), dtype=_dt(dtype), device=device)


def ones(shape, dtype=None, device=None):
    return _creation.ones(tuple(shape), dtype=_dt(dtype), device=device)


def full(shape, fill_value, dtype=None, device=None):
    return _creation.full(tuple(shape), fill_value, dtype=_dt(dtype), device=device)


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None):
    if k:
        raise NotImplementedError("ember's array namespace: eye(k != 0)")
    return _creation.eye(n_rows, n_cols, dtype=_dt(dtype), device=device)


def empty(shape, dtype=None, device=None):
    return _creation.empty(tuple(shape), dtype=_dt(dtype), device=device)


_CREATION = ("zeros", "ones", "full", "eye", "empty")


class _OnDevice:
    """This namespace with creation functions defaulting to one device (a CUDA gradient's).

    Rules create tensors (``xp.zeros``) without naming a device; under ``create_graph=True``
    the engine hands them the namespace bound to the gradient's device, so those tensors land
    beside the gradient, as NumPy/CuPy arrays do in an ordinary backward.
    """

    def __init__(self, device, module):
        self._device, self._module = device, module
        for name in _CREATION:
            fn = getattr(module, name)
            setattr(self, name, lambda *a, _fn=fn, device=None, **k: _fn(
                *a, device=device or self._device, **k))

    def __getattr__(self, name):
        return getattr(self._module, name)


_bound = {}


def is_tensor_namespace(xp):
    """Whether ``xp`` is this namespace (rules being recorded) rather than NumPy/CuPy."""
    return xp is sys.modules[__name__] or isinstance(xp, _OnDevice)


def on_device(device):
    """The namespace for gradients on ``device`` (this module itself for the CPU)."""
    if device.type == "cpu":
        return sys.modules[__name__]
    ns = _bound.get(device)
    if ns is None:
        ns = _bound[device] = _OnDevice(device, sys.modules[__name__])
    return ns


def zeros_like(x, dtype=None, device=None):
    return _creation.zeros_like(x, dtype=_dt(dtype))


def _dt(dtype):
    return dtype if isinstance(dtype, _dtypes.dtype) or dtype is None else \
        _dtypes.from_numpy_dtype(dtype)


upcalls.array_namespace = sys.modules[__name__]  # what Tensor.__array_namespace__ returns
