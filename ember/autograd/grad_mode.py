"""Grad mode: whether ops record a graph. Thread-local, as in PyTorch.

This is global state (per thread): ``no_grad`` and friends change what every op in the
thread does until the context exits.
"""
from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]


class _State(threading.local):
    grad = True
    inference = False


_state = _State()


def is_grad_enabled():
    return _state.grad


def is_inference_mode_enabled():
    return _state.inference


class _Mode:
    """Base for the grad-mode context managers; each works as a decorator too."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = _state.grad
        _state.grad = self._enabled

    def __exit__(self, *exc):
        _state.grad = self._prev


class no_grad(_Mode):
    """Ops inside do not record a graph; their results do not require grad."""

    _enabled = False


class enable_grad(_Mode):
    """Re-enable graph recording inside a ``no_grad`` block."""

    _enabled = True


class set_grad_enabled(_Mode):
    """Turn recording on or off; takes effect at once, and as a context manager restores."""

    def __init__(self, mode):
        self._enabled = bool(mode)
        self._prev = _state.grad
        _state.grad = self._enabled

    def clone(self):
        return self.__class__(self._enabled)

    def __enter__(self):
        pass


class inference_mode(_Mode):
    """Like ``no_grad`` (ember keeps no separate inference tensors)."""

    def __init__(self, mode=True):
        self._enabled = not mode
        self._mode = mode

    def clone(self):
        return self.__class__(self._mode)

    def __enter__(self):
        super().__enter__()
        self._prev_inf = _state.inference
        _state.inference = self._mode

    def __exit__(self, *exc):
        super().__exit__()
        _state.inference = self._prev_inf
