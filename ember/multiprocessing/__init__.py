"""``torch.multiprocessing``: Python's ``multiprocessing``, plus ``spawn``.

Everything in the standard module is here under the same names (``Process``, ``Queue``,
``Pool``, ``get_context``, ``set_start_method``, ``cpu_count``, ...), as in PyTorch.
Differences from PyTorch: ember tensors sent to another process (through a ``Queue``, or as
``spawn``'s arguments) arrive as copies, not as handles to shared memory; a tensor's
``share_memory_()`` is seen by processes *forked* after it (see ``ember._shared_memory``).
"""
import multiprocessing
from multiprocessing import *  # noqa: F403  (the standard API, re-exported as PyTorch does)

from .spawn import (
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    spawn,
    start_processes,
)

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException", "get_sharing_strategy",
           "set_sharing_strategy", "get_all_sharing_strategies", "multiprocessing",
           *multiprocessing.__all__]

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def get_all_sharing_strategies():
    """PyTorch's ways of passing shared tensors; ember passes copies (the setting is kept)."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy[0]


def set_sharing_strategy(new_strategy):
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_STRATEGIES}")
    _strategy[0] = new_strategy
