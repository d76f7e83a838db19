"""``torch.testing.make_tensor``: a tensor of random values drawn uniformly from a range.

PyTorch's ranges, clamping, checks and messages; the values come from ember's generator, so
they differ from PyTorch's for the same seed.
"""

import math
import warnings
from collections.abc import Sequence

import numpy as np

from .. import _creation, _dtypes
from ..ops.complex_views import view_as_real


def _bounds(low, high, dtype, lowest, highest, default_low, default_high):
    """``low`` and ``high`` with defaults filled in, checked and clamped to what ``dtype`` holds
    (``[lowest, highest)``); integral types get ceiled bounds for ``randint``."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not (dtype.is_floating_point or dtype.is_complex):
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` with values uniform in ``[low, high)``: by default [-9, 9) for
    floating and complex types (each of real and imaginary part), [-9, 10) for integers and
    {False, True} for bool, bounds clamped to the dtype's range. ``noncontiguous`` returns
    every other element of a wider tensor; ``exclude_zero`` replaces zeros by 1 (integers) or
    the dtype's smallest normal number."""
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = shape[0]
    shape = tuple(shape)
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = shape[:-1] + (2 * shape[-1],)
    if dtype is _dtypes.bool:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        result = _creation.randint(low, high, shape, device=device, dtype=dtype)
    elif not floating:
        info = np.iinfo(dtype.np)
        top = int(info.max) + (1 if dtype is not _dtypes.int64 else 0)
        low, high = _bounds(low, high, dtype, int(info.min), top, -9, 10)
        result = _creation.randint(low, high, shape, device=device, dtype=dtype)
    else:
        real = dtype.to_real() if dtype.is_complex else dtype
        info = _dtypes.np_finfo(real.np)
        low, high = _bounds(low, high, dtype, float(-info.max), float(info.max), -9, 9)
        result = _creation.empty(shape, device=device, dtype=dtype)
        parts = view_as_real(result) if dtype.is_complex else result
        if high - low > float(info.max):  # (the span itself would overflow: draw half of it)
            parts.uniform_(low / 2, high / 2).mul_(2)
        else:
            parts.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if not floating else float(
            _dtypes.np_finfo((dtype.to_real() if dtype.is_complex else dtype).np).tiny)
    if floating:
        result.requires_grad = requires_grad
    return result
