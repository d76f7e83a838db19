"""Convolutions of ``torch.nn.functional`` (``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``) and
the sliding-block extraction ``unfold`` / ``fold``: PyTorch's argument checks, then the
kernels of ``ember/ops/nn/conv.py``.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...ops.autocast import autocast_op
from ...ops.nn import conv as _conv
from ...ops.nn.conv import transposed_size

if TYPE_CHECKING:
    from ..._tensor import Tensor
    from ..._typing import IntOrInts

# --------------------------------------------------------------------------- convolution


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _conv_nd(nd, input, weight, bias, stride, padding, dilation, groups):
    batched, stride, pads, dilation, _ = check_conv(
        f"conv{nd}d", nd, input, weight, bias, stride, padding, dilation, groups)
    if not batched:
        input = input.unsqueeze(0)
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, False, None, groups)
    return out if batched else out.squeeze(0)


@autocast_op("conv1d")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrInts = 1,
           padding: IntOrInts = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """1-d cross-correlation over (N, C, L) inputs."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrInts = 1,
           padding: IntOrInts = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """2-d cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: IntOrInts = 1,
           padding: IntOrInts = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """3-d cross-correlation over (N, C, D, H, W) inputs."""
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(nd, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    batched, stride, pads, dilation, output_padding = check_conv(
        f"conv_transpose{nd}d", nd, input, weight, bias, stride, padding, dilation, groups,
        output_padding)
    if not batched:
        input = input.unsqueeze(0)
    out_sp = tuple(_conv.transposed_size(input.shape[2:], weight.shape[2:], stride,
                                         [p for p, _ in pads], dilation, output_padding))
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, True, out_sp, groups)
    return out if batched else out.squeeze(0)


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrInts = 1, padding: IntOrInts = 0, output_padding: IntOrInts = 0,
                     groups: int = 1, dilation: IntOrInts = 1) -> Tensor:
    """Transposed 1-d convolution (the gradient of conv1d in its input)."""
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrInts = 1, padding: IntOrInts = 0, output_padding: IntOrInts = 0,
                     groups: int = 1, dilation: IntOrInts = 1) -> Tensor:
    """Transposed 2-d convolution (the gradient of conv2d in its input)."""
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@autocast_op("conv_transpose3d")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: IntOrInts = 1, padding: IntOrInts = 0, output_padding: IntOrInts = 0,
                     groups: int = 1, dilation: IntOrInts = 1) -> Tensor:
    """Transposed 3-d convolution (the gradient of conv3d in its input)."""
    return _conv_transpose_nd(3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


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


def _type(t):
    return t.dtype._word.lower()  # 'DoubleTensor' -> 'double'


def check_conv(name, nd, input, weight, bias, stride, padding, dilation, groups,
               output_padding=None):
    """Check a convolution's arguments; returns ``(batched, stride, pads, dilation,
    output_padding)``, pads as ``(before, after)`` per spatial dim (``padding='same'``
    resolved). ``output_padding`` is given for transposed convolutions only."""
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_type(input)}) and bias type ({_type(bias)}) should be "
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
        raise RuntimeError(f"expected scalar type {input.dtype._word} but found "
                           f"{weight.dtype._word}")
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


# --------------------------------------------------------------------------- unfold, fold

def _floating_kernel(kernel, input):
    """PyTorch's im2col/col2im kernels exist for floating and complex dtypes only."""
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype._word}\'')


def _check_blocks(kernel, dilation, padding, stride):
    """im2col's and col2im's argument checks, in ATen's order."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kernel_height: "
                           f"{kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} "
                           f"stride_width: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilation_height: "
                           f"{dh} dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} "
                           f"pad_width: {pw}")


def _dim_error(ndim, dim):
    if ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                      f"{ndim - 1}], but got {dim})")


def unfold(input: Tensor, kernel_size: IntOrInts, dilation: IntOrInts = 1, padding: IntOrInts = 0,
           stride: IntOrInts = 1) -> Tensor:
    """Sliding local blocks of (N, C, H, W) as columns: (N, C * kh * kw, L) (im2col)."""
    args = tuple(_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    _check_blocks(*args)
    if input.ndim < 3:
        raise _dim_error(input.ndim, 2 if input.ndim == 2 else 1)
    shape = tuple(input.shape)
    if not ((input.ndim == 3 and all(shape)) or (input.ndim == 4 and all(shape[1:]))):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = args
    h, w = shape[-2:]
    oh, ow = _conv._blocks((h, w), *args)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of "
                           f"the array of sliding blocks as ({oh}, {ow}), but its components "
                           "must be at least one.")
    _floating_kernel("im2col_out_cpu", input)
    return _conv._im2col(input, *args)


def fold(input: Tensor, output_size: IntOrInts, kernel_size: IntOrInts, dilation: IntOrInts = 1,
         padding: IntOrInts = 0, stride: IntOrInts = 1) -> Tensor:
    """Columns of blocks (N, C * kh * kw, L) summed back into (N, C, *output_size) (col2im)."""
    size = _tuple(output_size, 2)
    args = tuple(_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    _check_blocks(*args)
    shape = tuple(input.shape)
    if not ((input.ndim == 2 and all(shape)) or (input.ndim == 3 and all(shape[1:]))):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = args
    if shape[-2] % (kh * kw):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={shape[-2]} and "
                           f"kernel_size=({kh}, {kw}).")
    bh, bw = _conv._blocks(size, *args)
    given = (f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kh}, {kw}), "
             f"dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), ")
    if shape[-1] != bh * bw:
        raise RuntimeError(given + "expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but "
                           f"got input.size(2)={shape[-1]}.")
    if bh < 1 or bw < 1:
        raise RuntimeError(given + f"calculated shape of the array of sliding blocks as ({bh}, "
                           f"{bw}), which is too small (non-positive)")
    if size[0] < 1 or size[1] < 1:
        raise RuntimeError("Expected output spatial size to be positive, but got: "
                           f"output_size=({size[0]}, {size[1]}).")
    _floating_kernel("col2im_out_cpu", input)
    return _conv._col2im(input, size, *args)
