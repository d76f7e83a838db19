"""``affine_grid`` and ``grid_sample``: spatial transformers.

``grid_sample`` reads ``input`` (N, C, [D,] H, W) at the points of ``grid`` (N, [Do,] Ho, Wo,
2 or 3; x, y[, z] in [-1, 1]) by (tri)linear, nearest or bicubic interpolation. It is one op
(``grid_sampler_2d`` / ``grid_sampler_3d``, "the fused op" below) computed on raw arrays, with
rules for both gradients. The same function composed of ember's ops
(``_grid_sample_composite``: the taps' integer positions computed apart, with no gradient,
the values gathered from the flattened spatial dims, the weights differentiable functions of
the grid) is what the op's rules record when a gradient must itself be differentiable
(second derivatives, forward mode).
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from ... import _creation
from ..._tensor import Tensor
from ...ops.registry import defop
from ...ops.shape.joins import meshgrid, stack
from ._common import composite_vjp

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_CUBIC_A = -0.75  # Keys' cubic convolution coefficient (Keys 1981), the one PyTorch uses


def _default_align_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=3)
        return False
    return align_corners


# --------------------------------------------------------------------------- affine_grid


def _base_coords(size, align_corners, dtype, device):
    """The normalized pixel centres along one dim: -1..1 (corners) or shrunk by (S-1)/S."""
    if size == 1:
        return _creation.zeros(1, dtype=dtype, device=device)
    line = _creation.linspace(-1, 1, size, dtype=dtype, device=device)
    return line if align_corners else line * ((size - 1) / size)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for an
    output of ``size`` (N, C, H, W) or (N, C, D, H, W): ``grid[n, ..., :] = theta[n] @
    (x, y[, z], 1)`` over the output's normalized pixel centres."""
    align_corners = _default_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2:] != (2, 3):
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2:] != (3, 4):
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {len(spatial) + 1}] but got: "
                           f"[{theta.shape[0]}, {len(spatial) + 1}].")
    # coordinates x (last spatial dim) first, then y, z; then the homogeneous 1
    axes = [_base_coords(s, align_corners, theta.dtype, theta.device) for s in spatial]
    mesh = meshgrid(*axes, indexing="ij")
    base = stack([*mesh[::-1], _creation.ones_like(mesh[0])], -1)  # (*spatial, nd + 1)
    flat = base.reshape(1, -1, len(spatial) + 1)
    grid = flat @ theta.transpose(1, 2)
    return grid.reshape(size[0], *spatial, len(spatial))


# --------------------------------------------------------------------------- grid_sample


