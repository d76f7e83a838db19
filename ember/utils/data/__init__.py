"""``torch.utils.data``: datasets, samplers, ``DataLoader`` and ``default_collate``, in
PyTorch's submodules (``dataset``, ``sampler``, ``dataloader``, ``_utils.collate``)."""
from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "DataLoader",
           "default_collate", "default_convert", "random_split", "get_worker_info",
           "ChainDataset", "StackDataset", "SubsetRandomSampler", "WeightedRandomSampler",
           "DistributedSampler"]
