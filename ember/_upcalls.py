"""What ``Tensor``'s own methods call in the layers built on it, installed by those layers.

``_tensor.py`` sits below autograd, the ops and creation: they all import it, so it imports
none of them. Yet a few of Tensor's methods are those layers' work: ``backward`` runs the
engine, an in-place write into a view rewires the view's history (``autograd/views.py``),
``torch.Tensor(2, 3)`` is a creation function. Each such method stays in the class, where
readers and type checkers look for it, and calls one slot of ``upcalls``; the module that owns
the function fills the slot when it is imported (``@install`` on the function), as
``ops/batching.py`` fills ``_dispatch.batched``. ``import ember`` imports them all, so every
slot is filled before a user's code runs.

===============  ======================================================  =========================
slot             what                                                    filled by
===============  ======================================================  =========================
fresh            a view's history made current before it is read         ``autograd/views.py``
check_rebase     PyTorch's error for a view not to be written in place   ``autograd/views.py``
rebase_view      a view's and its base's history after an in-place write ``autograd/views.py``
write_tangent    the forward-AD tangent after an in-place write          ``autograd/forward_ad.py``
backward         ``autograd.backward``, for ``Tensor.backward``          ``autograd/_reverse.py``
not_autocast     a call with autocast off (in-place ops never autocast)  ``ops/autocast.py``
legacy_new       the legacy constructor ``torch.Tensor(data)``           ``_creation.py``
array_namespace  the module ``__array_namespace__`` returns              ``_array_api.py``
===============  ======================================================  =========================

``autograd/graph.py``, below ``views.py`` in autograd, reads ``fresh`` here too. This module
imports nothing of ember's.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["upcalls", "install"]


class _Upcalls:
    """The slots (see the module docstring); each is set once, by ``install``."""

    fresh: Callable[[Any], None]
    check_rebase: Callable[..., None]
    rebase_view: Callable[[Any, Any], None]
    write_tangent: Callable[[Any, Any], None]
    backward: Callable[..., None]
    not_autocast: Callable[..., Any]
    legacy_new: Callable[..., Any]
    array_namespace: ModuleType


upcalls = _Upcalls()

_F = TypeVar("_F", bound=Callable[..., Any])


def install(fn: _F) -> _F:
    """Fill the slot named like ``fn`` with it (a decorator; returns ``fn``)."""
    if fn.__name__ not in _Upcalls.__annotations__:
        raise AttributeError(f"no upcall slot named {fn.__name__!r}")
    setattr(upcalls, fn.__name__, fn)
    return fn