def _unnormalize(coord, size, align_corners):
    """[-1, 1] to pixel units: the corner pixels' centres at +-1, or their outer edges."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, low, high):
    """``coord`` folded into [low, high] by repeated reflection at the ends."""
    if low == high:
        return coord * 0
    span = high - low
    dist = (coord - low).abs()
    flips = (dist / span).floor().detach()
    extra = dist - flips * span  # the remainder, its gradient that of dist
    return (extra + low).where(flips % 2 == 0, span - extra + low)


def _pad_coord(coord, size, padding_mode, align_corners):
    """Where a coordinate reads under ``padding_mode``: clipped to the image (border), folded
    back into it (reflection), or left (zeros: reads outside are 0)."""
    if padding_mode == "zeros":
        return coord
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0.0, size - 1.0)
        else:
            coord = _reflect(coord, -0.5, size - 0.5)
    return _clip(coord, size)


def _clip(coord, size):
    """``coord`` clamped to [0, size - 1], its gradient 0 at the bounds too (PyTorch's)."""
    inner = (coord > 0) & (coord < size - 1)
    return coord.where(inner, coord.detach().clamp(0, size - 1))


def _gather(flat, spatial, taps):
    """``flat`` (N, C, P) read at integer positions ``taps``: one integer tensor per spatial
    dim (last dim first), broadcasting together to (*K, N, Q), K the taps around each point.
    All taps are read by one gather: values (N, C, K, Q), and whether each tap is inside the
    image (N, K, Q, in ``flat``'s dtype); positions outside read 0. (One gather, so that the
    backward scatters every tap into one gradient of ``flat``: 16 bicubic taps summed as 16
    image-sized gradients cost 30x PyTorch's whole op. The positions carry no gradient: their
    arithmetic runs on the raw arrays, ~10 ops' cost fewer, except under vmap.)"""
    plain = all(type(idx) is Tensor for idx in taps)  # (under vmap: batched, as ops)
    inside = linear = None
    stride = 1
    for idx, size in zip(taps, spatial[::-1]):
        idx = idx._data if plain else idx
        ok = (idx >= 0) & (idx < size)
        inside = ok if inside is None else inside & ok
        term = (idx.clip(0, size - 1) if plain else idx.clamp(0, size - 1)) * stride
        linear = term if linear is None else linear + term
        stride *= size
    n, c = flat.shape[:2]
    q = linear.shape[-1]
    if plain:
        linear = Tensor._make(linear.reshape(-1, n, q).transpose(1, 0, 2).copy(), None, False)
        inside = Tensor._make(inside.reshape(-1, n, q).transpose(1, 0, 2), None, False)
    else:
        linear, inside = _taps_second(linear, n, q), _taps_second(inside, n, q)
    k = linear.shape[1]
    values = flat.gather(2, linear.reshape(n, 1, k * q).expand(n, c, k * q))
    return values.reshape(n, c, k, q), inside.to(flat.dtype)


def _taps_second(t, n, q):
    """(*K, N, Q) -> (N, K, Q), the tap dims flattened in order."""
    return t.reshape(-1, n, q).permute(1, 0, 2)


def _weighted(values, inside, weight):
    """``Σ_k values[:, :, k] * weight[k]`` (``weight``: (*K, N, Q)), taps outside the image
    weighted 0."""
    n, c, _, q = values.shape
    weight = _taps_second(weight, n, q) * inside
    return (values * weight.unsqueeze(1)).sum(2)


def _corners(t, dim, nd):
    """``t`` (2 or 4 taps stacked first, then (N, Q)) placed on axis ``dim`` of a grid of
    ``nd`` tap axes, so that the dims' taps broadcast into every combination."""
    return t.reshape((1,) * dim + (t.shape[0],) + (1,) * (nd - dim - 1) + tuple(t.shape[1:]))


def _cubic_weights(t):
    """The cubic convolution weights of taps -1, 0, 1, 2 at fraction ``t``, stacked (4, ...):
    Keys' kernel at distances t + 1, t, 1 - t and 2 - t, the outer two on its far piece
    (1 < |x| < 2), the inner two on its near piece (|x| <= 1)."""
    a = _CUBIC_A
    near = stack([t, 1 - t])
    near = ((a + 2) * near - (a + 3)) * near * near + 1
    far = stack([t + 1, 2 - t])
    far = ((a * far - 5 * a) * far + 8 * a) * far - 4 * a
    return stack([far[0], near[0], near[1], far[1]])


def _check_grid_sample(input, grid, mode, padding_mode):
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if input.dim() != grid.dim() or input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    if input.dim() not in (4, 5):
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if mode == "bicubic" and input.dim() != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        kernel = f"grid_sampler_{nd}d_cpu_kernel_impl" if nd == 2 else f"grid_sampler_{nd}d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._word}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._word} but found "
                           f"{grid.dtype._word}")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """``input`` interpolated at ``grid``'s normalized points (see the module docstring)."""
    _check_grid_sample(input, grid, mode, padding_mode)
    align_corners = _default_align_corners(align_corners)
    sampler = _grid_sampler_2d if input.dim() == 4 else _grid_sampler_3d
    return sampler(input, grid, mode, padding_mode, bool(align_corners))[0]


