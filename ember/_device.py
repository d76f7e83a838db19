"""Device objects and the array namespace behind each device.

``cpu`` arrays are NumPy arrays; ``cuda`` arrays are CuPy arrays (when CuPy and a GPU are
present). The namespace is always read off the array itself, never from a global setting.
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["device", "namespace_of", "to_numpy", "cuda_available", "set_default_device",
           "get_default_device"]


CUDA_ON_CPU = os.environ.get("EMBER_CUDA_ON_CPU", "") not in ("", "0")
"""``python -m ember run --cuda-on-cpu`` (and the launcher's flag): a script written for a GPU
runs on the CPU as it is. Every ``cuda`` device is made the CPU (``torch.device('cuda:1')``
reads ``device(type='cpu')``, so the move is visible), ``torch.cuda.set_device`` and
``synchronize`` do nothing, ``pin_memory`` copies, and DistributedDataParallel takes
``device_ids``. ``torch.cuda.is_available()`` stays False: there is no GPU."""


class device:
    """``torch.device``: a type (``'cpu'`` or ``'cuda'``) and an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's argument name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        elif not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - "
                            f"got ({type!r})")
        elif ":" in type:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type == "cuda" and CUDA_ON_CPU:
            type, index = "cpu", None
        elif type not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, "
                "fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type "
                "at start of device string: " + type)
        self.type, self.index = type, index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with torch.device('cuda'):`` makes this the default device of the factory
        functions inside the block (as ``set_default_device`` does, until the block ends)."""
        _defaults.append(self)
        return self

    def __exit__(self, *exc):
        _defaults.pop()
        return False


CPU = device("cpu")

_cupy = None


def _load_cupy():
    """CuPy if it is installed and sees a GPU, else None (checked once)."""
    global _cupy
    if _cupy is None:
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            _cupy = cupy
        except Exception:  # not installed, no driver, no GPU: all mean "no cuda"
            _cupy = False
        if _cupy:
            # torch.cuda.max_memory_allocated needs the peak
            from .cuda import memory  # lazy: ember.cuda imports this module
            memory.install_peak_tracking(_cupy)
    return _cupy or None


def cuda_available():
    return _load_cupy() is not None


# ---------------------------------------------------------------- the default device
# Global state (as PyTorch's, which it keeps per thread): the device factory functions use
# when given none. ``_defaults[0]`` is ``set_default_device``'s (None: the CPU); each
# ``with device(...)`` block pushes one more on top.
_defaults = [None]


def set_default_device(device):
    """Make ``device`` (a device, a string like ``'cuda'``, an index, or None for the CPU) the
    one factory functions (``tensor``, ``zeros``, ``arange``, ``rand``..., and so the
    parameters ``nn`` modules create) use when not given ``device=``. Tensors made from others
    (``zeros_like``, ``from_numpy``) are not affected. As in PyTorch, a device that is not
    available (``'cuda'`` without CUDA) is accepted here and refused at the first factory
    call."""
    _defaults[0] = None if device is None else globals()["device"](device)


def get_default_device():
    """The device factory functions use when given none (``'cuda'`` reads as ``cuda:0``, and
    raises, as a factory call would, where CUDA is not available)."""
    dev = factory_default()
    if dev is None:
        return CPU
    return dev if dev.index is not None else canonical(dev)


def factory_default():
    """The default device, or None for the CPU (the common case: one list read)."""
    return _defaults[-1]


def canonical(dev):
    """A device object from a user's ``device=`` argument; ``cuda`` means ``cuda:0``."""
    if dev is None:
        return CPU
    if not isinstance(dev, device):
        dev = device(dev)
    if dev.type == "cuda":
        if not cuda_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        index = dev.index
        if index is None:  # plain 'cuda' is the current GPU (torch.cuda.set_device)
            index = _cupy.cuda.runtime.getDevice()
        return device("cuda", index)
    return CPU


def namespace(dev):
    """The array module (numpy or cupy) for a device."""
    return np if dev.type == "cpu" else _load_cupy()


def namespace_of(array):
    """The array module an array belongs to."""
    return np if isinstance(array, np.ndarray) else _load_cupy()


def device_of(array):
    if isinstance(array, np.ndarray):
        return CPU
    return device("cuda", array.device.id)


def to_numpy(array):
    """A host (NumPy) copy of an array; the array itself when it already lives on the CPU."""
    return array if isinstance(array, np.ndarray) else array.get()


def pinned_empty(shape, dtype):
    """A NumPy array in page-locked host memory (CuPy's allocator)."""
    import cupyx  # (present whenever CuPy is)
    return cupyx.empty_pinned(shape, dtype)


def is_pinned(array):
    """Whether a NumPy array lives in page-locked memory from CuPy's pinned allocator (as
    ``pinned_empty`` makes)."""
    if not isinstance(array, np.ndarray) or not cuda_available():
        return False
    while isinstance(array, np.ndarray):
        array = array.base
    return isinstance(array, _cupy.cuda.PinnedMemoryPointer)


def write_from_host(array, values):
    """NumPy ``values`` into ``array`` in place, wherever it lives (copied to the GPU for a
    CuPy array)."""
    if isinstance(array, np.ndarray):
        array[...] = values
    else:
        array[...] = _load_cupy().asarray(values)


def move(array, dev):
    """``array`` placed on ``dev`` (a no-op when it is already there)."""
    if dev.type == "cpu":
        return to_numpy(array)
    cp = _load_cupy()
    with cp.cuda.Device(dev.index or 0):
        return cp.asarray(array)
