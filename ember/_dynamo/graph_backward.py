"""A backward that records its graph (``create_graph=True``: a Hessian-vector product, a
gradient penalty), as compiled mode records it.

Under ``create_graph`` the engine runs each node's backward as Tensor ops (its rules get
ember's Tensor namespace, see ``ember/_xp.py``), and ``Op._call`` reports each of those ops as
a forward: the recorder writes them down as it writes any op, in eager's order. What the
engine reports besides must therefore not be written down a second time. ``GraphBackward`` is
what the engine reports to during such a backward (``Recorder.graph_backward``):

- ``node_apply``: nothing is written (the node's computation is the ops already recorded);
  a node whose backward under ``create_graph`` is not ember's rules or view functions (a
  custom ``Function``, saved-tensor hooks, a checkpoint) stops the recording;
- ``plus`` and the sums of captured gradients (``opaque(_sum, ...)``): Tensor additions,
  recorded as ops when they run;
- ``accumulate``: ``AccumulateGrad`` sets ``.grad`` to the gradient tensor itself, or to
  ``.grad + g`` (an op, recorded); the replay sets ``.grad`` to a tensor of the same array
  (``_set_grad``), one that requires grad where eager's holds a graph, so that a later
  ordinary backward's accumulation takes the same branch (``.grad.detach() + g``).

A rule's own Python runs again only as the ops it called. So a rule must not turn values
into Python ones behind the recorder's back: a Tensor's values read (``bool``, ``item``) are
a graph break, a check on values goes through ``_recording.expect`` (eig's), and raw arrays
made from an op's non-differentiable arguments (targets, indices) reach the ops through one
recorded call (``_recording.opaque``: the NLL rule's), else the recording stops (an array
made outside the recorded calls is used).

A replay makes no graph. A graph that outlives the call therefore stops the recording (the
call runs eagerly, as correct as ever): a ``.grad`` that still holds one when the call
returns (``check_grads``), a result made by or after such a backward that requires grad
(``graph_result``). A result made before it whose graph the backward kept (the loss) is
rebuilt with a node that raises a clear error if a backward reaches it.
"""
from __future__ import annotations

from .._tensor import Tensor
from ..autograd import views as _views
from ..autograd.graph import Node, new_sequence_nr
from ..autograd.node import OpNode

__all__ = ["GraphBackward", "check_grads", "graph_result"]

# nodes whose backward under ``create_graph`` is ember's own Tensor ops (rules, view functions)
_VIEW_NODES = (_views.CopySlices, _views.AsStridedBackward0)


class GraphBackward:
    """What the engine reports to while a recorded backward records its graph (see the
    module docstring); ``rec``: the ``Recorder``."""

    __slots__ = ("rec",)

    def __init__(self, rec):
        self.rec = rec

    def fail(self, reason):
        self.rec.fail(reason)

    def node_apply(self, node, buf, grads_in):
        """``node`` ran its backward as ops, each recorded already: only refuse the nodes
        whose backward may compute outside ember's ops."""
        if type(node) in _VIEW_NODES:
            return
        if not isinstance(node, OpNode) or node._packed is not None:
            self.rec.fail(f"the backward of {type(node).__name__} records its graph "
                          "(create_graph=True) through code ember does not record (a custom "
                          "Function, saved-tensor hooks)")

    def plus(self, engine_plus, a, b, own):
        """Two gradients (Tensors) summed: the addition is an op, recorded as it runs."""
        return engine_plus(a, b, own)

    def opaque(self, fn, args):
        """A captured gradient's sum (``engine._sum``): Tensor ops, recorded as they run."""
        return fn(*args)

    def accumulate(self, engine_accumulate, var, g, create_graph, own):
        """``AccumulateGrad`` under ``create_graph``: ``var.grad`` becomes ``g`` or
        ``var.grad + g`` (recorded as an op); the replay sets it (``_set_grad``)."""
        before = var._grad
        engine_accumulate(var, g, create_graph, own)
        grad = var._grad
        if grad is before:
            return  # (a leaf that stopped requiring grad: nothing accumulated)
        rec = self.rec
        if rec.made_here(var):
            return  # (a leaf made inside the call: its ``.grad`` is the recorded ops')
        if rec.source(grad) is not None:  # (``g`` is an argument or external itself)
            rec.call(_set_grad_to, (var, grad))
        else:
            rec.call(_set_grad, (var, grad._data, grad._grad_fn is not None or grad._rg))
        rec.note_grad(var)
        rec.graph_grads.append(var)


def _set_grad(var, array, graph):
    """A replay's ``var.grad`` after a backward that records its graph: ``array`` (the
    gradient's, not a copy, as eager shares it), requiring grad where eager's has a graph."""
    var._grad = Tensor._make(array, None, graph)


def _set_grad_to(var, tensor):
    var._grad = tensor


def check_grads(rec):
    """After the call: a ``.grad`` a recorded backward set that still holds a graph stops
    the recording (a replay makes no graph)."""
    for var in rec.graph_grads:
        grad = var._grad
        if grad is not None and (grad._grad_fn is not None or grad._rg):
            rec.fail("a .grad holds a graph when the call returns (backward with "
                     "create_graph=True: a replay makes no graph)")
            return


def graph_result(rec, value):
    """How a replay rebuilds ``value``, a result that requires grad when a backward in the
    call recorded its graph: a function of its array, or None after ``rec.fail``."""
    fn = value._grad_fn
    if fn is None or fn._seq >= rec.graph_seq:
        rec.fail("the result is made from gradients that record a graph (create_graph=True) "
                 "and needs that graph after the call (a replay makes no graph)")
        return None
    return _kept


def _kept(array):
    """A result whose graph a backward in the call kept (``create_graph``): the replay has
    none to keep, and says so if a backward reaches it."""
    return Tensor._make(array, KeptGraphBackward(), True)


class KeptGraphBackward(Node):
    """The node of a replayed result whose graph eager's call kept: its backward raises."""

    def __init__(self):
        self.next_functions = ()
        self._seq = new_sequence_nr()

    def apply(self, grad_outputs, create_graph):
        raise RuntimeError(
            "torch.compile: this result's graph was kept by a backward with "
            "create_graph=True inside the compiled call, but the call's replay keeps no "
            "graph: return it detached, or call the function uncompiled to backward through "
            "it again")

    def release(self):
        pass
