"""``torch.nn.modules.linear_cross_entropy_options``: ``LinearCrossEntropyOptions``."""
from __future__ import annotations

import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """Tuning knobs of PyTorch's chunked linear cross entropy; ember computes the logits
    whole, so they are accepted and change nothing."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None