def _grid_sample_composite(input, grid, mode, padding_mode, align_corners):
    """grid_sample composed of ember's ops (differentiable to any order): what the op's
    rules (``_input_rule``, ``_grid_rule``) record when the gradient is itself recorded."""
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])
    out_spatial = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, -1)
    g = grid.reshape(n, -1, len(spatial))
    # one (N, Q) coordinate per spatial dim, x (the last dim) first, in pixel units
    sizes = spatial[::-1]
    coords = [_unnormalize(g[..., k], sizes[k], align_corners) for k in range(len(sizes))]
    if mode == "bicubic":
        out = _bicubic(flat, spatial, coords, padding_mode, align_corners)
    else:
        coords = [_pad_coord(x, s, padding_mode, align_corners) for x, s in zip(coords, sizes)]
        if mode == "nearest":
            taps = [x.detach().round().long() for x in coords]
            values, inside = _gather(flat, spatial, taps)
            out = (values * inside.unsqueeze(1)).squeeze(2)
            out = out + _zero_link(g)
        else:
            out = _linear(flat, spatial, coords)
    return out.reshape(n, c, *out_spatial)


def _zero_link(g):
    """A zero that depends on ``g``: nearest sampling's gradient with respect to the grid is
    zero (PyTorch gives zeros, not no gradient)."""
    link = g.sum(-1) * 0
    return link.masked_fill(~link.isfinite(), 0).unsqueeze(1)


def _linear(flat, spatial, coords):
    """(Bi/tri)linear: the 2^nd corners around each point, weighted by the fractions."""
    lows = [x.detach().floor() for x in coords]
    fracs = [x - lo for x, lo in zip(coords, lows)]
    lows = [lo.long() for lo in lows]
    nd = len(coords)
    # the corners in the order of their bits, the first coordinate (x) slowest
    taps = [_corners(stack([lo, lo + 1]), d, nd) for d, lo in enumerate(lows)]
    weight = None
    for d, f in enumerate(fracs):
        w = _corners(stack([1 - f, f]), d, nd)
        weight = w if weight is None else weight * w
    values, inside = _gather(flat, spatial, taps)
    return _weighted(values, inside, weight)


def _bicubic(flat, spatial, coords, padding_mode, align_corners):
    """Bicubic: 4 x 4 taps around each point with cubic convolution weights; the padding mode
    moves each tap (not the point), as PyTorch does."""
    x, y = coords
    w_size, h_size = spatial[1], spatial[0]
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    shifts = _creation.tensor([-1.0, 0.0, 1.0, 2.0], dtype=x.dtype,
                              device=x.device).reshape(4, 1, 1)
    tx = _corners(_tap(x0 + shifts, w_size, padding_mode, align_corners), 0, 2)
    ty = _corners(_tap(y0 + shifts, h_size, padding_mode, align_corners), 1, 2)
    weight = _corners(wx, 0, 2) * _corners(wy, 1, 2)
    values, inside = _gather(flat, spatial, [tx, ty])
    return _weighted(values, inside, weight)


def _tap(pos, size, padding_mode, align_corners):
    """A bicubic tap's integer position under ``padding_mode``."""
    return _pad_coord(pos, size, padding_mode, align_corners).long()


# --------------------------------------------------------------------------- the fused op
#
# grid_sample is ONE op, with PyTorch's nodes (GridSampler2DBackward0, GridSampler3DBackward0):
# forward and both gradients on raw arrays. Composed of ember's ops it ran ~100 ops and their
# rules per call (4x PyTorch on a 4-point grid over a 1M-pixel image: per-op overhead), and in
# 3-d most of its time went to index arithmetic over int64 arrays of every tap (2.3x at 166k
# points). Here each spatial dim's taps (positions, weights, the weights' slopes) are computed
# on (N, Q) arrays, the points' own size, and only then combined by broadcasting into
# (*taps, N, Q): one ``take`` reads every tap, one ``add_at`` scatters the input's gradient.
# The taps' flat positions and weights are two more outputs of the op, hidden (the public
# function returns the first), which the node saves for the rules as it saves sort's indices:
# recomputing them cost each rule as much again as the forward (6 of 16 ms in 3-d). The
# composition (``_grid_sample_composite``) serves gradients that must be differentiable
# (create_graph, and forward mode, which transposes the rules).

