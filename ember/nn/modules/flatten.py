"""``torch.nn.modules.flatten``: PyTorch's path for ``Flatten`` and ``Unflatten`` (ember defines
them in ``linear.py``); programs import them from here or name them by it."""
from .linear import Flatten, Unflatten  # noqa: F401

__all__ = ["Flatten", "Unflatten"]
