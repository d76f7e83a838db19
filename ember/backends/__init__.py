"""``torch.backends``: switches and queries for the libraries PyTorch can compute with.

ember computes with NumPy (and CuPy on a GPU), so none of these flags change ember's results:
they exist so that scripts can set them, read them back and query availability, with PyTorch's
checks on the values. Each backend is a module at PyTorch's path: ``ember.backends.cudnn`` is
``torch.backends.cudnn``.
"""
from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
