"""``torch.multiprocessing.spawn`` when MPI is installed: the children are one MPI job.

PyTorch's distributed tutorials start their ranks with ``mp.spawn(fn, nprocs=N)``, and each
child joins the group with ``init_process_group("gloo", rank=i, world_size=N)``. MPI cannot
join processes it did not start together (and MPICH 5.0's connect/accept between processes
started apart is broken: pmodels/mpich#7805), so with ``ember[distributed]`` installed the
children are started by ``mpiexec``, as the launcher starts ranks: their ``COMM_WORLD`` is the
group, child ``i`` its rank ``i``. The parent stays outside the MPI job (a rank that dies cannot
take it down), and talks to each child over a private Unix socket: it sends the function and
its arguments (pickled; the child first takes the parent's ``sys.path``, ``sys.argv`` and
directory and imports its main script as ``__mp_main__``, as multiprocessing's spawn does),
and hears how the child ended: returned, raised (the traceback), exited (the code), or went
silent (its socket closed without a word: a signal). ``child()`` is the children's side.
"""
from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from multiprocessing.spawn import import_main_path

from .. import _torch_alias
from ..distributed import _job
from ..distributed._mpi import find_mpiexec, rank_from_environment

__all__ = ["MPIProcessContext", "child", "start"]

_CHILD = "from ember.multiprocessing._mpi_spawn import child; child()"
_ADDRESS = "EMBER_SPAWN_ADDRESS"
_SETTLE = 1.0  # seconds to hear the other children after the first failure (to name its cause)


def start(fn, args, nprocs, join, exceptions):
    """Start ``nprocs`` children running ``fn(i, *args)``: their context, or None once they
    have all returned (``exceptions``: the spawn module, for its exception classes)."""
    payload = pickle.dumps((fn, args))  # (an unpicklable fn fails here, in the parent)
    folder = tempfile.mkdtemp(prefix="ember-spawn-")  # (0700: this user's processes only)
    address = os.path.join(folder, "socket")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(nprocs)
    process = subprocess.Popen([find_mpiexec(), "-n", str(nprocs), sys.executable, "-c", _CHILD],
                               env={**os.environ, _ADDRESS: address})
    try:
        children = _accept(server, process, nprocs)
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)
    main = sys.modules.get("__main__")
    setup = (getattr(main, "__file__", None), sys.path, sys.argv, os.getcwd(),
             _torch_alias.installed(), payload)
    for sock, _ in children:
        _send(sock, setup)
    context = MPIProcessContext(process, children, exceptions)
    if not join:
        return context
    while not context.join():
        pass
    return None


def _accept(server, process, n):
    """The ``n`` children's sockets in rank order, with their process ids."""
    children = [None] * n
    server.settimeout(0.1)
    while None in children:
        try:
            sock, _ = server.accept()
        except TimeoutError:
            if process.poll() is not None:
                raise RuntimeError(f"mpiexec exited with code {process.returncode} before its "
                                   "processes started") from None
            continue
        sock.settimeout(None)
        rank, pid = _receive(sock)
        children[rank] = (sock, pid)
    return children


class MPIProcessContext:
    """The children one spawn started: ``pids()`` and ``join(timeout)``, as PyTorch's
    ``ProcessContext``."""

    def __init__(self, process, children, exceptions):
        self._process, self._exc = process, exceptions
        self._socks = [sock for sock, _ in children]
        self._pids = [pid for _, pid in children]
        self._ended = {}  # child -> ("returned"|"raised"|"interrupted"|"exited"|"silent", x)
        self._order = []  # children in the order their failures were heard

    def pids(self):
        return list(self._pids)

    def join(self, timeout=None):
        """True once every child has returned; False while some still run after ``timeout``
        seconds; raises when one failed (the others are stopped)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while len(self._ended) < len(self._socks) and not self._order:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._listen(wait) and deadline is not None:
                return False
        if self._order:  # a failure: hear the others a moment, then name its cause
            self._listen(_SETTLE, until_all=True)
            self._stop()
            self._raise()
        self._process.wait()
        for sock in self._socks:
            sock.close()
        return True

    def _listen(self, wait, until_all=False):
        """Hear the children that speak within ``wait`` seconds (None: until one does);
        whether any did."""
        heard, end = False, None if wait is None else time.monotonic() + wait
        while len(self._ended) < len(self._socks):
            open_ = [s for k, s in enumerate(self._socks) if k not in self._ended]
            left = None if end is None else max(0.0, end - time.monotonic())
            ready, _, _ = select.select(open_, [], [], left)
            for sock in ready:
                k = self._socks.index(sock)
                try:
                    kind, detail = _receive(sock)
                except (EOFError, OSError):
                    kind, detail = "silent", None
                self._ended[k] = (kind, detail)
                if kind != "returned":
                    self._order.append(k)
            heard = heard or bool(ready)
            if not ready or not until_all:
                return heard
        return heard

    def _stop(self):
        """Stop the children still running, and ``mpiexec``."""
        for k, pid in enumerate(self._pids):
            if k not in self._ended:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _raise(self):
        """PyTorch's exception for the child whose failure came first, preferring a cause
        (raised, exited, silent) to the interruptions the others got because of it."""
        causes = [k for k in self._order if self._ended[k][0] != "interrupted"]
        k = (causes or self._order)[0]
        kind, detail = self._ended[k]
        if kind in ("raised", "interrupted"):
            raise self._exc.ProcessRaisedException.of(k, self._pids[k], detail)
        raise self._exc.ProcessExitedException.of(k, self._pids[k], detail)  # (silent: None)


def child():
    """A spawned child: ``fn(rank, *args)``, then how it ended, to the parent."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.environ.pop(_ADDRESS))
    rank = int(rank_from_environment())
    _send(sock, (rank, os.getpid()))
    main_path, path, argv, cwd, alias, payload = _receive(sock)
    sys.path[:], sys.argv[:] = path, argv
    os.chdir(cwd)
    if alias:
        _torch_alias.install()
    code = 0
    try:
        if main_path is not None:
            import_main_path(main_path)
        fn, args = pickle.loads(payload)
        fn(rank, *args)
        report = ("returned", None)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        report = ("returned", None) if code == 0 else ("exited", code)
    except (Exception, KeyboardInterrupt):
        kind = "interrupted" if _job.interrupted or not isinstance(
            sys.exc_info()[1], Exception) else "raised"
        report, code = (kind, traceback.format_exc()), 1
    _send(sock, report)
    sock.close()
    sys.stdout.flush()
    sys.stderr.flush()
    if code:
        os._exit(code)  # (not MPI's finalisation: it would wait for ranks waiting for this one)


def _send(sock, obj):
    data = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _receive(sock):
    size = struct.unpack("!Q", _exactly(sock, 8))[0]
    return pickle.loads(_exactly(sock, size))


def _exactly(sock, n):
    parts = []
    while n:
        part = sock.recv(min(n, 1 << 20))
        if not part:
            raise EOFError("the other side closed the connection")
        parts.append(part)
        n -= len(part)
    return b"".join(parts)
