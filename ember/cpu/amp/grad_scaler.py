"""``torch.cpu.amp.GradScaler``: deprecated spelling of ``torch.amp.GradScaler('cpu')``."""
from __future__ import annotations

from ...amp.grad_scaler import _deprecated_scaler

__all__ = ["GradScaler"]

GradScaler = _deprecated_scaler(
    "cpu", __name__, "``torch.amp.GradScaler('cpu', ...)`` (deprecated).")
