"""``torch.distributed``'s exception classes (``DistError`` and its kinds), named as PyTorch's
so that ``except dist.DistBackendError`` catches ember's too."""
from __future__ import annotations

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """An error in the distributed package."""


class DistBackendError(DistError):
    """The backend failed: here, another rank of the job has exited."""


class DistNetworkError(DistError):
    """A network error."""


class DistStoreError(DistError):
    """An error in the key-value store."""


for _cls in (DistError, DistBackendError, DistNetworkError, DistStoreError):
    _cls.__module__ = "ember.distributed"  # (where users name them, as torch.distributed's)
