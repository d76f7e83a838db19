"""The backward graph: nodes (``grad_fn``), edges, saved values and their version checks.

A ``Node`` is made by an op when it records; its ``next_functions`` are ``(node, input_nr)``
pairs in the op's input order, with ``(None, 0)`` for inputs that need no gradient, and leaf
tensors reached through an ``AccumulateGrad`` node, exactly as PyTorch exposes them.

Saved values: a node keeps only what its derivative rules read (decided per op at
declaration, see ``ember/ops/registry.py``). Tensor inputs are saved with the version they had,
and unpacking checks it. ``release()`` drops them after the node ran without
``retain_graph``; running it again then raises PyTorch's "backward through the graph a second
time" error. Nodes that save nothing (``AddBackward0``, ``SumBackward0``) can run again.

Hooks: ``Node.register_prehook`` / ``register_hook`` (a node's incoming and outgoing
gradients) and ``register_multi_grad_hook`` (several tensors' gradients in one backward). Each
backward announces itself as the thread's current ``GraphTask``, which tells a hook whether a
node will run in it.
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref

from .. import _errors
from .._autograd_state import (
    NO_ACCUMULATOR,  # noqa: F401  (views and tensors mark with it)
    _RemovableHandle,
)
from .._upcalls import upcalls
from . import anomaly_mode

__all__ = ["Node", "AccumulateGrad", "gradient_edge", "register_multi_grad_hook",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

sequence = itertools.count()  # numbers nodes in creation order (``Node._seq``)


class Node:
    """Base of every ``grad_fn``. Subclasses are generated per op by the registry."""

    # Hooks are rare: they live in the instance ``__dict__`` (made on first use), so a new node
    # sets two attributes. ``_seq`` orders the backward: every node's inputs have smaller ones.
    __slots__ = ("next_functions", "_seq", "__dict__", "__weakref__")
    _n_outputs = 1  # gradient slots the engine buffers for this node
    _pre_hooks = _hooks = None
    _freed = False  # after a backward without retain_graph dropped the saved values
    # Whether the arrays ``apply`` returns in an ordinary backward are new unless they are (or
    # view) its gradient or a saved value, so the engine may own them (``engine.py``): true of
    # op nodes, whose rules are ember's; not of custom Functions or other nodes.
    _fresh_grads = False
    # For a read of part of its input (``select``, ``slice``: ``Op.defvjp_into``), a function
    # ``(out, g, *saved)`` adding the gradient ``g`` into ``out``, of the input's shape, in
    # place; the engine calls it instead of ``apply`` where the input already has a gradient
    # of its own (see ``engine._added_into``). None for other nodes.
    _adds_into = None

    def name(self):
        return type(self).__name__

    @property
    def metadata(self):
        """A dict of this node's own, kept as long as the node (for the user's annotations)."""
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self._metadata = {}
        return meta

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients.

        ``grad_inputs`` has one entry per ``next_functions`` edge. The hook may return a tuple
        of as many replacement gradients, sent down the edges instead.
        """
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return a tuple of replacement
        gradients (one per output), used by the node instead."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return _RemovableHandle(self._pre_hooks, fn)

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"


def hook_result(hook, result, original):
    """A node hook's returned gradients, checked as PyTorch checks them (a tuple, one value
    per gradient the hook was given, each of the same shape)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(original):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(result)}, but expected {len(original)})")
    for new, old in zip(result, original):
        if new is not None and old is not None and tuple(new.shape) != tuple(old.shape):
            raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _hook_name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


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

    def name(self):
        return "torch::autograd::AccumulateGrad"  # PyTorch's C++ class name


def accumulate_grad_of(tensor):
    """The shared ``AccumulateGrad`` node of a leaf tensor (made on first use)."""
    ref = tensor._acc
    node = ref() if ref is not None else None
    if node is None:
        if ref is NO_ACCUMULATOR:
            return None
        node = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(node)
    return node


def new_node(cls, next_functions):
    """A node of class ``cls`` (not made by an op) with the given edges, numbered now."""
    node = cls.__new__(cls)
    node.next_functions = next_functions
    node._seq = new_sequence_nr()
    if anomaly_mode.state.enabled:
        anomaly_mode.remember(node)
    return node


def gradient_edge(tensor):
    """The ``(node, input_nr)`` edge a tensor's gradient flows into (None for no grad)."""
    if tensor._base is not None and tensor._vc[0] != tensor._vv:
        upcalls.fresh(tensor)  # (views.py, built on this module, fills it)
    if not tensor._rg:
        return (None, 0)
    fn = tensor._grad_fn
    return (fn, tensor._output_nr) if fn is not None else (accumulate_grad_of(tensor), 0)


def check_version(tensor, saved_version, type_name=None, saved_by=None):
    """Raise PyTorch's in-place modification error when a saved tensor changed since saving;
    ember adds which node saved it (``saved_by``) and which op last wrote it, where."""
    now = tensor._vc[0]
    if now != saved_version:
        if type_name is None:  # PyTorch names a bool tensor by its C++ type
            type_name = tensor.type() if tensor._data.dtype != bool else (
                "CUDABoolType" if tensor.is_cuda else "CPUBoolType")
        fn = tensor._grad_fn
        if tensor._base is not None:  # a view names its history as made anew (AsStrided);
            upcalls.fresh(tensor)
            fn = tensor._grad_fn
        message = modified_error(type_name, tensor.shape, fn, tensor._output_nr, now,
                                 saved_version)
        if saved_by is not None:
            message += anomaly_mode.explain_write(tensor._vc, type(saved_by).__name__)
        raise RuntimeError(message)


