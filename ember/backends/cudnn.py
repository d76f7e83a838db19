"""``torch.backends.cudnn``: switches for NVIDIA's cuDNN library.

ember never calls cuDNN (its GPU kernels are CuPy's), so ``is_available()`` is False and
``version()`` is None, as in a PyTorch built without cuDNN. The flags keep the values a script
sets (``benchmark``, ``deterministic``, ``enabled``, ``allow_tf32``), refuse non-bools with
PyTorch's errors, and ``flags(...)`` sets them for a ``with`` block.
"""
from . import _flags

# The flags (enabled, benchmark, deterministic, allow_tf32, benchmark_limit) are properties
# of the module, installed at the bottom.
__all__ = ["is_available", "version", "is_acceptable", "flags"]


def is_available():
    """Whether cuDNN can be used: never in ember (see the module docstring)."""
    return False


def version():
    """cuDNN's version number; None without cuDNN."""
    return None


def is_acceptable(tensor):
    """Whether cuDNN would take ``tensor``: never, as cuDNN is not used."""
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the cuDNN flags for a ``with`` block and restore them after it (PyTorch's defaults
    here are its arguments' defaults, so ``flags()`` turns cuDNN off)."""
    import sys
    return _flags.set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                            benchmark_limit=benchmark_limit, deterministic=deterministic,
                            allow_tf32=allow_tf32)


_flags.install(__name__, {
    "enabled": (True, _flags.bool_flag("set_enabled_cudnn")),
    "benchmark": (False, _flags.bool_flag("set_benchmark_cudnn")),
    "deterministic": (False, _flags.bool_flag("set_deterministic_cudnn")),
    "allow_tf32": (True, _flags.bool_flag("set_allow_tf32_cublas")),
    "benchmark_limit": (None, _flags.any_value),
})
