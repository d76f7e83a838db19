"""``torch.cpu.amp.autocast``: deprecated spelling of ``torch.amp.autocast('cpu')``."""
from __future__ import annotations

import warnings

from ... import _dtypes
from ...amp import autocast_mode as _amp

__all__ = ["autocast"]


class autocast(_amp.autocast):
    """``torch.amp.autocast('cpu', ...)`` (deprecated)."""

    def __init__(self, enabled=True, dtype=_dtypes.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
