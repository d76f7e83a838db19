"""Convolutions of ``torch.nn.functional`` (``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``) and
the sliding-block extraction ``unfold`` / ``fold``: PyTorch's argument checks, then the
kernels of ``ember/ops/nn/conv.py``.
"""
from __future__ import annotations

from ...ops.autocast import autocast_op
from ...ops.nn import conv as _conv
from ._common import _word

# --------------------------------------------------------------------------- convolution


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _conv_nd(nd, input, weight, bias, stride, padding, dilation, groups):
    batched, stride, pads, dilation, _ = _conv.check_conv(
        f"conv{nd}d", nd, input, weight, bias, stride, padding, dilation, groups)
    if not batched:
        input = input.unsqueeze(0)
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, False, None, groups)
    return out if batched else out.squeeze(0)


@autocast_op("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation over (N, C, L) inputs."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation over (N, C, D, H, W) inputs."""
    return _conv_nd(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(nd, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    batched, stride, pads, dilation, output_padding = _conv.check_conv(
        f"conv_transpose{nd}d", nd, input, weight, bias, stride, padding, dilation, groups,
        output_padding)
    if not batched:
        input = input.unsqueeze(0)
    out_sp = tuple(_conv.transposed_size(input.shape[2:], weight.shape[2:], stride,
                                         [p for p, _ in pads], dilation, output_padding))
    out = _conv._convolution(input, weight, bias, stride, pads, dilation, True, out_sp, groups)
    return out if batched else out.squeeze(0)


@autocast_op("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-d convolution (the gradient of conv1d in its input)."""
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-d convolution (the gradient of conv2d in its input)."""
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@autocast_op("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-d convolution (the gradient of conv3d in its input)."""
    return _conv_transpose_nd(3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def _floating_kernel(kernel, input):
    """PyTorch's im2col/col2im kernels exist for floating and complex dtypes only."""
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_word(input.dtype)}\'')


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


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
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


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
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