_BICUBIC_SHIFTS = (-1.0, 0.0, 1.0, 2.0)


def _sample(xp, input, grid, mode, padding_mode, align_corners):
    """(output, the taps' flat positions (*taps, N, Q), their weights (same shape))."""
    n, c = input.shape[:2]
    index, weight = _combine(xp, input.shape,
                             _dim_taps(xp, input.shape, grid, mode, padding_mode,
                                       align_corners, False))
    values = _read_taps(xp, input, index)  # (C, *taps, N, Q)
    k = math.prod(weight.shape[:-2])
    # Σ_k values · weight by einsum: no temporary of every tap (0.9 -> 0.5 ms at 8 x 166k)
    out = xp.einsum("ckq,kq->cq", values.reshape(c, k, -1), weight.reshape(k, -1))
    out = _channels_second(xp, out.reshape(c, n, -1))
    return out.reshape(n, c, *grid.shape[1:-1]), index, weight


@defop("grid_sampler_2d", n_in=2, nout=3, jvp="transpose", batch="loop", method=False)
def _grid_sampler_2d(xp, input, grid, mode, padding_mode, align_corners):
    return _sample(xp, input, grid, mode, padding_mode, align_corners)


@defop("grid_sampler_3d", n_in=2, nout=3, jvp="transpose", batch="loop", method=False)
def _grid_sampler_3d(xp, input, grid, mode, padding_mode, align_corners):
    return _sample(xp, input, grid, mode, padding_mode, align_corners)


def _input_rule(xp, g, ans, input, grid, mode, padding_mode, align_corners):
    """d/d input: each tap's weight times the output's gradient, added into the flattened
    input at the tap. (``add_at`` of float32 on one flat index: NumPy 2's ``add.at`` takes
    ~2 ns a value there, 2-3x faster than a float64 ``bincount``.)"""
    g = g[0]
    if isinstance(g, Tensor):  # a graph of the gradient: the composition
        return composite_vjp(_grid_sample_composite, input, g, grid, mode, padding_mode,
                             align_corners)
    _, index, weight = ans
    n, c = input.shape[:2]
    gc = _by_channel(xp, g, n, c)  # (C, N, Q)
    part = weight * gc.reshape(c, *(1,) * (weight.ndim - 2), *gc.shape[1:])
    total = xp.zeros((c, n * math.prod(input.shape[2:])), dtype=g.dtype)
    flat = index.reshape(-1)
    for ch in range(c):
        xp.add_at(total[ch], flat, part[ch].reshape(-1))
    return _channels_second(xp, total.reshape(c, n, -1)).reshape(input.shape)


def _grid_rule(xp, g, ans, input, grid, mode, padding_mode, align_corners):
    """d/d grid: per spatial dim, ``Σ_taps value · g · d weight / d coordinate`` (PyTorch's
    conventions: 0 where the padding clamps a coordinate, reflection's sign flips, 0 for
    nearest), each dim's slopes contracted with the other dims' weights."""
    g = g[0]
    if isinstance(g, Tensor):  # a graph of the gradient: the composition
        return composite_vjp(_composite_of_grid, grid, g, input, mode, padding_mode,
                             align_corners)
    if mode == "nearest":
        return xp.zeros_like(grid)
    n, c = input.shape[:2]
    axes = _dim_taps(xp, input.shape, grid, mode, padding_mode, align_corners, True)
    index = ans[1]
    values = _read_taps(xp, input, index)  # (C, *taps, N, Q)
    k = math.prod(values.shape[1:-2])
    gv = xp.einsum("ckq,cq->kq", values.reshape(c, k, -1), _by_channel(xp, g, n, c)
                   .reshape(c, -1)).reshape(values.shape[1:])  # Σ_c g · value: (*taps, N, Q)
    weights = [w for _, w, _ in axes]
    slopes = [(h * dw).sum(0) for h, (_, _, dw) in zip(_marginals(gv, weights), axes)]
    # the grid's last dim holds x (the input's last spatial dim) first
    return xp.stack(slopes[::-1], -1).reshape(grid.shape)


