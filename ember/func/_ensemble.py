"""``torch.func.stack_module_state``: the parameters and buffers of same-class models stacked
along a new leading dim, for model ensembling with ``vmap`` over ``functional_call``::

    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])   # any instance: only its code is used (PyTorch's
                                      # tutorial adds .to("meta"); ember has no meta device)
    def one(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))
    outputs = vmap(one, in_dims=(0, 0, None))(params, buffers, x)   # one row per model

Stacked parameters are new leaves (``requires_grad`` when the models' parameters do), so an
optimizer can train the whole ensemble at once.
"""
from __future__ import annotations

from ..ops.shape import stack

__all__ = ["stack_module_state"]


def stack_module_state(models):
    """``(params, buffers)``: ``{name: stacked tensor}`` over ``models`` (same class, same
    training mode), each of shape ``(len(models), *shape)``."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = _stacked([dict(m.named_parameters()) for m in models])
    buffers = _stacked([dict(m.named_buffers()) for m in models])
    return params, buffers


def _stacked(states):
    out = {}
    for name in states[0]:
        tensors = [s[name] for s in states]
        flags = {t.requires_grad for t in tensors}
        if len(flags) != 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        value = stack(tensors)
        out[name] = value.detach().requires_grad_() if flags.pop() else value
    return out
