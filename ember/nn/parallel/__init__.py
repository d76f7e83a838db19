"""``torch.nn.parallel``: ``DataParallel`` (one process, several devices) and
``DistributedDataParallel`` (several processes)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
