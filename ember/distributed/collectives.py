"""Collectives and point-to-point messages: ``all_reduce``, ``broadcast``, ``send``...

Each one is PyTorch's signature over MPI's non-blocking call of the same meaning
(``Iallreduce``, ``Ibcast``...). A blocking call waits for it, up to the group's ``timeout``:
a rank that never joins gives a ``RuntimeError`` that says so, not a hang. With
``async_op=True`` the call returns a ``Work`` whose ``wait()`` completes it. A tensor a
collective writes is written in place, its version counter raised (as any in-place write, so
that a tensor saved for backward and then overwritten is caught, never used silently), and
the arguments are checked before anything is sent: a bad call changes no tensor.
"""
from __future__ import annotations

import enum

import numpy as np

from .._autograd_state import note_write
from .._device import write_from_host
from .._tensor import Tensor
from . import _mpi
from .process_group import get_group_rank, group_or_default, timeout_of

__all__ = ["ReduceOp", "RedOpType", "Work", "all_reduce", "broadcast", "reduce", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
           "scatter", "barrier", "send", "recv", "isend", "irecv"]


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """How a reduction combines the ranks' tensors: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``,
    ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR`` (the last three on integers and bools)."""

    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = (RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT,
                                   RedOpType.MIN, RedOpType.MAX)
    BAND, BOR, BXOR, PREMUL_SUM = (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR,
                                   RedOpType.PREMUL_SUM)


class Work:
    """A collective started with ``async_op=True``: ``wait()`` completes it (the tensors it
    writes hold their results after), ``is_completed()`` asks without waiting."""

    def __init__(self, requests, finish, timeout, what, statuses=None):
        self._requests, self._finish = requests, finish
        self._timeout, self._what = timeout, what
        self._statuses = statuses  # (MPI fills them in as the requests complete)
        self._done = False

    def wait(self, timeout=None):
        if not self._done:
            _mpi.wait_all(self._requests, self._timeout if timeout is None
                          else timeout.total_seconds(), self._what, self._statuses)
            self._complete()
        return True

    def is_completed(self):
        if not self._done and _mpi.mpi().Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def _complete(self):
        self._done = True
        if self._finish is not None:
            self._finish()


def _run(pg, requests, finish, async_op, what):
    work = Work(requests, finish, timeout_of(pg), what)
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- arguments


def _tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    return t


def _op_name(op, dtype, what):
    """The name of ``op`` (a ``ReduceOp``) after PyTorch's checks for ``dtype``."""
    if not isinstance(op, RedOpType):
        raise TypeError(f"{what}(): incompatible function arguments: op must be a "
                        f"torch.distributed.ReduceOp, got {op!r}")
    if op in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        raise ValueError(f"{what} does not support {op!r} in ember (it is NCCL's)")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind not in "biu":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if dtype.kind == "c" and op in (RedOpType.MIN, RedOpType.MAX):
        raise ValueError(f"{what} does not support {op!r} on complex tensors")
    if op is RedOpType.AVG and dtype.kind in "biu":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_SCALAR_TYPES.get(dtype.name, dtype.name)}")
    return op.name


_SCALAR_TYPES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long"}  # (PyTorch's names, in its messages)


