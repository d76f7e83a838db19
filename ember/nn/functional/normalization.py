"""Normalization of ``torch.nn.functional``: batch, layer, group, instance, RMS and local
response norms. The first three call PyTorch's native kernels (``ember/ops/nn/
normalization.py``); ``instance_norm`` is batch norm over a reshaped input, and
``rms_norm`` and ``local_response_norm`` are composites of ordinary ops, as in PyTorch, so
their ``grad_fn`` chains are PyTorch's (``rms_norm``: ``MulBackward0 <- RsqrtBackward0 <-
AddBackward1 <- MeanBackward1 <- PowBackward0``, computed in float32 for half-precision
inputs).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ... import _dtypes
from ...autograd.grad_mode import no_grad
from ...ops import pointwise as _pw
from ...ops import unary as _unary
from ...ops.nn import normalization as _layers
from .pooling import avg_pool2d, avg_pool3d
from .resampling import pad

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..._tensor import Tensor

# --------------------------------------------------------------------------- normalization


def _verify_batch_size(size):
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"{_shape_repr(size)}")


def _shape_repr(size):
    return f"torch.Size({list(size)})" if not isinstance(size, list) else str(size)


def _data(t):
    return None if t is None else t._data


def _check_mixed_dtypes(input, *params):
    """PyTorch's CPU norms: parameters share the input's dtype (float32 for a half input)."""
    params = [p for p in params if p is not None]
    if not params or params[0].dtype == input.dtype:
        return
    if str(input.dtype) == "torch.float64":
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    if any(str(p.dtype) != "torch.float32" for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Normalize over (N, d...) per channel; training updates the running stats in place."""
    if training:
        _verify_batch_size(tuple(input.shape))
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not isinstance(momentum, (int, float)):
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                         f"{input.ndim - 1}], but got 1)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is None and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _check_mixed_dtypes(input, weight, bias, running_mean, running_var)
    return _layers._batch_norm(input, weight, bias, _data(running_mean), _data(running_var),
                               bool(training), momentum, eps, {})


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize over the trailing ``normalized_shape`` dims."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    if tuple(input.shape[input.ndim - len(shape):]) != shape or input.ndim < len(shape):
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if not input.is_floating_point():
        raise NotImplementedError(f'"LayerNormKernelImpl" not implemented for '
                                  f"'{input.dtype._word}'")
    _check_mixed_dtypes(input, weight, bias)
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    return _layers._layer_norm(input, weight, bias, axes, eps, {})


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05) -> Tensor:
    """Normalize over channel groups and the spatial dims."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    _verify_batch_size([n * c // num_groups, num_groups] + list(input.shape[2:]))
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} and "
                               f"input of shape {list(input.shape)}")
    _check_mixed_dtypes(input, weight, bias)
    return _layers._group_norm(input, weight, bias, num_groups, eps, {})


def _verify_spatial_size(size):
    if math.prod(size[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{_shape_repr(size)}")


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalize each (sample, channel) plane: ATen's composite, ``batch_norm`` over the input
    viewed as (1, N * C, ...) with the affine parameters and running stats repeated N times;
    the running stats then take the mean of their N updated copies."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[:2]

    def repeat(t):
        return None if t is None else t.repeat(b)

    running_mean_, running_var_ = repeat(running_mean), repeat(running_var)
    out = batch_norm(input.contiguous().view(1, b * c, *input.shape[2:]), running_mean_,
                     running_var_, repeat(weight), repeat(bias), use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(running_mean_.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(running_var_.view(b, c).mean(0))
    return out.view(input.shape)

# torch.finfo(dtype).eps: the gap between 1 and the next number (of the real part's type)
_EPS = {_dtypes.float32: 2.0 ** -23, _dtypes.float64: 2.0 ** -52, _dtypes.complex64: 2.0 ** -23,
        _dtypes.complex128: 2.0 ** -52}


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """``input / sqrt(mean(input**2) + eps) * weight``, the mean over the trailing
    ``normalized_shape`` dims; ``eps`` defaults to the machine epsilon of the dtype it
    computes in (float32 for half-precision inputs)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple "
                        f"of ints, not {type(normalized_shape).__name__}")
    shape = tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape)}")
    n = len(shape)
    if input.ndim < n or tuple(input.shape[input.ndim - n:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{input.dtype._word}\'')
    low = input.dtype in (_dtypes.float16, _dtypes.bfloat16)
    x = input.to(_dtypes.float32) if low else input
    if eps is None:
        eps = _EPS[x.dtype]  # of the dtype it computes in: float32's for half inputs
    dims = tuple(range(input.ndim - n, input.ndim))
    out = x * _unary.rsqrt(_pw.add_scalar(x.pow(2).mean(dims, keepdim=True), eps))
    if low:
        out = out.to(input.dtype)
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """AlexNet's local response normalization across channels: ``x / (k + alpha *
    mean(x**2 over `size` neighbouring channels)) ** beta`` (PyTorch's composite of ``pad``
    and an average pool)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)
