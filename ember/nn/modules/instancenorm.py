"""``torch.nn.modules.instancenorm``: ember defines the instance norms with the other
normalization layers, in ``normalization.py``."""
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
