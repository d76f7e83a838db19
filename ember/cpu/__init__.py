"""``torch.cpu``: the CPU device module (always available, one device) and ``torch.cpu.amp``."""
from . import amp  # noqa: F401  (torch.cpu.amp)

__all__ = ["is_available", "device_count", "current_device", "synchronize"]


def is_available():
    """Always True: the CPU is always there."""
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: CPU work is done when the call returns."""
