"""``torch.utils.data.distributed``: ``DistributedSampler``, each process's share of a dataset."""
from __future__ import annotations

import itertools
import math

from ... import distributed as dist
from ..._creation import randperm
from ..._random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that process ``rank`` of ``num_replicas`` visits.

    The indices (shuffled by a generator seeded with ``seed + epoch``, or in order) are padded
    by repeating them from the start until every replica gets the same number, or, with
    ``drop_last=True``, cut to the largest multiple of ``num_replicas``; replica ``rank`` takes
    every ``num_replicas``-th index starting at ``rank``. Call ``set_epoch(epoch)`` before
    each epoch to get a different shuffle.

    ``num_replicas`` and ``rank`` default to the world size and rank of the default process
    group (PyTorch's ValueError where there is none). Where ember differs: ember's random
    numbers are not PyTorch's, so a shuffled order differs from PyTorch's for the same seed
    (the padding and the split of a given permutation are PyTorch's).

    Example:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()  # (PyTorch's error without a process group)
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        self.num_samples = n // num_replicas if drop_last else math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # repeat from the start (as often as needed) up to total_size
            indices += itertools.islice(itertools.cycle(indices), self.total_size - n)
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use ``seed + epoch`` for the next shuffles, so each epoch visits a new order that
        all replicas agree on."""
        self.epoch = epoch
