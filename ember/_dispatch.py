"""Dispatch: the ordered stack of interposers an op call passes through before it records.

An op call (``ops/registry.py``'s ``Op.__call__``) asks one question on its hot path: is any
interposer active? That is one attribute read, ``state.active``. When none is, the op runs its
own body: the forward on raw arrays and the node it records (the bottom of the stack,
"record"). When one is, ``run`` hands the call down the stack, outermost first. Each active
interposer either answers the call itself or calls ``proceed(args)`` (the rest of the stack,
then the body) and may work on what comes back:

=============  ==============================================  =========================
interposer     active while                                    declared in
=============  ==============================================  =========================
autocast       an autocast region is enabled in some thread    ``ops/autocast.py``
vmap           a ``vmap`` level runs                           ``ops/batching.py``
forward AD     a dual level is open and no JVP rule runs       ``autograd/forward_ad.py``
anomaly        ``detect_anomaly(forward=True)``                ``autograd/anomaly_mode.py``
record         compiled mode records a call                    ``_dynamo/recorder.py``
=============  ==============================================  =========================

Each mode plugs in as one ``Interposer``, registered at its place in the order. Whatever
changes an interposer's activity calls ``refresh()``, so that ``state.active`` is always exact
(the modes' state objects do it in their setters).

This module also holds what the rest of ember asks of vmap without importing
``ops/batching.py``: the running levels (``vmap``) and the batching hooks (``batched``: how a
batched tensor's gradients, seeds and fresh tensors are made per sample), which batching
fills in when it is imported; before that no tensor is batched and they are never called.
It imports nothing of ember's: the registry, autograd and creation all build on it.
"""
from __future__ import annotations

__all__ = ["Interposer", "state", "register", "refresh", "run", "vmap", "batched"]


class _State:
    active = False  # whether any interposer is active: the op call's one test


state = _State()


class Interposer:
    """One layer of the stack: ``is_active()`` (cheap, read on ``refresh``) and
    ``call(op, args, proceed)``, which returns the op's result, computed itself or by
    ``proceed(args)``."""

    __slots__ = ("name", "order", "is_active", "call")

    def __init__(self, name, order, is_active, call):
        self.name, self.order, self.is_active, self.call = name, order, is_active, call

    def __repr__(self):
        return f"<interposer {self.name} ({self.order})>"


_stack = []  # outermost first


def register(interposer):
    """Add ``interposer`` to the stack at its ``order`` (smaller: further out)."""
    _stack[:] = sorted([i for i in _stack if i.name != interposer.name] + [interposer],
                       key=lambda i: i.order)
    refresh()
    return interposer


def refresh():
    """Recompute ``state.active`` after an interposer's activity may have changed."""
    for i in _stack:
        if i.is_active():
            state.active = True
            return
    state.active = False


def run(op, args, body):
    """``op(*args)`` through the active interposers, ``body(op, args)`` at the bottom."""
    return _from(0, op, args, body)


def _from(k, op, args, body):
    stack = _stack
    while k < len(stack):
        interposer = stack[k]
        k += 1
        if interposer.is_active():
            return interposer.call(op, args, lambda a, k=k: _from(k, op, a, body))
    return body(op, args)


class _VmapLevels:
    """The running ``vmap`` levels, innermost last, as ``(level, batch size, randomness)``
    (``func/_vmap.py`` pushes and pops them), and ``depth``, the number of nested vmap and
    function transforms running: while it is not zero the vmap interposer is active."""

    def __init__(self):
        self.levels = []
        self._depth = 0
        self.call = None  # (kept for older callers: ``batching.call``)

    @property
    def depth(self):
        return self._depth

    @depth.setter
    def depth(self, value):
        self._depth = value
        refresh()


vmap = _VmapLevels()


class _Batched:
    """Hooks of vmap's batching for autograd and creation (filled in by ``ops/batching.py``).

    ``levels_of(t)``, ``wrap(t, levels)``, ``physical(t, levels, expand=...)``,
    ``as_seed(g, levels)``, ``from_seed(g, levels)``, and ``random_batch()``: the levels and
    leading batch shape a random draw takes under ``vmap(randomness='different')``.
    """

    @staticmethod
    def random_batch():
        return (), ()  # (no vmap level runs before batching is imported)


batched = _Batched()
