"""``torch.nn.modules.instancenorm``: PyTorch's path for the InstanceNorm layers (ember defines
them in ``normalization.py``); programs import them from here or name them by it."""
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
