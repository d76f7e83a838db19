"""Grad mode: whether ops record a graph. Thread-local, as in PyTorch.

This is global state (per thread): ``no_grad`` and friends change what every op in the
thread does until the context exits. A new thread starts with grad mode on and inference
mode off, whatever the thread that started it had.

Each mode object is a context manager and a decorator, with PyTorch's rules:

- ``no_grad`` and ``enable_grad`` decorate with or without parentheses
  (``@no_grad`` and ``@no_grad()``); ``inference_mode`` too (``@inference_mode``,
  ``@inference_mode()``, ``@inference_mode(False)``).
- ``set_grad_enabled(mode)`` switches the mode as soon as it is constructed, so the plain call
  ``set_grad_enabled(False)`` turns recording off for the rest of the thread; as a context
  manager it restores the mode it found at construction on exit; used as a decorator it first
  puts back the mode it found (decorating changes nothing) and sets ``mode`` only while the
  function runs.
- A decorated function runs inside a fresh copy of the mode object (``clone()``) on every call,
  so it may recurse or run in several threads. A decorated generator function runs its body
  under the mode each time it is resumed, and the caller's mode in between.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from .. import _autograd_state
from .._creation import _type_name

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_grad_enabled", "is_inference_mode_enabled",
           "enforce_grad_layout_policy"]


_state = _autograd_state.grad_state  # (its class lives below _tensor.py)


def is_grad_enabled():
    """Whether ops record a graph in this thread (on unless a mode turned it off)."""
    return _state.grad


def is_inference_mode_enabled():
    """Whether this thread is inside ``inference_mode()`` (ember keeps no separate inference
    tensors, so in ember this only differs from ``no_grad`` in what this function says)."""
    return _state.inference


_CLASS_DECORATION = ("Decorating classes is deprecated and will be disabled in future versions. "
                     "You should only decorate functions or methods. To preserve the current "
                     "behavior of class decoration, you can directly decorate the `__init__` "
                     "method and nothing else.")


def _decorate(make_mode, fn):
    """``fn`` run inside ``make_mode()`` (a fresh mode object per call, or per resumption of
    a generator)."""
    if inspect.isgeneratorfunction(fn):
        return _decorate_generator(make_mode, fn)

    @functools.wraps(fn)
    def run_in_mode(*args, **kwargs):
        with make_mode():
            return fn(*args, **kwargs)

    return run_in_mode


def _decorate_generator(make_mode, fn):
    """A generator function whose body runs under the mode: every ``send``, ``throw`` and
    ``close`` reaches the inner generator inside a fresh ``make_mode()``; the values it yields
    are handed to the caller outside it."""

    @functools.wraps(fn)
    def generate_in_mode(*args, **kwargs):
        inner = fn(*args, **kwargs)
        resume, arg = inner.send, None
        while True:
            try:
                with make_mode():
                    value = resume(arg)
            except StopIteration as stop:
                return stop.value
            try:
                arg = yield value
                resume = inner.send
            except GeneratorExit:
                with make_mode():
                    inner.close()
                raise
            except BaseException as exc:  # thrown in by the caller: pass it on
                resume, arg = inner.throw, exc

    return generate_in_mode


class _DecoratorContextManager:
    """A mode object usable as ``with mode:`` and as ``@mode``.

    Decorating a class still works but warns (PyTorch's FutureWarning): the result is a
    function that constructs the class under the mode.
    """

    def __call__(self, fn):
        if inspect.isclass(fn):
            warnings.warn(_CLASS_DECORATION, FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args, **kwargs):
                return cls(*args, **kwargs)
        return _decorate(self.clone, fn)

    def clone(self):
        """A fresh mode object of the same kind and setting (each decorated call uses one)."""
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A mode without arguments: ``Mode(fn)`` (that is, ``@Mode``) decorates ``fn`` at once."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Ops inside do not record a graph; their results do not require grad.

    Example:
        >>> x = ember.ones(2, requires_grad=True)
        >>> with ember.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _state.grad
        _state.grad = False

    def __exit__(self, exc_type, exc_value, traceback):
        _state.grad = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Turn graph recording back on, e.g. inside a ``no_grad`` block or function."""

    def __enter__(self):
        self.prev = _state.grad
        _state.grad = True

    def __exit__(self, exc_type, exc_value, traceback):
        _state.grad = self.prev


def _check_bool(mode, fn_name):
    if not isinstance(mode, bool):
        raise TypeError(f"{fn_name}(): argument 'enabled' (position 1) must be bool, "
                        f"not {_type_name(mode)}")


class set_grad_enabled(_DecoratorContextManager):
    """Turn recording on (``True``) or off (``False``): at once when constructed; as a context
    manager, the mode found at construction comes back on exit; as a decorator, only while
    the decorated function runs.

    Example:
        >>> _ = ember.set_grad_enabled(False)   # off from here on
        >>> ember.is_grad_enabled()
        False
        >>> _ = ember.set_grad_enabled(True)
    """

    def __init__(self, mode):
        _check_bool(mode, "set_grad_enabled")
        self.prev = _state.grad
        self.mode = mode
        _state.grad = mode

    def __call__(self, fn):
        _state.grad = self.prev  # decorating must not change the mode
        return super().__call__(fn)

    def __enter__(self):
        _state.grad = self.mode

    def __exit__(self, exc_type, exc_value, traceback):
        _state.grad = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """``inference_mode()`` (or ``inference_mode(True)``): no graph recorded, like ``no_grad``,
    and ``is_inference_mode_enabled()`` is True. ``inference_mode(False)`` turns both off,
    recording back on, whatever mode was active. On exit both come back as they were.

    ``@inference_mode`` without parentheses decorates too. Where ember differs: PyTorch marks
    tensors made in inference mode as inference tensors (which autograd later refuses); ember
    makes ordinary tensors.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses: ``mode`` is the function

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (_state.grad, _state.inference)
        _state.grad = not self.mode
        _state.inference = self.mode

    def __exit__(self, exc_type, exc_value, traceback):
        _state.grad, _state.inference = self._prev

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """PyTorch's switch for running backward on its per-device worker threads.

    ember's backward always runs in the thread that calls it (what PyTorch does on the CPU
    either way), so the switch is accepted, remembered and changes nothing.
    """

    _enabled = True  # process-wide in PyTorch, so a class attribute here

    def __init__(self, mode):
        self.prev = set_multithreading_enabled._enabled
        self.mode = mode
        set_multithreading_enabled._enabled = mode

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        set_multithreading_enabled._enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """PyTorch's switch for making accumulated ``.grad`` strides match their parameter's.

    It changes strides only, never values; ember accumulates gradients in its own layout
    either way, so the switch is accepted, remembered and changes nothing.
    """

    _enabled = True

    def __init__(self, enable=True):
        self.prev = enforce_grad_layout_policy._enabled
        self.mode = enable
        enforce_grad_layout_policy._enabled = enable

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        enforce_grad_layout_policy._enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)
