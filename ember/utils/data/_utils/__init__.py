"""``torch.utils.data._utils``: the loader's helpers, at PyTorch's paths."""
from . import collate, worker

__all__ = ["collate", "worker"]