def _marginals(h, weights):
    """For each tap axis of ``h`` (*taps, N, Q), ``h`` with every other tap axis summed
    against that dim's ``weights``: halves summed out in turn, so that the partial sums
    are shared (3-d: 5 passes over 4-8 taps instead of 6 over 8-4)."""
    nd = len(weights)
    if nd == 1:
        return [h]
    half = nd // 2
    left, right = h, h
    for b in reversed(range(half, nd)):  # the right half summed out: the left's marginals
        left = _contract(left, weights[b], b)
    for b in range(half):  # the left half summed out (axis 0 each time)
        right = _contract(right, weights[b], 0)
    return _marginals(left, weights[:half]) + _marginals(right, weights[half:])


def _contract(h, w, at):
    """``Σ_t h[..., t (on axis at), ...] · w[t]``: tap by tap, no temporary of h's size."""
    lead = (slice(None),) * at
    out = h[lead + (0,)] * w[0]
    for t in range(1, w.shape[0]):
        out += h[lead + (t,)] * w[t]
    return out


_grid_sampler_2d.defvjp(_input_rule, _grid_rule)
_grid_sampler_3d.defvjp(_input_rule, _grid_rule)
for _op in (_grid_sampler_2d, _grid_sampler_3d):
    _op.saved_outputs = (1, 2)  # the taps' positions and weights, not the output
    _op.missing_grads_as_none = True  # (the hidden outputs get none)


def _composite_of_grid(grid, input, mode, padding_mode, align_corners):
    return _grid_sample_composite(input, grid, mode, padding_mode, align_corners)


def _by_channel(xp, g, n, c):
    """The output's gradient (N, C, *out) as (C, N, Q), the taps' layout."""
    return g.reshape(n, c, -1).transpose(1, 0, 2)


def _channels_second(xp, t):
    """(C, N, ...) -> (N, C, ...), contiguous (a view where N or C is 1)."""
    t = t.swapaxes(0, 1)
    return t if t.shape[0] == 1 or t.shape[1] == 1 else xp.ascontiguousarray(t)


def _on_axis(t, at, nd):
    """A dim's (T, N, Q) array placed on tap axis ``at`` of ``nd``, to broadcast."""
    return t.reshape(*(1,) * at, t.shape[0], *(1,) * (nd - at - 1), *t.shape[1:])


def _read_taps(xp, input, index):
    """``input`` (N, C, *spatial) read at the flat positions ``index`` (into N x P, the
    batch's flattened images one after another): (C, *index.shape), by one ``take``."""
    n, c = input.shape[:2]
    flat = input.reshape(n, c, -1).transpose(1, 0, 2).reshape(c, -1)  # (a view for N = 1)
    return flat.take(index, axis=1)


def _dim_taps(xp, shape, grid, mode, padding_mode, align_corners, slopes):
    """Per spatial dim of an input of ``shape`` (N, C, *spatial), in that order, where the
    points of ``grid`` read it (``_axis_taps``): (positions, weights, slopes or None), each
    (T, N, Q). The positions of the last dim carry the batch's offset (image n starts at
    n x P in the batch's flattened images). With ``slopes`` (the grid's gradient, which
    reads the positions the forward saved) no positions (None)."""
    n = shape[0]
    spatial = shape[2:]
    nd = len(spatial)
    points = grid.reshape(n, -1, nd)
    taps = []
    for a in range(nd):  # (the grid's first coordinate is x: the last dim)
        taps.append(_axis_taps(xp, points[..., nd - 1 - a], spatial[a], mode, padding_mode,
                               align_corners, slopes))
    pos, w, dw = taps[-1]
    if pos is not None and n > 1:
        offset = xp.arange(n, dtype=pos.dtype) * math.prod(spatial)
        taps[-1] = (pos + offset[:, None], w, dw)  # (on the smallest array)
    return taps


