"""The benchmark machinery shared by every workload: cases, the agreement check, timing, memory.

A workload module builds ``Case`` objects; each case holds one ``Contender`` per library
(``ember``, ``torch``, ``numpy``) computing the same thing. The runner checks that the
contenders agree (``check``), then times them in interleaved rounds (``time_case``) and, for a
case that declares ``saved_bytes``, measures the memory the step holds (``peak_memory``).
"""
from __future__ import annotations

import cProfile
import gc
import io
import pstats
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

LIBRARIES = ("ember", "torch", "numpy")
TRACED = ("ember", "numpy")  # whose allocations tracemalloc sees (PyTorch's CPU allocator: no)


@dataclass
class Contender:
    """One library's version of a case.

    ``step()`` is what gets timed. ``evaluate()`` runs the computation once on the initial
    state (before any ``step``) and returns its loss and gradients as NumPy arrays, by name.
    A contender whose memory can be traced also has ``forward() -> state`` and
    ``backward(state)``, the two halves of ``step``.
    """

    step: Callable[[], object]
    evaluate: Callable[[], dict]
    forward: Callable[[], object] | None = None
    backward: Callable[[object], object] | None = None


@dataclass
class Target:
    """The goal for ember: ``ember <= ratio * ref`` with ``ref`` a library or ``"saved"``."""

    ref: str
    ratio: float

    def __str__(self):
        return f"<={self.ratio:g}x {self.ref}"


@dataclass
class Case:
    """One row of the table: a workload at one size, every contender, its unit and target.

    ``per`` divides a step's time (the overhead chain reports time per op); ``scale`` turns
    seconds into ``unit``. ``rtol``/``atol`` bound the disagreement allowed between
    contenders; ``atol`` is relative to the largest magnitude of each compared array.
    ``saved_bytes``: what the graph must save; set, it asks for a memory measurement too.
    ``references``: more contenders (ember computing the same another way), checked and timed
    with the others, that a ``target`` may name as its ``ref``.
    """

    workload: str
    variant: str
    unit: str
    contenders: dict  # library name -> zero-argument builder returning a Contender
    target: Target | None = None
    per: int = 1
    rtol: float = 1e-4
    atol: float = 1e-5
    saved_bytes: int | None = None
    memory_target: Target | None = None
    references: dict | None = None  # name -> builder: timed too, a target's ``ref``, not shown

    @property
    def scale(self):
        return {"us/op": 1e6, "ms/step": 1e3}[self.unit] / self.per

    @property
    def name(self):
        return f"{self.workload} {self.variant}"


class CheckFailed(Exception):
    """A contender failed to run, or two contenders disagree on a loss or gradient."""


def check(case, contenders):
    """Evaluate every contender on the initial state and compare each with the NumPy floor.

    Returns ``(names compared, worst error relative to the largest magnitude)``; raises
    ``CheckFailed`` naming the contender that failed or the first value that disagrees.
    """
    results = {}
    for lib, contender in contenders.items():
        try:
            results[lib] = contender.evaluate()
        except Exception as exc:
            raise CheckFailed(f"{case.name}: {lib} failed: {exc!r}") from exc
    ref_lib = "numpy" if "numpy" in results else next(iter(results))
    ref = results[ref_lib]
    worst = 0.0
    for lib, res in results.items():
        if res.keys() != ref.keys():
            raise CheckFailed(f"{case.name}: {lib} returned {sorted(res)}, "
                           f"{ref_lib} returned {sorted(ref)}")
        for key, want in ref.items():
            got = np.asarray(res[key], dtype=np.float64)
            want = np.asarray(want, dtype=np.float64)
            if got.shape != want.shape:
                raise CheckFailed(f"{case.name}: {key}: {lib} has shape {got.shape}, "
                               f"{ref_lib} has {want.shape}")
            size = np.abs(want).max(initial=0.0)
            err = np.abs(got - want)
            bad = ~(err <= case.rtol * np.abs(want) + case.atol * size)
            if bad.any():
                i = tuple(int(k) for k in np.unravel_index(np.argmax(bad), bad.shape))
                raise CheckFailed(
                    f"{case.name}: {key} differs between {lib} and {ref_lib}"
                    f"{f' at index {i}' if i else ''}: {got[i]:.7g} vs {want[i]:.7g} "
                    f"({int(bad.sum())} of {bad.size} elements outside "
                    f"rtol={case.rtol:g}, atol={case.atol:g}*max|{key}|)")
            if size > 0:
                worst = max(worst, float(err.max() / size))
    return sorted(ref), worst


