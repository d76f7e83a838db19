"""``torch.func``: function transforms — derivatives of functions, as functions.

``grad(f)`` is a new function that returns the gradient of ``f``; transforms compose
(``grad(grad(f))``, ``jacfwd(jacrev(f))``) and need no ``requires_grad`` on the inputs.
``functional_call`` turns a module into a function of its parameters, so they can be
differentiated as a dict. ``vmap(f)`` maps ``f`` over a batch dim of its inputs: per-sample
gradients are ``vmap(grad(f))``.
"""
from ._ensemble import stack_module_state
from ._extras import debug_unwrap, functionalize, linearize, replace_all_batch_norm_modules_
from ._functional_call import functional_call
from ._rearrange import rearrange
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functional_call", "vmap", "stack_module_state", "linearize", "functionalize",
           "debug_unwrap", "replace_all_batch_norm_modules_", "rearrange"]
