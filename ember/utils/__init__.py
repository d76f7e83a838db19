"""``torch.utils``: data loading (``ember.utils.data``), activation checkpointing
(``ember.utils.checkpoint``)."""
from . import checkpoint, data

__all__ = ["checkpoint", "data"]
