"""``explain``: run a backward pass and show its work, one vector-Jacobian product at a time.

``backward()`` never builds a Jacobian: each node receives ``v``, the gradient of the output
with respect to its result, and hands ``Jᵀ·v`` to each of its inputs, where ``J`` is the
node's *local* Jacobian (one row per element of its result, one column per element of the
input). ``explain`` runs the real backward (same engine, same ``.grad`` at the end) with a hook
on every node, and for each node, in execution order, records ``v``, the derivative rule, the
gradient handed to each input and, when both sides are small, ``J`` itself.

``J`` is materialised the way the definition reads: the node's own backward applied to each
unit vector ``e_j`` gives ``Jᵀ·e_j``, row ``j`` of ``J``, so it is exactly what the engine
multiplies by. Multiplying the local Jacobians along the graph also gives each leaf's full
Jacobian ``∂output/∂leaf``, whose ``Jᵀ·v`` is the leaf's gradient: the derivation of the
tutorials, done on your own code.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

from .. import _errors
from .._creation import as_tensor, from_numpy, ones_like
from .._tensor import Tensor
from ._reverse import backward
from ._walk import as_list, is_leaf_node, leaf_names, root_edges, shape_text, walk
from .graph import gradient_edge

__all__ = ["explain", "Step", "InputGrad"]

FREED = (
    "explain(): this graph's saved values were freed by an earlier backward(), so it cannot "
    "be run again. Run the forward pass again to rebuild the graph (or pass "
    "retain_graph=True to that earlier backward()). PyTorch says: " + _errors.FREED
)
NON_SCALAR = (
    _errors.NON_SCALAR + ". explain(): pass gradient=v, the vector of the vector-Jacobian "
    "product (for example torch.ones_like(output))."
)
_LEGEND = (
    "Each step: a node receives v, the gradient of the output with respect to its result, "
    "and hands\nJᵀ·v to each input, computed by its derivative rule (in which g is v). J is "
    "the node's local\nJacobian (a row per element of its result, a column per element of "
    "the input), shown when\nboth have at most max_elements={} elements."
)


@dataclass(eq=False)
class InputGrad:
    """What one node hands to one of its inputs."""

    position: int           # index into the node's next_functions
    name: str               # the forward's argument ("input", "other", ...)
    to: str                 # the node or leaf it flows into
    rule: str               # the derivative rule (``g`` is v)
    jacobian_shape: tuple   # (elements of the node's result, elements of this input)
    jacobian: object        # local J as a Tensor of that shape, or None when not materialised
    vjp: object             # Jᵀ·v as a Tensor, or None when no gradient flows

    def lines(self, limit):
        yield f"{self.name} → {self.to}"
        yield f"  rule: {self.rule}"
        if self.jacobian is not None:
            yield from _show("  J", self.jacobian, limit, matrix=True)
        elif self.vjp is not None:
            rows, cols = self.jacobian_shape
            why = ("complex numbers" if max(rows, cols) <= limit else
                   f"more than max_elements={limit} elements on a side")
            yield f"  J ({rows}×{cols}): not materialised ({why})"
        yield from _show("  Jᵀ·v", self.vjp, limit)


@dataclass(eq=False)
class Step:
    """One node of the backward pass: an op's node, or a leaf's ``AccumulateGrad`` at the end.

    ``v`` holds the incoming gradient of each of the node's outputs. For an ``AccumulateGrad``
    step, ``v`` is the sum of what reached the tensor, ``jacobian`` the full Jacobian of the
    output(s) with respect to it (the product of the local ones, when all were materialised)
    and ``grad`` its ``.grad`` after the backward.
    """

    index: int
    name: str               # PyTorch's class name: "MulBackward0", "AccumulateGrad"
    label: str              # the name made unique, or the leaf's name
    node: object
    v: tuple
    inputs: tuple = ()
    tensor: object = None
    jacobian: object = None
    grad: object = None
    limit: int = 64

    def __str__(self):
        if self.tensor is None:
            lines = [f"[{self.index}] {self.label}"]
            for k, v in enumerate(self.v):
                if v is not None:
                    lines += _show("    v" if len(self.v) == 1 else f"    v[{k}]", v, self.limit)
            for grad in self.inputs:
                lines += ("    " + line for line in grad.lines(self.limit))
            return "\n".join(lines)
        lines = [f"[{self.index}] {self.name}: {self.label} "
                 f"{shape_text(self.tensor.shape, self.tensor.dtype)}"]
        lines += _show("    v (sum of what reached it)", self.v[0], self.limit)
        if self.jacobian is not None:
            lines += _show(f"    J of the output w.r.t. {self.label}", self.jacobian, self.limit,
                           matrix=True)
        lines += _show(f"    {self.label}.grad", self.grad, self.limit)
        return "\n".join(lines)


def explain(output, gradient=None, inputs=None, max_elements=64, *, params=None,
            retain_graph=None):
    """Run ``output.backward(gradient)`` step by step, printing and returning each step.

    Args:
        output: the tensor (or sequence of tensors) to differentiate.
        gradient: ``v`` of the vector-Jacobian product, as for ``backward``; may be omitted
            for one-element outputs.
        inputs: accumulate only into these tensors' ``.grad``, as for ``backward``.
        max_elements: Jacobians are materialised, and tensors printed, only up to this many
            elements on each side; larger ones show their shape.
        params: names for leaves: a dict ``{name: tensor}`` or ``module.named_parameters()``.
        retain_graph: keep the graph for another backward, as for ``backward``.

    Returns:
        A list of :class:`Step`: the nodes in execution order, then one ``AccumulateGrad``
        step per tensor whose ``.grad`` was filled.

    Example::

        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> steps = torch.autograd.explain((x ** 2).sum(), params={"x": x})
        >>> steps[-1].grad
        tensor([2., 4.])
    """
    outputs = as_list(output)
    roots = root_edges(outputs, "explain()")
    nodes = walk(roots)
    if any(getattr(node, "_freed", False) for node in nodes):
        raise RuntimeError(FREED)
    seeds = _seeds(outputs, gradient)
    tracer = _Tracer(nodes, roots, seeds, leaf_names(params), max_elements)
    print(f"explain(): backward from {tracer.describe_roots()}")
    print(_LEGEND.format(max_elements), end="\n\n")
    handles = [node.register_hook(tracer.hook(node)) for node in nodes
               if not is_leaf_node(node)]
    try:
        backward(outputs, seeds, retain_graph=retain_graph, inputs=inputs)
    finally:
        for handle in handles:
            handle.remove()
    targets = ([gradient_edge(t) for t in as_list(inputs)] if inputs is not None else
               [edge for edge in tracer.arrived if is_leaf_node(edge[0])])
    for edge in targets:
        if edge in tracer.arrived:
            tracer.accumulated(edge, _tensor_of(edge, inputs))
    return tracer.steps


def _seeds(outputs, gradient):
    """The ``v`` each output starts with: given, or ``1`` for a one-element output."""
    given = as_list(gradient) if gradient is not None else [None] * len(outputs)
    seeds = []
    for t, g in zip(outputs, given):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(NON_SCALAR)
            g = ones_like(t)
        seeds.append(g if isinstance(g, Tensor) else as_tensor(g, dtype=t.dtype))
    return seeds


def _tensor_of(edge, inputs):
    if is_leaf_node(edge[0]):
        return edge[0].variable
    return next(t for t in as_list(inputs) if gradient_edge(t) == edge)


class _Tracer:
    """Hooks' state: the steps so far, what reached each edge, and the composed Jacobians."""

    def __init__(self, nodes, roots, seeds, names, limit):
        self.labels = _labels(nodes, names)
        self.names = names
        self.limit = limit
        self.steps = []
        self.arrived = {}   # edge -> summed Jᵀ·v that reached it, in order of first arrival
        self.full = {}      # edge -> ∂outputs/∂(that edge's tensor) as an array, or None
        self.roots = roots
        self.seeds = seeds
        total = sum(s.numel() for s in seeds)
        eye = np.eye(total) if total <= limit else None
        start = 0
        for edge, seed in zip(roots, seeds):
            n = seed.numel()
            self._arrive(edge, seed.detach().clone(),
                         None if eye is None else eye[:, start:start + n])
            start += n

    def describe_roots(self):
        parts = []
        for (fn, _), seed in zip(self.roots, self.seeds):
            text = "\n".join(_show("v", seed, self.limit))
            parts.append(f"{self.labels[fn]} seeded with {text}")
        return "; ".join(parts)

    def hook(self, node):
        return lambda grad_inputs, grad_outputs: self._step(node, grad_inputs, grad_outputs)

    def _step(self, node, grad_inputs, grad_outputs):
        v = tuple(None if g is None else g.detach().clone() for g in grad_outputs)
        jacobians = _local_jacobians(node, grad_outputs, grad_inputs, self.limit)
        above = self._composed(node, v)
        n_out = sum(g.numel() for g in v if g is not None)
        inputs = []
        for i, ((child, nr), g) in enumerate(zip(node.next_functions, grad_inputs)):
            if child is None:
                continue
            jac = jacobians.get(i)
            vjp = None if g is None else g.detach().clone()
            inputs.append(InputGrad(i, _input_name(node, i), self.labels[child],
                                    _rule_text(node, i), (n_out, 0 if g is None else g.numel()),
                                    _as_tensor(jac, None if g is None else g._data.dtype), vjp))
            if vjp is not None:
                full = above @ jac if above is not None and jac is not None else None
                self._arrive((child, nr), vjp, full)
        step = Step(len(self.steps) + 1, type(node).__name__, self.labels[node], node, v,
                    tuple(inputs), limit=self.limit)
        self.steps.append(step)
        print(step, end="\n\n")

    def _arrive(self, edge, vjp, full):
        """Sum what reaches ``edge``; its full Jacobian stays known only if every part is."""
        if edge in self.arrived:
            self.arrived[edge] = self.arrived[edge] + vjp
            old = self.full[edge]
            self.full[edge] = None if old is None or full is None else old + full
        else:
            self.arrived[edge] = vjp
            self.full[edge] = full

    def _composed(self, node, v):
        """``∂outputs/∂(node's results)``, columns in the order of ``J``'s rows, or None."""
        parts = [self.full.get((node, k)) for k, g in enumerate(v) if g is not None]
        if not parts or any(p is None for p in parts):
            return None
        return np.concatenate(parts, axis=1)

    def accumulated(self, edge, tensor):
        """The step for a tensor whose ``.grad`` the backward filled (a leaf, or an input)."""
        label = (self.labels[edge[0]] if is_leaf_node(edge[0]) else
                 self.names.get(id(tensor), "input"))
        step = Step(len(self.steps) + 1, "AccumulateGrad", label, edge[0],
                    (self.arrived[edge],), tensor=tensor, grad=tensor.grad, limit=self.limit,
                    jacobian=_as_tensor(self.full[edge], tensor._data.dtype))
        self.steps.append(step)
        print(step, end="\n\n")


