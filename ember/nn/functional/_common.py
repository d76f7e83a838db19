"""Helpers shared by the families of ``ember.nn.functional``: applying a function in place,
PyTorch's dtype words in messages, the floating-only kernel check, ``per_sample_with`` typed,
and the recorded gradient of a fused op's composition.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ... import _dtypes
from ...autograd import grad_mode as _grad_mode
from ...autograd._reverse import grad as _grad
from ...ops import batching

if TYPE_CHECKING:
    from collections.abc import Callable

_Fn = TypeVar("_Fn", bound="Callable[..., Any]")


def _apply(input, inplace, fn):
    """``fn(input)``, or written into ``input`` in place (history rebased like PyTorch)."""
    return input._inplace(fn) if inplace else fn(input)


def _floating_only(kernel, *tensors):
    """PyTorch's kernels for these functions exist for floating dtypes only."""
    for t in tensors:
        if not _dtypes.is_floating(t._data.dtype):
            break
    else:
        return  # floating tensors promote to a floating type
    dt = _dtypes.result_type(*tensors)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt._word}\'')


def per_sample_with(rule: Callable[..., Any]) -> Callable[[_Fn], _Fn]:
    """``ops.batching.per_sample_with(rule)``, typed: the decorated function keeps its hints."""
    return batching.per_sample_with(rule)


def composite_vjp(composite, input, g, *args):
    """The gradient ``g``-weighted of ``composite(input, *args)`` with respect to ``input``,
    recorded (``create_graph=True``): the rule of an op computed on raw arrays (ctc_loss,
    pdist) when its gradient must itself be differentiable, through the same function
    written with ember's ops."""
    with _grad_mode.enable_grad():
        x = input if input.requires_grad else input.detach().requires_grad_()
        return _grad(composite(x, *args), x, g, create_graph=True)[0]
