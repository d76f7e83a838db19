"""``torch.cuda.amp.GradScaler``: deprecated spelling of ``torch.amp.GradScaler('cuda')``."""
from __future__ import annotations

from ...amp.grad_scaler import _deprecated_scaler

__all__ = ["GradScaler"]

GradScaler = _deprecated_scaler(
    "cuda", __name__, "``torch.amp.GradScaler('cuda', ...)`` (deprecated; disabled without a GPU).")
