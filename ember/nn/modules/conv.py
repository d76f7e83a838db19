"""``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``,
``ConvTranspose3d``."""
from __future__ import annotations

from .. import functional as F
from ..module import Module
from ..parameter import UninitializedParameter
from .lazy import LazyModuleMixin
from .linear import _kaiming_reset, _weight_and_bias
from .utils import _ntuple, _pair, _reverse_repeat_tuple, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        _weight_and_bias(self, shape, out_channels if bias else None, device, dtype)

    def reset_parameters(self):
        _kaiming_reset(self, draw_bias_without_fan_in=False)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """Conv1d/2d/3d: ``_tuple`` makes an argument one int per spatial dim, ``_conv`` is the
    functional form."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        n = self._tuple
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride),
                         padding if isinstance(padding, str) else n(padding), n(dilation), False,
                         n(0), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        if self.padding_mode != "zeros":
            return self._conv(F.pad(input, self._reversed_padding_repeated_twice,
                                    mode=self.padding_mode),
                              self.weight, self.bias, self.stride, self._tuple(0), self.dilation,
                              self.groups)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding,
                          self.dilation, self.groups)


class Conv1d(_Conv):
    _tuple, _conv = staticmethod(_single), staticmethod(F.conv1d)


class Conv2d(_Conv):
    _tuple, _conv = staticmethod(_pair), staticmethod(F.conv2d)


class Conv3d(_Conv):
    _tuple, _conv = staticmethod(_triple), staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _nd = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        t = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding),
                         t(dilation), True, t(output_padding), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input, output_size, num_spatial_dims=2):
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must "
                f"have {num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                f"(got {len(output_size)})")
        ret = []
        for d in range(num_spatial_dims):
            dim_size = input.size(d + num_non_spatial_dims)
            min_size = ((dim_size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            max_size = min_size + self.stride[d] - 1
            if not (min_size <= output_size[d] <= max_size):
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{[min_size]} to {[max_size]} (for an input of {input.size()[2:]})")
            ret.append(output_size[d] - min_size)
        return tuple(ret)

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size, self._nd)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                  self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over (N, C, L) or (C, L) inputs."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution over (N, C, H, W) or (C, H, W) inputs."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over (N, C, D, H, W) or (C, D, H, W) inputs."""

    _nd = 3


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: ``in_channels`` is the first input's channel dim."""

    _spatial = 0

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._spatial + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become, _spatial = Conv1d, 1


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become, _spatial = Conv2d, 2


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become, _spatial = Conv3d, 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become, _spatial = ConvTranspose1d, 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become, _spatial = ConvTranspose2d, 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become, _spatial = ConvTranspose3d, 3
