"""``functorch``: the function transforms before they moved into ``torch.func``.

``python -m ember run`` serves ``import functorch`` from this module (ember does not install a
top-level ``functorch`` package). As in PyTorch 2.13, every name here is the ``torch.func``
transform behind a FutureWarning saying where it moved, and the old module API survives:
``make_functional(model)`` returns a ``FunctionalModule`` (call it with the parameters first)
and the parameters; ``make_functional_with_buffers`` also returns the buffers;
``combine_state_for_ensemble`` stacks the states of same-class models for ``vmap``.
``functionalize`` is absent: ember's ``torch.func`` has none.
"""
from __future__ import annotations

import copy
import warnings

from .. import func as _func
from ..nn.module import Module
from ..ops.shape import stack

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]

__version__ = "2.13.0"


def _warn(api, new_api=None):
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
        "release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html", FutureWarning, stacklevel=3)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    _warn("vmap", "torch.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func, argnums=0, has_aux=False):
    _warn("grad")
    return _func.grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux=False):
    _warn("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux=False):
    _warn("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    _warn("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    _warn("jacrev")
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    _warn("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    _warn("hessian")
    return _func.hessian(func, argnums=argnums)


def _unique(named):
    """Names and tensors, each tensor once (tied weights under their first name)."""
    seen, names, tensors = set(), [], []
    for name, t in named:
        if id(t) not in seen:
            seen.add(id(t))
            names.append(name)
            tensors.append(t)
    return tuple(names), tuple(tensors)


class FunctionalModule(Module):
    """A copy of a module, called with its parameters first: ``fmodel(params, *args)``."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params, *args, **kwargs):
        return _func.functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                                     args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """A copy of a module, called as ``fmodel(params, buffers, *args)``."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return _func.functional_call(self.stateless_model, state, args, kwargs)


def _copy_state(model, disable_autograd_tracking):
    model_copy = copy.deepcopy(model)
    names, params = _unique(model_copy.named_parameters(remove_duplicate=False))
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return model_copy, names, params


def make_functional(model, disable_autograd_tracking=False):
    """``(FunctionalModule, params)`` for a module without buffers; the module is copied."""
    _warn("make_functional", "torch.func.functional_call")
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    model_copy, names, params = _copy_state(model, disable_autograd_tracking)
    return FunctionalModule(model_copy, names), params


def _with_buffers(model, disable_autograd_tracking=False):
    model_copy, names, params = _copy_state(model, disable_autograd_tracking)
    buffer_names, buffers = _unique(model_copy.named_buffers(remove_duplicate=False))
    return FunctionalModuleWithBuffers(model_copy, names, buffer_names), params, buffers


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(FunctionalModuleWithBuffers, params, buffers)``; the module is copied."""
    _warn("make_functional_with_buffers", "torch.func.functional_call")
    return _with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` with each parameter and buffer stacked over ``models``
    (same class, same training mode), for ``vmap(fmodel)(params, buffers, x)``."""
    _warn("combine_state_for_ensemble", "torch.func.stack_module_state")
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the "
                           "same class.")
    parts = [_with_buffers(m) for m in models]
    params = tuple(stack(group).detach() for group in zip(*(p[1] for p in parts)))
    buffers = tuple(stack(group).detach() for group in zip(*(p[2] for p in parts)))
    return parts[0][0], params, buffers
