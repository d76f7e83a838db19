"""The derivative transforms of ``torch.func``: grad, grad_and_value, vjp, jvp, jacrev, jacfwd
and hessian, with PyTorch's signatures, output structures and error texts.

How they work on ember's single autograd graph (PyTorch gives each transform a *level* of
wrapped tensors instead):

- The inputs a transform differentiates are *tracked*: a ``view_as`` of the input when it
  already requires grad (so the caller, or an enclosing transform, can differentiate through the
  result), else a fresh leaf that requires grad. ``autograd.grad`` with respect to exactly these
  tensors gives the partial derivatives, so nested transforms do not mix up their inputs.
- Inside another transform the gradients are taken with ``create_graph=True``, which is what
  makes ``grad(grad(f))`` and ``jacrev(jacrev(f))`` work, and what carries the tangents of an
  enclosing ``jvp`` through a backward pass (forward-over-reverse: ``hessian``).
- A transform called from plain code hands back results that keep only the caller's own graph
  (PyTorch "unwraps" them): a result whose graph reaches a leaf of the caller keeps its
  ``grad_fn``, any other is detached. So ``grad(f)(x)`` has no ``grad_fn`` unless ``x`` (or a
  tensor ``f`` closes over) requires grad, and never under ``torch.no_grad()``. When nothing
  can keep a graph, the gradient is taken without ``create_graph``: the fast raw-array backward.
- ``jvp`` uses ember's forward-mode AD (``autograd.forward_ad``). That has one level at a time,
  so a ``jvp`` inside another (``jacfwd(jacfwd(f))``, ``jvp`` of a ``jvp``) computes the inner
  product by the double-backward trick: ``u ↦ Jᵀu`` is linear, so the gradient of ``(Jᵀu)·t``
  with respect to ``u`` is ``J·t``. The outer level's tangents flow through it.
- ``jacrev`` and ``jacfwd`` push every basis vector through one vmapped ``vjp``/``jvp``, as
  PyTorch does (``func.vmap``); ``chunk_size`` and ``randomness`` go to that vmap.

Global state (process-wide, like ``forward_ad``'s level): the number of transforms running now,
and the leaves transforms made (weakly referenced).
"""
from __future__ import annotations

import contextlib
import functools
import weakref

from .._creation import eye, zeros, zeros_like
from .._tensor import Tensor
from ..autograd import forward_ad, function
from ..autograd.functional import _autograd_grad
from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ..autograd.graph import AccumulateGrad, gradient_edge
from ..ops import batching
from ..ops.shape import stack
from ..utils._pytree import tree_flatten, tree_leaves, tree_unflatten, treespec_pprint
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


class _State:
    depth = 0  # transforms running now (this one included, inside it)
    internal = weakref.WeakValueDictionary()  # id -> a leaf made by a transform


_state = _State()
_JVP = "jvp(f, primals, tangents)"


def _internal_leaf(tensor):
    leaf = tensor.detach().requires_grad_()
    _state.internal[id(leaf)] = leaf
    if batching.levels_of(leaf):  # inside vmap: the graph records the physical tensor
        _state.internal[id(leaf._value)] = leaf._value
    return leaf


def _reaches_caller(tensor):
    """Whether ``tensor``'s graph reaches a leaf that requires grad and no transform made."""
    if not tensor.requires_grad:
        return False
    stack_, seen = [gradient_edge(tensor)[0]], set()
    while stack_:
        node = stack_.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            if id(node.variable) not in _state.internal:
                return True
        else:
            stack_.extend(child for child, _ in node.next_functions)
    return False


