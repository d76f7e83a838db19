"""Anomaly detection (``torch.autograd.detect_anomaly``): where did that NaN come from?

With anomaly detection on, every node remembers the stack of the forward call that made it.
In backward, a node that returns NaN raises PyTorch's ``Function 'XBackward0' returned nan
values in its 0th output.``, and any error inside a node's backward is preceded by a warning
that shows that node's forward call, so the failing line of the model is on screen.

Beyond PyTorch, ``detect_anomaly(forward=True)`` checks every op's result *in the forward
pass* and raises at the first op that produces a NaN or an infinity, naming the op and the
line of your code that called it: usually the real culprit, long before backward runs.

In-place modification errors ("modified by an inplace operation") are explained without this
mode: ember remembers the last in-place write to each tensor's storage (see ``note_write``)
and adds which op saved the tensor and which op, on which line, modified it.
"""
from __future__ import annotations

import functools
import sys
import traceback
import warnings

import numpy as np

from .. import _dispatch
from .._autograd_state import _PACKAGE, note_write, user_line, writes_from  # noqa: F401

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

_ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
                    "should only be enabled for debugging.")


class _State:
    enabled = False
    check_nan = True
    _forward = False  # ember's forward check: its interposer is active while it is on

    @property
    def forward(self):
        return self._forward

    @forward.setter
    def forward(self, flag):
        self._forward = flag
        _dispatch.refresh()


state = _State()


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


class _Mode:
    """Sets the mode for a ``with`` block (or a decorated function) and restores it after."""

    def __init__(self, mode, check_nan, forward):
        self.mode, self.check_nan, self.forward = mode, check_nan, forward

    def __enter__(self):
        self.previous = (state.enabled, state.check_nan, state.forward)
        state.enabled, state.check_nan = self.mode, self.check_nan
        state.forward = self.mode and self.forward

    def __exit__(self, *exc):
        state.enabled, state.check_nan, state.forward = self.previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.mode, self.check_nan, self.forward):
                return fn(*args, **kwargs)
        return wrapper


class detect_anomaly(_Mode):
    """``with detect_anomaly():`` — remember forward stacks, refuse NaN gradients.

    ``forward=True`` (ember's own): also stop at the first op whose forward result holds a NaN
    or an infinity, naming it and the line that called it.
    """

    def __init__(self, check_nan=True, forward=False):
        warnings.warn(_ENABLED_WARNING, UserWarning, stacklevel=2)
        super().__init__(True, check_nan, forward)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _Mode(True, self.check_nan, self.forward):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly(_Mode):
    """Turn anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode, check_nan=True, forward=False):
        super().__init__(mode, check_nan, forward)
        _Mode.__enter__(self)  # takes effect now; ``with`` only adds the restoring

    def __enter__(self):
        pass


def user_stack():
    """The calling frames outside ember's own package, innermost last."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return traceback.extract_stack(frame) if frame is not None else []


def remember(node):
    """Called when a node is made in anomaly mode: keep the forward call's stack."""
    node.metadata["traceback_"] = traceback.format_list(user_stack())


def warn_error(node):
    """Before an error in ``node``'s backward propagates: show the forward call that made it."""
    stack = node.metadata.get("traceback_")
    if stack is None:
        warnings.warn(f"Error detected in {type(node).__name__}. No forward pass information "
                      "available. Enable detect anomaly during forward pass for more "
                      "information.", UserWarning, stacklevel=4)
        return
    warnings.warn(f"Error detected in {type(node).__name__}. Traceback of forward call that "
                  f"caused the error:\n{''.join(stack).rstrip()}", UserWarning, stacklevel=4)


def check_gradients(node, grads):
    """PyTorch's NaN check of a node's input gradients (raw arrays or Tensors)."""
    for i, g in enumerate(grads):
        if g is None:
            continue
        data = getattr(g, "_data", g)
        if data.dtype.kind in "fc" and bool(np.isnan(data).any()):
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its "
                               f"{i}th output.")


def check_forward(op, out):
    """``detect_anomaly(forward=True)``: refuse the first forward result with NaN or inf."""
    outs = out if isinstance(out, tuple) else (out,)
    for k, data in enumerate(outs):
        if data.dtype.kind not in "fc" or bool(np.isfinite(data).all()):
            continue
        kind = "nan" if bool(np.isnan(data).any()) else "inf"
        which = f" (output {k})" if len(outs) > 1 else ""
        where = "".join(traceback.format_list(user_stack()[-1:])).rstrip()
        raise RuntimeError(
            f"detect_anomaly(forward=True): '{op.name}'{which} produced {kind} values in the "
            f"forward pass, the first op to do so since anomaly detection was enabled. It was "
            f"called at:\n{where}")


def explain_write(vc, saved_by):
    """The lines ember adds under PyTorch's in-place error."""
    text = f"\n\nember: the tensor was saved for backward by {saved_by}"
    if len(vc) < 2:
        return text + "."
    op_name, where = vc[1]
    text += f"; it was last modified in place by {op_name}"
    if where is None:
        return text + "."
    return text + " at:\n" + "".join(traceback.format_list([where])).rstrip("\n")


def _interpose(op, args, proceed):
    """The anomaly interposer (``_dispatch.py``): a forward result with NaN or inf raises."""
    result = proceed(args)
    check_forward(op, tuple(r._data for r in result) if isinstance(result, tuple) else
                  result._data)
    return result


_dispatch.register(_dispatch.Interposer("anomaly", 40, lambda: state._forward, _interpose))
