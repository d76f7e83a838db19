"""Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``): what backward keeps.

Every tensor an op saves for its backward (an input its derivative reads, or its result)
goes, while the hooks are active, through ``pack_hook(tensor)``; the node keeps whatever that
returns, and calls ``unpack_hook(packed)`` when its backward runs to get the tensor back. So a
program decides where saved activations live (``save_on_cpu``) or whether they are kept at all
(``utils.checkpoint`` keeps none and recomputes them). Packed tensors are not version-checked,
as in PyTorch: the hooks own what they return.
"""
from __future__ import annotations

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

stack = []  # (pack_hook, unpack_hook) pairs, innermost last; ops read it when they record
_disabled = []  # error messages of the active disable_saved_tensors_hooks contexts


class saved_tensors_hooks:
    """``with saved_tensors_hooks(pack_hook, unpack_hook):`` — ops recorded inside save through
    the hooks (the innermost pair wins)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        stack.pop()


class disable_saved_tensors_hooks:
    """A scope in which registering saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _disabled.append(self.error_message)

    def __exit__(self, *exc):
        _disabled.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are copied to the CPU in the forward and moved back to their device when
    backward needs them: GPU memory for activations traded for transfers.
    ``pin_memory`` is accepted (NumPy memory is not pinned)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.detach().to("cpu", copy=True)

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)
