"""``torch.backends.cpu``: which SIMD level the CPU kernels use."""
import numpy as np

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """PyTorch names its kernels' instruction set ("AVX2", "AVX512", "DEFAULT", ...). ember's
    kernels are NumPy's, which picks its own at run time: the best level NumPy reports."""
    found = getattr(np._core if hasattr(np, "_core") else np.core, "_multiarray_umath", None)
    features = getattr(found, "__cpu_features__", {}) or {}
    for name, feature in (("AVX512", "AVX512F"), ("AVX2", "AVX2")):
        if features.get(feature):
            return name
    return "DEFAULT"
