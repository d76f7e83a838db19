"""Custom differentiable operations: ``torch.autograd.Function``.

A subclass states ``forward`` (what to compute) and ``backward`` (the vector-Jacobian
product) as static methods; ``MyFn.apply(*args)`` runs the forward without recording and gives
its tensor outputs one node, an instance of ``MyFnBackward``, a class made for each subclass.
As in PyTorch that node *is* the ``ctx`` both methods receive: what the forward stores on it
(attributes, ``save_for_backward``) is there in the backward and on ``output.grad_fn``.

The node keeps PyTorch's contract with the user's ``backward``: it is given Tensors (zeros for
outputs that got no gradient, unless ``ctx.set_materialize_grads(False)``) and returns one
gradient per argument of ``forward``, ``None`` for non-tensors. What it returns is checked
with PyTorch's errors, broadcast gradients are summed to the input's shape and cast to its
dtype, once, in ``_input_grads``. Under ``create_graph=True`` grad mode is on during the
backward, so a backward written with ember ops is recorded and can be differentiated again;
``once_differentiable`` refuses that instead.

Example:
    >>> class Exp(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         y, = ctx.saved_tensors
    ...         return grad * y
    >>> Exp.apply(ember.zeros(2, requires_grad=True))
    tensor([1., 1.], grad_fn=<ExpBackward>)
"""
from __future__ import annotations

import functools
import inspect
import warnings

from .. import _dispatch, _dtypes
from .._creation import zeros
from .._tensor import Tensor
from . import forward_ad, grad_mode
from .graph import Node, check_version, gradient_edge, new_node, raise_freed
from .node import _fit, _xp_for

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable",
           "InplaceFunction"]

_NO_EDGE = (None, 0)
_DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function.")
_LEAF_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."
_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _Transforms:
    """How many ``torch.func`` transforms run now (``func/_transforms.py`` counts them), and
    whether the batching that runs is the one of ``gradcheck``'s batched checks (``plain``:
    PyTorch's legacy vmap there, under which custom Functions run as they are)."""

    depth = 0
    plain = 0


transforms = _Transforms()
_functorch_rule = None  # ``_function_vmap.functorch_apply``, installed by that module


