"""``Tensor.share_memory_()`` and ``Tensor.is_shared()``.

PyTorch moves a tensor's storage into shared memory, so that processes it starts see (and
write) the same numbers; tensors sent through a ``torch.multiprocessing.Queue`` are passed as
handles to that memory.

ember's tensors hold NumPy arrays. ``share_memory_()`` copies the array into an anonymous
shared memory map (``mmap.mmap(-1, n)``: MAP_SHARED on Linux and macOS) and makes the tensor use
it, so processes *forked* afterwards (``fork`` start method, e.g. Hogwild training) share the
numbers with the parent. What ember does not do: pickling a tensor (``Queue.put``, the
``spawn`` start method) copies its numbers, shared or not, so a ``spawn``-started child gets its
own copy. Views made *before* the call keep the old memory; views made after share it.
CUDA tensors are reported as shared, as in PyTorch.
"""
from __future__ import annotations

import mmap

import numpy as np


def _in_shared_map(array):
    """True when ``array``'s memory is (part of) a shared map made by ``share_memory_``."""
    base = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None)
        if isinstance(base, memoryview):
            base = base.obj
    return False


def is_shared(self):
    """Whether the tensor's memory is shared between processes (see the module note)."""
    data = self._data
    if not isinstance(data, np.ndarray):  # CUDA: PyTorch reports True
        return True
    return _in_shared_map(data)


def share_memory_(self):
    """Move the tensor's numbers into shared memory (no-op when already shared); returns self.

    Raises for a view: its memory belongs to its base, which must be shared instead.
    """
    if is_shared(self):
        return self
    if self._base is not None:
        raise RuntimeError("ember: share_memory_() of a view is not supported; call it on "
                           "the tensor the view was made from, before making views")
    data = self._data
    buffer = mmap.mmap(-1, max(data.nbytes, 1))
    shared = np.frombuffer(buffer, dtype=data.dtype, count=data.size).reshape(data.shape)
    shared[...] = data
    self._data = shared
    return self
