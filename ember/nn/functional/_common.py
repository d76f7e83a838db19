"""Helpers shared by the families of ``ember.nn.functional``: applying a function in place,
PyTorch's dtype words in messages, the floating-only kernel check, ``per_sample_with`` typed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ... import _dtypes
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
