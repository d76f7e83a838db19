"""``LazyModuleMixin``: what the lazy modules (``LazyLinear``, ``LazyConv1d``...,
``LazyBatchNorm1d``..., each defined beside its eager class) share.

A lazy module is its eager class whose input size (``in_features``, ``in_channels``,
``num_features``) is left 0 and whose parameters and buffers are ``UninitializedParameter``/
``Buffer`` placeholders. The first call reads the size off the input, materializes the
placeholders, draws them with the eager class's ``reset_parameters``, and turns the module into
its eager class (``cls_to_become``), as PyTorch does. A ``load_state_dict`` before the first
call materializes the placeholders from the checkpoint's shapes.
"""
from __future__ import annotations

from ..parameter import UninitializedTensorMixin

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Infers the parameters' shapes from the first input (``initialize_parameters``), in a
    forward pre-hook that removes itself once everything is materialized."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) is a placeholder."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, UninitializedTensorMixin) for t in tensors)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # a placeholder is saved as itself (it has no values to detach)
        for name, param in self._parameters.items():
            if param is not None:
                lazy = isinstance(param, UninitializedTensorMixin)
                destination[prefix + name] = param if keep_vars or lazy else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                lazy = isinstance(buf, UninitializedTensorMixin)
                destination[prefix + name] = buf if keep_vars or lazy else buf.detach()
