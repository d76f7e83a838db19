"""Collectives of Python objects: ``all_gather_object``, ``broadcast_object_list``,
``gather_object``, ``scatter_object_list``.

As PyTorch's: each object is pickled, the sizes travel first, then the bytes (padded to the
largest), by the tensor collectives (so the group's timeout holds), and the receivers
unpickle them. Unpickling runs code the sender chose: these are for the ranks of one job,
which run the same program, never for data from elsewhere (PyTorch's warning too).
"""
from __future__ import annotations

import pickle

import numpy as np

from .collectives import (
    _root,
    all_gather,
    all_gather_into_tensor,
    broadcast,
    gather,
    scatter,
    tensor_of,
)
from .process_group import group_or_default

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list"]


def _tensor(array):
    return tensor_of(np.ascontiguousarray(array))


def _pickled(obj):
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _padded(data, size):
    out = np.zeros(size, np.uint8)
    out[:data.size] = data
    return _tensor(out)


def _loads(buffer, size):
    return pickle.loads(buffer[:size].tobytes())  # (the job's own ranks: see the docstring)


def _all_sizes(pg, size):
    """Every rank's ``size``, in rank order."""
    sizes = [_tensor(np.zeros(1, np.int64)) for _ in range(pg.size())]
    all_gather(sizes, _tensor(np.array([size], np.int64)), group=pg)
    return [int(s._data[0]) for s in sizes]


def all_gather_object(object_list, obj, group=None):
    """Every rank's ``obj`` into ``object_list`` (of the group's size), on every rank."""
    pg = group_or_default(group)
    if len(object_list) < pg.size():  # (PyTorch's error, before anything is sent)
        raise IndexError("list assignment index out of range")
    data = _pickled(obj)
    sizes = _all_sizes(pg, data.size)
    most = max(sizes)
    out = _tensor(np.zeros(most * pg.size(), np.uint8))
    all_gather_into_tensor(out, _padded(data, most), group=pg)
    for k, size in enumerate(sizes):
        object_list[k] = _loads(out._data[k * most:], size)


def _root_of(pg, rank, group_rank, what, kind):
    """The root's group rank: ``rank`` (global) or ``group_rank``, else the group's first."""
    if rank is None and group_rank is None:
        rank = pg._ranks[0]
    return _root(pg, rank, group_rank, what, kind)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Rank ``src``'s ``object_list`` into every rank's (of the same length), in place."""
    pg = group_or_default(group)
    root = _root_of(pg, src, group_src, "broadcast_object_list", "src")
    mine = pg.rank() == root
    pickled = [_pickled(o) for o in object_list] if mine else []
    sizes = _tensor(np.array([p.size for p in pickled] if mine else [0] * len(object_list),
                             np.int64))
    broadcast(sizes, group=pg, group_src=root)
    data = _tensor(np.concatenate(pickled) if mine and pickled else
                   np.zeros(int(sizes._data.sum()), np.uint8))
    broadcast(data, group=pg, group_src=root)
    if not mine:
        start = 0
        for k, size in enumerate(sizes._data.tolist()):
            object_list[k] = _loads(data._data[start:], size)
            start += size


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into rank ``dst``'s ``object_gather_list``."""
    pg = group_or_default(group)
    root = _root_of(pg, dst, group_dst, "gather_object", "dst")
    data = _pickled(obj)
    sizes = _all_sizes(pg, data.size)
    most = max(sizes)
    parts = ([_tensor(np.zeros(most, np.uint8)) for _ in range(pg.size())]
             if object_gather_list is not None else None)
    gather(_padded(data, most), parts, group=pg, group_dst=root)
    if pg.rank() == root:
        for k, (part, size) in enumerate(zip(parts, sizes)):
            object_gather_list[k] = _loads(part._data, size)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank ``src``'s ``scatter_object_input_list[k]`` into rank k's
    ``scatter_object_output_list[0]``."""
    pg = group_or_default(group)
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    root = _root_of(pg, src, group_src, "scatter_object_list", "src")
    mine = pg.rank() == root
    pickled = [_pickled(o) for o in scatter_object_input_list] if mine else []
    most = _tensor(np.array([max(p.size for p in pickled) if pickled else 0], np.int64))
    broadcast(most, group=pg, group_src=root)
    most = int(most._data[0]) + 8  # (each part: its size, then its bytes)
    parts = [_padded(np.concatenate([np.array([p.size], np.int64).view(np.uint8), p]), most)
             for p in pickled]
    out = _tensor(np.zeros(most, np.uint8))
    scatter(out, parts if mine else None, group=pg, group_src=root)
    size = int(out._data[:8].view(np.int64)[0])
    scatter_object_output_list[0] = _loads(out._data[8:], size)
