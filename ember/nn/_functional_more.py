"""More of ``torch.nn.functional``: ``rms_norm``.

Like PyTorch's CPU ``rms_norm``, a composite of ordinary ops (so its ``grad_fn`` chain is
``MulBackward0 <- RsqrtBackward0 <- AddBackward1 <- MeanBackward1 <- PowBackward0``), computed
in float32 for half-precision inputs.
"""
from __future__ import annotations

from .. import _dtypes
from ..ops import pointwise as _pw
from ..ops import unary as _unary
from .functional import _word

__all__ = ["rms_norm"]

# torch.finfo(dtype).eps: the gap between 1 and the next number (of the real part's type)
_EPS = {_dtypes.float32: 2.0 ** -23, _dtypes.float64: 2.0 ** -52, _dtypes.complex64: 2.0 ** -23,
        _dtypes.complex128: 2.0 ** -52}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight``, the mean over the trailing
    ``normalized_shape`` dims; ``eps`` defaults to the machine epsilon of the dtype it
    computes in (float32 for half-precision inputs)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    n = len(shape)
    if input.ndim < n or tuple(input.shape[input.ndim - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{_word(input.dtype)}\'')
    low = input.dtype in (_dtypes.float16, _dtypes.bfloat16)
    x = input.to(_dtypes.float32) if low else input
    if eps is None:
        eps = _EPS[x.dtype]  # of the dtype it computes in: float32's for half inputs
    dims = tuple(range(input.ndim - n, input.ndim))
    out = x * _unary.rsqrt(_pw.add_scalar(x.pow(2).mean(dims, keepdim=True), eps))
    if low:
        out = out.to(input.dtype)
    return out if weight is None else out * weight
