"""Higher-order derivatives of whole functions (``torch.autograd.functional``).

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp`` and ``vhp`` take a function of tensors and
the point to differentiate at, with PyTorch's signatures, errors and output structures (a
Tensor or a tuple, as the inputs and outputs are; a Jacobian is nested outputs x inputs).
Everything is built on ``autograd.grad``:

- ``jvp`` and ``hvp`` use the double-backward trick, as PyTorch does: ``g(u) = Jᵀu`` is linear
  in a dummy ``u``, so the gradient of ``g(u)·v`` with respect to ``u`` is ``Jv``.
- ``jacobian`` takes one vector-Jacobian product per output element; with ``vectorize=True``
  all at once, as PyTorch does (``grad(..., is_grads_batched=True)``, a vmap over the rows of
  the identity). ``strategy="forward-mode"`` (and hessian's ``outer_jacobian_strategy``) is
  checked as in PyTorch and computed the same reverse way.
- Third and higher derivatives: differentiate a ``create_graph=True`` result again.

Inputs are detached copies (``view_as`` under ``create_graph``, so results stay connected to
the caller's graph); without ``create_graph`` the results are detached.
"""
from __future__ import annotations

from .._creation import eye, zeros_like
from .._tensor import Tensor
from ._reverse import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _zeros_like(t, requires_grad=False):
    return zeros_like(t, requires_grad=requires_grad)


def _as_tuple(inp, arg_name, fn_name):
    """``(was_tuple, tuple_of_tensors)``, with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    inp = inp if is_tuple else (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: single tensors where the caller gave or got single tensors."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Inputs the function is differentiated at: connected to the caller's graph only when
    ``create_graph`` asks for it."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], tuple):
        return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)
    return inputs if create_graph else tuple(inp.detach() for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_NOT_REQUIRING = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should ensure "
               "that your function is thrice differentiable and that the hessian depends on the "
               "inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in "
               "strict mode.",
}


def _check_requires_grad(inputs, input_type, strict):
    """In strict mode, refuse results that do not depend on the inputs."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_NOT_REQUIRING[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; all None when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward mode "
                         "AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros for gradients that did not arrive (an error instead in strict mode)."""
    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = _zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res += (g,)
    return res


def _v_or_scalar_check(v, inputs, is_inputs_tuple, create_graph, fn_name):
    """The vector ``v`` checked against ``inputs``; None only for a one-element input."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ J)``: the vector-Jacobian product at ``inputs``.

    Example:
        >>> vjp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 1.]))[1]
        tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "vjp")
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick.

    Example:
        >>> jvp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 0.]))[1]
        tensor([2., 0.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _v_or_scalar_check(v, inputs, is_inputs_tuple, create_graph, "jvp")
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jvp")
        dummy = tuple(_zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, dummy, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, dummy, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (single Tensors where the caller used them).

    Example:
        >>> jacobian(lambda x: x ** 2, ember.tensor([1., 2.]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        _check_forward_mode(create_graph, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, "jacobian")
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        jac = tuple(_vectorized_jacobian(out, inputs, create_graph) if vectorize else
                    _jacobian_of_output(i, out, inputs, strict, create_graph)
                    for i, out in enumerate(outputs))
        return _tuple_postprocess(_grad_postprocess(jac, create_graph),
                                  (is_outputs_tuple, is_inputs_tuple))


def _check_forward_mode(create_graph, strict, vectorize):
    """PyTorch's refusals for ``strategy="forward-mode"`` (the result is computed in reverse)."""
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
            "implemented for `vectorize=True`.")


def _vectorized_jacobian(out, inputs, create_graph):
    """The blocks ``d out / d inputs[j]`` from all of ``out``'s vector-Jacobian products at
    once (``is_grads_batched``: a vmap over the rows of the identity)."""
    n = out.nelement()
    if n == 0 or not out.requires_grad:
        return tuple(_zeros_like(inp).new_zeros(out.size() + inp.size()) for inp in inputs)
    basis = eye(n, dtype=out.dtype, device=out.device).view((n,) + tuple(out.shape))
    rows = _grad((out,), inputs, (basis,), retain_graph=True, create_graph=create_graph,
                 allow_unused=True, is_grads_batched=True)
    return tuple((out.new_zeros(out.size() + inp.size()) if row is None else
                  row.view(out.size() + inp.size())) for row, inp in zip(rows, inputs))


def _jacobian_of_output(i, out, inputs, strict, create_graph):
    """The blocks ``d out / d inputs[j]``: one vector-Jacobian product per element of ``out``."""
    rows = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        vj = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                       f"of input {j}. This is not allowed in strict mode.")
                g = _zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            row.append(g)
    from ..ops.shape import stack  # lazy: ops build on autograd
    return tuple(stack(row, dim=0).view(out.size() + inp.size())
                 for row, inp in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs``: ``H[i][j]`` has shape
    ``inputs[i].shape + inputs[j].shape``.

    Example:
        >>> hessian(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _outputs_of(func, inputs, strict, fn_name):
    """``func(*inputs)`` as a tuple (and whether it was one), each output checked to need grad
    when ``strict``."""
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                          fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def _scalar_output(func, inputs, strict, fn_name):
    """``func(inputs)`` as a one-tuple, refused unless it is one single-element Tensor."""
    is_outputs_tuple, outputs = _outputs_of(func, inputs, strict, fn_name)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return is_outputs_tuple, outputs


def _gradient_of_scalar(func, inputs, v, create_graph, strict, fn_name):
    """The first half of ``vhp`` and ``hvp`` (in grad mode): checked inputs and ``v``, the
    scalar output and its gradient with a graph."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _v_or_scalar_check(v, inputs, is_inputs_tuple, create_graph, fn_name)
    is_outputs_tuple, outputs = _scalar_output(func, inputs, strict, fn_name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ H)`` for a scalar ``func``: the gradient of ``∇f · v``.

    Example:
        >>> vhp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.tensor([1., 1.]))[1]
        tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick.

    Example:
        >>> hvp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.tensor([1., 1.]))[1]
        tensor([ 6., 12.])
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _gradient_of_scalar(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))
