"""The autograd state a Tensor's own methods read, kept below ``_tensor.py`` and ``autograd/``.

``_tensor.py`` builds on this module and ``_dispatch.py`` only; ``autograd/`` builds on
``_tensor.py``. So the few things both need live here, each re-exported from its
``autograd`` module (where users and the rest of ember find it): grad mode's thread-local flag
(``autograd.grad_mode._state``), the forward-AD level (``autograd.forward_ad.state``), the
version bump of an in-place write with the note that names who wrote
(``autograd.anomaly_mode.note_write``), ``NO_ACCUMULATOR`` and the handle a hook registration
returns (``_RemovableHandle``; both ``autograd.graph``).
"""
from __future__ import annotations

import os
import sys
import threading

from . import _dispatch

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # ember's own files


class _GradState(threading.local):
    grad = True
    inference = False


grad_state = _GradState()


class _ForwardState:
    """The open level (None outside ``dual_level``), the tensors given tangents in it, and
    whether ops propagate tangents now (``active``: a level is open and no JVP rule is running,
    since a rule's own ops work on primal values). Setting ``active`` refreshes the dispatch
    flag (``_dispatch.py``): the forward-AD interposer is active while it is true."""

    level = None
    _active = False
    duals = []

    @property
    def active(self):
        return self._active

    @active.setter
    def active(self, flag):
        self._active = flag
        _dispatch.refresh()


forward_state = _ForwardState()


def NO_ACCUMULATOR():
    """``_acc`` of a tensor that requires grad but accumulates none: a view made in no-grad
    mode of a tensor that requires grad (see ``views.as_view``); its edge is ``(None, 0)``."""
    return None


def note_write(tensor, op_name):
    """Bump ``tensor``'s version for an in-place write, and remember the op and the calling
    line (kept beside the version, in the counter its views share), so that a later "modified
    by an inplace operation" error can say who wrote and where. Costs one frame walk, unless
    the write happens inside ``writes_from`` (which walked once for all its writes)."""
    vc = tensor._vc
    vc[0] += 1
    where = _site
    vc[1:] = [(op_name, user_line(sys._getframe(1)) if where is _WALK else where)]


def user_line(frame):
    """The first frame from ``frame`` outward that is not ember's, as a traceback entry
    ``(file, line, function, None)`` (the line's text read at need); None if there is none."""
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno,
                                       frame.f_code.co_name, None)


_WALK = object()
_site = _WALK  # where in-place writes come from: found per write, or set by writes_from


class writes_from:
    """A block whose in-place writes all come from one line of the user's code, found once
    from ``frame`` (an optimizer's step: one walk up the stack, not one per parameter)."""

    def __init__(self, frame):
        self.site = user_line(frame)

    def __enter__(self):
        global _site
        self.previous, _site = _site, self.site

    def __exit__(self, *exc):
        global _site
        _site = self.previous


class _RemovableHandle:
    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list, self._fn = lst, fn

    def remove(self):
        if self._fn in self._list:
            self._list.remove(self._fn)
