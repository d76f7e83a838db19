"""``torch.utils.data._utils.pin_memory``: a batch's tensors copied to page-locked memory
(``DataLoader(pin_memory=True)``), through lists, tuples, named tuples, dicts and any object
with a ``pin_memory()`` method of its own, as PyTorch walks them."""
from __future__ import annotations

import collections.abc
import warnings

from .... import _device
from ...._tensor import Tensor

__all__ = ["pin_memory", "pinner"]


def pin_memory(data, device=None):
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v, device) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:  # a mapping that can't be made from a dict
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(pin_memory(v, device) for v in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(v, device) for v in data)
    if isinstance(data, collections.abc.Sequence):
        pinned = [pin_memory(v, device) for v in data]
        try:
            return type(data)(pinned)
        except TypeError:
            return pinned
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


def pinner(loader):
    """What a loader's iterator applies to each batch: ``pin_memory`` where asked and a GPU
    can use it, else nothing (with PyTorch's warning where asked and there is none)."""
    if not loader.pin_memory:
        return None
    if not _device.cuda_available():
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                      "device pinned memory won't be used.", stacklevel=3)
        return None
    return pin_memory
