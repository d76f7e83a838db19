"""``torch.distributed``: process groups and collectives, on MPI.

Start the ranks with ``python -m ember.distributed.run --nproc-per-node N script.py`` or
``mpiexec -n N python script.py``; each calls ``init_process_group()`` (any backend name
PyTorch users pass on a CPU: ``gloo``, ``mpi``) and then the collectives: ``all_reduce``
(every ``ReduceOp``), ``reduce``, ``broadcast``, ``all_gather``, ``all_gather_into_tensor``,
``reduce_scatter_tensor``, ``gather``, ``scatter``, ``barrier``, ``send``/``recv``/``isend``/
``irecv``, blocking or with ``async_op=True``, and their Python-object forms
(``all_gather_object``...); ``new_group`` makes a group of some ranks.
MPI (mpi4py and MPICH, ``pip install 'ember[distributed]'``) carries the messages
(``_mpi.py``); it is started by ``init_process_group``, not by ``import ember``.

``is_available()`` says whether mpi4py is installed. Without a process group, the usual
guards (``if dist.is_available() and dist.is_initialized(): ...``) take the single-process
branch, and what needs the default group raises PyTorch's error.
"""
from __future__ import annotations

from . import _mpi
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from .collectives import (
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_default_backend_for_device,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)

__all__ = ["is_available", "init_process_group", "destroy_process_group", "is_initialized",
           "get_rank", "get_world_size", "get_backend", "new_group", "group", "GroupMember",
           "ProcessGroup", "Backend", "ReduceOp", "Work", "all_reduce", "reduce", "broadcast",
           "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "gather",
           "scatter", "barrier", "send", "recv", "isend", "irecv", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "reduce_scatter",
           "get_default_backend_for_device", "all_gather_object", "broadcast_object_list",
           "gather_object", "scatter_object_list", "DistError", "DistBackendError",
           "DistNetworkError", "DistStoreError"]


def is_available():
    """Whether ember's distributed package can run: MPI's Python binding is installed."""
    return _mpi.available()


def __getattr__(name):
    raise AttributeError(f"module 'torch.distributed' has no attribute {name!r}: ember's "
                         "torch.distributed does not have it yet")
