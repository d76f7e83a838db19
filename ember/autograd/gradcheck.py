"""``gradcheck`` / ``gradgradcheck``: derivatives checked against central finite differences.

By default the whole Jacobian is compared, one input element and one output element at a
time. ``fast_mode=True`` compares a single random projection ``vᵀ J u`` per output instead (one
backward and two forward evaluations), as PyTorch's fast mode does: for large inputs. Use
float64 inputs: the default tolerances (eps 1e-6, atol 1e-5, rtol 1e-3) are meant for double
precision, as in PyTorch.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _random
from .._creation import randn_like, tensor, zeros_like
from .._tensor import Tensor
from . import forward_ad, function
from ._reverse import func_vmap
from ._reverse import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytical and numerical derivatives disagree."""


def _tensors(inputs):
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _outputs(func, inputs):
    out = func(*inputs)
    return (out,) if isinstance(out, Tensor) else tuple(out)


def _numerical(func, inputs, idx, out_i, eps):
    """d(output out_i)/d(input idx) by central differences, as a (n_in, n_out) matrix."""
    x = inputs[idx]
    data = x._data  # written in place (by index: any strides, e.g. channels_last)
    n_out = _outputs(func, inputs)[out_i].numel()
    jac = np.zeros((data.size, n_out))
    for k in range(data.size):
        at = np.unravel_index(k, data.shape)
        orig = data[at].copy()
        data[at] = orig + eps
        plus = np.array(_outputs(func, inputs)[out_i]._data, dtype=np.float64).ravel()
        data[at] = orig - eps
        minus = np.array(_outputs(func, inputs)[out_i]._data, dtype=np.float64).ravel()
        data[at] = orig
        jac[k] = (plus - minus) / (2 * eps)
    return jac


def _analytical(func, inputs, idx_list, out_i, check_grad_dtypes=False):
    """One backward per output element: rows are input elements, columns output elements."""
    outs = _outputs(func, inputs)
    out = outs[out_i]
    jacs = [np.zeros((inputs[i].numel(), out.numel())) for i in idx_list]
    if not out.requires_grad:
        return jacs
    for j in range(out.numel()):
        v = zeros_like(out)
        v._data[np.unravel_index(j, v.shape)] = 1  # (v has out's strides)
        grads = autograd_grad(out, [inputs[i] for i in idx_list], v, retain_graph=True,
                              allow_unused=True)
        for jac, g, i in zip(jacs, grads, idx_list):
            if g is not None:
                if check_grad_dtypes and g.dtype != inputs[i].dtype:
                    raise GradcheckError("Gradient has dtype mismatch")
                jac[:, j] = np.asarray(g._data, dtype=np.float64).ravel()
    return jacs


def _forward_analytical(func, inputs, idx_list, out_i):
    """The Jacobians by forward-mode AD: one dual evaluation per input element, each a column."""
    jacs = []
    for i in idx_list:
        x = inputs[i]
        jac = np.zeros((x.numel(), _outputs(func, inputs)[out_i].numel()))
        for k in range(x.numel()):
            tangent = zeros_like(x).detach()
            tangent._data[np.unravel_index(k, x.shape)] = 1
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(x, tangent)
                out_tangent = forward_ad.unpack_dual(_outputs(func, args)[out_i]).tangent
                if out_tangent is not None:
                    jac[k] = np.asarray(out_tangent._data, dtype=np.float64).ravel()
        jacs.append(jac)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if ``func``'s analytical gradients match finite differences for all ``inputs``."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    idx_list = _tensors(inputs)
    if not idx_list:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i in idx_list:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=2)
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    outputs = _outputs(func, inputs)
    if any(inputs[i].is_complex() for i in idx_list) or any(o.is_complex() for o in outputs):
        # (finite differences here are real: the imaginary parts would be dropped silently)
        raise NotImplementedError("ember's gradcheck does not check complex inputs or outputs "
                                  "yet; check a real parameterisation (view_as_real) instead")
    n_out = len(outputs)
    modes = [(_forward_analytical, "Jacobian computed with forward mode mismatch")] * \
        bool(check_forward_ad) + [(_analytical, "Jacobian mismatch")] * bool(check_backward_ad)
    for out_i in range(n_out):
        if fast_mode and check_backward_ad:
            ok, msg = _fast_check(func, inputs, idx_list, out_i, eps, atol, rtol)
            if ok:
                continue
            if raise_exception:
                raise GradcheckError(msg)
            return False
        numericals = {}
        for analytical_fn, mismatch in modes:
            analytical = analytical_fn(func, inputs, idx_list, out_i) \
                if analytical_fn is _forward_analytical else \
                analytical_fn(func, inputs, idx_list, out_i, check_grad_dtypes)
            for k, i in enumerate(idx_list):
                if i not in numericals:
                    numericals[i] = _numerical(func, inputs, i, out_i, eps)
                numerical, a = numericals[i], analytical[k]
                if not np.allclose(a, numerical, rtol=rtol, atol=atol, equal_nan=True):
                    msg = (f"{mismatch} for output {out_i} with respect to input {i},\n"
                           f"numerical:{_fmt(numerical)}\nanalytical:{_fmt(a)}\n")
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
            if analytical_fn is _analytical:
                _check_reentrant(func, inputs, idx_list, out_i, nondet_tol)
    try:
        function.transforms.plain += 1  # (PyTorch batches these checks with its legacy vmap)
        try:
            if check_backward_ad and check_batched_grad:
                _check_batched_grad(func, inputs, idx_list, atol, rtol)
            if check_forward_ad and check_batched_forward_grad:
                _check_batched_forward_grad(func, inputs, idx_list, atol, rtol)
        finally:
            function.transforms.plain -= 1
        if check_backward_ad:
            _check_zero_grad_outputs(func, inputs, idx_list)
        if check_backward_ad and check_undefined_grad:
            _check_undefined_grad(func, inputs)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_reentrant(func, inputs, idx_list, out_i, nondet_tol):
    """The same backward run twice gives the same gradients, within ``nondet_tol``
    (PyTorch's "reentrant" check; here on one random vector-Jacobian product)."""
    out = _outputs(func, inputs)[out_i]
    if not out.requires_grad:
        return
    v = tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=out.dtype)
    diff_inputs = [inputs[i] for i in idx_list]
    first = autograd_grad(out, diff_inputs, v, retain_graph=True, allow_unused=True)
    second = autograd_grad(out, diff_inputs, v, allow_unused=True)
    for a, b in zip(first, second):
        if a is None or b is None:
            continue
        diff = np.abs(np.asarray(a._data, np.float64) - np.asarray(b._data, np.float64))
        if np.max(diff, initial=0.0) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient."
                f"The tolerance for nondeterminism was {nondet_tol}." + _NONDET_NOTE)


