"""Convolution (1-d to 3-d, strided, dilated, grouped, transposed) as differentiable primitives.

``convolution`` computes a cross-correlation as one GEMM per row of the kernel over a partial
im2col of the input (see ``_rows``); its transposed form is the GEMMs' transposes added back
row by row, then col2im over the other kernel dims, one strided add per tap. The two forms and
``convolution_backward_weight`` are each other's derivatives, so any order of derivative works.
``F.unfold`` / ``F.fold`` are full im2col / col2im (``_columns``, ``_col2im_raw``).

``ember/nn/functional/conv.py`` checks the arguments (PyTorch's checks, in its order) and
calls these ops; ``transposed_size``, the spatial size of a transposed convolution's output,
serves both.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..._tensor import Tensor
from .. import batching
from ..registry import defop


def _sliding(xp, x, kernel, stride, dilation):
    """Windows of ``x`` (N, C, *spatial): (N, C, *out, *kernel)."""
    nd = len(kernel)
    eff = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    win = np.lib.stride_tricks.sliding_window_view(x, eff, axis=tuple(range(2, 2 + nd)))
    key = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, d) for d in dilation)
    return win[key]


def _pad_raw(xp, x, pads):
    if not any(p for pair in pads for p in pair):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads))


def _columns(xp, x, kernel, stride, pads, dilation, groups):
    """im2col: x (N, C, *s) -> (N, groups, C/g * K, P), K = prod(kernel), P = output positions.

    Row ``c * K + k`` of a group holds channel ``c`` seen through kernel tap ``k`` at every
    output position: one contiguous copy, after which a convolution is one batched matmul.
    """
    nd = x.ndim - 2
    win = _sliding(xp, _pad_raw(xp, x, pads), kernel, stride, dilation)  # (N, C, *out, *k)
    n, c = x.shape[:2]
    out_sp = win.shape[2:2 + nd]
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    cols = win.transpose(order).reshape(n, groups, (c // groups) * math.prod(kernel),
                                        math.prod(out_sp))  # (sizes: -1 fails on empty arrays)
    return cols, out_sp


# The convolutions loop over the taps of the kernel's first spatial dim and im2col only the
# others: ``_rows`` copies the padded input once as Z (C * k_rest, S0, N * out_rest), of which
# kernel row r reads rows r*d0, r*d0 + s0, ... (a view when s0 = 1), so each row of the kernel
# is one GEMM whose columns are every output position of the whole batch. Z is prod(k_rest)
# times the input where full im2col is prod(kernel) times: for a 27x18 kernel at 1M elements,
# 55 MB instead of 1 GB, whose copy and page faults cost more than all the GEMMs.


def _rows(xp, x, kernel, stride, pads, dilation):
    """Z (C * k_rest, s0, S0 / s0, N * out_rest) of ``x`` (N, C, *S) padded, and the output
    size. The rows of S0 are dealt into s0 phases (row h at [h % s0, h // s0]), so the rows a
    kernel row reads with stride s0 are consecutive: a view, not a copy per kernel row."""
    s0 = stride[0]
    length = x.shape[2] + sum(pads[0])
    pads = ((pads[0][0], pads[0][1] + -length % s0),) + tuple(pads[1:])
    padded = _pad_raw(xp, x, pads)
    n, c = x.shape[:2]
    nd = x.ndim - 2
    win = _sliding(xp, padded, (1,) + tuple(kernel[1:]), (1,) + tuple(stride[1:]),
                   (1,) + tuple(dilation[1:]))  # (N, C, S0, *out_rest, 1, *k_rest)
    win = win[(Ellipsis, 0) + (slice(None),) * (nd - 1)]
    out_rest = win.shape[3:2 + nd]
    win = win.reshape((n, c, padded.shape[2] // s0, s0) + win.shape[3:])
    order = (1,) + tuple(range(3 + nd, 2 + 2 * nd)) + (3, 2, 0) + tuple(range(4, 3 + nd))
    z = xp.ascontiguousarray(win.transpose(order)).reshape(
        c * math.prod(kernel[1:]), s0, padded.shape[2] // s0, n * math.prod(out_rest))
    out0 = (length - dilation[0] * (kernel[0] - 1) - 1) // s0 + 1
    return z, (out0,) + tuple(out_rest)


def _row_key(r, out0, stride, dilation):
    """Where in Z the rows that kernel row ``r`` reads are."""
    phase, start = divmod(r * dilation[0], stride[0])[::-1]
    return (slice(None), phase, slice(start, start + out0))


def _z_rows(z, r, out0, stride, dilation, groups):
    """Z's rows for kernel row ``r`` as (groups, C/g * k_rest, out0 * N * out_rest)."""
    return z[_row_key(r, out0, stride, dilation)].reshape(groups, z.shape[0] // groups,
                                                          out0 * z.shape[3])


def _by_rows(g, groups):
    """An output-shaped ``g`` (N, O, *out) as (groups, O/g, out0 * N * out_rest): Z's order."""
    n, o, out0 = g.shape[:3]
    rest = math.prod(g.shape[3:])
    moved = g.reshape(n, o, out0, rest).transpose(1, 2, 0, 3)
    return moved.reshape(groups, o // groups, out0 * n * rest)  # (sizes: -1 fails on empty)


def _from_rows(xp, y, n, out_sp):
    """(groups, O/g, out0 * N * out_rest) back to (N, O, *out)."""
    o = y.shape[0] * y.shape[1]
    y = y.reshape(o, out_sp[0], n, math.prod(out_sp[1:]))
    return xp.ascontiguousarray(y.transpose(2, 0, 1, 3)).reshape((n, o) + tuple(out_sp))


def _kernel_row(w, r, groups):
    """Weight ``w`` (O, C/g, *k) at kernel row ``r``: (groups, O/g, C/g * k_rest)."""
    o, cg = w.shape[:2]
    return w[:, :, r].reshape(groups, o // groups, cg * math.prod(w.shape[3:]))


def _gemm(xp, a, b):
    """(g, M, K) @ (g, K, N), one 2-d matmul per group: NumPy's stacked matmul of these shapes
    runs ~25x slower than BLAS (1 group of 18x486 @ 486x6156: 48 ms vs 1.8 ms)."""
    out = xp.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=xp.result_type(a, b))
    for i in range(a.shape[0]):
        xp.matmul(a[i], b[i], out=out[i])
    return out


# The weight gradient and the transposed form contract over the output channels, of which a
# group may have few (16 in a grouped convolution): a GEMM per kernel row is then a thin
# product (16 x 2240 @ 2240 x 256: 80 GFLOP/s, against 170 for a 192-row one), and the
# transposed form adds each row's (C * k_rest, out0 * M) product into Z's rows one by one.
# Instead, the kernel rows of one stride phase are taken together: row ``j`` reads Z's rows
# ``start_j + i`` (i < out0), so with g written banded, B[(o, j), t] = g[o, t - start_j], one
# GEMM per group and phase contracts over (o, j) (transposed: writes the phase's rows of dZ
# once) or over (t, M) (weight gradient). The band's zeros cost (hi - lo) / out0 times the
# row loop's flops: used where that is under _BAND_WASTE, and where the band is no larger than
# Z or _BAND_MIN (many output channels times a long kernel would make it far larger: conv1d
# of 94 channels and 70 taps, 50M elements, slower than the row loop). The forward (every
# kernel row's product with Z's rows at once, then shifted sums) and the weight gradient take
# a phase's rows in chunks of _BAND_ROWS / (O/g) or more: fewer zeros for a GEMM still tall
# enough (16 channels, 24 rows over 10 output rows: chunks of 6 rows, 1.5x the flops instead
# of 2.1x, the products ~20% faster).
_BAND_WASTE = 2.5
_BAND_MIN = 1 << 18  # elements a band may have whatever Z's size
_BAND_ROWS = 96
_BAND_TALL = 48  # output channels per group over which the forward keeps the row loop


def _phases(k0, out0, stride, dilation, width, limit, og=None):
    """``(phase, rows, starts, lo, hi)`` per stride phase of the kernel's first dim (per chunk
    of its rows where ``og``, the output channels per group, is given): its kernel rows, where
    in Z each starts, and the span of Z's rows they read; None where the band's zeros would
    cost more than the row loop saves, or the band of ``width`` (O * M) elements a row would be
    over ``limit`` elements."""
    by_phase = {}
    for r in range(k0):
        start, phase = divmod(r * dilation[0], stride[0])
        by_phase.setdefault(phase, []).append((r, start))
    if out0 == 0 or max(len(pairs) for pairs in by_phase.values()) < 2:
        return None  # (one row per phase: the row loop's GEMMs already)
    if og is not None and og > _BAND_TALL:
        return None  # (the row loop's GEMMs are tall enough: conv1d of 79 channels)
    size = k0 if og is None else max(2, -(-_BAND_ROWS // og))
    out = []
    for phase, every in sorted(by_phase.items()):
        for at in range(0, len(every), size):
            pairs = every[at:at + size]
            rows, starts = [r for r, _ in pairs], [s for _, s in pairs]
            lo, hi = min(starts), max(starts) + out0  # (within Z's ``length`` rows)
            if hi - lo > _BAND_WASTE * out0 or width * len(rows) * (hi - lo) > limit:
                return None
            out.append((phase, rows, starts, lo, hi))
    return out


def _banded(xp, gg, out0, starts, lo, hi):
    """g (groups, O/g, out0 * M) banded over Z's rows lo..hi: (groups, O/g * rows, L * M) with
    B[(o, j), t - lo] = g[o, t - starts[j]], zeros elsewhere."""
    groups, og = gg.shape[:2]
    m = gg.shape[2] // out0
    g4 = gg.reshape(groups, og, out0, m)
    b = xp.zeros((groups, og, len(starts), hi - lo, m), dtype=gg.dtype)
    for j, s in enumerate(starts):
        b[:, :, j, s - lo:s - lo + out0] = g4
    return b.reshape(groups, og * len(starts), (hi - lo) * m)


def _phase_kernel(xp, w, rows, groups, by_output=False):
    """Weight ``w`` (O, C/g, *k) at kernel rows ``rows``, transposed for the band:
    (groups, C/g * k_rest, O/g * rows); ``by_output``: (groups, O/g * rows, C/g * k_rest),
    the forward's (every kernel row's product with Z's rows at once)."""
    o, cg, kr = w.shape[0], w.shape[1], math.prod(w.shape[3:])
    part = w[:, :, rows].reshape(groups, o // groups, cg, len(rows), kr)
    if by_output:
        return part.transpose(0, 1, 3, 2, 4).reshape(groups, (o // groups) * len(rows),
                                                      cg * kr)
    return part.transpose(0, 2, 4, 1, 3).reshape(groups, cg * kr, (o // groups) * len(rows))


_ONE_GEMM = 1 << 18  # im2col elements under which one GEMM beats a GEMM per kernel row


def _one_gemm(n, c, kernel, positions):
    """Whether to im2col every kernel dim: small problems (~1K elements), where a Python loop
    over the kernel's rows costs more than copying the whole im2col (conv1d with a kernel of
    15: 0.3 ms vs 0.7 ms). A leading spatial dim of size 1 makes the loop one row long."""
    return kernel[0] > 1 and n * c * math.prod(kernel) * positions <= _ONE_GEMM


def _forward_raw(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of x (N, C, *s) with w (O, C/g, *k): (N, O, *out)."""
    kernel = w.shape[2:]
    if _one_gemm(x.shape[0], x.shape[1], kernel, math.prod(x.shape[2:])):
        return _forward_raw(xp, x[:, :, None], w[:, :, None], (1,) + tuple(stride),
                            ((0, 0),) + tuple(pads), (1,) + tuple(dilation), groups)[:, :, 0]
    z, out_sp = _rows(xp, x, kernel, stride, pads, dilation)
    o, m = w.shape[0], z.shape[3]
    phases = _phases(kernel[0], out_sp[0], stride, dilation, o * m, max(z.size, _BAND_MIN),
                     o // groups)
    if phases is not None:  # per phase, every kernel row's product at once, then shifted sums
        out = xp.zeros((groups, o // groups, out_sp[0], m), dtype=xp.result_type(x, w))
        for p, rows, starts, lo, hi in phases:
            a = _phase_kernel(xp, w, rows, groups, by_output=True)  # (groups, O/g * rows, K)
            zp = z[:, p, lo:hi].reshape(groups, z.shape[0] // groups, (hi - lo) * m)
            part = _gemm(xp, a, zp).reshape(groups, o // groups, len(rows), hi - lo, m)
            for j, start in enumerate(starts):
                out += part[:, :, j, start - lo:start - lo + out_sp[0]]
        return _from_rows(xp, out.reshape(groups, o // groups, out_sp[0] * m), x.shape[0],
                          out_sp)
    out = None
    for r in range(kernel[0]):
        part = _gemm(xp, _kernel_row(w, r, groups), _z_rows(z, r, out_sp[0], stride, dilation,
                                                            groups))
        if out is None:
            out = part
        else:
            out += part
    return _from_rows(xp, out, x.shape[0], out_sp)


def _transposed_raw(xp, g, w, stride, pads, dilation, groups, out_sp):
    """The adjoint of ``_forward_raw`` in x: g (N, O, *o) -> (N, C, *out_sp).

    Per kernel row, ``W_r^T g`` (one GEMM) is added into the rows of Z it came from; then the
    other kernel dims' taps are added back into the input, one strided slice each (col2im).
    """
    kernel, osz = w.shape[2:], g.shape[2:]
    n, c = g.shape[0], w.shape[1] * groups
    if _one_gemm(n, c, kernel, math.prod(osz)):
        return _transposed_raw(xp, g[:, :, None], w[:, :, None], (1,) + tuple(stride),
                               ((0, 0),) + tuple(pads), (1,) + tuple(dilation), groups,
                               (1,) + tuple(out_sp))[:, :, 0]
    gg = _by_rows(g, groups)
    s0 = out_sp[0] + sum(pads[0])
    dz = xp.zeros((c * math.prod(kernel[1:]), stride[0], -(-s0 // stride[0]),
                   n * math.prod(osz[1:])), dtype=g.dtype)
    phases = _phases(kernel[0], osz[0], stride, dilation, g.shape[1] * dz.shape[3],
                      max(dz.size, _BAND_MIN))
    if phases is not None:
        cgk = dz.shape[0] // groups
        for p, rows, starts, lo, hi in phases:
            a = _phase_kernel(xp, w, rows, groups)  # (groups, C/g * k_rest, O/g * rows)
            b = _banded(xp, gg, osz[0], starts, lo, hi)  # (groups, O/g * rows, (hi-lo) * M)
            for i in range(groups):  # written in place: each phase's rows are one product
                xp.matmul(a[i], b[i], out=dz[i * cgk:(i + 1) * cgk, p, lo:hi].reshape(
                    cgk, (hi - lo) * dz.shape[3]))
    else:
        for r in range(kernel[0]):
            part = _gemm(xp, xp.swapaxes(_kernel_row(w, r, groups), 1, 2), gg)
            dz[_row_key(r, osz[0], stride, dilation)] += part.reshape(
                dz.shape[0], osz[0], dz.shape[3])
    # dZ (C * k_rest, s0, S0 / s0, N * o_rest) read as (N, C, S0 / s0, s0, *k_rest, *o_rest):
    # a view, which col2im's adds read in place of two transposing copies of dZ
    nd, t0 = len(kernel), dz.shape[2]
    dz = dz.reshape((c,) + tuple(kernel[1:]) + (stride[0], t0, n) + tuple(osz[1:]))
    order = (nd + 2, 0, nd + 1, nd) + tuple(range(1, nd)) + tuple(range(nd + 3, 2 * nd + 2))
    dx = _col2im_raw(xp, dz.transpose(order), tuple(out_sp[1:]), pads[1:], stride[1:],
                     dilation[1:])
    dx = dx.reshape((n, c, t0 * stride[0]) + tuple(dx.shape[4:]))  # the phases undealt
    return dx[:, :, pads[0][0]:pads[0][0] + out_sp[0]]


def _col2im_raw(xp, dcols, out_sp, pads, stride, dilation):
    """col2im: ``dcols`` (*lead, *kernel, *blocks) added tap by tap into (*lead, *out_sp).

    Each kernel tap's plane is one strided slice of the padded output; the pads are cropped.
    The leading dims (N, C, ...) may be any view.
    """
    nd = len(out_sp)
    lead = dcols.shape[:dcols.ndim - 2 * nd]
    kernel, osz = dcols.shape[len(lead):len(lead) + nd], dcols.shape[len(lead) + nd:]
    full = tuple(s + a + b for s, (a, b) in zip(out_sp, pads))
    # Each add's inner loop runs along the last dim: a few blocks long on a small image of
    # many channels (fold of 27776 channels into 5 x 6: 2 elements). There the leading dims go
    # last for the adds, two transposing copies costing less than the short loops (5.8 -> 2.8
    # ms); from 4 blocks on they cost about what they save (conv2d's backward on 4 x 4 maps:
    # -4%; on 7 x 7: +20%).
    last = type(dcols) is np.ndarray and nd and osz[-1] < 4 and math.prod(lead) >= 256
    if last:
        k = len(lead)
        dcols = dcols.transpose(tuple(range(k, dcols.ndim)) + tuple(range(k)))
        dx = xp.zeros(full + lead, dtype=dcols.dtype)
        head, tail = (), (slice(None),) * k
    else:
        dx = xp.zeros(lead + full, dtype=dcols.dtype)
        head, tail = (slice(None),) * len(lead), ()
    for taps in itertools.product(*(range(k) for k in kernel)):
        key = head + tuple(slice(t * d, t * d + s * (m - 1) + 1, s)
                           for t, d, s, m in zip(taps, dilation, stride, osz)) + tail
        dx[key] += dcols[head + taps]
    dx = dx[head + tuple(slice(a, a + s) for s, (a, _) in zip(out_sp, pads))]
    if last:
        dx = xp.ascontiguousarray(dx.transpose(tuple(range(nd, dx.ndim)) + tuple(range(nd))))
    return dx


def _weight_grad_raw(xp, x, g, stride, pads, dilation, groups, kernel):
    """d(loss)/d(weight): per kernel row, g (O/g, out0 * N * out_rest) @ Z's rows^T."""
    if _one_gemm(x.shape[0], x.shape[1], kernel, math.prod(g.shape[2:])):
        return _weight_grad_raw(xp, x[:, :, None], g[:, :, None], (1,) + tuple(stride),
                                ((0, 0),) + tuple(pads), (1,) + tuple(dilation), groups,
                                (1,) + tuple(kernel))[:, :, 0]
    z, out_sp = _rows(xp, x, kernel, stride, pads, dilation)
    gg = _by_rows(g, groups)
    o = g.shape[1]
    dw = xp.empty((o, x.shape[1] // groups, kernel[0], math.prod(kernel[1:])), dtype=g.dtype)
    phases = _phases(kernel[0], out_sp[0], stride, dilation, o * z.shape[3],
                      max(z.size, _BAND_MIN), o // groups)
    if phases is not None:
        cg, kr = x.shape[1] // groups, dw.shape[3]
        for p, rows, starts, lo, hi in phases:
            b = _banded(xp, gg, out_sp[0], starts, lo, hi)  # (groups, O/g * rows, L * M)
            zp = z[:, p, lo:hi].reshape(groups, cg * kr, (hi - lo) * z.shape[3])
            part = _gemm(xp, b, xp.swapaxes(zp, 1, 2))  # (groups, O/g * rows, C/g * k_rest)
            dw[:, :, rows] = part.reshape(o, len(rows), cg, kr).transpose(0, 2, 1, 3)
        return dw.reshape((o, x.shape[1] // groups) + tuple(kernel))
    for r in range(kernel[0]):
        rows = _z_rows(z, r, out_sp[0], stride, dilation, groups)
        dw[:, :, r] = _gemm(xp, gg, xp.swapaxes(rows, 1, 2)).reshape(dw.shape[0], dw.shape[1],
                                                                     dw.shape[3])
    return dw.reshape((o, x.shape[1] // groups) + tuple(kernel))


def _convolution_batched(op, args, levels):
    """The batching rule of ``convolution``: with one weight, the vmap batch folded into N;
    with a weight per sample (per-sample gradients), one grouped convolution — the samples
    side by side as channel groups, each group with its own sample's weight."""
    input, weight, bias, stride, pads, dilation, transposed, out_sp, groups = args
    batched = batching.BatchedTensor
    if type(weight) is not batched and type(bias) is not batched:
        return batching.fold(op, args, levels)
    if transposed:
        return batching.loop_rule(op, args, levels)
    sizes = tuple(batching.batch_size(level) for level in levels)
    n, c, space = input.shape[0], input.shape[1], tuple(input.shape[2:])
    o, k = weight.shape[0], tuple(weight.shape[1:])
    b = math.prod(sizes)
    x = batching.physical(input, levels, expand=True).reshape((b, n, c) + space)
    x = x.movedim(0, 1).reshape((n, b * c) + space)
    w = batching.physical(weight, levels, expand=True).reshape((b * o,) + k)
    if bias is not None:
        bias = batching.physical(bias, levels, expand=True).reshape(b * o)
    out = op(x, w, bias, stride, pads, dilation, False, out_sp, groups * b)
    out = out.reshape((n, b, o) + tuple(out.shape[2:])).movedim(1, 0)
    return batching.wrap(out.reshape(sizes + (n, o) + tuple(out.shape[3:])), levels)


@defop("convolution", n_in=3, promote=True, jvp="transpose", batch=_convolution_batched)
def _convolution(xp, input, weight, bias, stride, pads, dilation, transposed, out_sp, groups):
    if transposed:
        out = _transposed_raw(xp, input, weight, stride, pads, dilation, groups, out_sp)
    else:
        out = _forward_raw(xp, input, weight, stride, pads, dilation, groups)
    if bias is not None:  # in place (``out`` is new): a second output array costs a pass
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


@defop("convolution_backward", n_in=2, jvp="transpose", batch="loop")
def _conv_weight(xp, input, grad, stride, pads, dilation, groups, kernel):
    return _weight_grad_raw(xp, input, grad, stride, pads, dilation, groups, kernel)


def _call(op, xp, *args):
    if isinstance(args[0], Tensor) or isinstance(args[1], Tensor):
        return op(*args)
    return op.forward(xp, *args)


def _conv_input_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                     out_sp, groups):
    if transposed:
        return _call(_convolution, xp, g, weight, None, stride, pads, dilation, False, None,
                     groups)
    return _call(_convolution, xp, g, weight, None, stride, pads, dilation, True,
                 tuple(input.shape[2:]), groups)


def _conv_weight_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                      out_sp, groups):
    kernel = tuple(weight.shape[2:])
    if transposed:
        return _call(_conv_weight, xp, g, input, stride, pads, dilation, groups, kernel)
    return _call(_conv_weight, xp, input, g, stride, pads, dilation, groups, kernel)


def _conv_bias_rule(xp, g, ans, input, weight, bias, stride, pads, dilation, transposed,
                    out_sp, groups):
    return xp.sum(g, axis=(0,) + tuple(range(2, g.ndim)))


_convolution.defvjp(_conv_input_rule, _conv_weight_rule, _conv_bias_rule)


def _cw_input_rule(xp, g, ans, input, grad, stride, pads, dilation, groups, kernel):
    return _call(_convolution, xp, grad, g, None, stride, pads, dilation, True,
                 tuple(input.shape[2:]), groups)


def _cw_grad_rule(xp, g, ans, input, grad, stride, pads, dilation, groups, kernel):
    return _call(_convolution, xp, input, g, None, stride, pads, dilation, False, None, groups)


_conv_weight.defvjp(_cw_input_rule, _cw_grad_rule)


# --------------------------------------------------------------------------- im2col, col2im
# ``F.unfold`` and ``F.fold``: the sliding-block extraction above as ops of their own, 2-d
# spatial inputs (N, C, H, W) or unbatched (C, H, W); each is the other's derivative.


def _blocks(size, kernel, dilation, padding, stride):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride))


@defop("im2col", n_in=1, jvp="linear", batch="loop")
def _im2col(xp, input, kernel, dilation, padding, stride):
    """(N, C, H, W) -> (N, C * kh * kw, L): row ``c * K + k`` is channel ``c`` under tap ``k``."""
    x = input if input.ndim == 4 else input[None]
    cols, _ = _columns(xp, x, kernel, stride, tuple((p, p) for p in padding), dilation, 1)
    cols = cols.reshape(cols.shape[0], cols.shape[2], cols.shape[3])
    if np.may_share_memory(cols, input):  # a 1x1 kernel's windows are the input itself
        cols = cols.copy()
    return cols if input.ndim == 4 else cols[0]


@defop("col2im", n_in=1, jvp="linear", batch="loop")
def _col2im(xp, input, output_size, kernel, dilation, padding, stride):
    """(N, C * kh * kw, L) -> (N, C, *output_size): overlapping blocks summed."""
    x = input if input.ndim == 3 else input[None]
    blocks = _blocks(output_size, kernel, dilation, padding, stride)
    c = x.shape[1] // math.prod(kernel)
    dcols = x.reshape((x.shape[0], c) + tuple(kernel) + blocks)
    out = _col2im_raw(xp, dcols, tuple(output_size), tuple((p, p) for p in padding), stride,
                      dilation)
    out = xp.ascontiguousarray(out)
    return out if input.ndim == 3 else out[0]


_im2col.defvjp(lambda xp, g, ans, input, kernel, dilation, padding, stride: _call(
    _col2im, xp, g, tuple(input.shape[-2:]), kernel, dilation, padding, stride))
_col2im.defvjp(lambda xp, g, ans, input, output_size, kernel, dilation, padding, stride: _call(
    _im2col, xp, g, kernel, dilation, padding, stride))


def transposed_size(sizes, kernel, stride, pads, dilation, out_pad):
    """The spatial size of a transposed convolution's output."""
    return [(i - 1) * s - 2 * p + d * (k - 1) + o + 1
            for i, k, s, p, d, o in zip(sizes, kernel, stride, pads, dilation, out_pad)]
