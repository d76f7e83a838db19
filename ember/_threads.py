"""``torch.set_num_threads`` and friends: how many threads ember's kernels run on.

ember's intra-op parallelism is NumPy's: its BLAS (OpenBLAS, MKL...) and any OpenMP pool a
loaded library runs. ``set_num_threads(n)`` resizes those pools through ``threadpoolctl``
(the optional extra ``ember[threads]``), the one portable way to reach them once NumPy is
loaded — environment variables are read by the BLAS only when it loads, which is before
ember runs. Without ``threadpoolctl`` the number is still recorded (``get_num_threads``
returns it) and a warning says, once, that the BLAS keeps its own count: silently doing
nothing would let a program believe it was pinned.

The default follows PyTorch's policy: ``MKL_NUM_THREADS`` (else ``OMP_NUM_THREADS``) if set to
a positive integer, else the number of physical cores — and never more than the CPUs this
process may run on (``os.sched_getaffinity``: a container's or ``taskset``'s share), so that
nothing oversubscribes a loaded machine. ember applies it when imported, only where it lowers
a BLAS pool that no environment variable sized (the BLAS's own default is every logical CPU,
twice the physical cores under SMT).

Inter-op threads (PyTorch's pool for ``torch.jit.fork``): ember runs none, so the count is
recorded; as in PyTorch it can be set once, and never after parallel work has started.
"""
from __future__ import annotations

import operator
import os
import warnings
from pathlib import Path

_ENV = ("MKL_NUM_THREADS", "OMP_NUM_THREADS")  # PyTorch's: MKL's, if set, overrides OMP's
_BLAS_ENV = _ENV + ("OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
_state = {"intra": None, "interop": None, "warned": False}


def _usable_cpus():
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _physical_cores(cpus):
    """How many distinct cores ``cpus`` sit on (hyperthreads counted once), from Linux's
    topology files; ``len(cpus)`` where they cannot be read."""
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topo / "physical_package_id").read_text().strip(),
                       (topo / "core_id").read_text().strip()))
        except OSError:
            return len(cpus)
    return len(cores) or len(cpus)


def _env_threads():
    for var in _ENV:
        try:
            n = int(os.environ.get(var, ""))
        except ValueError:
            continue
        if n > 0:
            return n
    return None


def default_num_threads():
    """PyTorch's default intra-op thread count, capped at the usable CPUs (module docstring)."""
    cpus = _usable_cpus()
    n = _env_threads() or _physical_cores(cpus)
    return max(1, min(n, len(cpus)))


def _check(n, name):
    """PyTorch's argument checks: an integer (not a bool), positive."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    n = operator.index(n)
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def _threadpoolctl():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def set_num_threads(n):
    """Sets the number of threads ember's kernels (NumPy's BLAS and OpenMP pools) use."""
    n = _check(n, "set_num_threads")
    _state["intra"] = n
    tpc = _threadpoolctl()
    if tpc is not None:
        tpc.threadpool_limits(limits=n)
    elif not _state["warned"]:
        _state["warned"] = True
        warnings.warn("ember.set_num_threads: threadpoolctl is not installed, so NumPy's BLAS "
                      "keeps the thread count it was loaded with; `pip install threadpoolctl` "
                      "(or ember[threads]) lets ember resize it", RuntimeWarning, stacklevel=2)


def get_num_threads():
    """The number of threads ember's kernels use (``set_num_threads``'s, or the default)."""
    return _state["intra"] if _state["intra"] is not None else default_num_threads()


def set_num_interop_threads(n):
    """Sets the number of inter-op threads: once, before any parallel work (as PyTorch)."""
    n = _check(n, "set_num_interop_threads")
    if _state["interop"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop"] = n


def get_num_interop_threads():
    """The number of inter-op threads (``set_num_interop_threads``'s, or the default)."""
    return _state["interop"] if _state["interop"] is not None else default_num_threads()


def apply_default():
    """At import: lower the BLAS pools to the default where no environment variable sized
    them and they are larger (module docstring). Costs nothing unless they are larger."""
    if any(var in os.environ for var in _BLAS_ENV):
        return
    n = default_num_threads()
    if n >= len(_usable_cpus()):
        return  # the BLAS's own default is at most the usable CPUs: nothing to lower
    tpc = _threadpoolctl()
    if tpc is not None:
        tpc.threadpool_limits(limits=n, user_api="blas")
