"""Resampling and rearranging of ``torch.nn.functional``: ``pad``, ``interpolate``,
``pixel_shuffle`` / ``pixel_unshuffle`` and ``channel_shuffle``, with PyTorch's argument
checks; kernels in ``ember/ops/nn/resampling.py``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ... import _creation
from ...ops import batching
from ...ops.nn import resampling as _layers
from .pooling import _DIM_NAMES, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..._tensor import Tensor
    from ..._typing import IntOrInts


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Pad the last ``len(pad) // 2`` dims: constant, reflect, replicate or circular."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if not (len(pad) in (2, 4, 6) and nd + 1 <= input.ndim <= nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    _check_pad_sizes(input, pad, mode)
    return _layers.PADS[(mode, nd)](input, pad)


def _constant_pad(input, pad, value):
    """``constant_pad_nd`` with PyTorch's checks of negative (cropping) pads."""
    nd = len(pad) // 2
    for i in range(nd):
        n = input.shape[input.ndim - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if (lo < 0 and n + lo < 0) or (hi < 0 and n + min(lo, 0) + hi < 0):
            raise RuntimeError("narrow(): length must be non-negative.")
        if n + lo + hi < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} "
                               "resulted in a negative output size, which is invalid. Check "
                               f"dimension {input.ndim - 1 - i} of your input.")
    return _layers._constant_pad_nd(input, pad, value)


def _check_pad_sizes(input, pad, mode):
    """Reflection and replication padding's checks of the input and output sizes."""
    nd = len(pad) // 2
    first = input.ndim - nd - 1  # the channel dim (or the first dim when unbatched)
    if any(n == 0 for n in input.shape[first:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    sizes = input.shape[-nd:]
    for i in range(nd):  # last dim first, as PyTorch numbers its arguments
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and not (lo < input.shape[dim] and hi < input.shape[dim]):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                f"{list(input.shape)}")
    outs = [n + pad[2 * (nd - 1 - k)] + pad[2 * (nd - 1 - k) + 1] for k, n in enumerate(sizes)]
    if all(o < 1 for o in outs) or (nd == 1 and outs[0] < 1):
        names = ("D", "H", "W")[3 - nd:]
        inp = ", ".join(f"{a}: {n}" for a, n in zip(names, sizes))
        if nd == 3:
            inp = inp.replace("D: " + str(sizes[0]) + ",", "D: " + str(sizes[0]))
        elif nd == 2 and mode == "replicate":
            inp += " "
        out = " ".join(f"{a}: {o}" for a, o in zip(names, outs))
        raise RuntimeError(f"input ({inp}) is too small. Calculated output {out}")
    if min(outs) < 0:
        shape = list(input.shape[:-nd]) + outs
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{shape}")


def _trailing_dims_rule(fn, input, pad):
    """Under vmap: ``fn`` on the physical batch (it pads the trailing dims: the sample's)."""
    levels = batching.levels_of(input)
    return batching.wrap(fn(batching.physical(input, levels), pad), levels)


@batching.per_sample_with(_trailing_dims_rule)
def _pad_circular(input, pad):
    """PyTorch's composite: copy the input into the middle, then wrap each side around."""
    nd = len(pad) // 2
    lead = input.ndim - nd
    shape = list(input.shape)
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        n = input.shape[lead + i]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        shape[lead + i] = n + lo + hi
    out = _creation.empty(*shape, dtype=input.dtype, device=input.device)
    middle, source = out, input
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        middle = middle.narrow(dim, max(lo, 0), shape[dim] - max(lo, 0) - max(hi, 0))
        source = source.narrow(dim, max(-lo, 0), input.shape[dim] - max(-lo, 0) - max(-hi, 0))
    middle.copy_(source)
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, shape[dim] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, shape[dim] - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


# --------------------------------------------------------------------------- pixel shuffle, fold


def _check_shuffle(name, input, factor, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    _check_shuffle("pixel_shuffle", input, upscale_factor, "upscale_factor")
    c, sq = input.shape[-3], upscale_factor * upscale_factor
    if c % sq:
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {sq}")
    return _layers._pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    _check_shuffle("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {downscale_factor}")
    return _layers._pixel_unshuffle(input, downscale_factor)


# --------------------------------------------------------------------------- interpolate

_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _check_interp_sizes(sp, size):
    names = _DIM_NAMES[len(sp)] if len(sp) < 3 else ("D", "H", "W")
    if min(sp) > 0 and min(size) > 0:
        return
    inp = ", ".join(f"{a}: {v}" for a, v in zip(names, sp))
    out = ", ".join(f"{a}: {v}" for a, v in zip(names, size))
    sep = " and" if len(sp) == 1 else ""
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({inp})"
                       f"{sep} output ({out})")


def interpolate(input: Tensor, size: IntOrInts | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims (PyTorch's modes and source-index rules)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    sp = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(sp)} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            out_size = tuple(size)
        else:
            out_size = (size,) * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(sp)} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = tuple(scale_factor)
        else:
            scales = (scale_factor,) * nd
        out_size = tuple(int(math.floor(n * s)) for n, s in zip(sp, scales))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "area" and 1 <= nd <= 3:
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](
            input, out_size)
    if mode == "lanczos" and nd == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("ember: interpolate mode 'lanczos'")
    op = _layers.UPSAMPLE.get((mode, nd))
    if op is None:
        want = _INTERP_DIMS.get(mode)
        if want is not None and 1 <= nd <= 3:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{want + 2}D input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_INTERP_MODES} (got {mode})")
    if antialias:
        raise NotImplementedError(f"ember: interpolate antialias=True (mode {mode!r})")
    if not all(isinstance(s, int) for s in out_size):
        raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                        f"Tuple[int, int, int], but got size with types "
                        f"{[type(s) for s in out_size]}")
    _check_interp_sizes(sp, out_size)
    return op(input, sp, out_size, bool(align_corners), scales)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups (ShuffleNet): ``(N, g*k, ...)`` viewed as
    ``(N, g, k, ...)``, the two group dims swapped."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _layers._channel_shuffle(input, groups)
