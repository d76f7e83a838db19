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

Ownership: the engine sums gradients arriving at one slot in place, and a leaf's ``.grad`` takes
its gradient without a copy, only for arrays the engine owns: a sum it made, or a new array an
op node's rules made in an ordinary backward (not the gradient the node was handed, not a view
of it, not a saved value, not the same array sent down two edges). Arrays a user, a hook or a
custom ``Function`` hands in are never written into (``owned`` below: the slots holding one).
Only arrays of ``_IN_PLACE_MIN`` elements or more are tracked: below that a new array or a copy
costs less than the tracking.
"""
from __future__ import annotations

import heapq

import numpy as np

from .. import _recording
from .._tensor import Tensor, _PostAccumulateGradHook, _TensorHook
from . import anomaly_mode, grad_mode
from ._walk import walk
from .graph import AccumulateGrad, GraphTask, _current, hook_result

__all__ = ["run_backward"]

anomaly = anomaly_mode.state


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
    rec = _recording.state.recorder  # compiled mode's, while it records (``_recording.py``)
    if rec is not None:
        rec = _recorded_backward(rec, create_graph)
    runs = targets = None
    if capture is not None:
        targets = {fn for fn, _ in capture}
        runs = _needed(roots, targets)
    buffers = {}
    # (node, slot) whose array the engine owns (see the module's docstring); a node's entries
    # stay after it ran (none of its slots fills again in this backward)
    owned = set()
    ready = []
    for (fn, nr), g in zip(roots, grads):
        if fn not in buffers:
            heapq.heappush(ready, (-fn._seq, fn))
        _add(buffers, owned, fn, nr, g)
    captured = [None] * (max(capture.values()) + 1 if capture else 0)  # slots: input indices
    prev = grad_mode._state.grad
    grad_mode._state.grad = create_graph
    outer_task, _current.task = getattr(_current, "task", None), GraphTask(roots, runs, targets)
    push, pop = heapq.heappush, heapq.heappop  # the loop runs once per node: keep it lean
    plain = not create_graph  # raw arrays: the engine may own some (see the module docstring)
    ndarray, generic, ndarray_of = np.ndarray, np.generic, np.asarray  # (read once, used per edge)
    in_place_min = _IN_PLACE_MIN
    try:
        while ready:
            fn = pop(ready)[1]
            buf = buffers.pop(fn)
            if fn._pre_hooks or type(fn) is AccumulateGrad and fn.variable._hooks:
                if rec is not None:
                    rec.fail("a backward hook runs (hooks are not recorded yet)")
                buf = _run_pre_hooks(fn, buf, create_graph)
                if owned:  # a hook saw (and may keep) these arrays: they are not ours now
                    _disown(owned, fn, len(buf))
            if capture is not None:
                for nr in range(len(buf)):
                    slot = capture.get((fn, nr))
                    if slot is not None:
                        captured[slot] = (_sum(captured[slot], buf[nr]) if rec is None else
                                          rec.opaque(_sum, (captured[slot], buf[nr])))
                if fn not in runs:
                    continue
            if type(fn) is AccumulateGrad:
                if accumulate:
                    own = bool(owned) and (fn, 0) in owned
                    if rec is None:
                        _accumulate(fn.variable, buf[0], create_graph, own)
                    else:
                        rec.accumulate(_accumulate, fn.variable, buf[0], create_graph, own)
                if fn._hooks:
                    _run_post_hooks(fn, (), buf, create_graph)
                continue
            if fn._adds_into is not None and plain and runs is None and not fn._hooks and \
                    not anomaly.enabled and _added_into(fn, buf[0], buffers, owned):
                if not retain_graph:
                    fn.release()
                buf = None
                continue
            if runs is not None:
                grads_in = _apply_pruned(fn, buf, create_graph, runs, targets, rec)
            elif anomaly.enabled:
                grads_in = _apply_watched(fn, buf, create_graph)
            else:
                grads_in = fn.apply(buf, create_graph)
                if rec is not None:
                    rec.node_apply(fn, buf, grads_in)
            fresh = plain  # (and fn._fresh_grads: read where it matters, below)
            if fn._hooks:
                if rec is not None:
                    rec.fail("a backward hook runs (hooks are not recorded yet)")
                grads_in = _run_post_hooks(fn, grads_in, buf, create_graph)
                fresh = False  # (as for pre-hooks)
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
                if old is None:
                    child_buf[nr] = g
                    if fresh and g.size >= in_place_min and fn._fresh_grads and \
                            _made_by(fn, g, buf, grads_in, owned):
                        owned.add((child, nr))
                elif rec is not None:
                    key = (child, nr)
                    own = type(old) is ndarray and old.size >= in_place_min and key in owned
                    child_buf[nr] = rec.plus(_plus, old, g, own)
                    if type(old) is ndarray and old.size >= in_place_min:
                        owned.add(key)
                elif type(old) is ndarray and old.size >= in_place_min:
                    key = (child, nr)
                    child_buf[nr] = _plus(old, g, key in owned)
                    owned.add(key)
                else:  # (``_plus(old, g, False)``, written out: the common sum of small arrays)
                    s = old + g
                    child_buf[nr] = s if type(s) is ndarray or not isinstance(s, generic) else \
                        ndarray_of(s)
            if not retain_graph:
                fn.release()
            buf = grads_in = g = old = s = None  # hold no gradient past its node
        callbacks = _current.task.callbacks
        if callbacks and rec is not None:
            rec.fail("a final callback runs (queue_callback)")
        while callbacks:  # (one may queue another)
            callbacks.pop(0)()
    finally:
        grad_mode._state.grad = prev
        _current.task = outer_task
    return captured


def _recorded_backward(rec, create_graph):
    """What a backward reports to while compiled mode records, or None when it cannot be
    recorded. Under ``create_graph`` the nodes' rules run as ops, which report themselves:
    the recorder's ``graph_backward`` is told of the rest without writing those twice."""
    if anomaly.enabled:
        rec.fail("anomaly detection is on")
        return None
    rec.backward_ran = True
    return rec.graph_backward() if create_graph else rec


