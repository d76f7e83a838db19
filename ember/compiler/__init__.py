"""``torch.compiler``: the public face of ``torch.compile``'s machinery (see ``ember._dynamo``:
ember runs compiled code eagerly)."""
from .. import _recording
from .._compile import compile
from .._dynamo import allow_in_graph, list_backends, reset
from .._dynamo import disable as _dynamo_disable

__all__ = ["compile", "reset", "allow_in_graph", "list_backends", "disable", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "assume_constant_result",
           "cudagraph_mark_step_begin"]


def disable(fn=None, recursive=True, *, reason=None):
    """Never compile ``fn`` (a decorator, with or without arguments)."""
    return _dynamo_disable(fn, recursive, reason=reason)


def is_compiling():
    """Whether code is being recorded by ``torch.compile`` (ember exports nothing)."""
    return _recording.state.recorder is not None


def is_dynamo_compiling():
    return _recording.state.recorder is not None


def is_exporting():
    return False


def assume_constant_result(fn):
    return fn


def cudagraph_mark_step_begin():
    """Mark a new iteration for CUDA graphs: ember records none."""
