"""The backward pass: walk the graph from the roots and hand gradients down the edges.

Every node is numbered when it is made (``_seq``), after the nodes of its inputs, and a
leaf's ``AccumulateGrad`` before any node that uses the leaf. So running nodes in descending
number is a topological order: when a node is taken from the ready heap, every node that can
still send it a gradient has a larger number and has run. No dependency counting is needed:
a node enters the heap when its first gradient arrives, later ones are summed into its buffer,
and a node that receives no gradient never runs. The loop is iterative (a 100,000-node chain
is fine) and this is the order PyTorch's engine uses too (most recent first, ``AccumulateGrad``
as soon as it is ready).

Gradients are raw arrays in an ordinary backward and Tensors under ``create_graph=True``.
"""
from __future__ import annotations

import heapq
import sys

import numpy as np

from . import anomaly_mode, grad_mode
from ._walk import walk
from .graph import AccumulateGrad, GraphTask, _current, hook_result

__all__ = ["run_backward"]

anomaly = anomaly_mode.state
Tensor = None  # ember.Tensor, bound by ember._tensor at import (breaks the import cycle)


def _needed(roots, targets):
    """Nodes that must run so that gradients reach ``targets`` (nodes whose input we capture).

    A node is needed when one of its children is a target or needed; children have smaller
    numbers, so one pass in ascending number settles every node.
    """
    needed = set()
    for fn in sorted(walk(roots), key=lambda fn: fn._seq):
        for child, _ in fn.next_functions:
            if child is not None and (child in targets or child in needed):
                needed.add(fn)
                break
    return needed


def run_backward(roots, grads, retain_graph, create_graph, capture=None, accumulate=True):
    """Run backward from ``roots`` (``(node, output_nr)`` edges) seeded with ``grads``.

    ``capture``: ``{(node, output_nr): slot}`` edges whose total incoming gradient is recorded
    (``autograd.grad`` and ``backward(inputs=...)``); with it, only nodes on a path to a
    captured edge run. ``accumulate``: whether ``AccumulateGrad`` nodes write ``.grad``.
    Returns the captured gradients as a list (None where nothing arrived).
    """
    runs = targets = None
    if capture is not None:
        targets = {fn for fn, _ in capture}
        runs = _needed(roots, targets)
    buffers = {}
    ready = []
    for (fn, nr), g in zip(roots, grads):
        if fn not in buffers:
            heapq.heappush(ready, (-fn._seq, fn))
        _add(buffers, fn, nr, g)
    captured = [None] * (max(capture.values()) + 1 if capture else 0)  # slots: input indices
    prev = grad_mode._state.grad
    grad_mode._state.grad = create_graph
    outer_task, _current.task = getattr(_current, "task", None), GraphTask(roots, runs, targets)
    push, pop = heapq.heappush, heapq.heappop  # the loop runs once per node: keep it lean
    try:
        while ready:
            fn = pop(ready)[1]
            buf = buffers.pop(fn)
            if fn._pre_hooks or type(fn) is AccumulateGrad and fn.variable._hooks:
                buf = _run_pre_hooks(fn, buf, create_graph)
            if capture is not None:
                for nr in range(len(buf)):
                    slot = capture.get((fn, nr))
                    if slot is not None:
                        captured[slot] = _sum(captured[slot], buf[nr])
                if fn not in runs:
                    continue
            if type(fn) is AccumulateGrad:
                if accumulate:
                    _accumulate(fn.variable, buf[0], create_graph)
                if fn._hooks:
                    _run_post_hooks(fn, (), buf, create_graph)
                continue
            if anomaly.enabled:
                grads_in = _apply_watched(fn, buf, create_graph)
            else:
                grads_in = fn.apply(buf, create_graph)
            if fn._hooks:
                grads_in = _run_post_hooks(fn, grads_in, buf, create_graph)
            if not retain_graph:
                fn.release()
            buf = None
            for (child, nr), g in zip(fn.next_functions, grads_in):
                if g is None or child is None:
                    continue
                child_buf = buffers.get(child)
                if child_buf is None:
                    if runs is not None and child not in runs and child not in targets:
                        continue
                    child_buf = buffers[child] = [None] * child._n_outputs
                    push(ready, (-child._seq, child))
                old = child_buf[nr]
                child_buf[nr] = g if old is None else _plus(old, g)
            grads_in = g = old = None  # hold no gradient past its node: AccumulateGrad may take it
    finally:
        grad_mode._state.grad = prev
        _current.task = outer_task
    return captured


def _apply_watched(fn, buf, create_graph):
    """``fn.apply`` under anomaly detection: NaN gradients refused, and any error preceded by
    the forward call that made ``fn``."""
    try:
        grads_in = fn.apply(buf, create_graph)
        if anomaly.check_nan:
            anomaly_mode.check_gradients(fn, grads_in)
    except Exception:
        anomaly_mode.warn_error(fn)
        raise
    return grads_in


def _add(buffers, fn, nr, g):
    buf = buffers.get(fn)
    if buf is None:
        buf = buffers[fn] = [None] * fn._n_outputs
    old = buf[nr]
    buf[nr] = g if old is None else _plus(old, g)


