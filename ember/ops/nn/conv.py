"""Convolution (1-d and 2-d, strided, dilated, grouped, transposed) as differentiable primitives.

``convolution`` computes a cross-correlation as im2col (sliding windows from NumPy's stride
tricks, copied once into columns) and one batched matmul; its transposed form is the matmul's
transpose followed by col2im, one strided add per kernel tap. The two forms and
``convolution_backward_weight`` are each other's derivatives, so any order of derivative works.

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


def _forward_raw(xp, x, w, stride, pads, dilation, groups):
    """Cross-correlation of x (N, C, *s) with w (O, C/g, *k): (N, O, *out)."""
    cols, out_sp = _columns(xp, x, w.shape[2:], stride, pads, dilation, groups)
    o = w.shape[0]
    wg = w.reshape(groups, o // groups, -1)  # (g, O/g, C/g * K)
    return xp.matmul(wg, cols).reshape((x.shape[0], o) + tuple(out_sp))


def _transposed_raw(xp, g, w, stride, pads, dilation, groups, out_sp):
    """The adjoint of ``_forward_raw`` in x: g (N, O, *o) -> (N, C, *out_sp).

    ``W^T g`` gives the column gradients in one batched matmul; col2im then adds each kernel
    tap's plane into the (padded) input, one strided slice per tap.
    """
    kernel = w.shape[2:]
    n, o = g.shape[:2]
    cg = w.shape[1]
    osz = g.shape[2:]
    wg = w.reshape(groups, o // groups, -1)
    gg = g.reshape(n, groups, o // groups, math.prod(osz))
    dcols = xp.matmul(wg.transpose(0, 2, 1), gg)  # (N, g, C/g * K, P)
    dcols = dcols.reshape((n, groups * cg) + tuple(kernel) + tuple(osz))
    return _col2im_raw(xp, dcols, out_sp, pads, stride, dilation)


def _col2im_raw(xp, dcols, out_sp, pads, stride, dilation):
    """col2im: ``dcols`` (N, C, *kernel, *blocks) added tap by tap into (N, C, *out_sp).

    Each kernel tap's plane is one strided slice of the padded output; the pads are cropped.
    """
    nd = len(out_sp)
    n, c = dcols.shape[:2]
    kernel, osz = dcols.shape[2:2 + nd], dcols.shape[2 + nd:]
    full = tuple(s + a + b for s, (a, b) in zip(out_sp, pads))
    dx = xp.zeros((n, c) + full, dtype=dcols.dtype)
    for taps in itertools.product(*(range(k) for k in kernel)):
        key = (slice(None), slice(None)) + tuple(
            slice(t * d, t * d + s * (m - 1) + 1, s)
            for t, d, s, m in zip(taps, dilation, stride, osz))
        dx[key] += dcols[(slice(None), slice(None)) + taps]
    crop = (slice(None), slice(None)) + tuple(slice(a, a + s) for s, (a, _) in zip(out_sp, pads))
    return dx[crop]


def _weight_grad_raw(xp, x, g, stride, pads, dilation, groups, kernel):
    """d(loss)/d(weight) = sum over the batch of g (O/g, P) @ columns^T (P, C/g * K)."""
    cols, _ = _columns(xp, x, kernel, stride, pads, dilation, groups)
    n, o = g.shape[:2]
    gg = g.reshape(n, groups, o // groups, math.prod(g.shape[2:]))
    dw = xp.matmul(gg, cols.transpose(0, 1, 3, 2)).sum(axis=0)  # (g, O/g, C/g * K)
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