class _Call:
    """One call of a transform, and what its caller was doing: running inside another transform
    or a forward-AD level (``nested``), with grad mode on or off. That decides whether gradients
    must be differentiable and what the results keep (see the module docstring)."""

    def __init__(self):
        self.nested = _state.depth > 0 or forward_ad.state.level is not None
        self.grad_enabled = is_grad_enabled()
        self.tracked = {}  # id(tracked input) -> (tracked input, the caller's tensor)
        self.views = []  # (tracked view of a caller's tensor, its grad_fn when made)

    @contextlib.contextmanager
    def running(self, enable_grad=True):
        """Run ``func`` as a transform does: counted as nested, with grad mode on (PyTorch's
        transforms ignore an outer ``no_grad``; ``jvp`` leaves the mode as it is)."""
        _state.depth += 1
        function.transforms.depth += 1  # custom Functions check their setup_context then
        try:
            with set_grad_enabled(enable_grad or self.grad_enabled):
                yield
        finally:
            _state.depth -= 1
            function.transforms.depth -= 1

    def track(self, x):
        """``x`` as an input to differentiate with respect to (see the module docstring); the
        tangent of an enclosing ``jvp`` is carried over."""
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if batching.state.depth:  # inside vmap: one copy per sample, for per-sample gradients
            x = batching.over_all_levels(x)
        if x.requires_grad:
            tracked = x.view_as(x)
            self.views.append((tracked, tracked._base._grad_fn))
        else:
            tangent = forward_ad.unpack_dual(x).tangent
            tracked = _internal_leaf(x)
            if tangent is not None:
                tracked = forward_ad.make_dual(tracked, tangent)
        self.tracked[id(tracked)] = (tracked, x)
        return tracked

    def check_unmodified(self):
        """PyTorch's error for an input modified in place (with grad mode on) by ``func``. A
        fresh leaf raises it at the op; a view of the caller's tensor cannot, so it is checked
        after: a recorded write gave the view's base a new ``grad_fn`` (``CopySlices``; a
        write under no_grad leaves it as it was)."""
        if any(t._base._grad_fn is not grad_fn for t, grad_fn in self.views):
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")

    def keeps_graph(self, tensors):
        """Whether gradients computed from ``tensors`` must be recorded (``create_graph``)."""
        return self.nested or (self.grad_enabled and any(map(_reaches_caller, tensors)))

    def unwrap(self, tree):
        """The results as the caller gets them (the last step of every transform)."""
        def unwrap(t):
            if id(t) in self.tracked:  # an input returned as it is: the caller's own tensor
                return self.tracked[id(t)][1]
            if self.nested or (self.grad_enabled and _reaches_caller(t)):
                return t
            return t.detach() if t.requires_grad else t
        leaves, spec = _tensor_leaves(tree)
        return tree_unflatten([unwrap(t) for t in leaves], spec)


def _tensor_leaves(tree):
    """``tree_flatten(tree)``, with PyTorch's error for a result that is not a tensor."""
    leaves, spec = tree_flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return leaves, spec


def _argnums(argnums, nargs):
    """``argnums`` checked (PyTorch's errors, in its order) and made non-negative."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")

    def check(argnum):
        if not isinstance(argnum, int):
            raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
        if not -nargs <= argnum < nargs:
            raise RuntimeError(f"Got argnum={argnum}, but only {nargs} positional inputs")
        return argnum % nargs

    if isinstance(argnums, int):
        return check(argnums)
    argnums = tuple(map(check, argnums))
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return argnums


def _diff_args(args, argnums):
    """``(argnums made non-negative, the tuple of arguments they select)``; None selects all."""
    if argnums is None:
        return None, args
    argnums = _argnums(argnums, len(args))
    if isinstance(argnums, int):
        return argnums, (args[argnums],)
    return argnums, tuple(args[i] for i in argnums)


def _replace_args(args, argnums, new):
    """``args`` with the ones ``argnums`` selects replaced by the tuple ``new``."""
    if argnums is None:
        return new
    args = list(args)
    for i, value in zip((argnums,) if isinstance(argnums, int) else argnums, new):
        args[i] = value
    return tuple(args)


def _tracked_args(call, args, argnums):
    """``args`` with the arguments ``argnums`` selects tracked, the tracked tensors in flat
    order, and the structure their gradients take (one argument's for an int ``argnums``)."""
    argnums, diff = _diff_args(args, argnums)
    flat, spec = tree_flatten(diff)
    tracked = [call.track(x) for x in flat]
    args = _replace_args(args, argnums, tree_unflatten(tracked, spec))
    return args, tracked, spec.children_specs[0] if isinstance(argnums, int) else spec


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return output


def _check_outputs(flat, api):
    if (len(flat) == 1 and flat[0] is None) or not flat:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got "
                           f"output = {flat})")
    for out in flat:
        if not isinstance(out, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(out)}")


def _filled(grads, like):
    """Zeros where no gradient arrived (PyTorch's transforms never return None)."""
    return [zeros_like(x) if g is None else g for g, x in zip(grads, like)]


