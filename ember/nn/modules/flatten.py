"""``torch.nn.modules.flatten``: ember defines ``Flatten`` and ``Unflatten`` in ``linear.py``."""
from .linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
