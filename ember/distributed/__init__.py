"""``torch.distributed``, as far as ember has it: not at all yet.

``is_available()`` is False, as in a PyTorch built without distributed support, and
``is_initialized()`` is False (no process group can exist), so the usual guards
(``if dist.is_available() and dist.is_initialized(): ...``) take the single-process branch.
Any other name raises an AttributeError that says so.
"""
from __future__ import annotations

__all__ = ["is_available", "is_initialized"]

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


def __getattr__(name):
    raise AttributeError(f"module 'torch.distributed' has no attribute {name!r}: ember does not "
                         "implement torch.distributed yet (torch.distributed.is_available() is "
                         "False)")
