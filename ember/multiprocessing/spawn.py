"""``torch.multiprocessing.spawn``: run ``fn(i, *args)`` in ``nprocs`` new processes.

When a child raises, the parent's ``join`` raises ``ProcessRaisedException`` carrying the
child's traceback; when a child exits with a non-zero code, ``ProcessExitedException``. The
other children are then terminated, as in PyTorch.
"""
import multiprocessing
import signal
import sys
import traceback

from ..distributed import _mpi
from . import _mpi_spawn

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message ends with its traceback."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg, error_index, error_pid)

    @classmethod
    def of(cls, error_index, pid, trace):
        """PyTorch's exception for process ``error_index`` that raised with ``trace``."""
        return cls(f"\n\n-- Process {error_index} terminated with the following error:\n{trace}",
                   error_index, pid)


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (or was killed by a signal)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    @classmethod
    def of(cls, error_index, pid, exit_code):
        """PyTorch's exception for process ``error_index`` that ended with ``exit_code``
        (negative: killed by that signal; None: unknown, the process went silent)."""
        if exit_code is None:
            return cls(f"process {error_index} terminated without a word (killed by a "
                       "signal?)", error_index, pid, None)
        if exit_code < 0:
            name = signal.Signals(-exit_code).name
            return cls(f"process {error_index} terminated with signal {name}", error_index, pid,
                       exit_code, name)
        return cls(f"process {error_index} terminated with exit code {exit_code}", error_index,
                   pid, exit_code)

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _run(fn, i, args, error_queue):
    """The child's body: ``fn(i, *args)``, reporting an exception's traceback to the parent."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is shutting down
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes ``spawn(join=False)`` started, and their error queues."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes; True when all have exited cleanly, False while some still
        run (after ``timeout`` seconds); raises when one failed (the others are terminated)."""
        from multiprocessing.connection import wait  # (slow to import: only when needed)
        running = {p.sentinel: p for p in self.processes if p.exitcode is None}
        if running:
            for sentinel in wait(list(running), timeout=timeout):
                running[sentinel].join()  # it has ended: reap it so its exit code is set
        failed = next((i for i, p in enumerate(self.processes)
                       if p.exitcode not in (None, 0)), None)
        if failed is None:
            if any(p.exitcode is None for p in self.processes):
                return False
            for p in self.processes:
                p.join()
            return True
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        process = self.processes[failed]
        queue = self.error_queues[failed]
        if queue.empty():
            raise ProcessExitedException.of(failed, process.pid, process.exitcode)
        raise ProcessRaisedException.of(failed, process.pid, queue.get())


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with the given start method. With
    ``spawn`` and MPI installed (``ember[distributed]``), the processes are started by MPI, as
    one job: in them ``init_process_group(rank=i, world_size=nprocs)`` makes the group (see
    ``_mpi_spawn``)."""
    if start_method == "spawn" and _mpi.available():
        return _mpi_spawn.start(fn, args, nprocs, join, sys.modules[__name__])
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = ctx.SimpleQueue()
        process = ctx.Process(target=_run, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes``, by default with the ``spawn`` start method."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
