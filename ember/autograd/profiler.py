"""``torch.autograd.profiler``: ``profile`` and ``record_function``, as far as ember has them.

ember records no profiling events. ``record_function`` (a label for a region, as a context
manager or a decorator) does nothing, so code annotated for the profiler runs unchanged, and
``with profile():`` runs its block, but everything that reads results back (``key_averages``,
``table``, ``export_chrome_trace``, ``function_events``, ...) raises NotImplementedError: an
empty table would look like a measurement.
"""
from __future__ import annotations

import contextlib

__all__ = ["profile", "record_function"]

_NO_EVENTS = ("ember's autograd profiler records no events, so profile.{} is not available; "
              "time regions with time.perf_counter() instead")


class profile:
    """Profiles the ops run inside ``with profile() as prof:`` in PyTorch; in ember the block
    runs and nothing is recorded (see the module docstring). As in PyTorch, one object can be
    entered only once."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    def _unavailable(self, what):
        raise NotImplementedError(_NO_EVENTS.format(what))

    def key_averages(self, *args, **kwargs):
        self._unavailable("key_averages()")

    def table(self, *args, **kwargs):
        self._unavailable("table()")

    def total_average(self):
        self._unavailable("total_average()")

    def export_chrome_trace(self, path):
        self._unavailable("export_chrome_trace()")

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._unavailable("export_stacks()")

    @property
    def function_events(self):
        self._unavailable("function_events")

    @property
    def self_cpu_time_total(self):
        self._unavailable("self_cpu_time_total")

    def __str__(self):
        self._unavailable("table() (str(prof))")

    __repr__ = object.__repr__


class record_function(contextlib.ContextDecorator):
    """Labels a region (``with record_function("attention"):``) or a function
    (``@record_function("step")``) for the profiler; in ember a no-op."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None
