"""``torch.backends.opt_einsum``: contraction-order optimisation for ``einsum``.

PyTorch uses the ``opt_einsum`` package when it is installed; ember hands ``einsum`` to NumPy,
whose own path search plays that part. ``enabled`` and ``strategy`` are plain module attributes,
as in PyTorch: a script can set them and read them back.
"""
import importlib.util

from . import _flags

__all__ = ["is_available", "get_opt_einsum", "flags", "enabled", "strategy"]


def is_available():
    """True when the ``opt_einsum`` package is installed (as in PyTorch)."""
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The ``opt_einsum`` module when installed, else None."""
    if not is_available():
        return None
    import opt_einsum
    return opt_einsum


enabled = is_available()
strategy = "auto" if enabled else None


def flags(enabled=None, strategy=None):
    """Set ``enabled``/``strategy`` for a ``with`` block (None leaves one as it is)."""
    import sys
    settings = {k: v for k, v in (("enabled", enabled), ("strategy", strategy)) if v is not None}
    return _flags.set_flags(sys.modules[__name__], **settings)