def _basis(flat):
    """A basis of the flattened tensors' joint space, for vmap: for each tensor of ``flat``, a
    stack (first dim: the basis vectors, one per element of all of them, in order) of tensors
    shaped like it, zero but for a one at that vector's element."""
    n = sum(t.numel() for t in flat)
    return [eye(n, dtype=t.dtype, device=t.device).narrow(1, start, t.numel())
            .reshape((n,) + tuple(t.shape)) for t, start in zip(flat, _offsets(flat))]


def _offsets(flat):
    starts, start = [], 0
    for t in flat:
        starts.append(start)
        start += t.numel()
    return starts


def _error_if_complex(api, tree, is_input):
    for idx, t in enumerate(tree_leaves(tree)):
        if isinstance(t, Tensor) and t.is_complex():
            what = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {idx}")


# --- grad ----------------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """A function that returns ``(gradient, value)`` of ``func`` at its arguments.

    Args:
        func: returns a scalar tensor (with ``has_aux``: a pair ``(scalar, aux)``).
        argnums: the argument, or tuple of arguments, to differentiate with respect to. An
            argument may be a pytree of tensors (a dict of parameters): its gradient has the
            same structure.
        has_aux: ``func`` also returns auxiliary tensors, returned undifferentiated.

    Returns:
        ``(grad, value)``, or ``(grad, (value, aux))`` with ``has_aux``.

    Example::

        >>> torch.func.grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1., 2.]))
        (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        call = _Call()
        with call.running():
            args, tracked, spec = _tracked_args(call, args, argnums)
            output = func(*args, **kwargs)
            call.check_unmodified()
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {output.dim()} dims. Maybe "
                                   f"you wanted to use the vjp or jacrev APIs instead?")
            grads = _autograd_grad((output,), tracked, create_graph=call.keeps_graph([output]))
            grads = tree_unflatten(_filled(grads, tracked), spec)
        return call.unwrap((grads, (output, aux) if has_aux else output))
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function that returns the gradient of ``func`` (a scalar) with respect to the
    arguments ``argnums`` selects; nest it for higher derivatives: ``grad(grad(f))``.

    The arguments need not require grad; the gradient has no ``grad_fn`` unless an argument (or
    a tensor ``func`` closes over) does. Arguments and ``has_aux`` as in ``grad_and_value``,
    whose first result this is (with ``has_aux``: ``(grad, aux)``).

    Example::

        >>> x = torch.tensor(0.5)
        >>> torch.func.grad(torch.func.grad(torch.sin))(x)  # -sin(x)
        tensor(-0.4794)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


# --- vjp and jvp ---------------------------------------------------------------------------

def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian products,
    one per primal, as a tuple.

    ``cotangents`` has the structure of ``func``'s output (a tensor, tuple, dict, ...).
    ``vjp_fn(cotangents, retain_graph=True, create_graph=None)`` may be called many times. With
    ``has_aux``, ``func`` returns ``(output, aux)`` and the result is ``(output, vjp_fn, aux)``.

    Example::

        >>> out, vjp_fn = torch.func.vjp(torch.sin, torch.tensor([0., 1.]))
        >>> vjp_fn(torch.ones(2))  # (cos(x),)
        (tensor([1.0000, 0.5403]),)
    """
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals, argnums, has_aux):
    call = _Call()
    with call.running():
        primals, tracked, spec = _tracked_args(call, primals, argnums)
        output = func(*primals)
        call.check_unmodified()
        output, aux = _split_aux(output, has_aux, "vjp(f, *primals)")
        if has_aux:
            _tensor_leaves(aux)  # PyTorch checks aux here
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")
        for out in flat_out:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {out.dtype}")
        out_reaches_caller = any(map(_reaches_caller, flat_out))

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{treespec_pprint(cot_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        caller = _Call()
        if create_graph is None:
            create_graph = (caller.keeps_graph(flat_cot)
                            or (caller.grad_enabled and out_reaches_caller))
        grads = _autograd_grad(flat_out, tracked, flat_cot, create_graph=create_graph,
                               retain_graph=retain_graph)
        return caller.unwrap(tree_unflatten(_filled(grads, tracked), spec))

    if has_aux:
        return call.unwrap(output), vjp_fn, call.unwrap(aux)
    return call.unwrap(output), vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J·tangents)``, by forward-mode AD: one pass, however many outputs.

    ``primals`` is a tuple of arguments (pytrees of tensors); ``tangents`` has the same
    structure and shapes. ``strict=True`` refuses outputs that do not depend on the inputs.
    With ``has_aux``, ``func`` returns ``(output, aux)`` and the result gains ``aux``.

    Example::

        >>> torch.func.jvp(torch.sin, (torch.tensor(0.),), (torch.tensor(2.),))
        (tensor(0.), tensor(2.))
    """
    return _jvp(func, primals, tangents, None, strict, has_aux)