def _combine(xp, shape, taps):
    """The dims' taps broadcast together: flat positions and weights (*taps, N, Q). A dim
    whose taps are consecutive (positions (1, N, Q): the first, then +1, ...) adds its
    first to a base of the points' size and its steps to small offsets: a 3-d point's 8
    corners under border padding are then one addition of the base and the offsets (3.2 ->
    ~1.6 ms at 166k points), and every weight two products of small arrays."""
    nd = len(taps)
    index = weight = offsets = None
    stride = 1
    for a in reversed(range(nd)):
        pos, w, _ = taps[a]
        term = pos * stride if stride != 1 else pos
        if pos.shape[0] == 1:  # consecutive: base and offsets
            step = xp.arange(w.shape[0], dtype=pos.dtype) * stride
            step = step.reshape(*(1,) * a, -1, *(1,) * (nd - a + 1))
            offsets = step if offsets is None else offsets + step
            term = term[0]
        else:
            term = _on_axis(term, a, nd)
        index = term if index is None else term + index
        w_on = _on_axis(w, a, nd)
        weight = w_on if weight is None else w_on * weight
        stride *= shape[2 + a]
    if offsets is not None:
        index = index + offsets
    return xp.broadcast_to(index, weight.shape), weight


def _axis_taps(xp, coord, size, mode, padding_mode, align_corners, slopes):
    """One spatial dim's taps for normalized coordinates ``coord`` (N, Q): integer positions
    in [0, size) (T, N, Q; or (1, N, Q) for T consecutive taps from there), weights (0
    outside the image under zeros padding), and with ``slopes`` the weights' derivatives
    with respect to ``coord`` (T, N, Q each; T: 1, 2 or 4 taps)."""
    scale = (size - 1) / 2 if align_corners else size / 2  # d pixel / d coordinate
    x = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if mode == "bicubic":
        return _cubic_taps(xp, x, size, scale, padding_mode, align_corners, slopes)
    x, mult = _padded(xp, x, size, padding_mode, align_corners, slopes)
    if mode == "nearest":  # (no slopes: its grid gradient is 0)
        pos = xp.round(x)[None]  # half to even, as PyTorch's nearbyint
        if padding_mode != "zeros":  # (x clamped into the image)
            return pos.astype(xp.int64), xp.ones_like(pos), None
        pos, ok = _inside(xp, pos, size)
        return pos, ok.astype(x.dtype), None
    lo = xp.floor(x)
    ok = None
    if padding_mode != "zeros" and size > 1:
        # x in [0, size - 1]: the interval [lo, lo + 1] kept inside, so every tap reads the
        # image (at x = size - 1 the upper tap takes weight 1; the slope there is 0 anyway)
        lo = xp.minimum(lo, size - 2)
        pos = None if slopes else lo.astype(xp.int64)[None]  # (consecutive: see _combine)
    else:
        pos, ok = _inside(xp, lo + _column(xp, (0.0, 1.0), x), size)
    f = x - lo
    w = _pair(xp, 1 - f, f)
    if ok is not None:
        w = w * ok  # (times, not where: a NaN weight stays NaN, as PyTorch's)
    if not slopes:
        return pos, w, None
    if mult is None:  # (zeros padding)
        return None, w, ok * _column(xp, (-scale, scale), x)
    step = mult * scale
    dw = _pair(xp, -step, step)
    return None, w, dw if ok is None else dw * ok


def _column(xp, values, x):
    """A few constants in ``x``'s dtype on a leading axis, to broadcast against (T, *x)."""
    return xp.asarray(values, dtype=x.dtype).reshape(len(values), *(1,) * x.ndim)


