"""glibc's malloc, set at import for a tensor library's allocation pattern.

An ember training step allocates its activations (NumPy arrays of 0.1-4 MB) through the
forward and frees them all at the end of the backward. With glibc's defaults the heap then
has more free memory at its top than the trim threshold, and ``free`` returns it to the
kernel; the next step gets it back one page fault per 4 KB page. nanoGPT's step (CPU
configuration) took 6,900 page faults and 10-15 ms of kernel time that way, of 90-100 ms
(PyTorch's step: under 700 faults; its own allocator keeps memory longer).

glibc adapts these settings by itself: freeing a block it had mapped raises the mmap threshold
to that block's size and the trim threshold to twice that, up to 32 MB and 64 MB. Set here at
those ceilings from the start, as a program that once freed a 32 MB array already runs: arrays
under 32 MB come from the heap, and up to 64 MB of free heap is kept for reuse instead of
being unmapped. Arrays over 32 MB are mapped and unmapped as before. Afterwards the step takes
no page faults (nanoGPT: 90 -> 80 ms of CPU time).

Nothing is changed where the program set any ``MALLOC_*`` variable or a ``glibc.malloc``
tunable itself, where ``EMBER_MALLOC_DEFAULTS=0``, or off Linux; glibc is reached through
ctypes (``mallopt``; on another C library the call is absent or does nothing).
"""
from __future__ import annotations

import ctypes
import os
import sys

_MMAP_THRESHOLD, _TRIM_THRESHOLD = -3, -1  # glibc's mallopt parameter numbers
_MMAP_BYTES = 32 << 20  # glibc's ceiling for its adaptive mmap threshold (64-bit)
_TRIM_BYTES = 2 * _MMAP_BYTES  # what glibc's own rule pairs with it
_USER_SET = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
             "MALLOC_MMAP_MAX_", "MALLOC_ARENA_MAX")


def apply_default():
    """At import: glibc's thresholds at their adaptive ceilings (module docstring). Returns
    whether they were set."""
    if not sys.platform.startswith("linux") or os.environ.get("EMBER_MALLOC_DEFAULTS") == "0":
        return False
    if (any(var in os.environ for var in _USER_SET)
            or "glibc.malloc" in os.environ.get("GLIBC_TUNABLES", "")):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # The mmap threshold first: setting either freezes glibc's adaptation, and a trim threshold
    # alone would leave every array over 128 KB mapped and unmapped each time.
    return bool(mallopt(_MMAP_THRESHOLD, _MMAP_BYTES) and mallopt(_TRIM_THRESHOLD, _TRIM_BYTES))