_NONDET_NOTE = ("\n\nNOTE: If your op relies on non-deterministic operations, this failure "
                "might be expected: call gradcheck/gradgradcheck with `nondet_tol=<tol>`.")


def _check_zero_grad_outputs(func, inputs, idx_list):
    """Zero gradients of the outputs give zero (or no) input gradients: a backward that adds
    a term of its own, not a multiple of the gradient, is wrong. (Checked where an output
    comes from a custom Function; ember's own rules are checked by its op tables.)"""
    outs = [o for o in _outputs(func, inputs) if o.requires_grad]
    if not any(hasattr(o.grad_fn, "_forward_cls") for o in outs):
        return
    if not outs:
        return
    grads = autograd_grad(outs, [inputs[i] for i in idx_list], [zeros_like(o) for o in outs],
                          allow_unused=True)
    if any(g is not None and not bool(np.all(np.asarray(g._data) == 0)) for g in grads):
        raise GradcheckError("backward not multiplied by grad_output")


def _check_undefined_grad(func, inputs):
    """The backward of a custom Function must accept outputs that got no gradient (None, with
    ``ctx.set_materialize_grads(False)``) and give zero or no input gradients then."""
    for out in _outputs(func, inputs):
        node = out.grad_fn
        if node is None or not hasattr(node, "_forward_cls"):
            continue  # ember's own ops: their rules are checked by the op tables
        try:
            grads = node.apply([None] * len(node._out_meta), False)
        except RuntimeError as e:
            _warn_undefined()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"') from e
        if any(g is not None and bool(np.any(np.asarray(g) != 0)) for g in grads):
            _warn_undefined()
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                'undefined or zero. Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"')


def _warn_undefined():
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                  "enabled by default, but it may break existing callers of this function. If "
                  "this is true for you, you can call this function with "
                  '"check_undefined_grad=False" to disable the feature', stacklevel=4)


def _check_batched_grad(func, inputs, idx_list, atol, rtol):
    """Gradients for a batch of grad_outputs at once (``is_grads_batched``, run by vmap) equal
    those computed one by one."""
    rng = np.random.default_rng(2)
    diff_inputs = [inputs[i] for i in idx_list]
    for out_i, out in enumerate(_outputs(func, inputs)):
        if not out.requires_grad:
            continue
        vs = tensor(rng.standard_normal((2,) + tuple(out.shape)), dtype=out.dtype)
        expected = [autograd_grad(out, diff_inputs, vs[b], retain_graph=True,
                                  allow_unused=True) for b in range(2)]
        try:
            got = autograd_grad(out, diff_inputs, vs, retain_graph=True, allow_unused=True,
                                is_grads_batched=True)
        except RuntimeError as e:
            raise GradcheckError(f"While computing batched gradients, got: {e}\n\n"
                                 f"{_BATCHED_NOTE}") from e
        for k, g in enumerate(got):
            for b in range(2):
                want = expected[b][k]
                if (g is None) != (want is None):
                    continue
                if g is not None and not np.allclose(np.asarray(g[b]._data), np.asarray(
                        want._data), rtol=rtol, atol=atol, equal_nan=True):
                    raise GradcheckError(
                        f"For output {out_i} and input {idx_list[k]}:\n\n{_BATCHED_NOTE}")


