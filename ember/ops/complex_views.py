"""``view_as_real`` and ``view_as_complex``: a complex tensor seen as pairs of reals (a new
last dim of size 2) and back. Both are views sharing storage with their input, as in PyTorch,
so a write through one shows in the other; their nodes are ``ViewAsRealBackward0`` and
``ViewAsComplexBackward0``, each derivative the other view's map. Both are functions only,
not Tensor methods (their ops' ``method=False``: ``_surface.py``)."""
from __future__ import annotations

import numpy as np

from ..autograd.views import as_view
from .operands import _check_tensor
from .registry import defop

_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _as_real(xp, a):
    """The (..., 2) real view of the complex array ``a`` (any strides)."""
    real = a.real
    step = real.itemsize
    return np.lib.stride_tricks.as_strided(real, a.shape + (2,), a.strides + (step,))


def _as_complex(xp, a):
    """The complex view of the (..., 2) real array ``a`` whose last dim is contiguous."""
    return a.view(_COMPLEX_OF[a.dtype])[..., 0]


# Neither map is holomorphic: the rules are stated in PyTorch's convention for complex
# gradients (the gradient of a real part is the real part of the complex gradient, ...).
_view_as_real = defop("view_as_real", n_in=1, jvp="linear", holomorphic=False,
                      batch="unchanged", method=False)(_as_real)


def _view_as_real_vjp(xp, g, ans, input):
    if type(g) is np.ndarray and g.strides[-1] == g.itemsize:
        return _as_complex(xp, g)  # the same numbers, seen as complex: no pass at all
    return g[..., 0] + 1j * g[..., 1]


_view_as_real.defvjp(_view_as_real_vjp)
_view_as_complex = defop("view_as_complex", n_in=1, jvp="linear",
                         holomorphic=False, batch="unchanged", method=False)(_as_complex)
_view_as_complex.defvjp(lambda xp, g, ans, input: xp.stack([xp.real(g), xp.imag(g)], axis=-1))


@_view_as_real.public
def view_as_real(input):
    """``input`` (complex) as a real tensor with a last dim of size 2: (real, imaginary)."""
    _check_tensor("view_as_real", input)
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input._data.dtype not in _REAL_OF:
        raise RuntimeError(f"ember: view_as_real of {input.dtype}")
    if input.is_conj():  # its pairs would not be the numbers it holds, nor share its storage
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    return as_view(_view_as_real(input), input, _as_real)


@_view_as_complex.public
def view_as_complex(input):
    """``input`` (float, last dim of size 2 with stride 1) as a complex tensor."""
    _check_tensor("view_as_complex", input)
    data = input._data
    if data.dtype == np.float16:
        raise NotImplementedError("ember: view_as_complex of a half tensor (ember has no "
                                  "complex32)")
    if data.dtype not in _COMPLEX_OF:
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: "
                           f"{input.dtype._word}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    item = data.itemsize
    if data.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * item) for s, n in zip(data.strides[:-1], data.shape[:-1]) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return as_view(_view_as_complex(input), input, _as_complex)
