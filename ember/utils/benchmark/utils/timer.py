"""``torch.utils.benchmark.utils.timer``: ``Timer``, Python's ``timeit`` with PyTorch's
measurement loops (``timeit``, ``blocked_autorange``, ``adaptive_autorange``).

The statement runs with ``torch`` (ember) in its globals. Differences from PyTorch:
``num_threads`` is recorded and printed but does not change how many threads NumPy's BLAS uses;
only Python statements are timed (``language='cpp'`` raises).
"""
from __future__ import annotations

import enum
import sys
import textwrap
import time
import timeit as _timeit

from .... import cuda
from . import common

__all__ = ["Timer", "timer", "Language"]


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def timer():
    """The clock: ``time.perf_counter``, after waiting for the GPU when there is one."""
    if cuda.is_available():
        cuda.synchronize()
    return time.perf_counter()


class Timer:
    """Time ``stmt`` (a string of Python code) after running ``setup`` once."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("ember's Timer times Python statements only (C++ "
                                      "statements need PyTorch's C++ build)")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", sys.modules[__name__.partition(".")[0]])  # ember
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One block of ``number`` runs (after a warm-up of ``number // 100``)."""
        self._timeit(max(number // 100, 2))
        return common.Measurement(number_per_run=number, raw_times=[self._timeit(number)],
                                  task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        """Runs per block: grown tenfold until the clock's overhead is negligible (at most
        1e-4 of a block, which lasts at least ``min_run_time / 1000``) or a block is longer
        than ``min_run_time``. This also warms up."""
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                break
            if taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a fixed size, until ``min_run_time`` seconds have been measured."""
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until the interquartile range is under ``threshold`` of the median (with
        more than 3 blocks and ``min_run_time`` measured), or ``max_run_time`` is spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and common.Measurement(
                number, times, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()
