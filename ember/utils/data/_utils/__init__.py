"""``torch.utils.data._utils``: the loader's helpers, at PyTorch's paths."""
from . import collate, pin_memory, worker

__all__ = ["collate", "pin_memory", "worker"]