def _labels(nodes, names):
    """Each node's class name, numbered ``#k`` where a class occurs more than once; leaves by
    their ``params`` name, or ``leaf`` (numbered likewise)."""
    base = {}
    for node in nodes:
        if is_leaf_node(node):
            base[node] = names.get(id(node.variable)) or "leaf"
        else:
            base[node] = type(node).__name__
    counts, seen, labels = {}, {}, {}
    for name in base.values():
        counts[name] = counts.get(name, 0) + 1
    for node, name in base.items():
        seen[name] = seen.get(name, 0) + 1
        labels[node] = f"{name} #{seen[name]}" if counts[name] > 1 else name
    return labels


def _local_jacobians(node, grad_outputs, grad_inputs, limit):
    """``{input position: J}`` for the inputs small enough, from one backward per unit vector.

    ``node.apply`` (the node's own backward, not freeing anything) applied to ``e_j`` returns
    ``Jᵀ·e_j``: row ``j`` of each input's Jacobian.
    """
    outs = [(k, g._data) for k, g in enumerate(grad_outputs) if g is not None]
    n_out = sum(a.size for _, a in outs)
    wanted = [i for i, g in enumerate(grad_inputs)
              if g is not None and g.numel() <= limit and _real(g._data)]
    if not hasattr(node, "apply") or n_out > limit or not wanted or \
            not all(_real(a) for _, a in outs):
        return {}
    rows = {i: [] for i in wanted}
    for k, a in outs:
        for j in range(a.size):
            e = a.copy()
            e[...] = 0
            e.reshape(-1)[j] = 1
            unit = [None] * len(grad_outputs)
            unit[k] = e
            got = node.apply(unit, False)
            for i in wanted:
                row = got[i]
                rows[i].append(np.zeros(grad_inputs[i].numel()) if row is None else
                               _numpy(row).reshape(-1))
    return {i: np.stack(r).astype(grad_inputs[i]._data.dtype) for i, r in rows.items()}


