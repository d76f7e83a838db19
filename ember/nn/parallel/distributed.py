"""``DistributedDataParallel``: data parallelism over processes.

It needs the default process group (``torch.distributed.init_process_group``), which ember does
not have yet (see ``ember/distributed``): constructing one raises PyTorch's error for a missing
process group, so scripts guarded by ``dist.is_initialized()`` run single-process and
unguarded ones stop with the message PyTorch gives.
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
        if process_group is None and not dist.is_initialized():
            dist._require_default_group()
        raise NotImplementedError("DistributedDataParallel is not implemented in ember")
