"""Convolution (1-d and 2-d, strided, dilated, grouped, transposed) as differentiable primitives.

``convolution`` computes a cross-correlation as im2col (sliding windows from NumPy's stride
tricks, copied once into columns) and one batched matmul; its transposed form is the matmul's
transpose followed by col2im, one strided add per kernel tap. The two forms and
``convolution_backward_weight`` are each other's derivatives, so any order of derivative works.

``ember/nn/functional/conv.py`` calls ``check_conv`` (PyTorch's argument checks, kept here
beside the kernels they guard) and then the ops.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..._tensor import Tensor
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


@defop("convolution", n_in=3, promote=True, jvp="transpose")
def _convolution(xp, input, weight, bias, stride, pads, dilation, transposed, out_sp, groups):
    if transposed:
        out = _transposed_raw(xp, input, weight, stride, pads, dilation, groups, out_sp)
    else:
        out = _forward_raw(xp, input, weight, stride, pads, dilation, groups)
    if bias is not None:  # in place (``out`` is new): a second output array costs a pass
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


@defop("convolution_backward", n_in=2, jvp="transpose")
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


@defop("im2col", n_in=1, jvp="linear")
def _im2col(xp, input, kernel, dilation, padding, stride):
    """(N, C, H, W) -> (N, C * kh * kw, L): row ``c * K + k`` is channel ``c`` under tap ``k``."""
    x = input if input.ndim == 4 else input[None]
    cols, _ = _columns(xp, x, kernel, stride, tuple((p, p) for p in padding), dilation, 1)
    cols = cols.reshape(cols.shape[0], cols.shape[2], cols.shape[3])
    if np.may_share_memory(cols, input):  # a 1x1 kernel's windows are the input itself
        cols = cols.copy()
    return cols if input.ndim == 4 else cols[0]


@defop("col2im", n_in=1, jvp="linear")
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


# --------------------------------------------------------------------------- argument checks
# PyTorch's, in its order: ``at::convNd``'s bias dtype and ``batchify``, ``_convolution``'s
# parameter expansion, ``check_shape_forward``, then the CPU kernels' own shape checks.


def _listed(value, nd):
    """An ``int[nd]`` argument as PyTorch's argument parser hands it on: an int repeated, a
    sequence as it is."""
    return list(value) if isinstance(value, (tuple, list)) else [value] * nd


def _expanded(value, name, dim):
    """ATen's ``expand_param_if_needed``: one value per spatial dim of the weight."""
    if len(value) == 1:
        return value * dim
    if len(value) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           "values to match the convolution dimensions, but got "
                           f"{name}={value}")
    return value


def _word(t):
    return t.dtype._legacy[:-6].lower()  # 'DoubleTensor' -> 'double'


def check_conv(name, nd, input, weight, bias, stride, padding, dilation, groups,
               output_padding=None):
    """Check a convolution's arguments; returns ``(batched, stride, pads, dilation,
    output_padding)``, pads as ``(before, after)`` per spatial dim (``padding='same'``
    resolved). ``output_padding`` is given for transposed convolutions only."""
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_word(input)}) and bias type ({_word(bias)}) should be "
                           "the same")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    batched = input.ndim == nd + 2
    shape = tuple(input.shape) if batched else (1,) + tuple(input.shape)
    w = list(weight.shape)
    dim = weight.ndim - 2
    if isinstance(padding, str):
        padding = _string_padding(padding, shape, w, _listed(stride, nd), _listed(dilation, nd),
                                  groups)
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    stride = _expanded(_listed(stride, nd), "stride", dim)
    pads = _expanded(_listed(padding, nd), "padding", dim)
    dilation = _expanded(_listed(dilation, nd), "dilation", dim)
    transposed = output_padding is not None
    out_pad = _expanded(_listed(output_padding or 0, nd), "output_padding", dim)
    _check_shape_forward(shape, w, bias, stride, pads, dilation, groups, out_pad, transposed)
    if math.prod(shape) == 0 and shape[0] and shape[1]:
        view = list(shape) if len(shape) > 3 else [shape[0], shape[1], 1, shape[2]]
        raise RuntimeError("Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {view}")
    if not (shape[0] and shape[1]):
        pass  # PyTorch's "empty" backend: no kernel runs, none checks
    elif transposed:
        _check_transposed_kernel(shape, w, stride, pads, dilation, out_pad)
    else:
        _check_kernel(w, dilation)
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._legacy[:-6]} but found "
                           f"{weight.dtype._legacy[:-6]}")
    if isinstance(pads[0], int):
        pads = [(p, p) for p in pads]
    return batched, tuple(stride), tuple(pads), tuple(dilation), tuple(out_pad)


