"""``torch.utils``: data loading (``ember.utils.data``)."""
from . import data

__all__ = ["data"]
