"""``nn.utils.convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``:
the convolution weights of a model stored channels-last (same values and shapes, other
strides), in place."""
from __future__ import annotations

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, kinds, memory_format):
    for m in module.modules():
        if isinstance(m, kinds):
            m.weight.data = m.weight.detach().contiguous(memory_format=memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of every ``Conv2d``/``ConvTranspose2d`` in ``module`` in ``memory_format``
    (the parameters stay the same objects). Returns ``module``."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """As ``convert_conv2d_weight_memory_format``, for ``Conv3d``/``ConvTranspose3d``."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
