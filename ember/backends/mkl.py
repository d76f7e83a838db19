"""``torch.backends.mkl``: whether PyTorch was built with Intel MKL. ember's kernels are NumPy's,
so this is False (even when NumPy itself links MKL: ember does not call it directly)."""
import contextlib

__all__ = ["is_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


@contextlib.contextmanager
def verbose(enable):
    """MKL's on-demand verbose output; ember has no MKL to make verbose, so this does nothing."""
    yield
