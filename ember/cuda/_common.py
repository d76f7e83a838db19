"""What the ``ember.cuda`` modules share: CuPy (or None) and PyTorch's device-index rules."""
from .. import _device

NOT_COMPILED = "Torch not compiled with CUDA enabled"


def cupy():
    """CuPy when it is installed and sees a GPU, else None."""
    return _device._load_cupy()


def require():
    """CuPy, or PyTorch's error for a machine without CUDA."""
    cp = _device._load_cupy()
    if cp is None:
        raise AssertionError(NOT_COMPILED)
    return cp


def device_index(device, optional=True):
    """The GPU index a ``device=`` argument names (an int, ``'cuda:1'``, a ``torch.device``).

    ``None`` or plain ``'cuda'`` mean the current device when ``optional`` (None without a
    GPU); a CPU device is refused with PyTorch's ValueError.
    """
    given = device
    if isinstance(device, str):
        device = _device.device(device)
    if isinstance(device, _device.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index
    if device is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             f"but got:{given}")
        cp = cupy()
        return None if cp is None else cp.cuda.runtime.getDevice()
    return int(device)
