"""The rest of ``torch.nn.functional``'s surface: ``pdist``, ``gumbel_softmax``,
``multilabel_margin_loss``, ``conv_tbc``, the ``*_with_indices`` forms of max pooling, the
deprecated ``upsample*``, the ``has_torch_function*`` probes, ``assert_int_or_pair``, and the
float8 matmuls (``scaled_mm``, ``scaled_grouped_mm``, ``grouped_mm``) that ember refuses as
PyTorch's CPU build does. Each is composed of ember's differentiable ops, so gradients (and
second derivatives) come from the ops' rules; ``pdist`` is an op of its own (see below).
"""
from __future__ import annotations

import enum
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _creation, _dtypes
from ..._tensor import Tensor
from ...ops.autocast import autocast_op
from ...ops.registry import defop
from ...ops.shape.joins import cat as _cat
from ...ops.shape.joins import stack as _stack
from ._common import composite_vjp
from .activation import softmax
from .conv import conv1d
from .dense import linear
from .loss import _reduce, _reduction, cross_entropy
from .pooling import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from .resampling import channel_shuffle, interpolate

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..._typing import DTypeLike, IntOrInts

__all__ = ["pdist", "gumbel_softmax", "multilabel_margin_loss", "conv_tbc",
           "native_channel_shuffle", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "upsample",
           "upsample_nearest", "upsample_bilinear", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "assert_int_or_pair",
           "ScalingType", "SwizzleType", "scaled_mm", "scaled_grouped_mm", "grouped_mm",
           "linear_cross_entropy"]


