"""``torch.nn.modules.batchnorm``: ember defines the batch norms with the other normalization
layers, in ``normalization.py``."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
