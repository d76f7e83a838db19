"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d/3d`` and their
``*_with_indices`` forms.

Each (sample, channel) plane draws one number ``u`` in [0, 1) per spatial dim (from ember's
generator, or ``_random_samples``); the k-th of ``out`` windows of ``pool`` elements along a
dim of ``size`` starts at ``int((k + u) * a) - int(u * a)``, ``a = (size - pool) / (out - 1)``
(computed in the input's dtype), the last one at ``size - pool``. The windows are gathered
from the flattened spatial dims and reduced by ``max``, whose gradient goes to the first
maximum of each window, as PyTorch's kernel's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _creation
from ..._tensor import Tensor
from ...ops import batching
from ...ops.autocast import autocast_op

if TYPE_CHECKING:
    from ..._typing import IntOrInts

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_DIM_WORDS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _starts(sample, size, pool, out, np_dtype):
    """The windows' first positions along one dim for each plane: (planes, out) ints."""
    u = sample.astype(np_dtype)
    starts = np.empty(u.shape + (out,), np.int64)
    if out > 1:
        alpha = np_dtype.type(size - pool) / np_dtype.type(out - 1)
        k = np.arange(out - 1, dtype=np_dtype)
        starts[..., :-1] = ((k + u[..., None]) * alpha).astype(np.int64) - \
            (u * alpha).astype(np.int64)[..., None]
    if out > 0:
        starts[..., -1] = size - pool
    return starts


@batching.per_sample  # (it reads the samples and each window's maximum: per sample)
def _fractional(nd, name, input, kernel_size, output_size, output_ratio, samples):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        len(output_ratio)  # a single float is PyTorch's TypeError here (its module pairs it)
        spatial_in = input.shape[-nd:]
        output_size = [int(spatial_in[d] * output_ratio[d]) for d in range(nd)]
    pool = _tuple(kernel_size, nd)
    out = _tuple(output_size, nd)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    spatial = tuple(x.shape[2:])
    if not input.is_floating_point():
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{input.dtype._word}'")
    if samples is None:
        samples = _creation.rand(n, c, nd, dtype=input.dtype)
    else:
        if samples.dtype != input.dtype:
            raise RuntimeError("Expect _random_samples to have the same dtype as input")
        if samples.shape[-1] != nd:
            raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                               f"{samples.shape[-1]}.")
    words = _DIM_WORDS[nd]
    prefix = name if nd == 2 else "fractional_max_pool3d_out"
    for d in range(nd):
        if out[d] + pool[d] - 1 > spatial[d]:
            raise RuntimeError(f"{prefix}(): pool {words[d]} {pool[d]} too large relative to "
                               f"input {words[d]} {spatial[d]}")
    u = samples.detach().cpu().numpy().reshape(n * c, nd)
    np_dtype = input.dtype.np
    # which sample drives which dim: PyTorch's 2-d kernel reads the width's first, its 3-d
    # kernel time, height, width in order
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_starts(u[:, order[d]], spatial[d], pool[d], out[d], np_dtype)
              for d in range(nd)]
    strides = np.cumprod((1,) + spatial[::-1])[:nd][::-1]  # of the flattened spatial dims
    # flat index of each (plane, output position, window offset)
    index = np.zeros((n * c,) + out + pool, np.int64)
    for d in range(nd):
        shape = [n * c] + [1] * (2 * nd)
        shape[1 + d] = out[d]
        offsets = [1] * (2 * nd + 1)
        offsets[1 + nd + d] = pool[d]
        pos = starts[d].reshape(shape) + np.arange(pool[d]).reshape(offsets)
        index = index + pos * strides[d]
    window = int(np.prod(pool))
    index = index.reshape(n, c, -1)
    flat = x.reshape(n, c, -1)
    gathered = flat.gather(2, _creation.tensor(index, device=x.device)).reshape(n, c, *out,
                                                                              window)
    values, arg = gathered.max(-1)
    picked = np.take_along_axis(index.reshape(n, c, *out, window),
                                arg.cpu().numpy()[..., None], -1)[..., 0]
    indices = _creation.tensor(picked, device=x.device)
    if not batched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: IntOrInts,
                                       output_size: IntOrInts | None = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """2-d fractional max pooling of (N, C, H, W) or (C, H, W): ``(output, indices)``."""
    return _fractional(2, "fractional_max_pool2d", input, kernel_size, output_size,
                       output_ratio, _random_samples)


@autocast_op("fractional_max_pool2d")
def fractional_max_pool2d(input: Tensor, kernel_size: IntOrInts,
                          output_size: IntOrInts | None = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None
                          ) -> Any:
    """2-d fractional max pooling; ``(output, indices)`` with ``return_indices``."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: IntOrInts,
                                       output_size: IntOrInts | None = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """3-d fractional max pooling of (N, C, T, H, W) or (C, T, H, W): ``(output, indices)``."""
    return _fractional(3, "fractional_max_pool3d", input, kernel_size, output_size,
                       output_ratio, _random_samples)


@autocast_op("fractional_max_pool3d")
def fractional_max_pool3d(input: Tensor, kernel_size: IntOrInts,
                          output_size: IntOrInts | None = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None
                          ) -> Any:
    """3-d fractional max pooling; ``(output, indices)`` with ``return_indices``."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]

