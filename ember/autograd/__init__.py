"""``ember.autograd``: reverse-mode differentiation (``backward``, ``grad``) and its tools."""
from __future__ import annotations

from . import (  # noqa: F401  (torch.autograd.function, ...)
    _function_vmap,
    engine,
    forward_ad,
    function,
    functional,
    graph,
    profiler,
)
from ._reverse import backward, grad
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .explain import explain
from .function import Function
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .graph import Node
from .variable import Variable

__all__ = ["backward", "grad", "Variable", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "gradcheck", "gradgradcheck", "Node", "explain",
           "Function", "detect_anomaly", "set_detect_anomaly", "forward_ad",
           "set_multithreading_enabled", "enforce_grad_layout_policy"]


def variable(*args, **kwargs):
    """Removed from PyTorch long ago: raises, as PyTorch does. (As in PyTorch, this function
    shadows the ``torch.autograd.variable`` submodule as an attribute; ``from
    torch.autograd.variable import Variable`` still imports the submodule.)"""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


variable.Variable = Variable
