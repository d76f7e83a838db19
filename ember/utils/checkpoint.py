"""Activation checkpointing (``torch.utils.checkpoint``): memory for recomputation.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` keeping none of the tensors its ops
save for backward; when backward first needs one, ``fn`` runs again (with the random state it
had, so dropout repeats) and the recomputed values are used. Gradients are the same as without
checkpointing; the peak memory of a deep network falls from all activations to one segment's.

Both of PyTorch's variants are here:

- ``use_reentrant=False`` (recommended): saved-tensor hooks (``autograd.graph``) replace each
  saved tensor by its position, and unpacking recomputes. The outputs keep their own grad_fn.
- ``use_reentrant=True``: ``fn`` runs under ``no_grad``; the output's grad_fn is a
  ``CheckpointFunctionBackward`` node that recomputes ``fn`` with grad enabled and runs a
  backward through it. As in PyTorch, only inputs' gradients flow out of it (parameters used
  inside get theirs from that inner backward), and if no input requires grad, nothing does.
"""
from __future__ import annotations

import warnings

from .. import _random
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.engine import run_backward
from ..autograd.graph import Node, gradient_edge, new_node, raise_freed
from ..autograd.saved_hooks import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]

_EXPLICIT = (
    "torch.utils.checkpoint{which}: the use_reentrant parameter should be passed explicitly. "
    "{since}use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
_NO_INPUT_GRAD = "None of the inputs have requires_grad=True. Gradients will be None"


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, its saved tensors recomputed in backward (see above)."""
    if use_reentrant is None:
        warnings.warn(_EXPLICIT.format(
            which="", since="Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
            "will raise an exception. "), UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _reentrant(function, args, preserve_rng_state)
    return _Recomputation(function, args, kwargs, preserve_rng_state).run()


class _Recomputation:
    """Saved-tensor hooks that keep positions and recompute the values on first unpack."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng = _random.get_rng_state() if preserve_rng_state else None
        self.count = 0
        self.values = None

    def run(self):
        with saved_tensors_hooks(self.pack, self.unpack):
            return self.function(*self.args, **self.kwargs)

    def pack(self, tensor):
        self.count += 1
        return self.count - 1

    def unpack(self, position):
        """The saved tensor at ``position``, recomputed with the rest of ``function``'s on the
        first call. Each is handed out once per backward and then dropped, so memory holds one
        segment's recomputed values only while its nodes run; a second backward (retain_graph)
        recomputes again."""
        if self.values is None:
            self.values = self._recompute()
            self.left = len(self.values)
        value, self.values[position] = self.values[position], None
        self.left -= 1
        if self.left == 0:
            self.values = None
        return value

    def _recompute(self):
        values = []
        # Without create_graph the backward needs values only: keep them without history, so
        # the recomputation's own graph is freed at once.
        detach = not grad_mode.is_grad_enabled()
        kept = _random.get_rng_state()
        if self.rng is not None:
            _random.set_rng_state(self.rng)
        try:
            with grad_mode.enable_grad(), saved_tensors_hooks(_keep(values, detach), _identity):
                self.function(*self.args, **self.kwargs)
        finally:
            _random.set_rng_state(kept)
        return values


def _keep(values, detach):
    def pack(tensor):
        values.append(tensor.detach() if detach else tensor)
        return tensor
    return pack


def _identity(tensor):
    return tensor


class CheckpointFunctionBackward(Node):
    """The reentrant checkpoint's node: recompute, then backward through the recomputation."""

    __slots__ = ("_run", "_inputs", "_rng")

    def release(self):
        self._inputs = None

    def apply(self, grad_outputs, create_graph):
        if self._inputs is None:
            raise_freed()
        inputs = [a.detach().requires_grad_(a.requires_grad) for a in self._inputs]
        kept = _random.get_rng_state()
        if self._rng is not None:
            _random.set_rng_state(self._rng)
        try:
            with grad_mode.enable_grad():
                outputs = self._run(*inputs)
        finally:
            _random.set_rng_state(kept)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        run_backward([gradient_edge(o) for o, _ in pairs], [g for _, g in pairs], False,
                     create_graph)
        grads = [a._grad for a in inputs]
        return grads if create_graph else [None if g is None else g._data for g in grads]


def _reentrant(function, args, preserve_rng_state):
    rng = _random.get_rng_state() if preserve_rng_state else None
    with grad_mode.no_grad():
        outputs = function(*args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not any(t.requires_grad for t in tensors):
        warnings.warn(_NO_INPUT_GRAD, UserWarning, stacklevel=3)
        return outputs
    if not grad_mode.is_grad_enabled():
        return outputs
    node = new_node(CheckpointFunctionBackward, tuple(gradient_edge(t) for t in tensors))
    node._run = lambda *inputs: function(*_refill(args, inputs))
    node._inputs = tensors
    node._rng = rng
    single = not isinstance(outputs, tuple)
    wrapped = []
    for k, out in enumerate((outputs,) if single else outputs):
        if isinstance(out, Tensor) and (out.is_floating_point() or out.is_complex()):
            out = Tensor._make(out._data, node, True)
            out._output_nr = k
        wrapped.append(out)
    node._n_outputs = len(wrapped)
    return wrapped[0] if single else tuple(wrapped)


def _refill(args, tensors):
    """``args`` with its tensors replaced, in order, by ``tensors``."""
    it = iter(tensors)
    return [next(it) if isinstance(a, Tensor) else a for a in args]


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in ``segments`` pieces, checkpointing
    all but the last; returns the last function's output."""
    if use_reentrant is None:
        warnings.warn(_EXPLICIT.format(
            which=".checkpoint_sequential", since="In version 2.9 we will raise an exception "
            "if use_reentrant is not passed. "), UserWarning, stacklevel=2)
        use_reentrant = True
    from ..nn import Sequential  # lazy: ember.nn imports ember.utils (nn.module, utils.hooks)
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments

    def run(start, stop):
        def forward(x):
            for fn in functions[start:stop]:
                x = fn(x)
            return x
        return forward

    stop = 0
    for start in range(0, size * (segments - 1), size):
        stop = start + size
        input = checkpoint(run(start, stop), input, use_reentrant=use_reentrant, **kwargs)
    return run(stop, len(functions))(input)
