"""Module-level flags that keep what a script sets and check it the way PyTorch does.

PyTorch's ``torch.backends.cudnn.benchmark = True`` goes through a property on the module's
class; ember does the same: ``install(module, flags)`` gives ``module`` a subclass of
``ModuleType`` with one property per flag. Reading a flag back returns what was set.
"""
from __future__ import annotations

import contextlib
import sys
import types


def bool_flag(setter_name):
    """A flag that only takes a ``bool`` (PyTorch's C++ setters refuse anything else)."""
    def check(value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
        return value
    return check


def any_value(value):
    return value


def install(module_name, flags):
    """Turn the entries of ``flags`` (name -> (default, check)) into checked properties of
    the module ``module_name``."""
    module = sys.modules[module_name]
    values = {name: default for name, (default, _) in flags.items()}

    def prop(name, check):
        def get(self):
            return values[name]

        def set_(self, value):
            values[name] = check(value)
        return property(get, set_)

    namespace = {name: prop(name, check) for name, (_, check) in flags.items()}
    module.__class__ = type(type(module).__name__, (types.ModuleType,), namespace)
    return values


@contextlib.contextmanager
def set_flags(module, **settings):
    """Set module flags for the ``with`` block and restore the old values after it."""
    saved = {name: getattr(module, name) for name in settings}
    try:
        for name, value in settings.items():
            setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