def _string_padding(padding, shape, w, stride, dilation, groups):
    """``padding='valid'`` or ``'same'`` as ``(before, after)`` pairs (ATen's
    ``_convolution_mode``; for 'same', the odd pixel goes after)."""
    if padding == "valid":
        return [0]
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = len(w)
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if k != len(shape):
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight{w}, but "
                           f"got {len(shape)}-dimensional input of size {list(shape)} instead")
    for label, values in (("stride", stride), ("dilation", dilation)):
        if len(values) not in (1, k - 2):
            raise RuntimeError(f"{label} cannot broadcast to {k - 2} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = dilation * (k - 2) if len(dilation) == 1 else dilation
    totals = [d * (n - 1) for d, n in zip(dilation, w[2:])]
    return [(t // 2, t - t // 2) for t in totals]


def _check_shape_forward(shape, w, bias, stride, pads, dilation, groups, out_pad, transposed):
    """ATen's ``check_shape_forward``."""
    flat = [p for pair in pads for p in (pair if isinstance(pair, tuple) else (pair,))]
    for bad, message in ((min(flat) < 0, "negative padding is not supported"),
                         (min(out_pad) < 0, "negative output_padding is not supported"),
                         (min(stride) <= 0, "non-positive stride is not supported"),
                         (min(dilation) < 0, "dilation should be greater than zero")):
        if bad:
            raise RuntimeError(message)
    if len(w) != len(shape):
        raise RuntimeError(f"Expected {len(w)}-dimensional input for {len(w)}-dimensional weight "
                           f"{w}, but got {len(shape)}-dimensional input of size {list(shape)} "
                           "instead")
    if w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {w} instead")
    if w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w}] instead")
    channels = w[0] if transposed else w[1] * groups
    if shape[1] != channels:
        given = f"transposed={int(transposed)}" if transposed else f"groups={groups}"
        raise RuntimeError(f"Given {given}, weight of size {w}, expected input{list(shape)} to "
                           f"have {channels} channels, but got {shape[1]} channels instead")
    outs = w[1] * groups if transposed else w[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != outs):
        given = "transposed=1, weight" if transposed else "weight"
        raise RuntimeError(f"Given {given} of size {w}, expected bias to be 1-dimensional with "
                           f"{outs} elements, but got bias of size {list(bias.shape)} instead")
    if transposed:
        return
    padded = [n + (sum(p) if isinstance(p, tuple) else 2 * p) for n, p in zip(shape[2:], pads)]
    kernel = [d * (k - 1) + 1 for d, k in zip(dilation, w[2:])]
    if any(n < k for n, k in zip(padded, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                           "actual input size")


def _check_kernel(w, dilation):
    """The CPU kernels' checks of the kernel (1-d convolutions run as 2-d ones, height 1): the
    dilated kernel's where any dilation is not 1, else the plain one's."""
    kernel = w[2:] if len(w) > 3 else [1] + w[2:]
    dilation = dilation if len(dilation) > 1 else [1] + dilation
    if any(d != 1 for d in dilation):
        if min(kernel) <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got {kernel}")
        if min(dilation) <= 0:
            raise RuntimeError(f"dilation should be greater than zero, but got {dilation}")
    elif min(kernel) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got" + (
            f" kernel_height: {kernel[0]} kernel_width: {kernel[1]}" if len(kernel) == 2 else
            f": {' x '.join(map(str, kernel))} (TxHxW)"))


def _check_transposed_kernel(shape, w, stride, pads, dilation, out_pad):
    """``slow_conv_transpose{2,3}d_shape_check`` (1-d as 2-d, height 1)."""
    if len(w) == 3:
        shape, w = list(shape[:2]) + [1] + list(shape[2:]), w[:2] + [1] + w[2:]
        stride, pads = [1] + list(stride), [0] + list(pads)
        dilation, out_pad = [1] + list(dilation), [0] + list(out_pad)
    names = ("depth", "height", "width")[-(len(w) - 2):]
    kernel = w[2:]

    def listing(label, values, sep=" "):
        return sep.join(f"{label}_{n}: {v}" for n, v in zip(names, values))
    if min(kernel) <= 0:
        if len(kernel) == 3:
            raise RuntimeError("non-empty 5D (n_output_plane x n_input_plane x kernel_depth x "
                               "kernel_height x kernel_width) tensor expected for weight, but "
                               f"got: {w}")
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{listing('kernel', kernel)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{listing('dilation', dilation, ', ')}")
    if not all(o < s or o < d for o, s, d in zip(out_pad, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got {listing('output_padding', out_pad)} {listing('stride', stride)}"
                           f" {listing('dilation', dilation)}")
    sizes = shape[2:]
    outs = transposed_size(sizes, w[2:], stride, pads, dilation, out_pad)
    if min(outs) < 1:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes))}). "
                           f"Calculated output size per channel: ({' x '.join(map(str, outs))})."
                           " Output size is too small")


def transposed_size(sizes, kernel, stride, pads, dilation, out_pad):
    """The spatial size of a transposed convolution's output."""
    return [(i - 1) * s - 2 * p + d * (k - 1) + o + 1
            for i, k, s, p, d, o in zip(sizes, kernel, stride, pads, dilation, out_pad)]


# --------------------------------------------------------------------------- the family's surface
__all__ = []
METHODS = {}
INPLACE = ()
