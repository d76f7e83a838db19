"""``torch._dynamo``: PyTorch's graph capture for ``torch.compile``.

ember does not capture graphs yet: ``torch.compile`` runs code eagerly, with the same results
(``ember._dynamo.backends`` is where a compiled mode will plug in). The functions scripts call
around compilation are here with PyTorch's behaviour where it is semantically a no-op for eager
code: ``reset``, ``disable``, ``allow_in_graph``, ``mark_dynamic``, ``is_compiling`` (False:
nothing is ever being compiled), and ``config``.
"""
import functools

from . import backends, config, exc
from .backends import list_backends, lookup_backend, register_backend
from .eval_frame import OptimizedModule

__all__ = ["reset", "disable", "allow_in_graph", "disallow_in_graph", "mark_dynamic",
           "maybe_mark_dynamic", "mark_static", "mark_static_address", "is_compiling",
           "graph_break", "list_backends", "lookup_backend", "register_backend",
           "OptimizedModule", "config", "exc", "backends"]


def reset():
    """Forget compiled code and caches: ember keeps none."""


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Never compile ``fn`` (a decorator, with or without arguments): it runs as it is."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason,
                                 wrapping=wrapping)

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
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
    """End the captured graph here: eager code has none."""


def is_compiling():
    """Whether the code is being traced by the compiler: never in ember."""
    return False
