"""``DistributedDataParallel``: data parallelism over processes.

Not in ember yet (its process groups and collectives are: ``ember/distributed``):
constructing one without a process group raises PyTorch's error for a missing one, so scripts
guarded by ``dist.is_initialized()`` run single-process; with a group it raises
NotImplementedError.
"""
from __future__ import annotations

from ... import distributed as dist
from ..module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Synchronises gradients of ``module`` across processes (not available in ember)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        if process_group is None:
            dist.get_world_size()  # (PyTorch's error without a process group)
        raise NotImplementedError("DistributedDataParallel is not implemented in ember yet "
                                  "(torch.distributed's process groups and collectives are)")
