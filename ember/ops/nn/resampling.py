"""Resampling and rearranging the spatial layout as PyTorch's fused ops: upsampling
(nearest, linear, cubic stencils as taps, ``_taps.py``), reflection/replication/circular
padding and ``constant_pad_nd`` (whose gradient is ``constant_pad_nd`` with the pads
negated), pixel shuffle and channel shuffle. ``ember/nn/functional/resampling.py`` checks the
arguments.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..registry import defop
from ._common import _apply, _zeros_rule
from ._taps import _map, _map_transpose, _tap, apply_dense, dense, dense_friendly

# --------------------------------------------------------------------------- upsampling


def _opmath(dtype):
    """The type PyTorch computes interpolation coordinates in (float for float32 and below)."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _nearest_taps(kind, n, out, scale, dtype, nd):
    """PyTorch's nearest source indices: its 2-d kernel computes them in float32 and copies or
    halves the index when the size stays or doubles; its 1-d/3-d kernel uses ``_opmath``."""
    i = np.arange(out)
    if nd == 2 and kind == "nearest" and out in (n, 2 * n):
        return [_tap(i if out == n else i >> 1)]
    t = np.float32 if nd == 2 else _opmath(dtype)
    s = t(1.0 / scale) if scale else t(n) / t(out)
    if kind == "nearest":
        src = i.astype(t) * s
    elif nd == 2:
        src = (i + 0.5) * np.float64(s)
    else:
        src = (i + 0.5).astype(t) * s
    return [_tap(np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n - 1))]


def _source_index(n, out, align_corners, scale, dtype, cubic=False):
    """PyTorch's ``area_pixel_compute_source_index`` for every output position."""
    t = _opmath(dtype)
    i = np.arange(out).astype(t)
    if align_corners:
        s = t((n - 1) / (out - 1)) if out > 1 else t(0)
        return s * i
    s = t(1.0 / scale) if scale else t(n) / t(out)
    src = s * (i + t(0.5)) - t(0.5)
    return src if cubic else np.maximum(src, t(0))


def _floor_and_lambda(src, n):
    index = np.minimum(np.floor(src).astype(np.int64), n - 1)
    return index, np.clip(src - index, 0, 1).astype(src.dtype)


def _linear_taps(n, out, align_corners, scale, dtype):
    if n == out:
        return [_tap(np.arange(out))]
    i0, lam = _floor_and_lambda(_source_index(n, out, align_corners, scale, dtype), n)
    i1 = i0 + (i0 < n - 1)
    return [_tap(i0, (1 - lam).astype(dtype)), _tap(i1, lam.astype(dtype))]


_A = -0.75  # PyTorch's bicubic kernel parameter


def _cubic_taps(n, out, align_corners, scale, dtype):
    i, t = _floor_and_lambda(_source_index(n, out, align_corners, scale, dtype, cubic=True), n)

    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    return [_tap(np.clip(i - 1 + k, 0, n - 1), w.astype(dtype)) for k, w in enumerate(weights)]


@functools.lru_cache(maxsize=256)
def _upsample_plan(kind, plane, output_size, align_corners, scales, dtype):
    dims = []
    for k, (n, o) in enumerate(zip(plane, output_size)):
        scale = scales[k] if scales else None
        if kind.startswith("nearest"):
            taps = _nearest_taps(kind, n, o, scale, dtype, len(plane))
        elif kind == "cubic":
            taps = _cubic_taps(n, o, align_corners, scale, dtype)
        else:
            taps = _linear_taps(n, o, align_corners, scale, dtype)
        dims.append((n, taps))
    return dims


@functools.lru_cache(maxsize=256)
def _upsample_dense(kind, plane, output_size, align_corners, scales, dtype):
    """The plan's per-dim matrices (``dense``), when a product beats the taps
    (``dense_friendly``: resampling to or from a few positions), else None."""
    plan = _upsample_plan(kind, plane, output_size, align_corners, scales, dtype)
    mats = [dense(n, taps, dtype) for n, taps in plan]
    return mats if dense_friendly(mats) else None


# The input length of the last dim up to which a transpose maps that dim by a product.
_LAST_BY_PRODUCT = 192


@functools.lru_cache(maxsize=256)
def _last_dense(kind, plane, output_size, align_corners, scales, dtype):
    """The last dim's matrix (``dense``; None where the dim is left as it is)."""
    n, taps = _upsample_plan(kind, plane, output_size, align_corners, scales, dtype)[-1]
    return dense(n, taps, dtype)


