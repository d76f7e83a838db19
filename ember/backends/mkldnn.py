"""``torch.backends.mkldnn``: switches for oneDNN (MKL-DNN), PyTorch's CPU convolution library.

ember's CPU kernels are NumPy's, so the flags change nothing; they keep the values a script
sets, with PyTorch's checks. ``is_available()`` says whether ember uses oneDNN: it does not.
"""
from . import _flags

# The flags (enabled, deterministic, allow_tf32) are properties of the module, installed at
# the bottom. allow_tf32 reads None until set, as in PyTorch 2.13.
__all__ = ["is_available", "flags"]


def is_available():
    return False


def flags(enabled=False, deterministic=False, allow_tf32=True):
    """Set the flags for a ``with`` block and restore them after it."""
    import sys
    return _flags.set_flags(sys.modules[__name__], enabled=enabled,
                            deterministic=deterministic, allow_tf32=allow_tf32)


_flags.install(__name__, {
    "enabled": (True, _flags.bool_flag("set_enabled_mkldnn")),
    "deterministic": (False, _flags.bool_flag("set_deterministic_mkldnn")),
    "allow_tf32": (None, _flags.bool_flag("_set_onednn_allow_tf32")),
})
