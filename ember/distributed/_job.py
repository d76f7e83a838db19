"""How a rank ends when its script fails, and what the others then say.

- A rank whose script ends in an exception exits at once after its traceback, without MPI's
  finalisation (which would wait for the other ranks, themselves waiting for it in their next
  collective until their timeout): the process manager then ends the job, as torchrun stops
  its workers when one fails.
- The ranks of one machine exchange their process ids when the default group is made. When a
  rank dies (its script raised, or a signal killed it), MPICH's single-machine process manager,
  which the launcher uses, interrupts the others (``SIGINT``). In a rank whose Ctrl-C handling
  is Python's own, the interrupt raises ``DistBackendError: rank N (process P) has exited`` (a
  ``RuntimeError``) where a peer has exited, and ``KeyboardInterrupt`` as usual where none
  has (the user's Ctrl-C).
  (``mpiexec``, MPICH's other process manager, kills the others instead, with its report.)
"""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading

from ._errors import DistBackendError

__all__ = ["exited", "interrupted", "watch"]

interrupted = False
"""Whether the launcher interrupted this rank because another had exited (the error raised
then, ``DistBackendError``, is that one)."""

_peers = {}  # {rank: process id} of the job's other ranks on this machine
_installed = []  # (once per process: a group made again after destroy_process_group)


def watch(comm):
    """For a job of several ranks (every rank calls it, on ``comm``): end this rank at once
    on an unhandled exception, and take ``SIGINT`` where Python's default handler has it."""
    me = comm.Get_rank()
    here = (socket.gethostname(), _boot_id())
    _peers.clear()
    _peers.update({r: pid for r, (host, pid) in enumerate(comm.allgather((here, os.getpid())))
                   if host == here and r != me})
    if not _installed:
        _installed.append(True)
        _install(me)


def _install(me):
    """The exception hook that ends this rank, and the ``SIGINT`` handler that names the
    rank that exited."""
    previous = sys.excepthook

    def end(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stderr.write(f"[rank {me}] {kind.__name__}: this rank stops, and the job with it\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    sys.excepthook = end
    if (os.name != "posix" or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        return

    def on_interrupt(signum, frame):
        global interrupted
        gone = [f"rank {rank} (process {pid})" for rank, pid in sorted(_peers.items())
                if exited(pid)]
        if not gone:
            raise KeyboardInterrupt
        interrupted = True
        verb = "has" if len(gone) == 1 else "have"
        raise DistBackendError(f"{', '.join(gone)} {verb} exited: the job stops (rank {me} was "
                               "interrupted by the launcher)")

    signal.signal(signal.SIGINT, on_interrupt)


def _boot_id():
    """This machine's boot: two containers of one host, or two hosts of one name, differ."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def exited(pid):
    """Whether the process ``pid`` of this machine has exited (or is a zombie: killed, not
    yet collected by its parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return False
