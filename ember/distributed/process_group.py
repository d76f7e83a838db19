"""Process groups: ``init_process_group``, ``new_group``, ``get_rank``... on MPI.

A job is the processes ``mpiexec`` started (directly, or under ``python -m
ember.distributed.run``); their ``MPI.COMM_WORLD`` is the default group. A torchrun-style
environment (``RANK``, ``WORLD_SIZE``) is checked against it: ember cannot join processes
that MPI did not start together, and says so instead of waiting for ranks that never come.
Backend names PyTorch users pass on a CPU (``gloo``, ``mpi``, ``cpu:gloo``) all mean MPI;
``nccl`` fails as it does on a machine without GPUs.
"""
from __future__ import annotations

import datetime
import os

from .. import _device
from . import _job, _mpi

__all__ = ["Backend", "GroupMember", "ProcessGroup", "group", "init_process_group",
           "destroy_process_group", "is_initialized", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "get_rank", "get_world_size", "get_backend", "new_group",
           "default_group", "group_or_default", "timeout_of", "get_process_group_ranks",
           "get_global_rank", "get_group_rank", "get_default_backend_for_device"]

_NO_DEFAULT_GROUP = ("Default process group has not been initialized, please make sure to call "
                     "init_process_group.")
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # PyTorch's default for CPU backends


class Backend(str):
    """A backend's name, lower-cased (``Backend("GLOO") == "gloo"``), as PyTorch's."""

    GLOO, MPI, NCCL, UNDEFINED = "gloo", "mpi", "nccl", "undefined"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got "
                             f"{type(name)}")
        return super().__new__(cls, name.lower())


_CPU_BACKENDS = ("gloo", "mpi", "cpu:gloo", "cpu:mpi", "gloo|mpi")


class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator and the global
    ranks of its members, in group-rank order."""

    def __init__(self, comm, ranks, backend, timeout):
        self._comm = comm
        self._ranks = tuple(ranks)
        self._backend = backend
        self._timeout = timeout

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup ranks={list(self._ranks)}>"


class GroupMember:
    """``GroupMember.WORLD`` (the default group once there is one) and ``NON_GROUP_MEMBER``
    (what ``new_group`` gives a rank outside the group)."""

    WORLD = None
    NON_GROUP_MEMBER = -100


class _Group:
    """``torch.distributed.group``: ``group.WORLD``."""

    @property
    def WORLD(self):  # noqa: N802 (PyTorch's name)
        return GroupMember.WORLD


group = _Group()


def is_mpi_available():
    return _mpi.available()


def is_gloo_available():
    """Whether ``backend="gloo"`` works: it is carried by MPI in ember."""
    return _mpi.available()


def is_nccl_available():
    return False


def get_default_backend_for_device(device):
    """The backend PyTorch picks for ``device``'s type: ``gloo`` for the CPU (MPI here)."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    kind = kind.split(":")[0]
    backends = {"cpu": "gloo", "cuda": "nccl"}
    if kind not in backends:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return backends[kind]


def is_initialized():
    """Whether the default process group exists."""
    return GroupMember.WORLD is not None


def default_group():
    """The default group, or PyTorch's error when there is none."""
    if GroupMember.WORLD is None:
        raise ValueError(_NO_DEFAULT_GROUP)
    return GroupMember.WORLD


def group_or_default(pg):
    """``pg``, or the default group for None."""
    return default_group() if pg is None else pg


def timeout_of(pg, timeout=None):
    """Seconds a collective on ``pg`` may take (``timeout``: a ``timedelta`` overriding it)."""
    t = pg._timeout if timeout is None else timeout
    return t.total_seconds() if t is not None else None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Make the default process group: every process ``mpiexec`` started in this job.
    ``world_size`` and ``rank`` (or ``WORLD_SIZE``/``RANK`` in the environment, as
    ``env://`` reads them), where given, must be MPI's."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    MPI = _mpi.mpi()
    comm = MPI.COMM_WORLD
    size, me = comm.Get_size(), comm.Get_rank()
    want_size = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", size))
    want_rank = rank if rank != -1 else int(os.environ.get("RANK", me))
    if (want_size, want_rank) != (size, me):
        raise RuntimeError(
            f"ember's process groups run on MPI, which started {size} process(es) (this one "
            f"rank {me}), but world_size={want_size}, rank={want_rank} were asked for: start "
            "the ranks with `python -m ember.distributed.run --nproc-per-node N script.py` "
            "or `mpiexec -n N python script.py`")
    pg = ProcessGroup(comm.Dup(), range(size), name, timeout or _DEFAULT_TIMEOUT)
    GroupMember.WORLD = pg
    if size > 1:
        _job.watch(comm)


def _backend_name(backend):
    if backend is None:
        return Backend.MPI
    name = Backend(backend)
    if (name == "nccl" or "cuda:nccl" in name) and _device.CUDA_ON_CPU:
        return "nccl"  # (--cuda-on-cpu: the script's GPUs are the CPU, NCCL is MPI)
    if name == "nccl" or "cuda:nccl" in name:
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    if name not in _CPU_BACKENDS and not name.startswith("cpu:"):
        raise AssertionError(f"Unknown backend type {backend}")
    return name.split(":")[-1].split("|")[0]


def destroy_process_group(group=None):
    """Forget ``group`` (the default one, and every group with it, for None)."""
    pg = GroupMember.WORLD if group is None else group
    if pg is None:
        raise AssertionError("Process group cannot be None")
    if pg is GroupMember.WORLD:
        GroupMember.WORLD = None
    pg._comm.Free()


def get_rank(group=None):
    """This process's rank in ``group`` (the default group for None); -1 outside it."""
    pg = group_or_default(group)
    if pg == GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.rank()


def get_world_size(group=None):
    pg = group_or_default(group)
    if pg == GroupMember.NON_GROUP_MEMBER:
        return -1
    return pg.size()


def get_backend(group=None):
    return group_or_default(group)._backend


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of the global ``ranks`` (every rank for None). Every rank of the default
    group must call it, in the same order; a rank outside ``ranks`` gets
    ``GroupMember.NON_GROUP_MEMBER``."""
    world = default_group()
    size = world.size()
    ranks = list(range(size)) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > size:
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    for r in ranks:
        if r < 0 or r >= size:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    comm = world._comm.Create_group(world._comm.Get_group().Incl(ranks))
    if comm == _mpi.mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    name = world._backend if backend is None else _backend_name(backend)
    return ProcessGroup(comm, ranks, name, timeout or world._timeout)


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(group_or_default(group)._ranks)


def get_global_rank(group, group_rank):
    ranks = group_or_default(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    ranks = group_or_default(group)._ranks
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)
