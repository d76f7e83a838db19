"""Whether compiled mode is recording, asked by the few places that must tell it what they do.

``torch.compile`` (``ember._dynamo``) runs the first call of a compiled function eagerly while
a ``Recorder`` watches: it records every array-level computation of the call (each op's
forward, each node's backward, the engine's sums, the writes into ``.grad``), so that later
calls can replay them without running the Python around them. Most of ember never knows:
while a recorder is active, ops take their general path, where ``ops/_op.py`` reports the
forward. The rest report here, each with one test when no recorder is active
(``state.recorder is None``):

- conversions of a tensor's values to Python (``item``, ``tolist``, ``numpy``, printing):
  the call's control flow may depend on them, so the call is not recorded (``read``); a
  check on arrays' values in ember's own code (an index bounds check) is recorded with its
  answer, which each replay computes again and compares (``expect``);
- writes outside ops (``Tensor._assign``, the ``grad`` and ``data`` setters);
- the autograd engine's own arithmetic and ``.grad`` accumulation;
- calls kept whole (an optimizer's ``step`` and ``zero_grad``, a random draw): replayed as
  calls;
- functions whose answer depends only on their arguments' types, shapes and dtypes and on
  Python values (``on_metadata``: "are these two NumPy arrays of one shape?"): a replay's
  written-out code is decided by their answer when recorded;
- new arrays that depend on Python values only: copied from the recording's (``constant``:
  ``zeros``, ``arange``), or used as they are when nothing writes them (``fixed``: an op's
  parameter).

It imports nothing of ember's, so that the core can import it.
"""
from __future__ import annotations

__all__ = ["state", "read", "unsupported", "opaque", "constant", "fixed", "expect",
           "from_array", "reshaped", "on_metadata"]


class _State:
    recorder = None  # the active ``ember._dynamo.recorder.Recorder``, or None


state = _State()


def read(what):
    """A tensor's values are read by Python (``what``: the method): an active recording
    stops, its call running on eagerly; compiled mode will run this function eagerly."""
    rec = state.recorder
    if rec is not None:
        rec.fail(f"Tensor.{what}() reads a tensor's values into Python (a graph break)")


def reshaped(tensor):
    """``tensor`` takes a new shape in place (``squeeze_``, ``t_``): where the replay loads
    it (an argument, a parameter), it would keep its old one, so an active recording stops
    (a tensor made inside the call is read by its new array's slot: recorded)."""
    rec = state.recorder
    if rec is not None and rec.source(tensor) is not None:
        rec.fail("a tensor the call was given or reaches takes a new shape in place "
                 "(squeeze_, t_, transpose_...: not recorded yet)")


def unsupported(reason):
    """Something the recording cannot replay happens: an active recording stops."""
    rec = state.recorder
    if rec is not None:
        rec.fail(reason)


def constant(array):
    """``array``, a new array that depends on Python values only (``zeros``, ``arange``,
    ``tensor([1, 2])``): each replay makes a copy of it as it is now."""
    rec = state.recorder
    if rec is not None:
        rec.constant(array)
    return array


def from_array(source, array):
    """``array``, a tensor's new array made from the NumPy array ``source`` (``tensor(a)``:
    a copy; ``from_numpy(a)``: ``source`` itself): each replay makes it again from the
    array found where ``source`` was (an argument, a global), as it is then."""
    rec = state.recorder
    if rec is not None:
        rec.from_array(source, array)
    return array


def fixed(array):
    """``array``, made from Python values only and never written (an op's parameter, such as
    ``split``'s bounds): the replays use it as it is."""
    rec = state.recorder
    if rec is not None:
        rec.fixed(array)
    return array


def expect(fn, *args):
    """``fn(*args)``, a Python value computed from arrays that decides what the caller does
    (an index bounds check: ``None`` or the first bad index). A replay computes it again and
    stops with an error if it is not what it was when recorded: the recorded calls after it
    were the ones for that value."""
    rec = state.recorder
    value = fn(*args)
    if rec is not None:
        rec.expect(fn, args, value)
    return value


def opaque(fn, *args):
    """``fn(*args)``, replayed as one call when recorded (nothing inside it is recorded)."""
    rec = state.recorder
    if rec is None:
        return fn(*args)
    return rec.opaque(fn, args)


def on_metadata(fn):
    """Mark ``fn`` as answering from its arguments' types, shapes and dtypes and from Python
    values alone, with an immutable answer (a bool, a dtype, a read-only cached array): every
    replay's arrays have the recording's types, shapes and dtypes, so a test on its answer in
    a function the replay writes out is decided when recorded (``_dynamo/inline.py``)."""
    fn.on_metadata = True
    return fn
