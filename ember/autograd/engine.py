"""The backward pass: walk the graph from the roots and hand gradients down the edges.

The walk is iterative (a 100,000-node chain is fine): first collect the reachable nodes and
count each node's incoming edges, then run nodes from a ready heap ordered like PyTorch's
(most recently created first, ``AccumulateGrad`` as soon as it is ready). A node runs once,
when all gradients flowing into it have arrived and been summed.

Gradients are raw arrays in an ordinary backward and Tensors under ``create_graph=True``.
"""
from __future__ import annotations

import heapq
import sys

import numpy as np

from . import grad_mode
from .graph import AccumulateGrad

__all__ = ["run_backward"]


def _collect(roots):
    """Every node reachable from ``roots`` and, for each, its children (no recursion)."""
    seen = set()
    order = []
    stack = [fn for fn, _ in roots]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        order.append(fn)
        for child, _ in fn.next_functions:
            if child is not None and child not in seen:
                stack.append(child)
    return order


def _needed(order, targets):
    """Nodes that must run so that gradients reach ``targets`` (nodes whose input we capture)."""
    needed = {}
    # ``order`` is a DFS pre-order; resolve by iterating until nothing changes along edges.
    pending = list(reversed(order))
    changed = True
    for fn in pending:
        needed[fn] = False
    while changed:
        changed = False
        for fn in pending:
            if needed[fn]:
                continue
            for child, _ in fn.next_functions:
                if child is not None and (child in targets or needed.get(child)):
                    needed[fn] = True
                    changed = True
                    break
    return needed


def _dependencies(roots):
    """For every node reachable from ``roots``, how many edges point at it (one walk)."""
    deps = {}
    stack = []
    for fn, _ in roots:
        if fn not in deps:
            deps[fn] = 0
            stack.append(fn)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def run_backward(roots, grads, retain_graph, create_graph, capture=None, accumulate=True):
    """Run backward from ``roots`` (``(node, output_nr)`` edges) seeded with ``grads``.

    ``capture``: ``{(node, output_nr): slot}`` edges whose total incoming gradient is recorded
    (``autograd.grad`` and ``backward(inputs=...)``); with it, only nodes on a path to a
    captured edge run. ``accumulate``: whether ``AccumulateGrad`` nodes write ``.grad``.
    Returns the captured gradients as a list (None where nothing arrived).
    """
    if capture is None:
        deps = _dependencies(roots)
        runs = targets = None
    else:
        order = _collect(roots)
        targets = {fn for fn, _ in capture}
        needed = _needed(order, targets)
        runs = {fn for fn in order if needed[fn]}
        deps = dict.fromkeys(order, 0)
        for fn in runs:
            for child, _ in fn.next_functions:
                if child is not None:
                    deps[child] += 1
    buffers = {}
    for (fn, nr), g in zip(roots, grads):
        _add(buffers, fn, nr, g)
    captured = [None] * (len(capture) if capture else 0)
    ready = []
    for fn in {fn for fn, _ in roots}:
        if deps[fn] == 0:
            heapq.heappush(ready, (-fn._seq, id(fn), fn))
    prev = grad_mode._state.grad
    grad_mode._state.grad = create_graph
    push, pop = heapq.heappush, heapq.heappop  # the loop runs once per node: keep it lean
    try:
        while ready:
            fn = pop(ready)[2]
            buf = buffers.pop(fn)
            if fn._pre_hooks:
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
                continue
            grads_in = fn.apply(buf, create_graph)
            if fn._hooks:
                for hook in fn._hooks:
                    hook(tuple(_as_tensor(g) for g in grads_in),
                         tuple(_as_tensor(g) for g in buf))
            if not retain_graph:
                fn.release()
            for (child, nr), g in zip(fn.next_functions, grads_in):
                if child is None or (runs is not None and child not in runs
                                     and child not in targets):
                    continue
                if g is not None:
                    child_buf = buffers.get(child)
                    if child_buf is None:
                        child_buf = buffers[child] = [None] * child._n_outputs
                    old = child_buf[nr]
                    child_buf[nr] = g if old is None else _plus(old, g)
                left = deps[child] - 1
                deps[child] = left
                if left == 0:
                    if child in buffers:
                        push(ready, (-child._seq, id(child), child))
                    else:
                        _skip(child, deps, buffers, ready, runs)
            grads_in = g = None  # hold no gradient past its node: AccumulateGrad may take it
    finally:
        grad_mode._state.grad = prev
    return captured


def _skip(fn, deps, buffers, ready, runs):
    """A node whose every incoming gradient was None: it does not run; release its children."""
    stack = [fn]
    while stack:
        node = stack.pop()
        if runs is not None and node not in runs:
            continue
        for child, _ in node.next_functions:
            if child is None:
                continue
            deps[child] -= 1
            if deps[child] == 0:
                if child in buffers:
                    heapq.heappush(ready, (-child._seq, id(child), child))
                else:
                    stack.append(child)


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
    it (no new array per extra path); NumPy's 0-d sums come back as scalars and are made arrays.
    """
    if (type(a) is np.ndarray and a.base is None and a.flags.writeable and a.ndim
            and a.shape == b.shape and a.dtype == b.dtype
            and sys.getrefcount(a) <= _BUFFER_ONLY_REFS):
        a += b
        return a
    s = a + b
    return np.asarray(s) if isinstance(s, np.generic) else s


def _as_tensor(g):
    from .._tensor import Tensor
    if g is None or isinstance(g, Tensor):
        return g
    return Tensor._make(g, None, False)


def _run_pre_hooks(fn, buf, create_graph):
    """Tensor hooks (``register_hook`` on a non-leaf) and node pre-hooks, in order."""
    from .._tensor import Tensor, _TensorHook
    buf = list(buf)
    for hook in list(fn._pre_hooks):
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
                buf = [g if create_graph or not isinstance(g, Tensor) else g._data for g in new]
    return buf


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
    if not g.flags.writeable or sys.getrefcount(g) > _UNSHARED_REFS:
        return False
    base = g.base
    if base is None:
        return True
    # References to an otherwise unheld base: g's, the local name, getrefcount's argument.
    return (g.flags.c_contiguous and base.base is None and base.size == g.size
            and sys.getrefcount(base) <= 3)


def _accumulate(var, g, create_graph):
    """``AccumulateGrad``: run the leaf's hooks, then add ``g`` into ``var.grad``."""
    from .._tensor import Tensor
    if var._hooks:
        for hook in var._hooks:
            new = hook(_as_tensor(g))
            if new is not None:
                g = new if create_graph else new._data
    if create_graph:
        g = g if isinstance(g, Tensor) else Tensor._make(g, None, False)
        var._grad = g if var._grad is None else var._grad + g
        return
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
