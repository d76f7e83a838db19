"""The backward graph: nodes (``grad_fn``), edges, saved values and their version checks.

A ``Node`` is made by an op when it records; its ``next_functions`` are ``(node, input_nr)``
pairs in the op's input order, with ``(None, 0)`` for inputs that need no gradient, and leaf
tensors reached through an ``AccumulateGrad`` node, exactly as PyTorch exposes them.

Saved values: a node keeps only what its derivative rules read (decided per op at
declaration, see ``ember/ops/registry.py``). Tensor inputs are saved with the version they had,
and unpacking checks it. ``release()`` drops them after the node ran without
``retain_graph``; running it again then raises PyTorch's "backward through the graph a second
time" error. Nodes that save nothing (``AddBackward0``, ``SumBackward0``) can run again.
"""
from __future__ import annotations

import itertools
import re
import weakref

from .. import _errors

__all__ = ["Node", "AccumulateGrad", "gradient_edge"]

sequence = itertools.count()  # numbers nodes in creation order (``Node._seq``)


class Node:
    """Base of every ``grad_fn``. Subclasses are generated per op by the registry."""

    # Hooks are rare: they live in the instance ``__dict__`` (made on first use), so a new node
    # sets two attributes. ``_seq`` orders the backward: every node's inputs have smaller ones.
    __slots__ = ("next_functions", "_seq", "__dict__", "__weakref__")
    _n_outputs = 1  # gradient slots the engine buffers for this node
    _pre_hooks = _hooks = None
    _freed = False  # after a backward without retain_graph dropped the saved values

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        return {}

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return replacement gradients."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return _RemovableHandle(self._pre_hooks, fn)

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"


class _RemovableHandle:
    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self):
        if self._fn in self._list:
            self._list.remove(self._fn)


class AccumulateGrad(Node):
    """Sink of a leaf tensor: adds the incoming gradient into ``variable.grad``.

    One per leaf, shared by every op that uses the leaf (the leaf keeps a weak reference to it),
    so ``next_functions`` show the same object each time, as in PyTorch.
    """

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable
        self.next_functions = ()
        # Numbered before any node that uses the leaf, so it runs right after the last of them
        # (as soon as it is ready, like PyTorch's).
        self._seq = new_sequence_nr()


def accumulate_grad_of(tensor):
    """The shared ``AccumulateGrad`` node of a leaf tensor (made on first use)."""
    ref = tensor._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(node)
    return node


def new_node(cls, next_functions):
    """A node of class ``cls`` (not made by an op) with the given edges, numbered now."""
    node = cls.__new__(cls)
    node.next_functions = next_functions
    node._seq = new_sequence_nr()
    return node


def gradient_edge(tensor):
    """The ``(node, input_nr)`` edge a tensor's gradient flows into (None for no grad)."""
    if not tensor._rg:
        return (None, 0)
    fn = tensor._grad_fn
    return (fn, tensor._output_nr) if fn is not None else (accumulate_grad_of(tensor), 0)


def check_version(tensor, saved_version, type_name=None):
    """Raise PyTorch's in-place modification error when a saved tensor changed since saving."""
    now = tensor._vc[0]
    if now != saved_version:
        raise RuntimeError(modified_error(type_name or tensor.type(), tensor.shape,
                                          tensor._grad_fn, tensor._output_nr, now,
                                          saved_version))


def modified_error(type_name, shape, grad_fn, output_nr, version, expected):
    """PyTorch's message; it names the op that now produces the tensor (``Exp``, ``AsStrided``)."""
    which = ""
    if grad_fn is not None:
        name = re.sub(r"Backward\d*$", "", type(grad_fn).__name__)
        which = f", which is output {output_nr} of {name},"
    return _errors.MODIFIED_INPLACE.format(type_name=type_name, shape=list(shape), which=which,
                                           version=version, expected=expected)


def raise_freed():
    raise RuntimeError(_errors.FREED)


def new_sequence_nr():
    return next(sequence)
