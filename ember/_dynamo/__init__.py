"""``torch._dynamo``: PyTorch's graph capture for ``torch.compile``.

ember's compiled mode records a call and replays its array calls (``replay.py``, the
``"inductor"`` backend). The functions scripts call around compilation are here with
PyTorch's behaviour: ``explain``, ``reset``, ``disable`` and ``graph_break`` (a graph break:
the recording stops and that call runs eagerly), ``is_compiling`` (True while a call is
being recorded), ``allow_in_graph``, ``mark_dynamic`` (no effect: each new shape is recorded
anew), and ``config``.
"""
import functools

from .. import _recording
from . import backends, config, exc, replay
from .backends import list_backends, lookup_backend, register_backend
from .eval_frame import OptimizedModule
from .explain import explain

__all__ = ["reset", "disable", "allow_in_graph", "disallow_in_graph", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "mark_static_address", "is_compiling",
           "graph_break", "list_backends", "lookup_backend", "register_backend",
           "OptimizedModule", "config", "exc", "backends", "explain"]


def reset():
    """Forget every compiled function's recordings: their next calls record anew."""
    replay.reset()


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Never compile ``fn`` (a decorator, with or without arguments): it runs as it is."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason,
                                 wrapping=wrapping)

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        _recording.unsupported(f"{getattr(fn, '__qualname__', fn)} is under "
                               "torch._dynamo.disable")
        return fn(*args, **kwargs)
    run_eagerly._torchdynamo_disable = True
    return run_eagerly


def allow_in_graph(fn):
    """Let the graph capture put ``fn`` in the graph unexamined; returns ``fn``."""
    return fn


def disallow_in_graph(fn):
    return fn


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None,  # noqa: A002
                 specialize_on=None):
    """Mark dims of ``t`` as varying between calls (no recompiles): nothing to do eagerly."""


def maybe_mark_dynamic(t, index):
    pass


def mark_static(t, index=None):
    pass


def mark_static_address(t, guard=True):
    pass


def graph_break():
    """End the captured graph here: the call being recorded runs eagerly."""
    _recording.unsupported("torch._dynamo.graph_break()")


def is_compiling():
    """Whether the code is being recorded by ``torch.compile``."""
    return _recording.state.recorder is not None
