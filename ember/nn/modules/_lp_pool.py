"""``LPPool1d/2d/3d`` (PyTorch keeps them in ``torch.nn.modules.pooling``, which re-exports
them from here) and ``LocalResponseNorm`` (``torch.nn.modules.normalization``)."""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "LocalResponseNorm"]


class _LPPoolNd(Module):
    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)


class LPPool1d(_LPPoolNd):
    """Power-average pooling over 1-D windows (``F.lp_pool1d``)."""

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over 2-D windows (``F.lp_pool2d``)."""

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over 3-D windows (``F.lp_pool3d``)."""

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                           self.ceil_mode)


class LocalResponseNorm(Module):
    """Normalization across neighbouring channels (``F.local_response_norm``)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