# --------------------------------------------------------------------------- pdist


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of a 2-d ``input``, pair (i, j) for i < j in
    row-major order: ``N * (N - 1) / 2`` of them. The gradient of a zero distance, and of a
    zero component, is 0 (PyTorch's convention); for ``p = inf`` every component at the
    maximum gets the full gradient."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return _pdist(input, float(p))


# The distances as one op, ``PdistBackward0`` as in PyTorch: forward and backward on raw
# arrays (composed of ember's ops, it ran ~10 ops over an array of every pair's difference
# and their rules: 7.3x PyTorch at 1408 x 3, and out of memory at 1155 x 866). p = 2 takes
# the Gram form (``_gram_pdist``), any other p the rows one by one (``_row_pairs``).
# The composition (``_pdist_composite``) still serves second derivatives and forward mode:
# the rule records it when the gradient must be differentiable.
@defop("pdist", n_in=1, jvp="transpose", batch="loop", method=False)
def _pdist(xp, input, p):
    if p == 2 and _gram_applies(xp, input):
        return _gram_pdist(xp, input)
    n = input.shape[0]
    if _at_once(input):
        i, j = _pair_rows(xp, n, xp.arange(n * (n - 1) // 2))
        return _norm(xp, input[j] - input[i], p)
    out = xp.empty(n * (n - 1) // 2, input.dtype)
    for _, pairs, _, diff in _row_pairs(xp, input):
        out[pairs] = _norm(xp, diff, p)
    return out


_ROW_CHUNK = 1 << 16  # elements of a chunk of differences: it and its temporaries stay in L2


def _at_once(x):
    """Whether every pair's difference fits one chunk: then they are taken at once, by two
    gathers, a handful of NumPy calls instead of a handful per row (39 x 26, p = 1.5, forward
    and backward: 1.28 -> 0.42 ms; p = 1: 0.54 -> 0.18 ms)."""
    n, m = x.shape
    return n * (n - 1) // 2 * m <= _ROW_CHUNK


def _row_pairs(xp, x):
    """Per row i and chunk of the rows j > i: i, the slice of the pairs (i, j) in row-major
    order, the rows j (a slice) and ``x[j] - x[i]``, one subtraction of contiguous rows (no
    gather, no array of every pair's difference: n rows of m features take n m memory, not
    n² m). Chunks of _ROW_CHUNK elements, as each difference is read again by the norm's
    or the slope's passes: 1155 x 866 float32, p = 1, forward 0.54 -> 0.34 s, backward
    1.09 -> 0.90 s. What stays over PyTorch (p = 1 and inf: ~4x) is passes NumPy can't fuse:
    PyTorch's kernel is one loop per pair, where here the subtraction alone (~0.26 ns an
    element, n² m / 2 of them) already takes 1.3x PyTorch's whole p = 1 op, forward and
    backward, and the norm adds 2 passes and the slope 4."""
    n, m = x.shape
    step = max(1, _ROW_CHUNK // max(m, 1))
    start = 0
    for i in range(n - 1):
        for a in range(i + 1, n, step):
            b = min(a + step, n)
            yield i, slice(start + a - i - 1, start + b - i - 1), slice(a, b), x[a:b] - x[i]
        start += n - 1 - i


def _norm(xp, diff, p):
    """The p-norms of the rows of ``diff`` (which it overwrites). In place, and the sums as
    a product with ones (BLAS's gemv): a chunk of 75 x 866 float32, p = 1: 22 -> 8 us."""
    if p == 2:
        return xp.sqrt(xp.einsum("ij,ij->i", diff, diff))
    ones = xp.ones(diff.shape[1], diff.dtype)
    if p == 0:
        return (diff != 0).astype(diff.dtype) @ ones
    a = xp.abs(diff, out=diff)
    if p == 1:
        return a @ ones
    if p == math.inf:
        return a.max(1) if a.shape[1] else a.sum(1)
    a **= p
    return (a @ ones) ** (1 / p)


def _pdist_rule(xp, g, ans, input, p):
    if isinstance(g, Tensor):  # a graph of the gradient: the composition
        return composite_vjp(_pdist_composite, input, g, p)
    if p == 2 and _gram_applies(xp, input):
        return _gram_pdist_grad(xp, g, ans, input)
    if p == 0:
        return xp.zeros_like(input)
    if _at_once(input):
        n = input.shape[0]
        i, j = _pair_rows(xp, n, xp.arange(n * (n - 1) // 2))
        by_pair = xp.zeros((n, n, input.shape[1]), input.dtype)  # (i, j): no repeats
        by_pair[i, j] = _pdist_slope(xp, input[j] - input[i], ans, g, p)
        return by_pair.sum(0) - by_pair.sum(1)  # (2 n² m: within 2 chunks)
    grad = xp.zeros_like(input)
    for i, pairs, js, diff in _row_pairs(xp, input):
        w = _pdist_slope(xp, diff, ans[pairs], g[pairs], p)  # d / d x[j]; -w: d / d x[i]
        grad[js] += w
        grad[i] -= w.sum(0)
    return grad


def _pdist_slope(xp, diff, dist, g, p):
    """``g`` times d dist / d diff, per pair (rows of ``diff``), PyTorch's: 0 where a
    distance is 0 (and, for p < 1, where a component is); for p = inf sign(diff) on every
    component at the maximum."""
    dist, g = dist[:, None], g[:, None]
    if p == 1:
        w = xp.sign(diff)
        w *= g
        return w
    if p == math.inf:
        w = xp.sign(diff)
        w *= xp.abs(diff) == dist
        w *= g
        return w
    zero = dist == 0
    if p == 2:
        return diff * xp.where(zero, 0, g / xp.where(zero, 1, dist))
    a = xp.abs(diff)
    out = xp.sign(diff) * (xp.where(a == 0, 1, a) / xp.where(zero, 1, dist)) ** (p - 1)
    return xp.where((a == 0) | zero, 0, out * g)


_pdist.defvjp(_pdist_rule)


# --------------------------------------------------------------------------- pdist, p = 2
#
# ‖x_i - x_j‖² = ‖c_i‖² + ‖c_j‖² - 2 c_i·c_j, with c the rows of x less their mean (the
# distances don't move; centring makes the norms, hence the cancellation below, as small as
# it gets): every pair's dot product from ONE matrix product (a BLAS GEMM over the upper
# blocks of rows), instead of n²/2 subtractions and reductions over m features. The backward
# likewise: grad_i = Σ_j W_ij (c_i - c_j) with W_ij = g_ij / d_ij, i.e. diag(W 1) c - W c,
# one more GEMM. 1155 x 866 float32, forward + backward: 1.32 s -> 0.12 s, 5.5x -> 0.4x
# PyTorch (whose kernel is one fused loop per pair).
#
# Accuracy. In float64 (u = 2^-53; float32 input is computed in float64 too, where its
# products are exact) with S = ‖c_i‖² + ‖c_j‖²: a dot product of m terms is off by at most
# γ_m ‖c_i‖ ‖c_j‖ ≤ γ_m S / 2 (γ_m = m u / (1 - m u), for any order of summation, a
# blocked GEMM's included), the squared norms by γ_m ‖c_i‖² and γ_m ‖c_j‖², the two adds by
# 2u 2S: d² is off by at most ε S, ε = 2 γ_m + 4u ≈ 2 (m + 2) u, and d relatively by
# ε S / (2 d²). A pair with d² ≥ τ S thus has d to ε / (2τ); the others (near-duplicate rows,
# identical ones: d = 0) are computed directly from their difference, in float64. τ is
#  - 32 ε / eps (eps: the dtype's) so that d is within 1/64 of the dtype's rounding: for
#    float32 at m = 866, τ = 5e-5 (pairs closer than 0.7% of sqrt(S) go direct);
#  - at most 1/2: float64 input, where nothing is left to spare, keeps d² within 4x the
#    direct form's own bound ((m + 2) u d²: u per difference, γ_m for the sum).
# The backward: the GEMMs' error on grad_i is at most γ_n Σ_j |W_ij| (‖c_i‖ + ‖c_j‖)
# ≤ γ_n sqrt(2/τ) Σ_j |g_ij| (‖c_i‖ + ‖c_j‖ ≤ sqrt(2S) ≤ sqrt(2/τ) d_ij), the direct sum's
# γ_n Σ_j |g_ij|: float32 at n = 1155, 2e-11 relatively; float64, within 2x. Pairs with
# d² < τ S (d from the forward) add their term directly.
# S under _TINY (where squares underflow) or over _HUGE (overflow) goes direct as well, and
# input with an inf or nan goes by rows (centring would spread them to every row).
_GRAM_BLOCK = 1 << 21  # float64 elements of a block of rows of the Gram matrix: 16 MB
_TINY = 2.0 ** -1000
_HUGE = np.finfo(np.float64).max / 4


def _gram_applies(xp, x):
    return x.shape[0] > 1 and x.shape[1] > 0 and bool(xp.isfinite(x).all())


def _gram_setup(xp, x):
    """The rows less their mean, in float64; their squared norms (nan where the sums of two
    could overflow: those pairs go direct); and τ (above)."""
    c = x.astype(xp.float64)
    c -= c.sum(0) / x.shape[0]  # (the mean, without ``mean``'s Python overhead)
    sq = xp.einsum("ij,ij->i", c, c)
    sq[sq > _HUGE] = xp.nan
    eps = float(_dtypes.np_finfo(x.dtype).eps)
    return c, sq, min(0.5, 64 * (x.shape[1] + 2) * 2.0 ** -53 / eps)


def _gram_blocks(xp, n):
    """Blocks of rows [a, b) (about _GRAM_BLOCK elements of the Gram matrix's columns a..n-1
    each); where their pairs lie in pdist's row-major order; and the mask of those pairs in
    the block (column > row)."""
    a = 0
    while a < n - 1:
        b = min(n - 1, a + max(1, _GRAM_BLOCK // (n - a)))
        upper = xp.arange(n - a) > xp.arange(b - a)[:, None]
        yield a, b, slice(_pair_start(n, a), _pair_start(n, b)), upper
        a = b


def _pair_start(n, i):
    """Where the pairs (i, j > i) start in pdist's row-major order (i an int or an array)."""
    return i * (2 * n - i - 1) // 2


def _gram_pdist(xp, x):
    n = x.shape[0]
    c, sq, tau = _gram_setup(xp, x)
    out = xp.empty(n * (n - 1) // 2, x.dtype)
    near = []
    for a, b, pairs, upper in _gram_blocks(xp, n):
        s = sq[a:b, None] + sq[a:]
        # (the block's square as ``v @ v.T``, which NumPy hands to BLAS's syrk: half the
        # products, 1155 x 866: 33 -> 17 ms; its rectangle to the right, a GEMM)
        d2 = xp.concatenate([c[a:b] @ c[a:b].T, c[a:b] @ c[b:].T], axis=1)
        d2 *= -2
        d2 += s
        d2, s = d2[upper], s[upper]
        s *= tau
        s += _TINY
        near.append(xp.nonzero(~(d2 >= s))[0] + pairs.start)  # (~: nan too)
        xp.maximum(d2, 0, out=d2)
        out[pairs] = xp.sqrt(d2, out=d2)
    k = xp.concatenate(near)
    if k.size:
        i, j = _pair_rows(xp, n, k)
        for at, diff in _differences(xp, x, i, j):
            out[k[at]] = xp.sqrt(xp.einsum("ij,ij->i", diff, diff))
    return out


def _gram_pdist_grad(xp, g, ans, x):
    n, m = x.shape
    c, sq, tau = _gram_setup(xp, x)
    d = ans.astype(xp.float64)
    zero = d == 0
    w = xp.where(zero, 0.0, g / xp.where(zero, 1.0, d))  # PyTorch's: 0 through d = 0
    wc = xp.zeros((n, m))  # W c
    w1 = xp.zeros(n)  # W 1
    near = []
    for a, b, pairs, upper in _gram_blocks(xp, n):
        s = (sq[a:b, None] + sq[a:])[upper]
        s *= tau
        s += _TINY
        far = d[pairs] ** 2 >= s
        near.append(xp.nonzero(~far)[0] + pairs.start)
        block = xp.zeros((b - a, n - a))  # rows a..b-1 of W, columns a..n-1
        block[upper] = xp.where(far, w[pairs], 0.0)
        square = block[:, :b - a]  # (W's (a..b-1)^2 block: its lower half too)
        square += square.T.copy()
        below = block[:, b - a:]  # (its transpose: rows b.. of W, columns a..b-1)
        wc[a:b] += block @ c[a:]
        wc[b:] += below.T @ c[a:b]
        w1[a:b] += block.sum(1)
        w1[b:] += below.sum(0)
    grad = w1[:, None] * c
    grad -= wc
    k = xp.concatenate(near)
    if k.size:
        i, j = _pair_rows(xp, n, k)
        for at, diff in _differences(xp, x, i, j):
            diff *= w[k[at], None]
            grad = _add_rows(xp, grad, xp.concatenate([i[at], j[at]]),
                             xp.concatenate([diff, -diff]))
    return grad.astype(x.dtype, copy=False)


def _add_rows(xp, out, rows, values):
    """``out`` with each row of ``values`` added to its row ``rows[k]`` (rows repeat: one
    ``bincount`` over (row, column) keys, in float64), in ``out``'s dtype."""
    n, m = out.shape
    keys = (rows[:, None] * m + xp.arange(m)).reshape(-1)
    sums = xp.bincount(keys, values.reshape(-1), minlength=n * m).reshape(n, m)
    return (out + sums).astype(out.dtype, copy=False)


def _pair_rows(xp, n, k):
    """The rows (i, j) of the pairs at positions ``k`` of pdist's row-major order."""
    starts = _pair_start(n, xp.arange(n))
    i = xp.searchsorted(starts, k, side="right") - 1
    return i, k - starts[i] + i + 1


def _differences(xp, x, i, j):
    """``x[i] - x[j]`` in float64 (exact for float32 input), in chunks of _GRAM_BLOCK
    elements: each chunk's positions in ``i`` and the chunk."""
    step = max(1, _GRAM_BLOCK // x.shape[1])
    for s in range(0, len(i), step):
        at = xp.arange(s, min(s + step, len(i)))
        yield at, x[i[at]].astype(xp.float64) - x[j[at]]


def _pdist_composite(input, p):
    """pdist composed of ember's ops (differentiable to any order)."""
    i, j = np.triu_indices(input.shape[0], 1)
    dev = input.device
    diff = input[_creation.tensor(i, device=dev)] - input[_creation.tensor(j, device=dev)]
    return _row_norm(diff, p)


def _row_norm(diff, p):
    """``‖diff‖_p`` along dim 1, with PyTorch's pdist gradients at zeros and ties."""
    a = diff.abs()
    if p == 0:
        return (a != 0).to(diff.dtype).sum(1) + (diff * 0).sum(1)  # no gradient, in the graph
    if p == 1:
        return a.sum(1)
    if p == float("inf"):
        top = a.amax(1, keepdim=True).detach()
        at_top = (a == top).to(diff.dtype)
        # value max|d|; gradient sign(d) on each component at the maximum (not split)
        return (a * at_top).sum(1) - (at_top.sum(1) - 1) * top.squeeze(1)
    if p == 2:  # (no mask on zero components: the square's second derivative there is 2)
        total = (diff * diff).sum(1)
    else:
        zero = a == 0
        total = (a.masked_fill(zero, 1.0) ** p).masked_fill(zero, 0.0).sum(1)
    nil = total == 0
    return (total.masked_fill(nil, 1.0) ** (1.0 / p)).masked_fill(nil, 0.0)


# --------------------------------------------------------------------------- gumbel softmax


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g = -log(Exponential(1))`` drawn from ember's generator. ``hard=True`` returns the
    one-hot of the sample's argmax, with the soft sample's gradient (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# --------------------------------------------------------------------------- multilabel margin


@autocast_op("multilabel_margin_loss")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``sum over targets j, non-targets i of max(0, 1 - (x[j] - x[i])) / C`` per sample; a
    sample's targets are the class indices of its ``target`` row up to the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    nd = input.dim()
    if nd > 2 or (nd == 2 and input.shape[1] == 0) or (nd == 1 and input.shape[0] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target.dtype != _dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._word}")
    if not input.is_floating_point():
        raise NotImplementedError('"multilabel_margin_loss_forward_out_frame" not implemented '
                                  f"for '{input.dtype._word}'")
    x = input.reshape(-1, max(input.shape[-1], 1) if nd else 1)
    t = target.detach().reshape(x.shape).cpu().numpy()
    c = x.shape[1]
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    # a target position counts while no -1 came before it in its row
    valid = np.cumsum(t == -1, axis=1) == 0
    is_target = np.zeros(t.shape, bool)
    rows = np.nonzero(valid)[0]
    is_target[rows, t[valid]] = True
    picked = x.gather(1, _creation.tensor(np.where(valid, t, 0), device=x.device))
    margins = (1 - picked.unsqueeze(2) + x.unsqueeze(1)).relu()  # gradient 0 at 0, as PyTorch's
    pairs = _creation.tensor(valid[:, :, None] & ~is_target[:, None, :], dtype=x.dtype,
                             device=x.device)
    loss = (margins * pairs).sum((1, 2)) / c
    if nd < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------- conv_tbc, shuffle


@autocast_op("conv_tbc")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution over a (time, batch, channel) input with a (width, in, out) weight:
    ``conv1d`` on the transposed layouts, transposed back."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` (PyTorch's native kernel of the same function)."""
    return channel_shuffle(input, groups)


# --------------------------------------------------------------------------- *_with_indices


def max_pool1d_with_indices(input: Tensor, kernel_size: IntOrInts,
                            stride: IntOrInts | None = None, padding: IntOrInts = 0,
                            dilation: IntOrInts = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size: IntOrInts,
                            stride: IntOrInts | None = None, padding: IntOrInts = 0,
                            dilation: IntOrInts = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def max_pool3d_with_indices(input: Tensor, kernel_size: IntOrInts,
                            stride: IntOrInts | None = None, padding: IntOrInts = 0,
                            dilation: IntOrInts = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning ``(output, indices)`` whatever ``return_indices`` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                      return_indices=True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` returning ``(output, indices)``."""
    return adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning ``(output, indices)``."""
    return adaptive_max_pool2d(input, output_size, return_indices=True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning ``(output, indices)``."""
    return adaptive_max_pool3d(input, output_size, return_indices=True)


# --------------------------------------------------------------------------- deprecated upsample


def _deprecated(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)


def upsample(input: Tensor, size: IntOrInts | None = None,
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """``interpolate`` under its old name (with PyTorch's deprecation warning)."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: IntOrInts | None = None,
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """``interpolate(mode='nearest')`` under its old name (deprecated)."""
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: IntOrInts | None = None,
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    """``interpolate(mode='bilinear', align_corners=True)`` under its old name (deprecated)."""
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --------------------------------------------------------------------------- dispatch probes


def _overrides(obj):
    """Whether ``obj`` carries a ``__torch_function__`` of its own (ember's Tensors do not)."""
    return not isinstance(obj, Tensor) and hasattr(type(obj), "__torch_function__")


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__``."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(obj: Any) -> bool:
    """``has_torch_function((obj,))``."""
    return _overrides(obj)


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return any(_overrides(a) for a in args)


def assert_int_or_pair(arg: int | Sequence[int], arg_name: str, message: str) -> None:
    """Assert that ``arg`` is an int or a pair (``message.format(arg_name)`` otherwise)."""
    assert isinstance(arg, int) or len(arg) == 2, message.format(arg_name)


# --------------------------------------------------------------------------- float8 matmuls


class ScalingType(enum.Enum):
    """How ``scaled_mm`` scales its operands."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.Enum):
    """The layout of ``scaled_mm``'s block scales."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


def _no_float8(name: str) -> Any:
    raise NotImplementedError(
        f"{name}: ember has no float8 dtypes (and PyTorch runs this only on CUDA float8 "
        "tensors); compute the product in a floating dtype with matmul")


def scaled_mm(mat_a: Tensor, mat_b: Tensor, scale_a: Any, scale_recipe_a: Any, scale_b: Any,
              scale_recipe_b: Any, swizzle_a: Any = None, swizzle_b: Any = None,
              bias: Tensor | None = None, output_dtype: DTypeLike = None,
              contraction_dim: Sequence[int] = (), use_fast_accum: bool = False) -> Tensor:
    """A float8 matmul with scales: refused (ember has no float8 dtypes)."""
    return _no_float8("scaled_mm")


def scaled_grouped_mm(mat_a: Tensor, mat_b: Tensor, scale_a: Any, scale_recipe_a: Any,
                      scale_b: Any, scale_recipe_b: Any, swizzle_a: Any = None,
                      swizzle_b: Any = None, bias: Tensor | None = None,
                      offs: Tensor | None = None, output_dtype: DTypeLike = None,
                      contraction_dim: Sequence[int] = (), use_fast_accum: bool = False) -> Tensor:
    """A grouped float8 matmul with scales: refused (ember has no float8 dtypes)."""
    return _no_float8("scaled_grouped_mm")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype: DTypeLike = None) -> Tensor:
    """Several matmuls at once (the mixture-of-experts product). 3-d by 3-d: one per batch
    entry. With ``offs`` (the groups' cumulative ends): a 2-d ``mat_a``'s row groups each by
    their 3-d ``mat_b`` slice, a 2-d ``mat_b``'s column groups each by their ``mat_a`` slice,
    or, both 2-d, the contraction dim in groups (a 3-d result)."""
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in (_dtypes.float32, _dtypes.bfloat16, _dtypes.float16):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {m.dtype._word}")
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} must be 2d or 3d")
        if (m.shape[-1] * m.element_size()) % 16:
            raise RuntimeError("strides should be multiple of 16 bytes")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    a_2d, b_2d = mat_a.dim() == 2, mat_b.dim() == 2
    if (a_2d or b_2d) and offs is None:
        raise RuntimeError("offs needs to be passed when either input is 2d")
    if not (a_2d or b_2d):
        return mat_a @ mat_b
    assert offs is not None  # (checked above)
    ends = [int(e) for e in offs.tolist()]
    bounds = list(zip([0, *ends[:-1]], ends))
    if a_2d and b_2d:
        return _stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in bounds])
    if a_2d:
        return _cat([mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(bounds)], 0)
    return _cat([mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(bounds)], 1)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``: PyTorch
    chunks the logits to save memory (``options`` tunes that); ember computes them whole,
    with the same values and gradients."""
    logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
