"""NumPy's and CuPy's errors from an op's forward, translated into PyTorch's (``Op.__call__``
calls these when the forward raised; each raises PyTorch's error or returns, and the original
error is raised then)."""
from __future__ import annotations

from .. import _errors
from .._broadcast import broadcast_shapes
from .._tensor import Tensor as _Tensor


def _raise_broadcast_error(arrays):
    """Turn NumPy's broadcasting ValueError into PyTorch's RuntimeError (if that was it)."""
    broadcast_shapes(*(a.shape for a in arrays if hasattr(a, "shape")))


def _raise_device_error(args):
    """CuPy refuses NumPy operands with a TypeError; PyTorch names the two devices."""
    devices = []
    for a in args:
        if isinstance(a, _Tensor) and a.device not in devices:
            devices.append(a.device)
    if len(devices) > 1:
        a, b = sorted(str(d) for d in devices)[::-1][:2]
        raise RuntimeError(_errors.DEVICE_MISMATCH.format(a=a, b=b))