def _pair(xp, first, second):
    """``xp.stack([first, second])``, without stack's Python-level cost (~5 us a call)."""
    out = xp.empty((2, *first.shape), dtype=first.dtype)
    out[0] = first
    out[1] = second
    return out


def _inside(xp, pos, size):
    """Float tap positions clamped into [0, size) as integers, and whether each was inside."""
    ok = (pos >= 0) & (pos <= size - 1)
    return xp.fmin(xp.fmax(pos, 0), size - 1).astype(xp.int64), ok  # (fmax: NaN to 0)


def _padded(xp, x, size, padding_mode, align_corners, slopes):
    """Pixel coordinates ``x`` where they read under ``padding_mode`` (see ``_pad_coord``),
    and d padded / d x (None: 1). A NaN coordinate clamps to 0, as PyTorch's."""
    if padding_mode == "zeros":
        return x, None
    mult = None
    if padding_mode == "reflection":
        low, high = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
        if low == high:
            return xp.zeros_like(x), xp.zeros_like(x)
        span = high - low
        d = x - low
        dist = xp.abs(d)
        flips = xp.floor(dist / span)
        extra = dist - flips * span
        odd = flips % 2 == 1
        x = xp.where(odd, span - extra, extra) + low
        if slopes:
            sign = xp.sign(d)
            mult = xp.where(odd, -sign, sign)
    if slopes:  # the clamp's slope: 0 on and beyond the bounds
        inner = (x > 0) & (x < size - 1)
        mult = inner.astype(x.dtype) if mult is None else xp.where(inner, mult, 0)
    return xp.fmin(xp.fmax(x, 0), size - 1), mult  # (fmax: NaN to 0)


def _cubic_taps(xp, x, size, scale, padding_mode, align_corners, slopes):
    """Bicubic's 4 taps around ``x`` (pixel units): positions lo - 1 .. lo + 2, each moved by
    the padding (not the point, as PyTorch does), Keys' weights and their slopes."""
    lo = xp.floor(x)
    t = x - lo
    shifts = _column(xp, _BICUBIC_SHIFTS, x)
    pos = lo + shifts
    ok = None
    if padding_mode == "zeros":
        pos, ok = _inside(xp, pos, size)
    elif not slopes:
        pos = _padded(xp, pos, size, padding_mode, align_corners, False)[0].astype(xp.int64)
    # the taps' distances from x: 1 + t, t, 1 - t, 2 - t, and d distance / d t
    sign = _column(xp, (1.0, 1.0, -1.0, -1.0), x)
    dist = (t - shifts) * sign
    w = _keys(xp, dist)
    dw = _keys_slope(xp, dist) * (sign * scale) if slopes else None
    pos = None if slopes else pos
    if ok is not None:  # (times, not where: a NaN weight stays NaN, as PyTorch's)
        w = w * ok
        if slopes:
            dw = dw * ok
    return pos, w, dw


def _keys(xp, dist):
    """Keys' cubic convolution kernel at the 4 taps' distances ``dist`` (4, ...): the inner
    two on its |s| <= 1 piece, the outer two on its 1 < |s| < 2 piece."""
    a = _CUBIC_A
    w = xp.empty_like(dist)
    near, far = dist[1:3], dist[0::3]
    w[1:3] = ((a + 2) * near - (a + 3)) * near * near + 1
    w[0::3] = ((a * far - 5 * a) * far + 8 * a) * far - 4 * a
    return w


def _keys_slope(xp, dist):
    """The kernel's derivative at ``dist`` (as ``_keys``)."""
    a = _CUBIC_A
    w = xp.empty_like(dist)
    near, far = dist[1:3], dist[0::3]
    w[1:3] = (3 * (a + 2) * near - 2 * (a + 3)) * near
    w[0::3] = (3 * a * far - 10 * a) * far + 8 * a
    return w