def _jvp(func, primals, tangents, argnums, strict, has_aux):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    argnums, diff = _diff_args(primals, argnums)
    flat, spec = tree_flatten(diff)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {spec} and "
                           f"tangents with structure {tangents_spec}")
    for name, leaves in (("primals", flat), ("tangents", flat_tangents)):
        if not leaves:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got "
                                   f"{type(leaf)}")
    call = _Call()
    forward = forward_ad.state.level is None  # else nested: the double-backward trick
    with call.running(enable_grad=not forward), \
            (forward_ad.dual_level() if forward else contextlib.nullcontext()):
        if forward:
            inputs = [forward_ad.make_dual(p, t) for p, t in zip(flat, flat_tangents)]
        else:
            inputs = [call.track(p) for p in flat]
        args = _replace_args(primals, argnums, tree_unflatten(inputs, spec))
        output = func(*args)
        call.check_unmodified()
        output, aux = _split_aux(output, has_aux, _JVP)
        if has_aux:
            _tensor_leaves(aux)  # PyTorch checks aux here
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out, _JVP)
        if forward:
            flat_out, out_tangents = zip(*map(forward_ad.unpack_dual, flat_out))
        else:
            out_tangents = _jvp_by_double_backward(flat_out, inputs, flat_tangents)
        if strict and any(t is None for t in out_tangents):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                               "independent of the inputs. This is not allowed with "
                               "strict=True.")
        out_tangents = _filled(out_tangents, flat_out)
    result = (tree_unflatten(flat_out, out_spec), tree_unflatten(out_tangents, out_spec))
    return call.unwrap(result + (aux,) if has_aux else result)


def _jvp_by_double_backward(outputs, inputs, tangents):
    """``J·tangents`` by reverse mode, for a jvp inside another: the gradient of
    ``(Jᵀu)·tangents`` with respect to a dummy ``u``. None for outputs without a tangent."""
    diff = [o for o in outputs if o.requires_grad]
    dummies = [_internal_leaf(zeros_like(o)) for o in diff]
    vjps = _autograd_grad(diff, inputs, dummies, create_graph=True)
    jvps = iter(_autograd_grad(vjps, dummies, tangents, create_graph=True))
    return [next(jvps) if o.requires_grad else None for o in outputs]


# --- Jacobians and Hessians ----------------------------------------------------------------

def _blocks(results, outputs, inputs, per_output_element):
    """The Jacobian blocks ``[i][k]`` (output ``i``, input ``k``), shaped ``output.shape +
    input.shape``, from one result per basis vector: per output element (jacrev:
    ``results[b][k]`` is the derivative for input ``k``) or per input element (jacfwd:
    ``results[b][i]``, for output ``i``)."""
    if not results:  # nothing to differentiate or with respect to: empty blocks
        return [[zeros(o.shape + x.shape, dtype=o.dtype, device=o.device) for x in inputs]
                for o in outputs]
    dim, along = (0, outputs) if per_output_element else (-1, inputs)
    parts = [stack(list(r), dim=dim).split([t.numel() for t in along], dim=dim)
             for r in zip(*results)]
    return [[(parts[k][i] if per_output_element else parts[i][k]).reshape(o.shape + x.shape)
             for k, x in enumerate(inputs)] for i, o in enumerate(outputs)]


