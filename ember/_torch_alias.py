"""``import torch`` as ember: the import hook ``python -m ember run`` installs (and the
processes it starts, a launcher's ranks or ``spawn``'s children, install again)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "installed"]

# The top-level packages served from ember, and the ember module behind each.
_ALIASES = {"torch": "ember", "functorch": "ember._functorch"}


def _target(fullname):
    """The ember module name behind ``fullname`` (``torch.nn`` -> ``ember.nn``), or None."""
    top = fullname.partition(".")[0]
    if top in _ALIASES:
        return _ALIASES[top] + fullname[len(top):]
    return None


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``torch`` and ``torch.X`` as ``ember`` and ``ember.X`` (and ``functorch`` as
    ember's functorch module)."""

    def find_spec(self, fullname, path=None, target=None):
        target_name = _target(fullname)
        if target_name is None or importlib.util.find_spec(target_name) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return importlib.import_module(_target(spec.name))

    def exec_module(self, module):
        pass


def installed():
    """Whether ``import torch`` imports ember in this process."""
    return any(isinstance(f, TorchAlias) for f in sys.meta_path)


def install():
    """Make ``import torch`` import ember for the rest of this process."""
    if not installed():
        sys.meta_path.insert(0, TorchAlias())
