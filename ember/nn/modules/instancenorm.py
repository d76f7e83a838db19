"""``torch.nn.modules.instancenorm``: ember defines the instance norms with the other
normalization layers, in ``normalization.py``."""
from .normalization import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    _InstanceNorm,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
