"""The rest of ``torch.nn``'s layers: ``CTCLoss``, ``MultiLabelMarginLoss``,
``FractionalMaxPool2d/3d``, ``SyncBatchNorm``, ``CrossMapLRN2d``, ``LinearCrossEntropyLoss``
(with ``LinearCrossEntropyOptions``), the deprecated ``Container``, and ``factory_kwargs``."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from ... import _creation
from .. import functional as F
from ..module import Module
from .linear import Linear
from .loss import _Loss
from .normalization import _BatchNorm
from .utils import _pair, _triple

__all__ = ["CTCLoss", "MultiLabelMarginLoss", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "SyncBatchNorm", "CrossMapLRN2d", "LinearCrossEntropyLoss",
           "LinearCrossEntropyOptions", "Container", "factory_kwargs"]


class CTCLoss(_Loss):
    """``F.ctc_loss`` as a module."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    """``F.multilabel_margin_loss`` as a module."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class _FractionalMaxPoolNd(Module):
    _tuple = None
    _fn = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._tuple(output_size) if output_size is not None else None
        self.output_ratio = self._tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-d fractional max pooling (``F.fractional_max_pool2d``)."""

    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-d fractional max pooling (``F.fractional_max_pool3d``)."""

    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.fractional_max_pool3d)


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics are reduced across processes; with no process group (the
    only case ember runs) it is ``BatchNorm`` over any input of 2 dims or more."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with each batch norm layer in it replaced by a ``SyncBatchNorm`` holding
        the same parameters and running statistics."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


def _cross_map_window(channels, size):
    """(C, C) 0/1 matrix: row c marks the channels whose squares scale channel c in the legacy
    ``CrossMapLRN2d``. Its running-sum formulation adds channel ``c + p - 1`` at each step and
    drops channel ``c - p`` only from ``c > p`` on (``p = (size - 1) // 2 + 1``), so channel 0
    is never dropped; PyTorch's output is reproduced exactly by this matrix."""
    p = (size - 1) // 2 + 1
    window = np.zeros((channels, channels))
    window[0, :min(p, channels)] = 1
    for c in range(1, channels):
        window[c] = window[c - 1]
        if c < channels - p + 1:
            window[c, c + p - 1] += 1
        if c > p:
            window[c, c - p] -= 1
    return window


class CrossMapLRN2d(Module):
    """The legacy (Lua Torch) cross-channel local response norm of a 4-d input:
    ``x * (k + alpha / size * sum of x^2 over the channel window)^-beta``. Gradients are the
    exact derivatives of the output (PyTorch's own backward fails on batches)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        window = _creation.tensor(_cross_map_window(input.shape[1], self.size),
                                  dtype=input.dtype)
        sums = (window @ (input * input).flatten(2)).reshape(input.shape)
        return input * (self.k + self.alpha / self.size * sums) ** -self.beta

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """Tuning knobs of PyTorch's chunked linear cross entropy; ember computes the logits
    whole, so they are accepted and change nothing."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


class LinearCrossEntropyLoss(Module):
    """``cross_entropy(linear(input), target)`` with its own classifier, ``linear``
    (``in_features`` -> ``num_classes``)."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        super().__init__()
        self.in_features, self.num_classes = in_features, num_classes
        self.out_features, self.reduction = tuple(out_features), reduction
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, \
            options
        self.linear = Linear(in_features, num_classes, bias, device=device, dtype=dtype)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.linear_cross_entropy(input, self.linear.weight, target,
                                      linear_bias=self.linear.bias, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class Container(Module):
    """The deprecated ``nn.Container``: a Module holding the modules given as keywords."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


def factory_kwargs(kwargs):
    """The ``device``/``dtype``/``memory_format`` keywords of ``kwargs`` as one dict for a
    factory call; a ``factory_kwargs`` entry adds to them. Other keys are a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