def _apply_pruned(fn, buf, create_graph, runs, targets, rec=None):
    """``fn.apply`` when gradients are captured (``autograd.grad``, ``backward(inputs=...)``):
    the rules of edges that lead to no target do not run (``autograd.grad(loss, [w])`` of a
    convolution skips its input's gradient, a whole transposed convolution), as PyTorch's
    nodes compute only the outputs their task needs. Those edges read as ``(None, 0)`` during
    the call, which every ``apply`` skips; their gradients are None, hooks see None there."""
    edges = fn.next_functions
    for child, _ in edges:
        if child is not None and child not in runs and child not in targets:
            break
    else:
        if anomaly.enabled:
            return _apply_watched(fn, buf, create_graph)
        grads_in = fn.apply(buf, create_graph)
        if rec is not None:
            rec.node_apply(fn, buf, grads_in)
        return grads_in
    fn.next_functions = tuple(edge if edge[0] is None or edge[0] in runs or edge[0] in targets
                              else (None, 0) for edge in edges)
    try:
        if anomaly.enabled:
            return _apply_watched(fn, buf, create_graph)
        grads_in = fn.apply(buf, create_graph)
        if rec is not None:
            rec.node_apply(fn, buf, grads_in)  # (with the edges pruned, as it ran)
        return grads_in
    finally:
        fn.next_functions = edges


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


def _add(buffers, owned, fn, nr, g):
    buf = buffers.get(fn)
    if buf is None:
        buf = buffers[fn] = [None] * fn._n_outputs
    old = buf[nr]
    if old is None:
        buf[nr] = g  # (a root's gradient: the caller's, never owned)
    else:
        own = (fn, nr) in owned  # (Tensors under create_graph: their sum is an op, recorded)
        buf[nr] = _plus(old, g, own) if isinstance(g, Tensor) else _recording.opaque(
            _plus, old, g, own)
        if type(buf[nr]) is np.ndarray and buf[nr].size >= _IN_PLACE_MIN:
            owned.add((fn, nr))


def _disown(owned, fn, n):
    """Stop tracking the slots of ``fn``'s buffer as the engine's."""
    for nr in range(n):
        owned.discard((fn, nr))


