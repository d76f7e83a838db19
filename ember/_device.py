"""Device objects and the array namespace behind each device.

``cpu`` arrays are NumPy arrays; ``cuda`` arrays are CuPy arrays (when CuPy and a GPU are
present). The namespace is always read off the array itself, never from a global setting.
"""
from __future__ import annotations

import numpy as np

__all__ = ["device", "namespace_of", "to_numpy", "cuda_available"]


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
        if type not in ("cpu", "cuda"):
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
            from .cuda import memory  # torch.cuda.max_memory_allocated needs the peak
            memory.install_peak_tracking(_cupy)
    return _cupy or None


def cuda_available():
    return _load_cupy() is not None


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


def move(array, dev):
    """``array`` placed on ``dev`` (a no-op when it is already there)."""
    if dev.type == "cpu":
        return to_numpy(array)
    cp = _load_cupy()
    with cp.cuda.Device(dev.index or 0):
        return cp.asarray(array)
