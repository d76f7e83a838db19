"""``torch.cpu.amp.autocast``: deprecated spelling of ``torch.amp.autocast('cpu')``."""
from __future__ import annotations

from ... import _dtypes
from ...amp import autocast_mode as _amp

__all__ = ["autocast"]

autocast = _amp._deprecated_autocast(
    "cpu", _dtypes.bfloat16, __name__, "``torch.amp.autocast('cpu', ...)`` (deprecated).")
