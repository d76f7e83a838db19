"""``torch.cuda.amp.common``."""
from __future__ import annotations

from ... import _device

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available():
    """True when no GPU is usable (ember: CuPy absent or seeing no GPU)."""
    return not _device.cuda_available()
