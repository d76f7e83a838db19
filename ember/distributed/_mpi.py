"""The transport under ``ember.distributed``: MPI, through mpi4py.

ember does not invent a transport: MPI is the engine multi-process numerical code already
runs on, from a laptop (``mpiexec -n 2``) to a supercomputer, and ``pip install
'ember[distributed]'`` brings mpi4py and MPICH's wheel. mpi4py initialises MPI when it is
imported, so it is imported here on first use (``init_process_group``), never by ``import
ember``.

This module knows MPI; ``process_group.py`` and ``collectives.py`` know PyTorch. What it
provides: the communicator of the whole job, contiguous NumPy buffers for tensors of every
dtype (half precision and bfloat16 reduced in float32, bool with MPI's logical operators),
and the MPI reduction for each ``ReduceOp``.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time

import numpy as np

from .._device import to_numpy

__all__ = ["available", "find_mpiexec", "mpi", "rank_from_environment", "reduction", "wait_all",
           "wire"]

_MPI = None


def available():
    """Whether mpi4py can be imported (without importing it: that starts MPI)."""
    return _MPI is not None or importlib.util.find_spec("mpi4py") is not None


def mpi():
    """The ``mpi4py.MPI`` module, imported (and MPI started) on first use."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as exc:
            raise RuntimeError("ember.distributed runs on MPI: install it with "
                               "pip install 'ember[distributed]' (mpi4py and MPICH)") from exc
        _MPI = MPI
    return _MPI


def find_mpiexec():
    """MPICH's process manager for one machine (``mpiexec.gforker``: it forks the ranks, and
    interrupts the others when one dies, so that they can say which) beside this Python (a
    virtual environment's MPICH) or on the PATH; else ``mpiexec``."""
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    found = shutil.which("mpiexec.gforker", path=path) or shutil.which("mpiexec", path=path)
    if found is None:
        raise RuntimeError("no mpiexec found: install MPI with pip install 'ember[distributed]'")
    return found


_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def rank_from_environment():
    for name in _RANK_VARIABLES:
        if name in os.environ:
            return os.environ[name]
    raise RuntimeError("this process runs under mpiexec (no rank in the "
                       f"environment: {', '.join(_RANK_VARIABLES)})")


# The reduction of each op (names of MPI's operators); on bool tensors the logical ones, as
# PyTorch's sums of bools saturate (True + True is True).
_OPS = {"SUM": "SUM", "AVG": "SUM", "PRODUCT": "PROD", "MIN": "MIN", "MAX": "MAX",
        "BAND": "BAND", "BOR": "BOR", "BXOR": "BXOR"}
_BOOL_OPS = {"SUM": "LOR", "AVG": "LOR", "PRODUCT": "LAND", "MIN": "LAND", "MAX": "LOR",
             "BAND": "LAND", "BOR": "LOR", "BXOR": "LXOR"}


def reduction(op_name, dtype):
    """The MPI operator that reduces arrays of ``dtype`` as ``ReduceOp.<op_name>`` does."""
    table = _BOOL_OPS if dtype == np.bool_ else _OPS
    return getattr(mpi(), table[op_name])


def wire(array):
    """``array`` as MPI carries it: on the host (a GPU's array copied there: MPI reads and
    writes host memory), float16 and bfloat16 (no MPI type of their own in MPICH) as float32,
    everything else as it is. Returns a C-contiguous NumPy array (a copy where the array is on
    a GPU, the dtype changes or ``array`` is not contiguous)."""
    array = to_numpy(array)
    if array.dtype.kind == "V" or array.dtype.name in ("float16", "bfloat16"):
        return np.ascontiguousarray(array, dtype=np.float32)
    return np.ascontiguousarray(array)


def wait_all(requests, timeout, what, statuses=None):
    """Wait for MPI ``requests`` (filling in ``statuses``); past ``timeout`` seconds (None:
    forever) raise PyTorch's kind of error for a collective that never completed, naming
    ``what``."""
    MPI = mpi()
    if timeout is None:
        MPI.Request.Waitall(requests, statuses)
        return
    # Each test advances the messages (MPICH moves a large one in chunks, a step per call into
    # the library, as its own Wait does by polling): no sleeping between tests, which would
    # stall every transfer; the clock is read every few hundred tests.
    deadline = time.monotonic() + timeout
    test = MPI.Request.Testall
    while not test(requests, statuses):
        for _ in range(_TESTS_PER_CLOCK):
            if test(requests, statuses):
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} timed out after {timeout:g} seconds: a rank did not take "
                               "part (it may have stopped, or called another collective)")


_TESTS_PER_CLOCK = 200
