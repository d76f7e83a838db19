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
from . import forward_ad
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


def _analytical(func, inputs, idx_list, out_i):
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
        for jac, g in zip(jacs, grads):
            if g is not None:
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
            analytical = analytical_fn(func, inputs, idx_list, out_i)
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
    return True


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
                     atol=atol, rtol=rtol, raise_exception=raise_exception, fast_mode=fast_mode)
