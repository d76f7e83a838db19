"""``DistributedDataParallel``: one model per rank, gradients averaged as backward runs.

At construction every rank takes rank 0's parameters and buffers (a broadcast), so the
replicas start equal; each rank then runs its own forward and backward on its share of the
batch. The parameters are split into *buckets* (in the reverse of ``parameters()``' order,
roughly the order backward produces their gradients; the first bucket 1 MiB, the others
``bucket_cap_mb``, 25 MiB by default): as soon as every gradient of a bucket has been
accumulated (a post-accumulate-grad hook on each parameter), the bucket's gradients are
flattened into one buffer and a non-blocking all-reduce of it starts, so that the
communication of the last layers' gradients overlaps the backward of the first. Buckets
start strictly in order, the same on every rank (MPI matches collectives by order). When the
backward has run every node (a final callback, ``queue_callback``), the buckets are awaited
and each ``.grad`` becomes the average over the ranks: with every rank's update the same,
the replicas stay equal.

``no_sync()`` skips the averaging (gradients accumulate locally, averaged at the next
synchronised backward). ``find_unused_parameters=True`` lets a forward leave parameters out:
their part of a bucket counts as zero, and a parameter no rank used keeps ``.grad`` None;
without it, a parameter left out stops the next forward with PyTorch's error.
``broadcast_buffers`` (the default) copies rank 0's buffers (BatchNorm's running statistics)
before each forward. ``.module`` is the model; ``state_dict`` keys start with ``module.``.
A model on a GPU (``device_ids=[i]``) has its buckets copied to the host for MPI and the
averages copied back (MPI here reads host memory, as Gloo does).
"""
from __future__ import annotations

import contextlib

import numpy as np

from ... import _device
from ... import distributed as dist
from ..._device import move, to_numpy, write_from_host
from ...autograd.graph import execution_engine
from ...distributed.collectives import tensor_of
from ...distributed.process_group import group_or_default
from ..module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES
_BUCKET_MB = 25
_UNUSED = ("Expected to have finished reduction in the prior iteration before starting a new "
           "one. This error indicates that your module has parameters that were not used in "
           "producing loss. You can enable unused parameter detection by passing the keyword "
           "argument `find_unused_parameters=True` to `torch.nn.parallel."
           "DistributedDataParallel`, and by making sure all `forward` function outputs "
           "participate in calculating loss.")


class DistributedDataParallel(Module):
    """``module`` replicated on every rank of ``process_group`` (the default group), its
    gradients averaged over the ranks during backward (see the module docstring)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        pg = group_or_default(process_group)  # (PyTorch's error without a process group)
        devices = {p.device for p in module.parameters()}
        on_one_gpu = len(devices) == 1 and next(iter(devices)).type == "cuda"
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if (device_ids is not None or output_device is not None) and not (
                on_one_gpu or _device.CUDA_ON_CPU):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{devices}.")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.process_group = pg
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self._params = params
        self._buckets = _buckets(params, self.bucket_bytes_cap)
        self._round = None  # the backward being synchronised: see ``_Round``
        self._unfinished = False
        if init_sync:
            self._broadcast([*module.parameters(), *module.buffers()])
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    # ------------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        if self._unfinished:
            raise RuntimeError(_UNUSED)
        if self.broadcast_buffers and self.training:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards inside accumulate gradients on each rank without averaging them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _broadcast(self, tensors):
        """Rank 0's values of ``tensors`` on every rank (one message per dtype)."""
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for group in by_dtype.values():
            flat = tensor_of(np.concatenate([to_numpy(t._data).reshape(-1) for t in group]))
            dist.broadcast(flat, src=self.process_group._ranks[0], group=self.process_group)
            start = 0
            for t in group:
                write_from_host(t._data, flat._data[start:start + t._data.size].reshape(
                    t._data.shape))
                start += t._data.size

    # ------------------------------------------------------------------ backward
    def _grad_ready(self, param):
        """A post-accumulate-grad hook: ``param.grad`` is complete for this backward."""
        if not self.require_backward_grad_sync:
            return
        if self._round is None:
            self._round = _Round(self)
            execution_engine.queue_callback(self._finish)
        self._round.ready(param)

    def _finish(self):
        """The end of a backward: every bucket averaged into the ``.grad`` tensors."""
        round_, self._round = self._round, None
        if round_ is not None:
            self._unfinished = round_.finish()


def _buckets(params, cap):
    """``params`` in reverse order, cut into buckets of at most ``cap`` bytes (the first of
    at most 1 MiB), a parameter never split; a new bucket for each dtype."""
    buckets, current, size, limit = [], [], 0, min(_FIRST_BUCKET_BYTES, cap)
    for p in reversed(params):
        nbytes = p._data.nbytes
        if current and (size + nbytes > limit or p._data.dtype != current[0]._data.dtype):
            buckets.append(current)
            current, size, limit = [], 0, cap
        current.append(p)
        size += nbytes
    if current:
        buckets.append(current)
    return buckets


class _Round:
    """One synchronised backward of ``ddp``: which parameters are ready, the buckets whose
    all-reduce has started (in order), and their ``Work`` handles."""

    def __init__(self, ddp):
        self.ddp = ddp
        self.index = {id(p): k for k, bucket in enumerate(ddp._buckets) for p in bucket}
        self.missing = [len(bucket) for bucket in ddp._buckets]
        self.used = set()
        self.started = []  # (bucket, flat buffer tensor, work)

    def ready(self, param):
        if id(param) in self.used:
            return
        self.used.add(id(param))
        self.missing[self.index[id(param)]] -= 1
        while len(self.started) < len(self.missing) and not self.missing[len(self.started)]:
            self._start(len(self.started))
        for _, _, work in self.started:  # (MPI advances a message when asked about it)
            work.is_completed()

    def _start(self, k):
        bucket = self.ddp._buckets[k]
        flat = np.concatenate([to_numpy(p.grad._data).reshape(-1) if p.grad is not None else
                               np.zeros(p._data.size, p._data.dtype) for p in bucket])
        flat = tensor_of(flat)
        work = dist.all_reduce(flat, group=self.ddp.process_group, async_op=True)
        self.started.append((bucket, flat, work))

    def finish(self):
        """Wait for every bucket and write the averages; whether a parameter was left out
        without ``find_unused_parameters`` (the next forward raises)."""
        ddp = self.ddp
        unused = any(self.missing)
        if unused and not ddp.find_unused_parameters:
            for _, _, work in self.started:
                work.wait()
            return True
        used_anywhere = None
        if ddp.find_unused_parameters:
            for k in range(len(self.started), len(ddp._buckets)):
                self._start(k)
            counts = tensor_of(np.array([id(p) in self.used for p in ddp._params],
                                                     np.int32))
            dist.all_reduce(counts, group=ddp.process_group)
            used_anywhere = {id(p) for p, n in zip(ddp._params, counts._data) if n}
        n = ddp.process_group.size()
        for bucket, flat, work in self.started:
            work.wait()
            average = flat._data / n if flat._data.dtype.kind in "fc" else flat._data // n
            start = 0
            for p in bucket:
                part = average[start:start + p._data.size].reshape(p._data.shape)
                start += p._data.size
                if used_anywhere is not None and id(p) not in used_anywhere:
                    continue
                if p.grad is None:
                    p.grad = tensor_of(move(part.astype(p._data.dtype), p.device))
                else:
                    write_from_host(p.grad._data, part)
        return False
