"""``torch.version``: what this build is. ember has no CUDA or ROCm build of its own: ``cuda`` is
the CUDA runtime version CuPy uses where CuPy sees a GPU, else None (as in a CPU build)."""
from . import _device

__all__ = ["__version__", "debug", "git_version", "hip", "rocm", "xpu", "cuda"]  # noqa: F822

__version__ = "0.1.0"
debug = False
git_version = "Unknown"
hip = rocm = xpu = None


def __getattr__(name):
    if name == "cuda":  # looked up when read: finding CuPy costs an import
        if not _device.cuda_available():
            return None
        v = _device._load_cupy().cuda.runtime.runtimeGetVersion()  # e.g. 12040
        return f"{v // 1000}.{v % 1000 // 10}"
    raise AttributeError(f"module 'ember.version' has no attribute {name!r}")