def _jacobian_tree(blocks, argnums, in_spec, out_spec):
    """``blocks[i][k]`` (output ``i``, input ``k``) in PyTorch's nesting: outputs' structure
    outside, the selected arguments' inside (one argument, not a tuple, for an int argnums)."""
    per_output = [tree_unflatten(row, in_spec) for row in blocks]
    if isinstance(argnums, int):
        per_output = [row[0] for row in per_output]
    return tree_unflatten(per_output, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function that returns the Jacobian of ``func`` with respect to the arguments
    ``argnums`` selects, by reverse mode: one vector-Jacobian product per output element.

    Each block is shaped ``output.shape + input.shape``, nested as the outputs (outside) and the
    selected arguments (inside; one argument for an int ``argnums``). ``has_aux``: ``func``
    returns ``(output, aux)`` and the result is ``(jacobian, aux)``. The products are computed
    together by ``vmap``, ``chunk_size`` at a time. ``jacrev(jacrev(f))`` is a Hessian.

    Example::

        >>> torch.func.jacrev(torch.sin)(torch.tensor([0., 0.]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacrev", args, is_input=True)
        argnums_ = _argnums(argnums, len(args))
        output, vjp_fn, *aux = _vjp(func, args, argnums_, has_aux)
        flat_out, out_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_out, is_input=False)
        inputs, in_spec = tree_flatten(_diff_args(args, argnums_)[1])
        n = sum(o.numel() for o in flat_out)
        if n == 0:  # nothing to differentiate: empty blocks
            blocks = _blocks([], flat_out, inputs, per_output_element=True)
        else:  # every output element's vector-Jacobian product at once
            rows = vmap(lambda *basis: tuple(tree_leaves(vjp_fn(tree_unflatten(
                list(basis), out_spec)))), chunk_size=chunk_size)(*_basis(flat_out))
            blocks = [[row.narrow(0, start, o.numel()).reshape(o.shape + x.shape)
                       for row, x in zip(rows, inputs)]
                      for o, start in zip(flat_out, _offsets(flat_out))]
        jacobian = _jacobian_tree(blocks, argnums_, in_spec, out_spec)
        return (jacobian, aux[0]) if has_aux else jacobian
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """A function that returns the Jacobian of ``func`` with respect to the arguments
    ``argnums`` selects, by forward mode: one Jacobian-vector product per input element.

    Shapes, nesting and ``has_aux`` as in ``jacrev``. All the input elements go through one
    vmapped ``jvp``; ``randomness`` is that vmap's.

    Example::

        >>> torch.func.jacfwd(lambda x: x ** 2)(torch.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacfwd", args, is_input=True)
        argnums_, diff = _diff_args(args, argnums)
        inputs, in_spec = tree_flatten(diff)
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        if sum(x.numel() for x in inputs) == 0:  # one run (zero tangents) gives the outputs
            out = _jvp(func, args, tree_unflatten([zeros_like(x) for x in inputs], in_spec),
                       argnums_, False, has_aux)
            _error_if_complex("jacfwd", out[0], is_input=False)
            flat_out, out_spec = tree_flatten(out[1])
            blocks = _blocks([], flat_out, inputs, per_output_element=False)
            return _with_aux(_jacobian_tree(blocks, argnums_, in_spec, out_spec), out, has_aux)

        def push(*basis):  # every input element's Jacobian-vector product at once
            out = _jvp(func, args, tree_unflatten(list(basis), in_spec), argnums_, False,
                       has_aux)
            _error_if_complex("jacfwd", out[0], is_input=False)
            return out[1:]
        pushed = vmap(push, randomness=randomness)(*_basis(inputs))
        columns, out_spec = tree_flatten(pushed[0])  # output i: (input elements, *shape)
        blocks = [[col.narrow(0, start, x.numel()).movedim(0, -1).reshape(
            col.shape[1:] + x.shape) for x, start in zip(inputs, _offsets(inputs))]
            for col in columns]
        jacobian = _jacobian_tree(blocks, argnums_, in_spec, out_spec)
        if has_aux:  # the same for every element: the first
            aux, aux_spec = tree_flatten(pushed[1])
            return jacobian, tree_unflatten([a[0] for a in aux], aux_spec)
        return jacobian
    return wrapper


def _with_aux(jacobian, out, has_aux):
    return (jacobian, out[2]) if has_aux else jacobian


def hessian(func, argnums=0):
    """A function that returns the Hessian of ``func`` with respect to the arguments
    ``argnums`` selects: ``jacfwd(jacrev(func))``, forward over reverse, as in PyTorch.

    Example::

        >>> torch.func.hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))  # diag(6x)
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