class FunctionCtx:
    """The methods ``forward`` / ``setup_context`` call on ``ctx`` to prepare the backward."""

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for ``backward``, which reads them as ``ctx.saved_tensors``.

        Reading them checks that none was modified in place since (PyTorch's error otherwise).
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors (or None) for ``jvp``, which reads them as ``ctx.saved_tensors``."""
        self._fw_saved = tensors

    def mark_dirty(self, *args):
        """Declare inputs the forward modified in place; they must be returned as outputs."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Declare outputs that get no gradient (indices, masks); backward still receives a
        (zero) gradient for each."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """With False, outputs that got no gradient pass ``None`` to backward, not zeros."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``apply`` call, and the ``ctx`` of its forward and backward.

    Set by ``apply``: ``needs_input_grad``; ``_arg_is_tensor`` (one per forward argument),
    ``_in_meta`` (shape and dtype of each tensor input: one per ``next_functions`` edge),
    ``_out_meta`` (shape, dtype, device per output, None for non-tensors), ``_saved``.
    """

    _forward_cls = None  # the Function subclass, set on each generated subclass
    to_save = dirty_tensors = non_differentiable = ()
    materialize_grads = True
    _saved = ()
    _fw_saved = ()
    _in_jvp = False
    __repr__ = object.__repr__  # PyTorch shows Python-defined nodes with their module

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, each checked against in-place changes
        (inside ``jvp``: those given to ``save_for_forward``)."""
        if self._in_jvp:
            return tuple(self._fw_saved)
        if self._freed:
            raise_freed()
        return tuple(_unpack(self, s) for s in self._saved)

    def apply(self, grad_outputs, create_graph):
        """The engine's call: gradients per output in, one per ``next_functions`` edge out."""
        grads = []
        for g, meta in zip(grad_outputs, self._out_meta):
            if g is None:
                if meta is not None and self.materialize_grads:
                    g = zeros(meta[0], dtype=meta[1], device=meta[2])
            elif not isinstance(g, Tensor):
                g = Tensor._make(g, None, False)
            grads.append(g)
        result = self._forward_cls._user_backward()(self, *grads)
        return self._input_grads(result, create_graph)

    def _input_grads(self, result, create_graph):
        """The backward's result checked and fitted to the inputs, with PyTorch's errors."""
        name = type(self).__name__
        result = result if isinstance(result, tuple) else (result,)
        n = len(self._arg_is_tensor)
        if len(result) > n and all(g is None for g in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        grads = []
        for i, (g, is_tensor) in enumerate(zip(result, self._arg_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            grads.append(g)
        out = []
        for k, ((fn, _), g, meta) in enumerate(zip(self.next_functions, grads, self._in_meta)):
            if fn is None or g is None:
                out.append(None)
                continue
            if g.shape != meta[0] and not _expandable(meta[0], g.shape):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - "
                                   f"got {list(g.shape)} but expected shape compatible with "
                                   f"{list(meta[0])}")
            g = g if create_graph else g._data
            out.append(_fit(_xp_for(g, create_graph), g, meta, create_graph))
        return out

    def release(self):
        """Drop the saved tensors after a backward without ``retain_graph``."""
        self._saved = None
        self._freed = True


def _expandable(shape, to):
    """Whether ``shape`` broadcasts to ``to`` (then the gradient is summed down to it)."""
    return len(shape) <= len(to) and all(
        a == b or a == 1 for a, b in zip(reversed(shape), reversed(to)))


class _SavedOutput:
    """An output kept for backward: its array and version counter, not the tensor, whose
    ``grad_fn`` is the node itself (a cycle). Unpacking makes a new tensor with that history."""

    __slots__ = ("data", "vc", "version", "output_nr")

    def __init__(self, t):
        self.data, self.vc, self.version, self.output_nr = t._data, t._vc, t._vc[0], t._output_nr


def _unpack(node, saved):
    if saved is None:
        return None
    if isinstance(saved, _SavedOutput):
        t = Tensor._make(saved.data, node, True)
        t._vc, t._output_nr = saved.vc, saved.output_nr
        tensor, version = t, saved.version
    else:
        tensor, version = saved
    if tensor._vc[0] != version:
        check_version(tensor, version)
    return tensor


class FunctionMeta(type):
    """Gives each ``Function`` subclass its node class, ``<Name>Backward``, as PyTorch names it."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (see the module docstring).

    Subclasses define ``forward(ctx, *args)`` — or ``forward(*args)`` together with
    ``setup_context(ctx, inputs, output)`` — and ``backward(ctx, *grad_outputs)``, all static,
    and are used through ``apply``.
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    generate_vmap_rule = False  # True: vmap maps forward/backward/jvp (see _function_vmap.py)

    @staticmethod
    def vmap(info, in_dims, *args):
        """How the Function runs under ``vmap``: ``(output, out_dims)`` from the arguments
        with their mapped dims at ``in_dims`` (see ``_function_vmap.py``)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def _user_backward(cls):
        """``backward`` or its other name ``vjp``, whichever the subclass defines."""
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them.")
        return cls.vjp if cls.vjp is not Function.vjp else cls.backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and, when an input tensor requires grad (and grad mode
        is on), record one ``<Name>Backward`` node for the outputs."""
        separate = cls.setup_context is not Function.setup_context
        if separate:  # as in PyTorch, setup_context sees defaults as given
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if (_dispatch.vmap.levels or transforms.depth) and not transforms.plain:
            result = _functorch_rule(cls, args, kwargs)
            if result is not NotImplemented:
                return result
        inputs = [a for a in args if isinstance(a, Tensor)]
        recording = grad_mode._state.grad and any(t.requires_grad for t in inputs)
        ctx = new_node(cls._backward_cls, tuple(gradient_edge(t) if recording else _NO_EDGE
                                                for t in inputs))
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        dual = forward_ad.state.active and any(t._fw is not None for t in inputs)
        # As in PyTorch, the forward's own ops carry no tangents: ``jvp`` gives the outputs'.
        with grad_mode.no_grad(), (forward_ad._primal_only() if dual else _nothing()):
            if separate:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
                _check_saved_inputs(ctx, inputs, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        outputs = _wrap_outputs(ctx, inputs, output, recording)
        if dual:
            _forward_tangents(cls, ctx, args, outputs)
        if recording:
            ctx._arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
            ctx._in_meta = tuple((t._data.shape, t._data.dtype) for t in inputs)
            ctx._saved = _saved_values(ctx)
        # The tensors these name (outputs among them) are kept as _saved says, or not at all.
        ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = ()
        return outputs


def _check_saved_inputs(ctx, inputs, output):
    """PyTorch's error for an input both returned as it is and saved, with setup_context."""
    outputs = output if isinstance(output, tuple) else (output,)
    if any(_contains(inputs, t) and _contains(outputs, t) for t in ctx.to_save):
        raise RuntimeError(
            "An input that has been returned as-is as output is being saved for backward. This "
            "is not supported if you override setup_context. You should return and save a view "
            "of the input instead, e.g. with x.view_as(x) or setup ctx inside the forward "
            "function itself.")


class _nothing:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


def _forward_tangents(cls, ctx, args, outputs):
    """Give the outputs of one ``apply`` the tangents the user's ``jvp`` computes from the
    inputs' (zeros for tensor inputs without one, None for other arguments), as PyTorch."""
    tangents = [(a._fw if a._fw is not None else a.detach().new_zeros(a.shape))
                if isinstance(a, Tensor) else None for a in args]
    ctx._in_jvp = True
    try:
        with grad_mode.no_grad(), forward_ad._primal_only():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx._fw_saved = ()
    many = isinstance(outputs, tuple)
    outs = outputs if many else (outputs,)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outs):
        raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                           f"forward gradients (expected {len(outs)}, got {len(result)})")
    for o, t in zip(outs, result):
        if isinstance(o, Tensor) and t is not None and (o.is_floating_point() or o.is_complex()):
            forward_ad.set_tangent(o, t if t.dtype == o.dtype else t.to(o.dtype))


def _wrap_outputs(ctx, inputs, output, recording):
    """The forward's outputs made ``ctx``'s: dirty inputs rebased onto it (their version
    bumped), inputs returned as they are aliased, differentiable outputs given its history."""
    outputs = output if isinstance(output, tuple) else (output,)
    dirty, non_diff = ctx.dirty_tensors, ctx.non_differentiable
    if any(not _contains(outputs, t) for t in dirty):
        raise RuntimeError(_DIRTY_NOT_RETURNED)
    wrapped, meta = [], []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            meta.append(None)
            continue
        differentiable = _dtypes.is_inexact(o._data.dtype) and not _contains(non_diff, o)
        if _contains(dirty, o):
            if recording and o._rg and o._grad_fn is None:
                raise RuntimeError(_LEAF_DIRTY)
            o._vc[0] += 1
        elif _contains(inputs, o):
            o = o.detach()  # an alias: storage and version shared, history its own
        if recording and differentiable:
            o._grad_fn, o._output_nr, o._rg = ctx, i, True
        wrapped.append(o)
        meta.append((o.shape, o.dtype, o.device))
    ctx._n_outputs = len(outputs)
    ctx._out_meta = tuple(meta)
    return tuple(wrapped) if isinstance(output, tuple) else wrapped[0]


def _saved_values(ctx):
    """What ``save_for_backward`` got, as kept: inputs with their version, outputs of ``ctx``
    as ``_SavedOutput``."""
    saved = []
    for i, t in enumerate(ctx.to_save):
        if t is None:
            saved.append(None)
        elif not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                            f"of type {type(t).__name__}")
        elif t._grad_fn is ctx:
            saved.append(_SavedOutput(t))
        else:
            saved.append((t, t._vc[0]))
    return tuple(saved)


