"""``ember.cuda``: whether a GPU backend (CuPy with a visible GPU) is available."""
from .. import _device


def is_available():
    """True when CuPy is installed and sees at least one GPU."""
    return _device.cuda_available()


def device_count():
    if not is_available():
        return 0
    return _device._load_cupy().cuda.runtime.getDeviceCount()
from . import amp  # noqa: E402,F401  (torch.cuda.amp)
