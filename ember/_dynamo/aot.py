"""The backward of a compiled forward: a call whose results still need their graph (``model =
torch.compile(model)``, then ``model(x).sum().backward()`` outside).

While the call is recorded, once it has returned, ``record_backward`` runs the autograd
engine on its results itself, seeded with placeholder gradients, capturing the gradient of
every edge the results' graph leaves by (the parameters' and leaf arguments'
``AccumulateGrad``, an argument's own history), with ``retain_graph`` so that the recording
of the forward stays whole. The recorder writes that backward down too, after the forward's
lines: ``split`` marks where. The replay then runs the forward's lines and gives its results
one ``CompiledFunctionBackward`` node (as PyTorch names it), holding the arrays the backward's
lines read (the *residuals*); its ``apply`` runs the backward's lines on them and the engine's
gradients. Gradients are eager's bit for bit: the same rules in the same order on the same
arrays, the same sums.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ..autograd.engine import run_backward
from ..autograd.graph import (
    AccumulateGrad,
    Node,
    accumulate_grad_of,
    gradient_edge,
    new_sequence_nr,
    raise_freed,
    walk,
)
from .exc import Unsupported

__all__ = ["record_backward", "Backward"]


def needs_graph(result):
    """Whether ``result`` holds a tensor with a graph (a result that requires grad)."""
    return any(t._grad_fn is not None and t._rg for t in _tensors(result))


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v)


def record_backward(rec, result, first_seq):
    """Record the backward of ``result``'s graph (nodes numbered from ``first_seq`` on are
    the call's own); returns a ``Backward`` describing it, or None after ``rec.fail``."""
    outs = []
    for t in _tensors(result):
        if t._grad_fn is not None and t._rg and all(t is not o for o in outs):
            outs.append(t)
    try:
        roots = [gradient_edge(t) for t in outs]
    except RuntimeError as exc:  # (a view whose base was written in place, which refuses
        # its graph: eager raises only if a backward reaches it)
        rec.fail(f"a result's graph cannot be taken: {exc}")
        return None
    if any(fn._seq < first_seq for fn, _ in roots):
        rec.fail("a result is a tensor the call was given (not recorded yet)")
        return None
    targets, edges = [], {}
    for fn in walk(roots):
        if fn._seq < first_seq:
            continue
        for child, nr in fn.next_functions:
            if child is None or (child, nr) in edges or (
                    type(child) is not AccumulateGrad and child._seq >= first_seq):
                continue
            source = _edge_source(rec, child, nr)
            if source is None:
                return None
            edges[(child, nr)] = len(targets)
            targets.append(source)
    seeds = [np.ones(t._data.shape, t._data.dtype) for t in outs]
    rec.split = len(rec.lines)
    rec.seed_names = [rec.seed_slot(g) for g in seeds]
    try:
        captured = run_backward(roots, seeds, True, False, capture=edges, accumulate=False)
    except Unsupported:
        raise
    except Exception as exc:  # (a node that refuses its backward: the call has returned)
        rec.fail(f"the backward of the results raises {type(exc).__name__}: {exc}")
        return None
    if rec.failed is not None:
        return None
    return Backward(outs, targets, captured)


def _edge_source(rec, node, nr):
    """How a replay finds the edge ``(node, nr)`` anew: the ``AccumulateGrad`` of a leaf the
    replay can name, or the history of a tensor among the arguments."""
    if type(node) is AccumulateGrad:
        source = rec.source(node.variable)
        if source is None:
            rec.fail("the result's graph reaches a leaf made inside the call")
            return None
        return ("leaf", source)
    for i, t in enumerate(rec.leaves):
        if t._grad_fn is node and t._output_nr == nr:
            return ("history", f"L[{i}]")
    rec.fail("the result's graph reaches the history of a tensor that is no argument")
    return None


class Backward:
    """What ``record_backward`` found: the results with a graph (in order), where each
    captured edge leads, and the captured gradients (arrays the recorder named, or None)."""

    def __init__(self, outs, targets, captured):
        self.outs, self.targets, self.captured = outs, targets, captured


class CompiledFunctionBackward(Node):
    """The node of a replayed call's results: its backward is the recorded one.

    ``residuals``: the arrays the backward's lines read, made by the forward's replay;
    ``backward(residuals, grads)`` the generated function of those lines; ``metas``: each
    result's shape and dtype (a result that gets no gradient gets zeros)."""

    _fresh_grads = False  # (its gradients are the recorded lines', which may alias)

    def __init__(self, next_functions, n_outputs, backward, residuals, metas):
        self.next_functions = next_functions
        self._seq = new_sequence_nr()  # (after its edges' nodes: they run after it)
        self._n_outputs = n_outputs
        self._backward, self._residuals, self._metas = backward, residuals, metas

    def apply(self, grad_outputs, create_graph):
        if create_graph:
            raise RuntimeError("ember's compiled backward cannot record its graph "
                               "(create_graph=True): call the function uncompiled for "
                               "higher derivatives")
        if self._residuals is None:
            raise_freed()
        grads = [g if g is not None else np.zeros(shape, dtype)
                 for g, (shape, dtype) in zip(grad_outputs, self._metas)]
        return self._backward(self._residuals, grads)

    def release(self):
        self._residuals = None


def make_node(targets, backward, residuals, metas):
    """The node of one replay's results; ``targets``: per captured edge ``(kind, tensor)``,
    the tensors of this replay (``"leaf"``: its ``AccumulateGrad``; ``"history"``: its node)."""
    edges = tuple((accumulate_grad_of(t), 0) if kind == "leaf" else (t._grad_fn, t._output_nr)
                  for kind, t in targets)
    return CompiledFunctionBackward(edges, len(metas), backward, residuals, metas)


def result_tensor(array, node, k):
    """Result ``k`` of a replay, made by ``node``."""
    t = Tensor._make(array, node, True)
    t._output_nr = k
    return t
