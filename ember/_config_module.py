"""Configuration modules (``torch._dynamo.config``, ``torch._inductor.config``): module
attributes with fixed names that scripts set and read back.

As in PyTorch, only the known names exist: reading or setting another raises
``AttributeError("<module>.<name> does not exist")``. ``config.patch(name=value, ...)`` sets
values for a ``with`` block (or a decorated function) and restores them after it.
"""
from __future__ import annotations

import contextlib
import sys
import types


class _Namespace:
    """A nested group of settings (``config.triton.cudagraphs``)."""

    def __init__(self, prefix, defaults):
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{self._prefix}.{name} does not exist")

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"{self._prefix}.{name} does not exist")
        self._values[name] = value


def install(module_name, defaults):
    """Give the module ``module_name`` the settings ``defaults`` (name -> value; a dict value
    is a nested group), checked on every read and write."""
    module = sys.modules[module_name]
    known = set(defaults)
    public = "torch" + module_name[len("ember"):]  # the name PyTorch's messages use

    class ConfigModule(types.ModuleType):
        def __getattr__(self, name):
            raise AttributeError(f"{public}.{name} does not exist")

        def __setattr__(self, name, value):
            if name not in known and not name.startswith("__"):
                raise AttributeError(f"{public}.{name} does not exist")
            super().__setattr__(name, value)

    for name, value in defaults.items():
        if isinstance(value, dict):
            value = _Namespace(f"{public}.{name}", value)
        module.__dict__[name] = value
    module.__class__ = ConfigModule

    def _resolve(dotted):
        *parents, leaf = dotted.split(".")
        owner = module
        for parent in parents:
            owner = getattr(owner, parent)
        return owner, leaf

    @contextlib.contextmanager
    def patch(arg1=None, arg2=None, **changes):
        """Set settings for a ``with`` block or a decorated function: ``patch(name=value)``,
        ``patch({"name": value})`` or ``patch("name", value)``."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        saved = {}
        try:
            for dotted, value in changes.items():
                owner, leaf = _resolve(dotted)
                saved[dotted] = getattr(owner, leaf)
                setattr(owner, leaf, value)
            yield
        finally:
            for dotted, value in saved.items():
                owner, leaf = _resolve(dotted)
                setattr(owner, leaf, value)

    module.__dict__["patch"] = patch