def _calibrate(step, min_time):
    """How many calls of ``step`` fill ``min_time`` seconds (the calls double as warm-up)."""
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            step()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time:
            return number
        # Aim 20% past the goal, at most 10x more calls per try.
        number = max(number + 1, min(10 * number, int(number * 1.2 * min_time / elapsed)))


def time_case(contenders, repeat, min_time):
    """Seconds per step of each contender: ``repeat`` interleaved rounds, one sample each.

    Each contender's sample is ``number`` back-to-back calls (calibrated to last at least
    ``min_time``); the garbage collector stays enabled but runs before each sample, so one
    library's garbage is not collected on another's clock.
    """
    numbers = {lib: _calibrate(c.step, min_time) for lib, c in contenders.items()}
    samples = {lib: [] for lib in contenders}
    for _ in range(repeat):
        for lib, c in contenders.items():
            step, number = c.step, numbers[lib]
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(number):
                step()
            samples[lib].append((time.perf_counter() - t0) / number)
    return samples, numbers


def profile(step, min_time, top=15):
    """cProfile's report of ``step`` called for about ``min_time`` seconds: the ``top``
    functions by their own time (``tottime``)."""
    number = _calibrate(step, min_time)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(number):
        step()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return f"{number} calls of the step, profiled:\n" + out.getvalue().strip()


def median(values):
    return statistics.median(values)


def peak_memory(contender):
    """``(retained, peak)`` bytes traced by ``tracemalloc`` for one forward + backward.

    ``retained``: what the forward leaves allocated (the saved tensors and the loss);
    ``peak``: the most allocated at any moment of the backward. Both count from the memory in
    use before the forward, so inputs and parameters are not included. NumPy reports its array
    allocations to ``tracemalloc``, so this sees ember's arrays and the floor's alike.
    """
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        state = contender.forward()
        retained = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.reset_peak()
        contender.backward(state)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return retained, peak


# --------------------------------------------------------------------------- the table

COLUMNS = ("workload", "variant", "unit", "ember", "torch", "numpy", "ember/torch",
           "ember/numpy", "target", "met?")


def _num(value):
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


def _ratio(a, b):
    return None if not isinstance(a, float) or not isinstance(b, float) or b == 0 else a / b


def make_row(workload, variant, unit, values, target=None, ref_values=None):
    """A table row from ``values`` (library -> number, ``None`` or an error word).

    ``ref_values`` supplies reference numbers for targets against something other than a
    library (the saved-tensor bytes of ``deep``).
    """
    refs = dict(values, **(ref_values or {}))
    row = {"workload": workload, "variant": variant, "unit": unit, **values,
           "ember/torch": _ratio(values.get("ember"), values.get("torch")),
           "ember/numpy": _ratio(values.get("ember"), values.get("numpy")),
           "target": str(target) if target else "", "met?": ""}
    if target:
        ratio = _ratio(values.get("ember"), refs.get(target.ref))
        row["target_ratio"] = ratio
        row["met?"] = "-" if ratio is None else ("yes" if ratio <= target.ratio else "NO")
    return row


def _cell(row, col):
    value = row.get(col)
    if col in ("ember/torch", "ember/numpy"):
        return "n/a" if value is None else f"{value:.2f}x"
    return _num(value) if col in LIBRARIES else str(value)


def format_table(rows):
    """A plain-text table: one line per row, columns padded to their widest cell."""
    cells = [list(COLUMNS)] + [[_cell(row, col) for col in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) if i < 3 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
             for line in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)
