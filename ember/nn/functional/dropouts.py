"""The dropouts of ``torch.nn.functional``: ``dropout``, the feature (channel) dropouts
``dropout1d/2d/3d`` and the self-normalising ``alpha_dropout`` / ``feature_alpha_dropout``,
with PyTorch's argument checks; masks are drawn from ember's RNG.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

from ... import _creation
from ._common import _apply

if TYPE_CHECKING:
    from ..._tensor import Tensor


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero elements with probability ``p`` (ember's RNG) and scale the rest by ``1/(1-p)``.

    As PyTorch on the CPU: ``input * noise`` with ``noise`` the kept-mask already divided by
    ``1 - p`` (one MulBackward0 node).
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _apply(input, inplace, lambda x: x * 0)
    if not (input.is_floating_point() or input.is_complex()):  # the noise is divided in place
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype._word}")
    keep = _creation.rand(*input.shape, dtype=input.dtype) >= p
    noise = keep.to(input.dtype) / (1 - p)
    return _apply(input, inplace, lambda x: x * noise)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train, inplace, feature, alpha):
    """ATen's ``_dropout_impl``: a Bernoulli(1 - p) mask (one draw per channel for the
    feature forms), scaled by ``1 / (1 - p)``; the alpha forms instead keep SELU's mean and
    variance: ``input * a * mask + b`` with dropped values sent to ``-alpha * scale``."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return _apply(input, inplace, lambda x: x * _creation.zeros((), dtype=input.dtype))
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype._word}")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    noise = (_creation.rand(*shape, dtype=input.dtype) >= p).to(input.dtype)
    if not alpha:
        noise = noise / (1 - p)
        return _apply(input, inplace, lambda x: x * noise)
    alpha_ = 1.7580993408473766
    a = 1.0 / math.sqrt((alpha_ * alpha_ * p + 1) * (1 - p))
    b = (noise - 1) * (alpha_ * a) + alpha_ * a * p
    noise = noise * a
    if inplace:
        return input.mul_(noise).add_(b)
    return (input * noise).add_(b)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _feature_dropout_unbatched(input, p, training, inplace, input.dim() == 3)


def _feature_dropout_unbatched(input, p, training, inplace, is_batched):
    if not is_batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, inplace, True, False)
    if not is_batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def _feature_rank_warning(name, nd, got):
    warnings.warn(
        f"{name}: Received a {got}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on "
        f"inputs with {nd} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {nd + 1}D or {nd + 2}D inputs).", stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) inputs with probability ``p`` (a 3-d input is
    taken as (N, C, L), with PyTorch's warning)."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        _feature_rank_warning("dropout2d", 2, inp_dim)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p``."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _feature_rank_warning("dropout3d", 3, inp_dim)
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance (dropped values -> SELU's floor)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` with one draw per channel (dims 0 and 1)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)
