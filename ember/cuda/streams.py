"""``torch.cuda.streams``: ``Stream`` and ``Event``, over CuPy's streams and events.

Without a GPU, constructing either raises PyTorch's RuntimeError, as a CPU build of PyTorch
does. With CuPy, a ``Stream`` wraps a ``cupy.cuda.Stream`` and ``with torch.cuda.stream(s):``
makes it CuPy's current stream, so ember's kernels in the block are queued on it.
``current_stream`` and ``default_stream`` (``torch.cuda``'s, re-exported there) live here too,
beside the ``Stream`` they return, which ``Event.wait`` uses.
"""
from ._common import cupy, device_index, require

__all__ = ["Stream", "Event"]


class Stream:
    """A CUDA stream: work queued on it runs in order; different streams may overlap."""

    def __init__(self, device=None, priority=0, **kwargs):
        cp = cupy()
        if cp is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        stream = kwargs.get("_cupy_stream")
        if stream is None:
            with cp.cuda.Device(device_index(device)):
                stream = cp.cuda.Stream(non_blocking=False)
        self._stream = stream
        self.device_index = getattr(stream, "device_id", None)

    @property
    def cuda_stream(self):
        return self._stream.ptr

    def synchronize(self):
        """Wait until everything queued on this stream has run."""
        self._stream.synchronize()

    def query(self):
        """True when everything queued on this stream has run."""
        return self._stream.done

    def wait_event(self, event):
        """Make later work on this stream wait for ``event``."""
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        """Make later work on this stream wait for what is queued on ``stream`` now."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self._stream.ptr == other._stream.ptr

    def __hash__(self):
        return hash(self._stream.ptr)

    def __repr__(self):
        return (f"<torch.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={self.cuda_stream:#x}>")


class Event:
    """A CUDA event: a marker in a stream, to wait on or to time work between two of them."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        cp = cupy()
        if cp is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self._event = cp.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                    interprocess=interprocess)

    def record(self, stream=None):
        """Mark the current point of ``stream`` (the current stream by default)."""
        self._event.record(None if stream is None else stream._stream)

    def wait(self, stream=None):
        """Make later work on ``stream`` wait for this event."""
        (stream or current_stream()).wait_event(self)

    def query(self):
        return self._event.done

    def synchronize(self):
        self._event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, with timing)."""
        return cupy().cuda.get_elapsed_time(self._event, end_event._event)

    def __repr__(self):
        return f"<torch.cuda.Event {self._event.ptr:#x}>"


def _stream_of(cupy_stream):
    return Stream(_cupy_stream=cupy_stream)


def current_stream(device=None):
    """The stream ember's kernels are queued on now."""
    cp = require()
    with cp.cuda.Device(device_index(device)):
        return _stream_of(cp.cuda.get_current_stream())


def default_stream(device=None):
    """The GPU's default (null) stream."""
    cp = require()
    return _stream_of(cp.cuda.Stream.null)
