"""Reading a backward graph from the outside, for ``ember.viz.graph`` and ``autograd.explain``.

Both start from user tensors, name leaves after the user's variables and walk
``next_functions``; they share these helpers so that they accept the same arguments and refuse
bad ones with the same words. Only the graph's public surface is read: ``next_functions``,
``AccumulateGrad.variable``, the node's class name.
"""
from __future__ import annotations

from .._tensor import Tensor
from .graph import AccumulateGrad, gradient_edge
from .graph import walk as walk  # (its home is graph.py, GraphTask's; read here too)

NO_GRAPH = (
    "{fn}: {what} does not require grad and has no grad_fn, so there is no backward graph. "
    "Create the inputs it is computed from with requires_grad=True (or call "
    ".requires_grad_()), and compute it outside torch.no_grad()."
)


def as_list(tensors):
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def root_edges(tensors, fn):
    """The ``(node, output_nr)`` edge of each tensor; a clear error for one without a graph."""
    edges = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}: expected a Tensor, got {type(t).__name__}")
        if not t.requires_grad:
            what = "the tensor" if len(tensors) == 1 else f"tensor {i}"
            raise RuntimeError(NO_GRAPH.format(fn=fn, what=what))
        edges.append(gradient_edge(t))
    return edges


def leaf_names(params):
    """``{id(tensor): name}`` from a dict or ``(name, tensor)`` pairs (``named_parameters()``)."""
    if params is None:
        return {}
    items = params.items() if isinstance(params, dict) else params
    return {id(t): name for name, t in items}


def is_leaf_node(node):
    return type(node) is AccumulateGrad


def shape_text(shape, dtype):
    """``(2, 2) float32``: a shape as a tuple and the dtype without ``torch.``."""
    return f"{tuple(shape)} {str(dtype).removeprefix('torch.')}"