def _contains(tensors, t):
    return any(x is t for x in tensors)


class Error(Node):
    """The node ``once_differentiable`` puts on a backward's results under ``create_graph``:
    differentiating through it raises PyTorch's error."""

    def name(self):
        return "torch::autograd::Error"  # PyTorch's C++ class name

    def apply(self, grad_outputs, create_graph):
        raise RuntimeError(_TWICE)

    def release(self):
        pass


def once_differentiable(fn):
    """Decorate a ``backward`` that is not differentiable itself (it leaves ember, say).

    It runs without recording; under ``create_graph=True`` its results are marked so that a
    second differentiation through them raises an error instead of a wrong (zero) gradient.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode._state.grad or not any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        results = outputs if isinstance(outputs, tuple) else (outputs,)
        leaves = [None if r is None else r.detach().requires_grad_() for r in results]
        node = new_node(Error, tuple(_NO_EDGE if v is None else gradient_edge(v) for v in leaves))
        node._n_outputs = len(leaves)
        marked = []
        for k, v in enumerate(leaves):
            if v is not None:
                v = Tensor._make(v._data, node, True)
                v._output_nr = k
            marked.append(v)
        return tuple(marked) if isinstance(outputs, tuple) else marked[0]
    return wrapper


class InplaceFunction(Function):
    """Kept for old code: a ``Function`` with an ``inplace`` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
