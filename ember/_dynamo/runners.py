"""A node's backward as a function of arrays, for the lines of a recording that call one.

The recorder writes most of a backward as its rules' calls; a node whose ``apply`` its fast
path does not serve (several outputs, complex gradients) and the nodes of writes through
views (``CopySlices``, ``AsStridedBackward0``) are called whole: a copy of the node, holding
which of its edges want a gradient but not the recording's graph, runs its own ``apply`` on
the replay's arrays.
"""
from __future__ import annotations

import copy

import numpy as np

from .._tensor import Tensor

__all__ = ["NodeRunner", "ViewNodeRunner", "holds_no_array"]


_EDGE = object()  # (stands for a node an edge leads to)


def holds_no_array(fn, depth=0):
    """Whether a view function's closure (and the functions it calls from there) holds no
    array or tensor: then it cuts the same region from any replay's arrays."""
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        items = v if isinstance(v, (tuple, list)) else (v,)
        for x in items:
            if isinstance(x, (np.ndarray, Tensor)) or callable(x) and (
                    depth > 8 or not holds_no_array(x, depth + 1)):
                return False
    return True


def _edges_only(node):
    """A copy of ``node`` whose edges say only which want a gradient (see ``NodeRunner``)."""
    clone = copy.copy(node)
    clone.next_functions = tuple((None if fn is None else _EDGE, nr)
                                 for fn, nr in node.next_functions)
    return clone


class ViewNodeRunner:
    """A ``CopySlices`` or ``AsStridedBackward0`` backward as a function of arrays: a copy of
    the node (with, for ``CopySlices``, a copy of its in-place op's node given the replay's
    saved arrays) runs its own ``apply``."""

    __slots__ = ("node", "inner")

    def __init__(self, node):
        self.node = _edges_only(node)
        inner = getattr(node, "_inner", None)
        self.inner = None if inner is None else NodeRunner(inner).node

    def __call__(self, buf, ans=None, saved=None):
        node = copy.copy(self.node)  # (a copy per call: replays may run in several threads)
        if self.inner is not None:
            inner = copy.copy(self.inner)
            inner._saved, inner._ans = saved, ans
            node._inner = inner
        return node.apply(buf, False)


class NodeRunner:
    """A node's backward as a function of arrays: a copy of the node, given the replay's
    saved arrays and output gradients, runs the node's own ``apply`` (for the nodes its fast
    path does not serve: several outputs, complex or reduced-precision gradients)."""

    __slots__ = ("node",)

    def __init__(self, node):
        # which edges want a gradient, without holding the recording's graph (and what its
        # nodes saved) for as long as the replay lives
        clone = _edges_only(node)
        clone._inputs = ()  # (the version checks ran when the call was recorded)
        clone._saved = clone._ans = None
        self.node = clone

    def __call__(self, buf, ans, saved):
        node = copy.copy(self.node)  # (a copy per call: replays may run in several threads)
        node._saved, node._ans = saved, ans
        return node.apply(buf, False)

    def __repr__(self):
        return f"<backward of {type(self.node).__name__}>"