def modified_error(type_name, shape, grad_fn, output_nr, version, expected):
    """PyTorch's message; it names the op that now produces the tensor (``Exp``, ``AsStrided``)."""
    which = ""
    if grad_fn is not None:
        which = f", which is output {output_nr} of {_short_name(grad_fn)},"
    return _errors.MODIFIED_INPLACE.format(type_name=type_name, shape=list(shape), which=which,
                                           version=version, expected=expected)


def _short_name(node):
    """How PyTorch's messages name a node: ``Mul`` for ``MulBackward0``, ``Prod1`` for
    ``ProdBackward1``, ``torch::autograd::CopySlices``."""
    name = type(node).__name__
    if name in ("CopySlices", "CopyBackwards"):  # PyTorch's hand-written C++ nodes
        return "torch::autograd::" + name
    return re.sub(r"Backward(\d*)$", lambda m: "" if m.group(1) == "0" else m.group(1), name)


def raise_freed():
    raise RuntimeError(_errors.FREED)


def new_sequence_nr():
    return next(sequence)


def walk(roots):
    """Every node reachable from the ``roots`` edges, depth first (inputs in order), iteratively."""
    seen, order = set(), []
    stack = [fn for fn, _ in reversed(roots)]
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        order.append(fn)
        stack.extend(child for child, _ in reversed(fn.next_functions)
                     if child is not None and child not in seen)
    return order


class GraphTask:
    """One running backward, as hooks see it: which nodes it will execute.

    ``runs`` and ``targets`` are the engine's when it captures gradients (``autograd.grad``,
    ``backward(inputs=...)``): only nodes on a path to a target run. Otherwise every node
    reachable from the roots does (found on first question).
    """

    __slots__ = ("roots", "runs", "targets", "_reachable", "callbacks", "__weakref__")

    def __init__(self, roots, runs, targets):
        self.roots, self.runs, self.targets = roots, runs, targets
        self._reachable = None
        self.callbacks = []  # run when every node has (``queue_callback``)

    def will_execute(self, node):
        if node is None:
            return False
        if self.runs is not None:
            return node in self.runs or node in self.targets
        if self._reachable is None:
            self._reachable = set(walk(self.roots))
        return node in self._reachable


_current = threading.local()  # ``task``: the GraphTask the engine runs in this thread


def current_graph_task():
    """The backward running in this thread (None outside one)."""
    return getattr(_current, "task", None)


class _MultiHandle:
    """Removes every tensor hook that one ``register_multi_grad_hook`` call registered."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward with the gradients of several tensors.

    ``mode="all"``: ``fn(grads)`` after the gradient of every tensor that this backward computes
    has arrived; ``grads`` holds one entry per tensor, ``None`` for tensors the backward does
    not reach (not in the graph, or not needed for its ``inputs``). ``mode="any"``: ``fn(grad)``
    with the first gradient to arrive. ``fn`` must not modify its arguments. Returns a handle
    whose ``remove()`` unregisters it.

    Example:
        >>> a, b = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
        >>> h = register_multi_grad_hook((a, b), lambda gs: print([g is not None for g in gs]))
        >>> (a * 2).sum().backward()
        [True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        ran = weakref.WeakKeyDictionary()  # GraphTask -> whether fn ran in it

        def first_only(grad):
            task = _task_or_raise()
            with lock:
                if ran.get(task):
                    return
                ran[task] = True
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors
                                  if t.requires_grad))
    nodes = [gradient_edge(t)[0] for t in tensors]
    pending = weakref.WeakKeyDictionary()  # GraphTask -> [grads so far, how many still due]

    def collector(i):
        def hook(grad):
            task = _task_or_raise()
            with lock:
                state = pending.get(task)
                if state is None:
                    due = sum(map(task.will_execute, nodes))
                    state = pending[task] = [[None] * len(nodes), due]
                state[0][i] = grad
                state[1] -= 1
                done = state[1] == 0
                if done:
                    del pending[task]
            if done:
                fn(state[0])
        return hook

    return _MultiHandle(tuple(t.register_hook(collector(i)) for i, t in enumerate(tensors)))


def _task_or_raise():
    task = current_graph_task()
    if task is None:
        raise AssertionError("expected this hook to be called inside a backward call")
    return task


from .saved_hooks import (  # noqa: E402  (torch.autograd.graph's names)
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


class _ExecutionEngine:
    """``Variable._execution_engine``: ``queue_callback(fn)`` runs ``fn()`` when the running
    backward has executed every node (DistributedDataParallel waits for its gradient
    all-reduces there)."""

    def queue_callback(self, callback):
        task = getattr(_current, "task", None)
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.callbacks.append(callback)


execution_engine = _ExecutionEngine()
