"""Helpers shared by the families of ``ember.nn.functional``: applying a function in place,
PyTorch's dtype words in messages, the floating-only kernel check.
"""
from __future__ import annotations

from ... import _dtypes


def _apply(input, inplace, fn):
    """``fn(input)``, or written into ``input`` in place (history rebased like PyTorch)."""
    return input._inplace(fn) if inplace else fn(input)


def _word(dtype):
    """PyTorch's name of a dtype in messages: 'Float', 'Long'..."""
    return dtype._legacy[:-len("Tensor")]


def _floating_only(kernel, *tensors):
    """PyTorch's kernels for these functions exist for floating dtypes only."""
    for t in tensors:
        if not _dtypes.is_floating(t._data.dtype):
            break
    else:
        return  # floating tensors promote to a floating type
    dt = _dtypes.result_type(*tensors)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_word(dt)}\'')
