"""``torch.accelerator``: the device-agnostic front of whichever accelerator there is.

ember's one accelerator is CUDA through CuPy, so with a GPU each function here is
``ember.cuda``'s; without one, ``is_available()`` is False, ``current_accelerator()`` is None,
``device_count()`` is 0, and the rest raise PyTorch's "Cannot access accelerator device when
none is available." (scripts guard with ``if torch.accelerator.is_available(): ...``).
"""
from __future__ import annotations

from . import _device, cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def is_available():
    """Whether there is an accelerator (a GPU that CuPy sees)."""
    return _device.cuda_available()


def current_accelerator(check_available=False):
    """``device(type='cuda')`` with a GPU; None without one (``check_available`` changes
    nothing here: ember knows no accelerator it could not use)."""
    return _device.device("cuda") if is_available() else None


def device_count():
    """How many accelerator devices there are (0 without a GPU)."""
    return cuda.device_count()


def _cuda():
    if not is_available():
        raise RuntimeError(_NONE)
    return cuda


def _index(device):
    """An index (or None) from an int, a device or a string, as PyTorch's functions take."""
    if device is None or isinstance(device, int):
        return device
    d = _device.device(device)
    return d.index if d.index is not None else _cuda().current_device()


def current_device_index():
    """The index of the current accelerator device."""
    return _cuda().current_device()


def set_device_index(device, /):
    """Make ``device`` the current accelerator device."""
    cuda = _cuda()
    index = _index(device)
    if index is not None:
        cuda.set_device(index)


current_device_idx = current_device_index
set_device_idx = set_device_index


class device_index:
    """``with torch.accelerator.device_index(i):`` makes device ``i`` current inside the block
    (None: a no-op, as in PyTorch)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = None

    def __enter__(self):
        if self.idx is not None:
            cuda = _cuda()
            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx is not None:
            _cuda().set_device(self.prev_idx)
        return False


def synchronize(device=None, /):
    """Wait for the work queued on ``device``."""
    _cuda().synchronize(_index(device))


def current_stream(device=None, /):
    return _cuda().current_stream(_index(device))


def set_stream(stream):
    _cuda().set_stream(stream)


def empty_cache():
    _cuda().empty_cache()


def memory_allocated(device_index=None, /):
    return _cuda().memory_allocated(_index(device_index))


def max_memory_allocated(device_index=None, /):
    return _cuda().max_memory_allocated(_index(device_index))


def memory_reserved(device_index=None, /):
    return _cuda().memory_reserved(_index(device_index))


def max_memory_reserved(device_index=None, /):
    return _cuda().max_memory_reserved(_index(device_index))


def memory_stats(device_index=None, /):
    return _cuda().memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    _cuda().reset_peak_memory_stats(_index(device_index))