def _check_batched_forward_grad(func, inputs, idx_list, atol, rtol):
    """Forward-mode tangents for a batch of input tangents at once (by vmap) equal those
    computed one by one."""
    rng = np.random.default_rng(3)
    vmap = func_vmap()
    for i in idx_list:
        x = inputs[i]
        tangents = tensor(rng.standard_normal((2,) + tuple(x.shape)), dtype=x.dtype)

        def jvp(t, i=i, x=x):
            with forward_ad.dual_level():
                args = list(inputs)
                args[i] = forward_ad.make_dual(x.detach(), t)
                outs = _outputs(func, args)
                return tuple(_tangent_or_zeros(o) for o in outs)
        expected = [jvp(tangents[b]) for b in range(2)]
        try:
            got = vmap(jvp)(tangents)
        except RuntimeError as e:
            raise GradcheckError(f"While computing batched gradients, got: {e}\n\n"
                                 f"{_BATCHED_FWD_NOTE}") from e
        for out_i, g in enumerate(got):
            for b in range(2):
                if not np.allclose(np.asarray(g[b].detach()._data),
                                   np.asarray(expected[b][out_i].detach()._data),
                                   rtol=rtol, atol=atol, equal_nan=True):
                    raise GradcheckError(f"For output {out_i} and input {i}:\n\n"
                                         f"{_BATCHED_FWD_NOTE}")


def _tangent_or_zeros(out):
    tangent = forward_ad.unpack_dual(out).tangent
    return zeros_like(out) if tangent is None else tangent


_BATCHED_FWD_NOTE = ("gradcheck failed while testing batched gradient computation with forward-"
                     "mode AD: the function's jvp must be vmap-compatible (or call gradcheck "
                     "with `check_batched_forward_grad=False`).")

_BATCHED_NOTE = ("gradcheck or gradgradcheck failed while testing batched gradient "
                 "computation. To compute batched grads (e.g., jacobians, hessians), we vmap "
                 "over the backward computation: the backward must be vmap-compatible (or call "
                 "gradcheck with `check_batched_grad=False`).")


def _fast_check(func, inputs, idx_list, out_i, eps, atol, rtol):
    """Compare ``vᵀ J u`` by finite differences along ``u`` with the vector-Jacobian product."""
    rng = np.random.default_rng(0)
    out = _outputs(func, inputs)[out_i]
    v = rng.standard_normal(tuple(out.shape))
    us = [rng.standard_normal(tuple(inputs[i].shape)) for i in idx_list]
    analytical = 0.0
    if out.requires_grad:
        grads = autograd_grad(out, [inputs[i] for i in idx_list], tensor(v, dtype=out.dtype),
                              allow_unused=True)
        analytical = sum(float(np.sum(np.asarray(g._data, dtype=np.float64) * u))
                         for g, u in zip(grads, us) if g is not None)
    flats = [inputs[i]._data for i in idx_list]
    originals = [f.copy() for f in flats]

    def value(sign):
        for f, o, u in zip(flats, originals, us):
            f[...] = o + sign * eps * u
        return float(np.sum(np.asarray(_outputs(func, inputs)[out_i]._data, np.float64) * v))

    try:
        numerical = (value(1) - value(-1)) / (2 * eps)
    finally:
        for f, o in zip(flats, originals):
            f[...] = o
    if np.isclose(analytical, numerical, rtol=rtol, atol=atol):
        return True, ""
    return False, (f"Jacobian mismatch for output {out_i} (fast mode: the projection vᵀJu "
                   f"for random u, v),\nnumerical:{numerical!r}\nanalytical:{analytical!r}\n")


def _fmt(a):
    return repr(tensor(a))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """``gradcheck`` of the first derivative: checks second derivatives by double backward."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    idx_list = _tensors(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        state = _random.default_generator._rng.bit_generator.state
        grad_outputs = [randn_like(o).requires_grad_() for o in outs]
        _random.default_generator._rng.bit_generator.state = state
    grad_outputs = list(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n], args[n:]
        out = _outputs(func, ins)
        diff = [(o, g) for o, g in zip(out, gos) if o.requires_grad]
        grads = autograd_grad([o for o, _ in diff], [ins[i] for i in idx_list],
                              [g for _, g in diff], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps,
                     atol=atol, rtol=rtol, raise_exception=raise_exception, fast_mode=fast_mode,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
