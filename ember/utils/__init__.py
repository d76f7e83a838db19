"""``torch.utils``: data loading (``ember.utils.data``), activation checkpointing
(``ember.utils.checkpoint``)."""
from . import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