def _real(a):
    return a.dtype.kind == "f"


def _numpy(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)  # CuPy arrays copy to the host


def _as_tensor(array, dtype):
    return None if array is None else from_numpy(np.ascontiguousarray(array, dtype=dtype))


def _input_name(node, i):
    argnames = getattr(getattr(node, "_op", None), "argnames", ())
    return argnames[i] if i < len(argnames) else f"input {i}"


def _rule_text(node, i):
    """The derivative rule for input ``i``: a lambda's body, a function's name, or, for nodes
    not made by an op (``CopySlices``), the first line of the class's docstring."""
    op = getattr(node, "_op", None)
    if op is None:
        return (type(node).__doc__ or type(node).__name__).strip().splitlines()[0]
    rule = op.rules if op.variadic is not None else op.rules[i]
    code = rule.__code__
    if code.co_name != "<lambda>" or not hasattr(code, "co_positions"):
        return f"{rule.__module__}.{rule.__qualname__}(...)"
    # The body's span: every instruction's source position except those of the lambda line.
    spans = [p for p in code.co_positions() if p[0] is not None and p[2] is not None
             and (p[2], p[3]) != (0, 0)]
    (l0, c0), (l1, c1) = min((p[0], p[2]) for p in spans), max((p[1], p[3]) for p in spans)
    lines = linecache.getlines(code.co_filename)[l0 - 1:l1]
    if not lines:
        return f"{rule.__module__}.{rule.__qualname__}"
    text = lines[0][c0:c1] if l0 == l1 else lines[0][c0:] + "".join(lines[1:-1]) + \
        lines[-1][:c1]
    return " ".join(text.split())


def _show(prefix, t, limit, matrix=False):
    """``prefix = <tensor>`` lines: the values when small, else the shape and dtype."""
    if t is None:
        yield f"{prefix} = None"
        return
    if t.numel() > limit:
        yield f"{prefix}: {shape_text(t.shape, t.dtype)} (values not shown)"
        return
    if matrix:
        prefix += f" ({t.shape[0]}×{t.shape[1]})"
    first, *rest = repr(t).splitlines()
    yield f"{prefix} = {first}"
    pad = " " * (len(prefix) + 3)
    yield from (pad + line for line in rest)