def _resample(xp, x, kind, input_size, output_size, align_corners, scales, transpose):
    """Upsampling (or its transpose) of a raw array: matrix products where they pay and the
    values are finite (``apply_dense``), else the taps. Only onto more positions than it
    reads: the taps read a shrinking map's few positions, a product every one (the bicubic
    forward to (7, 3) from 1M elements: 0.6 ms by taps, 1.8 ms by products).

    A transpose maps a short last dim by a product, the other dims by taps: the taps'
    scatter-add along the last dim is a strided add per run, whose inner loops are a run's few
    elements, once per row; a product costs ``2 n`` flops per element of the gradient. Measured
    on 600K elements, products / taps: 0.5-0.9 up to n = 154 (the bilinear 0.6 backward of
    (51, 128, 154): 1.4 against 2.7 ms), 1.0-1.7 at n = 240, 3-8 at n = 800."""
    numpy_float = type(x) is np.ndarray and x.dtype.char in "fd"
    grows = math.prod(output_size) > math.prod(input_size)
    if numpy_float and grows != transpose:
        mats = _upsample_dense(kind, input_size, output_size, align_corners, scales, x.dtype)
        if mats is not None:
            out = apply_dense(x, [m.T if transpose and m is not None else m for m in mats])
            if out is not None:
                return out
    plan = _upsample_plan(kind, input_size, output_size, align_corners, scales, x.dtype)
    if not transpose:
        return _map(xp, x, plan)
    if numpy_float and input_size[-1] <= _LAST_BY_PRODUCT:
        m = _last_dense(kind, input_size, output_size, align_corners, scales, x.dtype)
        out = None if m is None else apply_dense(x, [None] * (len(plan) - 1) + [m.T])
        if out is not None:  # the other dims by taps, the last one done
            return _map_transpose(xp, out, list(plan[:-1]) + [(input_size[-1], None)])
    return _map_transpose(xp, x, plan)


def _upsample_ops(name, kind, nd):
    @defop(name, n_in=1, jvp="transpose", batch="unchanged")  # (maps the trailing dims)
    def forward(xp, input, input_size, output_size, align_corners, scales):
        return _resample(xp, input, kind, input_size, output_size, align_corners, scales,
                         False)

    @defop(name + "_backward", n_in=1, jvp="transpose", batch="unchanged")
    def backward(xp, grad, input_size, output_size, align_corners, scales):
        return _resample(xp, grad, kind, input_size, output_size, align_corners, scales, True)

    forward.defvjp(lambda xp, g, ans, input, input_size, output_size, align_corners, scales:
                   _apply(backward, xp, g, input_size, output_size, align_corners, scales))
    backward.defvjp(lambda xp, g, ans, grad, input_size, output_size, align_corners, scales:
                    _apply(forward, xp, g, input_size, output_size, align_corners, scales))
    return forward


UPSAMPLE = {  # (mode, spatial dims) -> op
    ("nearest", 1): _upsample_ops("upsample_nearest1d", "nearest", 1),
    ("nearest", 2): _upsample_ops("upsample_nearest2d", "nearest", 2),
    ("nearest", 3): _upsample_ops("upsample_nearest3d", "nearest", 3),
    ("nearest-exact", 1): _upsample_ops("upsample_nearest_exact1d", "nearest_exact", 1),
    ("nearest-exact", 2): _upsample_ops("upsample_nearest_exact2d", "nearest_exact", 2),
    ("nearest-exact", 3): _upsample_ops("upsample_nearest_exact3d", "nearest_exact", 3),
    ("linear", 1): _upsample_ops("upsample_linear1d", "linear", 1),
    ("bilinear", 2): _upsample_ops("upsample_bilinear2d", "linear", 2),
    ("trilinear", 3): _upsample_ops("upsample_trilinear3d", "linear", 3),
    ("bicubic", 2): _upsample_ops("upsample_bicubic2d", "cubic", 2),
}


# --------------------------------------------------------------------------- padding


def _pad_index(mode, n, lo, hi):
    """The input index of each output position along a padded dim (pads may be negative)."""
    c = np.arange(-lo, n + hi)
    if mode == "reflect":
        c = np.abs(c)
        return np.where(c > n - 1, 2 * (n - 1) - c, c)
    return np.clip(c, 0, n - 1)


@functools.lru_cache(maxsize=256)
def _pad_plan(mode, plane, pad):
    """Per trailing dim (first to last) its taps; ``pad`` lists the last dim first."""
    nd = len(plane)
    return [(n, [_tap(_pad_index(mode, n, pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]))])
            for i, n in enumerate(plane)]