def _added_into(fn, g, buffers, owned):
    """Whether ``g``, the gradient of ``fn``'s read of part of its input (``Node._adds_into``),
    was added in place into the gradient its input has already received, an array the engine
    owns of the input's shape and ``g``'s dtype: then ``fn``'s rule does not run. An RNN's
    ``emb[:, t]`` per step otherwise sends zeros of ``emb``'s shape per step, each summed in
    whole (16 steps of makemore's (32, 16, 64): 15 zeros and sums fewer)."""
    child, nr = fn.next_functions[0]
    child_buf = buffers.get(child)
    if child_buf is None or (child, nr) not in owned or type(g) is not np.ndarray:
        return False
    out = child_buf[nr]
    shape, dtype = fn._meta[0]
    if (type(out) is not np.ndarray or out.shape != shape or out.dtype != dtype
            or g.dtype != dtype or type(dtype) not in _REAL or fn._saved is None
            or fn._packed is not None):
        return False
    for _, tensor, version in fn._inputs:
        if tensor._vc[0] != version:
            return False  # (``apply`` raises the error)
    _recording.opaque(fn._adds_into, out, g, *fn._saved)
    return True


_REAL = frozenset({type(np.dtype(np.float32)), type(np.dtype(np.float64))})


def _made_by(fn, g, buf, grads_in, owned):
    """Whether ``g``, which ``fn``'s rules returned, is an array only the engine holds: a new
    array (or a C-contiguous view of all of one: ``W.t()``'s gradient, transposed back), not
    the gradient ``fn`` was handed unless the engine owned that (its slot in ``owned``), not a
    value ``fn`` saved, and not sent down another edge too."""
    if type(g) is not np.ndarray or not g.flags.writeable:
        return False
    array = g.base
    if array is None:
        array = g
    elif not (g.flags.c_contiguous and array.base is None and array.size == g.size):
        return False
    for nr, a in enumerate(buf):
        if (a is array or a is g) and (fn, nr) not in owned:
            return False
    shared = 0
    for a in grads_in:
        if a is g or a is not None and type(a) is np.ndarray and a.base is array:
            shared += 1
    if shared > 1:
        return False
    saved = getattr(fn, "_saved", None)
    return not (saved and any(a is array for a in saved) or getattr(fn, "_ans", None) is array)


def _sum(a, b):
    if b is None:
        return a
    return b if a is None else _plus(a, b, False)


def _plus(a, b, own):
    """``a + b`` for gradients arriving at the same slot: into ``a`` when the engine owns it
    (``own``) and it is big enough for a new array to cost more than these checks; NumPy's 0-d
    sums come back as scalars and are made arrays. The result is the engine's.
    """
    if (own and type(a) is np.ndarray and a.size >= _IN_PLACE_MIN and a.shape == b.shape
            and a.dtype == b.dtype):
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


def accumulate(var, g, create_graph):
    """``AccumulateGrad`` outside the walk (``backward(inputs=...)``), reported to compiled
    mode's recorder as the walk's own are."""
    rec = _recording.state.recorder
    if rec is None:
        _accumulate(var, g, create_graph)
        return
    if create_graph:
        rec = rec.graph_backward()
    rec.accumulate(_accumulate, var, g, create_graph, False)


def _accumulate(var, g, create_graph, own=False):
    """``AccumulateGrad``: add ``g`` (its tensor hooks already ran) into ``var.grad``, then run
    the leaf's post-accumulate-grad hooks. ``.grad`` takes ``g`` itself, not a copy, when the
    engine owns it (``own``; PyTorch steals it too)."""
    if not var._rg:
        return  # requires_grad_(False) since the graph was made: PyTorch accumulates nothing
    if create_graph:
        g = g if isinstance(g, Tensor) else Tensor._make(g, None, False)
        var._grad = g if var._grad is None else var._grad + g
    else:
        if isinstance(g, Tensor):
            g = g._data
        if var._grad is None:
            var._grad = Tensor._make(g if own and type(g) is np.ndarray else g.copy(), None,
                                     False)
        elif var._grad._grad_fn is not None or var._grad._rg:
            var._grad = var._grad.detach() + Tensor._make(g, None, False)
        else:
            grad = var._grad
            grad._data += g
            grad._vc[0] += 1
    if var._hooks:
        _run_post_accumulate_hooks(var)


def _run_post_accumulate_hooks(var):
    for hook in list(var._hooks):
        if type(hook) is _PostAccumulateGradHook and hook.fn(var) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
