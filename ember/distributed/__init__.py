"""``torch.distributed``, as far as ember has it: not at all yet.

``is_available()`` is False, as in a PyTorch built without distributed support, and
``is_initialized()`` is False (no process group can exist), so the usual guards
(``if dist.is_available() and dist.is_initialized(): ...``) take the single-process branch.
Scripts that import the process-group API at the top (nanoGPT's ``from torch.distributed import
init_process_group, destroy_process_group``) import: ``init_process_group`` raises a clear
NotImplementedError, and the functions that need a default group raise what PyTorch raises
when there is none. Any other name raises an AttributeError that says ember lacks it.
"""
from __future__ import annotations

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "barrier", "all_reduce", "broadcast", "all_gather",
           "reduce"]

# What PyTorch raises when something needs the default process group and there is none.
_NO_DEFAULT_GROUP = ("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")


def is_available():
    """Whether the distributed package is usable: never, in ember (yet)."""
    return False


def is_initialized():
    """Whether the default process group exists: never, in ember (there is no
    ``init_process_group``)."""
    return False


def _require_default_group():
    """Raise PyTorch's error for code that needs the default process group (ember never has
    one)."""
    raise ValueError(_NO_DEFAULT_GROUP)


def init_process_group(*args, **kwargs):
    """Not in ember yet: multi-process training needs torch.distributed's backends."""
    raise NotImplementedError("ember does not implement torch.distributed yet: "
                              "init_process_group cannot start a process group")


def destroy_process_group(group=None):
    """PyTorch's error when there is no process group to destroy (ember never has one)."""
    raise AssertionError("Process group cannot be None")


def get_rank(group=None):
    _require_default_group()


def get_world_size(group=None):
    _require_default_group()


def barrier(group=None, async_op=False, device_ids=None):
    _require_default_group()


def all_reduce(tensor, op=None, group=None, async_op=False):
    _require_default_group()


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _require_default_group()


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _require_default_group()


def reduce(tensor, dst=None, op=None, group=None, async_op=False, group_dst=None):
    _require_default_group()


def __getattr__(name):
    raise AttributeError(f"module 'torch.distributed' has no attribute {name!r}: ember does not "
                         "implement torch.distributed yet (torch.distributed.is_available() is "
                         "False)")