def _pad_ops(name, mode, nd):
    @defop(name, n_in=1, jvp="transpose", batch="unchanged")  # (pads the trailing dims)
    def forward(xp, input, pad):
        return _map(xp, input, _pad_plan(mode, input.shape[input.ndim - nd:], pad))

    @defop(name + "_backward", n_in=2, jvp="transpose", batch="unchanged")
    def backward(xp, grad, input, pad):
        return _map_transpose(xp, grad, _pad_plan(mode, input.shape[input.ndim - nd:], pad))

    forward.defvjp(lambda xp, g, ans, input, pad: _apply(backward, xp, g, input, pad))
    backward.defvjp(lambda xp, g, ans, grad, input, pad: _apply(forward, xp, g, pad),
                    _zeros_rule)
    return forward


PADS = {(mode, nd): _pad_ops(f"{prefix}_pad{nd}d", mode, nd)
        for mode, prefix in (("reflect", "reflection"), ("replicate", "replication"))
        for nd in (1, 2, 3)}


@defop("constant_pad_nd", n_in=1, jvp="transpose", batch="unchanged")
def _constant_pad_nd(xp, input, pad, value):
    """Pad the trailing ``len(pad) // 2`` dims (last dim first in ``pad``); negative pads crop."""
    nd = len(pad) // 2
    lead = input.ndim - nd
    src, dst, shape = [slice(None)] * lead, [slice(None)] * lead, list(input.shape[:lead])
    for i in range(nd):
        n = input.shape[lead + i]
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        kept = n - max(-lo, 0) - max(-hi, 0)
        src.append(slice(max(-lo, 0), max(-lo, 0) + kept))
        dst.append(slice(max(lo, 0), max(lo, 0) + kept))
        shape.append(n + lo + hi)
    out = xp.full(tuple(shape), value, dtype=input.dtype)
    out[tuple(dst)] = input[tuple(src)]
    return out


_constant_pad_nd.defvjp(lambda xp, g, ans, input, pad, value:
                        _apply(_constant_pad_nd, xp, g, tuple(-p for p in pad), 0))


# --------------------------------------------------------------------------- pixel shuffle


def _shuffle(x, r, down):
    """(*, C*r*r, H, W) <-> (*, C, H*r, W*r): PyTorch's pixel_shuffle (``down``: unshuffle)."""
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    k = len(lead)
    if down:
        y = x.reshape(lead + (c, h // r, r, w // r, r))
        y = y.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
        out = y.reshape(lead + (c * r * r, h // r, w // r))
    else:
        y = x.reshape(lead + (c // (r * r), r, r, h, w))
        y = y.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
        out = y.reshape(lead + (c // (r * r), h * r, w * r))
    return out.copy() if r == 1 else out  # the reshape copied unless nothing moved


@defop("pixel_shuffle", n_in=1, jvp="linear", batch="unchanged")
def _pixel_shuffle(xp, input, upscale_factor):
    return _shuffle(input, upscale_factor, False)


@defop("pixel_unshuffle", n_in=1, jvp="linear", batch="unchanged")
def _pixel_unshuffle(xp, input, downscale_factor):
    return _shuffle(input, downscale_factor, True)


_pixel_shuffle.defvjp(lambda xp, g, ans, input, upscale_factor:
                      _apply(_pixel_unshuffle, xp, g, upscale_factor))
_pixel_unshuffle.defvjp(lambda xp, g, ans, input, downscale_factor:
                        _apply(_pixel_shuffle, xp, g, downscale_factor))


# --------------------------------------------------------------------------- channel shuffle
# ``channel_shuffle``: ShuffleNet's permutation of channels, ``(N, g * k, *)`` -> channels
# taken one from each of the ``g`` groups in turn. A permutation, so its derivative is the
# inverse shuffle (``k`` groups), itself an op: derivatives of any order, nodes named
# ``ChannelShuffleBackward0`` as PyTorch's.


@defop("channel_shuffle", n_in=1, jvp="linear", batch="fold")
def _channel_shuffle(xp, input, groups):
    n, c = input.shape[:2]
    rest = input.shape[2:]
    grouped = input.reshape(n, groups, c // groups, *rest)
    return xp.ascontiguousarray(xp.swapaxes(grouped, 1, 2)).reshape(input.shape)


_channel_shuffle.defvjp(lambda xp, g, ans, input, groups:
                        _apply(_channel_shuffle, xp, g, input.shape[1] // groups))
