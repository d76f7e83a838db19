"""The two reverse-mode entry points, ``backward`` and ``grad`` (re-exported by ``ember.autograd``).

Both check their arguments, seed the walk (the implicit ``1.0`` of a one-element output, or the
given gradients) and hand it to ``engine.run_backward``: ``backward`` accumulates into the
leaves' ``.grad``, ``grad`` returns the gradients of the given inputs. They live in a module
of their own (rather than in the package's ``__init__``) so that ``functional``, ``gradcheck``
and ``explain``, which the package imports, can import them at module level.
"""
from __future__ import annotations

import warnings

from .. import _device, _dispatch, _errors, _recording, _xp
from .._creation import zeros_like
from .._tensor import Tensor
from .._upcalls import install
from .engine import accumulate, run_backward
from .graph import gradient_edge


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _root_edges(tensors):
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            raise RuntimeError(_errors.NO_GRAD_FN.format(i=i))
    return [gradient_edge(t) for t in tensors]


def _seed_grads(tensors, grads, create_graph):
    """The gradients the walk starts from: given ones checked, implicit ``1.0`` for scalars."""
    grads = _as_tuple(grads) if grads is not None else (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        data = t._data  # inside vmap: the whole batch (see ops/batching.py)
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(_errors.NON_SCALAR)
            g = _xp.namespace_of(data).ones(data.shape, dtype=data.dtype)
            if _recording.state.recorder is not None:
                _recording.state.recorder.seed(g)
            out.append(Tensor._make(g, None, False) if create_graph else g)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(_device.namespace_of(data).asarray(g, dtype=data.dtype), None, False)
        if g.shape != t.shape:
            raise RuntimeError(_errors.SHAPE_MISMATCH.format(i=i, gshape=g.shape,
                                                             oshape=t.shape))
        levels = getattr(t, "_levels", ())
        if levels or getattr(g, "_levels", None):  # inside vmap
            batching = _dispatch.batched
            if set(batching.levels_of(g)) - set(levels):  # see _batched_seeds
                g = batching.as_seed(g, levels)
                out.append(g if g.dtype == t.dtype else g.to(t.dtype))
                continue
            g = batching.physical(g, levels, expand=True)  # one gradient per sample
        if g._data.dtype != data.dtype:
            g = g.to(t.dtype)
        out.append(g if create_graph else g._data)
    return out


@install
def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves.

    Args:
        tensors: outputs to differentiate (a tensor or a sequence).
        grad_tensors: the "vector" of the vector-Jacobian product for each output; may be
            omitted for one-element outputs (the implicit ``1.0``).
        retain_graph: keep saved values for another backward (defaults to ``create_graph``).
        create_graph: record the backward pass itself, for higher-order derivatives.
        inputs: accumulate only into these tensors' ``.grad``.
    """
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    if retain_graph is None:
        retain_graph = create_graph
    seeds = _seed_grads(tensors, grad_tensors, create_graph)
    roots = _root_edges(tensors)
    if create_graph:
        _warn_create_graph_once()
    if inputs is None:
        run_backward(roots, seeds, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    capture = _capture_edges(inputs)
    got = run_backward(roots, seeds, retain_graph, create_graph, capture=capture,
                       accumulate=False)
    for t, g in zip(inputs, got):
        if g is None:
            continue
        if t.is_leaf:
            accumulate(t, g, create_graph)
        else:
            _recording.unsupported("backward(inputs=...) writes the .grad of a tensor that is "
                                   "not a leaf (not recorded yet)")
            g = g if isinstance(g, Tensor) else Tensor._make(g.copy(), None, False)
            t._grad = g if t._grad is None else t._grad + g


_warned_create_graph = []


def _warn_create_graph_once():
    """PyTorch warns once per process that ``backward(create_graph=True)`` makes a cycle."""
    if not _warned_create_graph:
        _warned_create_graph.append(True)
        warnings.warn(_errors.CREATE_GRAPH_CYCLE, UserWarning, stacklevel=4)


def _capture_edges(inputs):
    capture = {}
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(_errors.INPUT_NO_GRAD)
        capture.setdefault(gradient_edge(t), i)
    return capture


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _grad_batched(outputs, inputs, _as_tuple(grad_outputs), retain_graph,
                             create_graph, allow_unused, materialize_grads)
    record = create_graph or _batched_seeds(outputs, grad_outputs)
    seeds = _seed_grads(outputs, grad_outputs, record)
    roots = _root_edges(outputs)
    capture = _capture_edges(inputs)
    got = run_backward(roots, seeds, retain_graph, record, capture=capture, accumulate=False)
    result = []
    for i, t in enumerate(inputs):
        g = got[capture[gradient_edge(t)]]
        if g is None:
            if not allow_unused:
                raise RuntimeError(_errors.UNUSED_INPUT.format(i=i))
            if materialize_grads:
                g = zeros_like(t)
        elif not isinstance(g, Tensor):
            g = Tensor._make(g, None, False)
        levels = getattr(t, "_levels", None)
        if levels is not None and g is not None:  # a batched input: gradients per sample
            g = _dispatch.batched.from_seed(g, levels)
        if record and not create_graph and g is not None:
            g = g.detach()
        result.append(g)
    return tuple(result)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``is_grads_batched``: one ``grad`` per slice of the gradients' first dim, computed
    together by ``vmap`` (the backward's rules run batched)."""
    unused = []

    def one(*gs):
        got = grad(outputs, inputs, gs, retain_graph, create_graph,
                   allow_unused=allow_unused, materialize_grads=materialize_grads)
        unused[:] = [g is None for g in got]
        return tuple(g for g in got if g is not None)
    got = iter(func_vmap()(one)(*grad_outputs))
    return tuple(None if missing else next(got) for missing in unused)


def func_vmap():
    """``func.vmap``, for the checks here and in ``gradcheck`` that batch a backward or a
    forward-mode pass."""
    from ..func import vmap  # lazy: func builds on autograd
    return vmap


def _batched_seeds(outputs, grad_outputs):
    """Whether a vmap batches gradients of outputs that are the same for every sample (a
    ``vjp_fn`` mapped over cotangents): then the backward runs its rules as ops, on the
    batched gradients, like ``create_graph`` (recorded, then dropped)."""
    if grad_outputs is None:
        return False
    return any(set(getattr(g, "_levels", ())) - set(getattr(o, "_levels", ()))
               for o, g in zip(outputs, _as_tuple(grad_outputs)))
