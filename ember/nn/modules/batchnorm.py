"""``torch.nn.modules.batchnorm``: PyTorch's path for the BatchNorm layers (ember defines them
in ``normalization.py``); programs import them from here or name them by it."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
