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

from . import _device

EXTRAS = {}
_namespaces = []


def _raw_namespace(mod):
    ns = types.SimpleNamespace(**{k: getattr(mod, k) for k in dir(mod) if not k.startswith("__")})
    ns.astype = lambda x, dtype: x.astype(dtype)
    ns.name = mod.__name__
    for name, (raw, _) in EXTRAS.items():
        setattr(ns, name, functools.partial(raw, ns))
    _namespaces.append(ns)
    return ns


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