def _sum(a, b):
    if b is None:
        return a
    return b if a is None else _plus(a, b)


# References to a summed gradient that only the engine holds, as counted in ``_plus``: the
# buffer slot, the caller's name for it, ``_plus``'s parameter and ``sys.getrefcount``'s
# argument. A gradient the user passed in (or one also sent down another edge) has more.
_BUFFER_ONLY_REFS = 4


def _plus(a, b):
    """``a + b`` for gradients arriving at the same slot: into ``a`` when only the buffer holds
    it and it is big enough for a new array to cost more than these checks; NumPy's 0-d sums
    come back as scalars and are made arrays.
    """
    if (type(a) is np.ndarray and a.size >= _IN_PLACE_MIN and a.base is None
            and a.shape == b.shape and a.dtype == b.dtype and a.flags.writeable
            and sys.getrefcount(a) <= _BUFFER_ONLY_REFS):
        a += b
        return a
    s = a + b
    return np.asarray(s) if isinstance(s, np.generic) else s


_IN_PLACE_MIN = 4096  # elements


def _as_tensor(g):
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._make(g, None, False)


def _run_pre_hooks(fn, buf, create_graph):
    """The hooks on the gradients arriving at ``fn``, in PyTorch's order: tensor hooks
    (``register_hook``; a leaf keeps its own, run at its ``AccumulateGrad``, so they apply to
    ``autograd.grad`` too), then ``retain_grad``'s, then node pre-hooks."""
    from .._tensor import _PostAccumulateGradHook, _TensorHook
    hooks = list(fn._pre_hooks or ())
    if type(fn) is AccumulateGrad and fn.variable._hooks:
        hooks = [_TensorHook(h, 0, False) for h in fn.variable._hooks
                 if type(h) is not _PostAccumulateGradHook] + hooks
    hooks.sort(key=lambda h: h.retain if isinstance(h, _TensorHook) else 2)
    buf = list(buf)
    for hook in hooks:
        if isinstance(hook, _TensorHook):
            g = buf[hook.output_nr]
            if g is None:
                continue
            new = hook.fn(_as_tensor(g))
            if new is not None and not hook.retain:
                buf[hook.output_nr] = new if create_graph else new._data
        else:
            new = hook(tuple(_as_tensor(g) for g in buf))
            if new is not None:
                buf = _unwrap(hook_result(hook, new, buf), create_graph)
    return buf


def _run_post_hooks(fn, grads_in, buf, create_graph):
    """Node hooks ``hook(grad_inputs, grad_outputs)``; one may replace ``grad_inputs``."""
    for hook in list(fn._hooks):
        new = hook(tuple(_as_tensor(g) for g in grads_in), tuple(_as_tensor(g) for g in buf))
        if new is not None:
            grads_in = _unwrap(hook_result(hook, new, grads_in), create_graph)
    return grads_in


def _unwrap(grads, create_graph):
    """Gradients a hook returned, as the engine carries them (raw arrays unless recording)."""
    return [g if create_graph or not isinstance(g, Tensor) else g._data for g in grads]


# References to a gradient nobody else holds, as counted in ``_unshared``: the engine's buffer
# list, the parameters of ``_accumulate`` and ``_unshared``, and ``sys.getrefcount``'s argument.
_UNSHARED_REFS = 4


def _unshared(g):
    """Whether ``.grad`` may take ``g`` itself instead of a copy (PyTorch steals it too).

    Only an array that nothing else references (not the user's ``gradient``, not an array also
    handed to another input, not a saved value) and that owns its writable memory, or is a
    C-contiguous view of all of a base array that nothing else holds (``W.t()``'s gradient,
    transposed back).
    """
    # (CuPy's flags have no ``writeable``: its arrays always are)
    if not getattr(g.flags, "writeable", True) or sys.getrefcount(g) > _UNSHARED_REFS:
        return False
    base = g.base
    if base is None:
        return True
    # References to an otherwise unheld base: g's, the local name, getrefcount's argument.
    return (g.flags.c_contiguous and base.base is None and base.size == g.size
            and sys.getrefcount(base) <= 3)


def _accumulate(var, g, create_graph):
    """``AccumulateGrad``: add ``g`` (its tensor hooks already ran) into ``var.grad``, then run
    the leaf's post-accumulate-grad hooks."""
    if not var._rg:
        return  # requires_grad_(False) since the graph was made: PyTorch accumulates nothing
    if create_graph:
        g = g if isinstance(g, Tensor) else Tensor._make(g, None, False)
        var._grad = g if var._grad is None else var._grad + g
    else:
        if isinstance(g, Tensor):
            g = g._data
        if var._grad is None:
            var._grad = Tensor._make(g if _unshared(g) else g.copy(), None, False)
        elif var._grad._grad_fn is not None or var._grad._rg:
            var._grad = var._grad.detach() + Tensor._make(g, None, False)
        else:
            grad = var._grad
            grad._data += g
            grad._vc[0] += 1
    if var._hooks:
        _run_post_accumulate_hooks(var)


def _run_post_accumulate_hooks(var):
    from .._tensor import _PostAccumulateGradHook
    for hook in list(var._hooks):
        if type(hook) is _PostAccumulateGradHook and hook.fn(var) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
