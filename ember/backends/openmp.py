"""``torch.backends.openmp``: whether intra-op parallelism uses OpenMP. ember's kernels are
NumPy's, which thread through their BLAS, not OpenMP: False."""

__all__ = ["is_available"]


def is_available():
    return False
