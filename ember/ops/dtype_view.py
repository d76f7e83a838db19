"""``Tensor.view(dtype)``: the same bytes read as another dtype, as a view sharing storage
(PyTorch's semantics: a reinterpretation, not a conversion). Between dtypes of different sizes
the last dim must be contiguous and is rescaled; the other strides and the storage offset must
divide by the size ratio. Not differentiable: the result never requires grad. (ember's
``view(dtype)`` used to convert the values, ``to(dtype)``, a silently different answer.)"""
from __future__ import annotations

from .. import _dtypes
from .._tensor import Tensor


def view_dtype(input, dtype):
    """``input``'s storage read as ``dtype`` (see the module docstring)."""
    dtype = _dtypes.as_dtype(dtype, "view")
    if "bfloat16" in (str(input.dtype), str(dtype)):
        raise NotImplementedError("ember: view(dtype) with bfloat16 (ember stores bfloat16 "
                                  "values in float32)")
    data = input._data
    new = dtype.np
    old_size, new_size = data.itemsize, new.itemsize
    if old_size != new_size:
        what = (f"to view {input.dtype._word} as {dtype._word} (different element sizes)")
        if data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if data.strides[-1] != old_size and data.shape[-1] > 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{data.strides[-1] // old_size}")
        if new_size > old_size:
            ratio = new_size // old_size
            if data.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{data.shape[-1]}")
            for d in range(data.ndim - 1):
                if (data.strides[d] // old_size) % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, "
                                       f"but got {data.strides[d] // old_size}")
            if input.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                                   f"but got {input.storage_offset()}")
    out = Tensor._make(data.view(new), None, False)
    # Shares the storage and the version counter, but is no autograd view (PyTorch's is not
    # differentiable: it never requires grad, whatever its base does).
    out._vc = input._vc
    return out