def _root(pg, rank, group_rank, what, kind="root"):
    """The group rank of a root given as a global ``rank`` or a ``group_rank``."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {kind} and group_{kind}")
    if group_rank is None:
        if rank is None:
            raise ValueError(f"{what}: a {kind} rank must be given")
        if rank not in pg._ranks:
            raise RuntimeError(f"{what}: invalid root rank: {rank}")
        return get_group_rank(pg, rank)
    if not 0 <= group_rank < pg.size():
        raise RuntimeError(f"{what}: invalid root rank: {group_rank}")
    return group_rank


def _same(tensors, like, what):
    """Each of ``tensors`` shaped and typed as ``like`` (PyTorch's message otherwise)."""
    for k, t in enumerate(tensors):
        _tensor(t, "tensor_list")
        if t.dtype != like.dtype:
            raise RuntimeError(f"{what}: invalid tensor type at index {k} (expected "
                               f"{like.dtype}, got {t.dtype})")
        if tuple(t.shape) != tuple(like.shape):
            raise RuntimeError(f"{what}: invalid tensor size at index {k} (expected "
                               f"{_sizes(like)}, got {_sizes(t)})")


def _sizes(t):
    return "(" + ", ".join(map(str, t.shape)) + ")"


def _write(tensor, values, what):
    """``values`` (NumPy) into ``tensor``'s storage (cast to its dtype; copied to its GPU for a
    CUDA tensor), its version raised."""
    data = tensor._data
    if values is not data:
        write_from_host(data, values.astype(data.dtype, copy=False).reshape(data.shape))
    note_write(tensor, what)


def tensor_of(array):
    """A tensor (no history) holding ``array``: the buffers that DDP and the object
    collectives send."""
    return Tensor._make(array, None, False)


# --------------------------------------------------------------------------- collectives


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group's ranks by ``op``; every rank gets the result."""
    _tensor(tensor)
    pg = group_or_default(group)
    name = _op_name(op, tensor._data.dtype, "all_reduce")
    MPI = _mpi.mpi()
    buf = _mpi.wire(tensor._data)  # (its own array where MPI can write it)
    request = pg._comm.Iallreduce(MPI.IN_PLACE, buf, op=_mpi.reduction(name, buf.dtype))

    return _run(pg, [request], lambda: _averaged_into(tensor, buf, name, pg, "all_reduce"),
                async_op, "all_reduce")


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group's ranks by ``op`` into rank ``dst``'s ``tensor``
    (the others' are left as they were)."""
    _tensor(tensor)
    pg = group_or_default(group)
    root = _root(pg, dst, group_dst, "reduce", "dst")
    name = _op_name(op, tensor._data.dtype, "reduce")
    MPI = _mpi.mpi()
    buf = _mpi.wire(tensor._data)  # (its own array where MPI can write it)
    mine = pg.rank() == root
    request = pg._comm.Ireduce(MPI.IN_PLACE if mine else buf, buf if mine else None,
                               op=_mpi.reduction(name, buf.dtype), root=root)

    finish = (lambda: _averaged_into(tensor, buf, name, pg, "reduce")) if mine else None
    return _run(pg, [request], finish, async_op, "reduce")


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    _tensor(tensor)
    pg = group_or_default(group)
    root = _root(pg, src, group_src, "broadcast", "src")
    buf = _mpi.wire(tensor._data)  # (its own array where MPI can write it)
    request = pg._comm.Ibcast(buf, root=root)

    def finish():
        if pg.rank() != root:
            _write(tensor, buf, "broadcast")
    return _run(pg, [request], finish, async_op, "broadcast")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    _tensor(tensor)
    pg = group_or_default(group)
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"all_gather: invalid output tensor list at index 0 (expected "
                           f"length {pg.size()}, got {len(tensor_list)})")
    _same(tensor_list, tensor, "all_gather")
    send = _mpi.wire(tensor._data)
    recv = np.empty((pg.size(), *send.shape), send.dtype)
    request = pg._comm.Iallgather(send, recv)

    def finish():
        for t, part in zip(tensor_list, recv):
            _write(t, part, "all_gather")
    return _run(pg, [request], finish, async_op, "all_gather")


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` into ``output_tensor``, concatenated along the first
    dim (or stacked: an output of shape ``(world_size, *input.shape)``), on every rank."""
    _tensor(output_tensor, "output_tensor"), _tensor(input_tensor, "input_tensor")
    pg = group_or_default(group)
    _sized(output_tensor, input_tensor, pg.size(), "all_gather_into_tensor")
    send = _mpi.wire(input_tensor._data)
    recv = np.empty((pg.size() * send.size,), send.dtype)
    request = pg._comm.Iallgather(send, recv)
    return _run(pg, [request], lambda: _write(output_tensor, recv, "all_gather_into_tensor"),
                async_op, "all_gather_into_tensor")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` reduced over the ranks by ``op``, the k-th of its ``world_size`` equal
    parts (along the first dim) into rank k's ``output``."""
    _tensor(output, "output"), _tensor(input, "input")
    pg = group_or_default(group)
    _sized(input, output, pg.size(), "reduce_scatter_tensor")
    name = _op_name(op, input._data.dtype, "reduce_scatter_tensor")
    return _scatter_reduced(pg, output, _mpi.wire(input._data), name, async_op,
                            "reduce_scatter_tensor")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``input_list[k]`` reduced over the ranks by ``op`` into rank k's ``output``."""
    _tensor(output, "output")
    pg = group_or_default(group)
    if len(input_list) != pg.size():
        raise RuntimeError(f"reduce_scatter: invalid input tensor list (expected length "
                           f"{pg.size()}, got {len(input_list)})")
    _same(input_list, output, "reduce_scatter")
    name = _op_name(op, output._data.dtype, "reduce_scatter")
    send = np.stack([_mpi.wire(t._data) for t in input_list])
    return _scatter_reduced(pg, output, send, name, async_op, "reduce_scatter")


def _scatter_reduced(pg, output, send, name, async_op, what):
    """The ranks' ``send`` buffers reduced, rank k's ``output`` the k-th of equal parts."""
    recv = np.empty(output._data.size, send.dtype)
    request = pg._comm.Ireduce_scatter_block(send, recv, op=_mpi.reduction(name, send.dtype))
    return _run(pg, [request], lambda: _averaged_into(output, recv, name, pg, what), async_op,
                what)


def _averaged_into(tensor, buf, name, pg, what):
    """``buf``, a reduction's result, into ``tensor``: divided by the group's size for AVG."""
    if name == "AVG":
        np.divide(buf, pg.size(), out=buf)
    _write(tensor, buf, what)


def _sized(whole, part, n, what):
    """``whole`` holds ``n`` times ``part``'s elements, of ``part``'s dtype."""
    if whole.dtype != part.dtype:
        raise RuntimeError(f"{what}: the tensors must have one dtype, got {whole.dtype} and "
                           f"{part.dtype}")
    if whole._data.size != n * part._data.size:
        raise RuntimeError(f"{what}: the larger tensor must have world_size ({n}) times the "
                           f"other's elements, got shapes {_sizes(whole)} and {_sizes(part)}")


def _root_and_list(pg, rank, group_rank, tensors, like, what):
    """``(root's group rank, whether this rank is it)`` for ``gather`` and ``scatter``, after
    PyTorch's checks of the list that only the root gives."""
    kind, side, noun = (("dst", "destination", "output") if what == "gather" else
                        ("src", "source", "input"))
    root = _root(pg, rank if rank is not None or group_rank is not None else 0, group_rank,
                 what, kind)
    mine = pg.rank() == root
    if mine and not tensors:
        raise ValueError(f"Argument ``{what}_list`` must be specified on {side} rank.")
    if not mine and tensors:
        raise ValueError(f"Argument ``{what}_list`` must NOT be specified on non-{side} ranks.")
    if mine:
        if len(tensors) != pg.size():
            raise RuntimeError(f"{what}: invalid {noun} tensor list (expected length "
                               f"{pg.size()}, got {len(tensors)})")
        _same(tensors, like, what)
    return root, mine


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into rank ``dst``'s ``gather_list``."""
    _tensor(tensor)
    pg = group_or_default(group)
    root, mine = _root_and_list(pg, dst, group_dst, gather_list, tensor, "gather")
    send = _mpi.wire(tensor._data)
    recv = np.empty((pg.size(), *send.shape), send.dtype) if mine else None
    request = pg._comm.Igather(send, recv, root=root)

    def finish():
        if mine:
            for t, part in zip(gather_list, recv):
                _write(t, part, "gather")
    return _run(pg, [request], finish, async_op, "gather")


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``scatter_list[k]`` into rank k's ``tensor``."""
    _tensor(tensor)
    pg = group_or_default(group)
    root, mine = _root_and_list(pg, src, group_src, scatter_list, tensor, "scatter")
    recv = _mpi.wire(tensor._data).copy()
    send = np.stack([_mpi.wire(t._data) for t in scatter_list]) if mine else None
    request = pg._comm.Iscatter(send, recv, root=root)
    return _run(pg, [request], lambda: _write(tensor, recv, "scatter"), async_op, "scatter")


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached it."""
    pg = group_or_default(group)
    request = pg._comm.Ibarrier()
    work = Work([request], None, timeout_of(pg, timeout), "barrier")
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- point to point


def _peer(pg, rank, group_rank, what, kind):
    peer = _root(pg, rank, group_rank, what, kind)
    if peer == pg.rank():
        noun = "destination" if kind == "dst" else "source"
        raise ValueError(f"Invalid {noun} rank: {noun} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without waiting; ``wait()`` on the ``Work``."""
    _tensor(tensor)
    pg = group_or_default(group)
    peer = _peer(pg, dst, group_dst, "send", "dst")
    buf = _mpi.wire(tensor._data).copy()  # (the message: later writes to tensor don't change it)
    return Work([pg._comm.Isend(buf, dest=peer, tag=tag)], None, timeout_of(pg), "send")


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (returns once it is on its way)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank for None) without waiting."""
    return _receive(tensor, src, group, tag, group_src)[0]


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank for None); returns the sender's
    rank."""
    work, status = _receive(tensor, src, group, tag, group_src)
    work.wait()
    return status.Get_source() if src is None and group_src is None else (
        src if src is not None else group_src)


def _receive(tensor, src, group, tag, group_src):
    _tensor(tensor)
    pg = group_or_default(group)
    MPI = _mpi.mpi()
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "recv", "src")
    buf = _mpi.wire(tensor._data).copy()
    status = MPI.Status()
    request = pg._comm.Irecv(buf, source=peer, tag=tag)
    return Work([request], lambda: _write(tensor, buf, "recv"), timeout_of(pg), "recv",
                [status]), status
