"""Activations of ``torch.nn.functional`` (relu, elu, gelu, softplus, hardtanh, glu, prelu,
softmax...): PyTorch's argument checks and messages, then the kernels of
``ember/ops/nn/activation.py`` (or ordinary ops where PyTorch composes them). The in-place
forms ``relu_``, ``elu_``... are ``fn(..., inplace=True)``.
"""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _autograd_state, _creation, _dtypes
from ..._tensor import _wrap_dim
from ...ops import batching
from ...ops import pointwise as _pointwise
from ...ops import reduction as _red
from ...ops import unary as _unary
from ...ops.autocast import autocast_op
from ...ops.nn import activation as _nn
from ._common import _apply, _floating_only

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..._tensor import Tensor
    from ..._typing import DTypeLike



def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DTypeLike = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (``torch.softmax``); without ``dim``, PyTorch's
    deprecated implicit choice, with its warning."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.ndim, _stacklevel)
    return _red.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: DTypeLike = None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably; without ``dim``, PyTorch's
    deprecated implicit choice, with its warning."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _red.log_softmax(input, dim, dtype=dtype)


# --------------------------------------------------------------------------- activations


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``."""
    if input.dtype is _dtypes.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _apply(input, inplace, _nn._relu)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``: hardtanh from 0 to 6 (as PyTorch records it)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    _floating_only("leaky_relu_cpu", input)
    op = _nn._leaky_relu_ if inplace else _nn._leaky_relu
    return _apply(input, inplace, lambda x: op(x, negative_slope))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """leaky_relu with a random slope drawn uniformly from ``[lower, upper]`` for each element
    in training (ember's RNG), the mean slope ``(lower + upper) / 2`` otherwise."""
    return _rrelu(input, lower, upper, training, inplace)


def _rrelu(input, lower, upper, training, inplace, generator=None):
    """rrelu, and ``torch.rrelu`` (which draws from ``generator``)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _floating_only("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", input)
    op = _nn._rrelu_ if inplace else _nn._rrelu
    if not training:
        return _apply(input, inplace, lambda x: op(x, None, lower, upper, False))
    slopes = _creation.rand(*input.shape, dtype=input.dtype, generator=generator)
    noise = _pointwise.where(input.detach() <= 0, slopes * (upper - lower) + lower, 1.0)
    if batching.is_batched(input, noise):  # the op reads the noise raw: one sample a time
        return batching.loop(lambda x, n: _apply(x, inplace, lambda y: op(
            y, n._data, lower, upper, True)), (input, noise))
    return _apply(input, inplace, lambda x: op(x, noise._data, lower, upper, True))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere."""
    return _elu(input, inplace, _nn._elu, _nn._elu_, alpha, 1.0, 1.0)


# SELU's constants (Klambauer et al., 2017), as PyTorch writes them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(input, alpha)`` with SELU's fixed ``alpha`` and ``scale``."""
    return _elu(input, inplace, _nn._elu, _nn._elu_, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``alpha * (exp(input / alpha) - 1)`` elsewhere."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, inplace, _nn._celu, _nn._celu_, alpha, 1.0, 1.0 / alpha)


def _elu(input, inplace, op, op_, alpha, scale, input_scale):
    """PyTorch's one elu kernel, behind elu, selu and celu."""
    _floating_only("elu_cpu", input)
    op = op_ if inplace else op
    return _apply(input, inplace, lambda x: op(x, alpha, scale, input_scale))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating_only("GeluKernelImpl", input)
    wants_grad = input.requires_grad and _autograd_state.grad_state.grad
    return _nn._gelu(input, approximate, {} if wants_grad else None)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    _floating_only("silu_cpu", input)
    return _apply(input, inplace, _nn._silu)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))``."""
    _floating_only("mish_cpu", input)
    return _apply(input, inplace, _nn._mish)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold``."""
    _floating_only("softplus_cpu", input)
    return _nn._softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, computed stably."""
    _floating_only("log_sigmoid_cpu", input)
    return _nn._log_sigmoid(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``input`` clamped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtypes.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtypes.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _apply(input, inplace, lambda x: _nn._hardtanh(x, min_val, max_val))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(input + 3) / 6``."""
    _floating_only("hardsigmoid_cpu", input)
    return _apply(input, inplace, _nn._hardsigmoid)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * relu6(input + 3) / 6``."""
    _floating_only("hardswish_cpu", input)
    return _apply(input, inplace, _nn._hardswish)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, 0 elsewhere."""
    _floating_only("hardshrink_cpu", input)
    return _nn._hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` moved ``lambd`` towards 0 where ``|input| > lambd``, 0 elsewhere."""
    _floating_only("softshrink_check", input)
    top = float(np.finfo(input.dtype.np).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{input.dtype._word}, but found {lambd:g}")
    return _nn._softshrink(input, lambd)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``input <= threshold``, ``input`` elsewhere."""
    if input.dtype is _dtypes.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if not input.is_floating_point():  # PyTorch casts the numbers to the integer dtype
        threshold, value = math.trunc(threshold), math.trunc(value)
    op = _nn._threshold_ if inplace else _nn._threshold
    return _apply(input, inplace, lambda x: op(x, threshold, value))


def softsign(input: Tensor) -> Tensor:
    """``input / (1 + |input|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``input - tanh(input)``."""
    return input - input.tanh()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DTypeLike = None) -> Tensor:
    """``softmax(-input, dim)``; ``dtype`` casts the input first."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.ndim, _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def _get_softmax_dim(name, ndim, stacklevel):
    """PyTorch's implicit dim (deprecated, with its warning): 0 for 0, 1 and 3 dims, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    _floating_only("glu_cpu", input)
    return _nn._glu(input, dim)


@autocast_op("prelu")
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``input`` where positive, ``weight * input`` elsewhere; ``weight`` holds one slope, or
    one per channel (dim 1 of ``input``)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._word} and "
                           f"{weight.dtype._word}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _floating_only("prelu_cpu", input)
    if input.ndim != weight.ndim:  # weight along dim 1, as PyTorch reshapes it (a view)
        weight = weight.reshape([n if d == 1 else 1 for d in range(input.ndim)])
    return _nn._prelu_kernel(input, weight)


def _inplace_form(fn: Callable[..., Any]) -> Callable[..., Tensor]:
    """PyTorch's ``F.<name>_(input, ...)``: ``fn(input, ..., inplace=True)``."""
    def inplace(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(input, *args, inplace=True, **kwargs)
    inplace.__name__ = inplace.__qualname__ = fn.__name__ + "_"
    inplace.__doc__ = f"In-place :func:`{fn.__name__}`."
    return inplace


relu_ = _inplace_form(relu)
elu_ = _inplace_form(elu)
leaky_relu_ = _inplace_form(leaky_relu)
hardtanh_ = _inplace_form(hardtanh)
selu_ = _inplace_form(selu)
celu_ = _inplace_form(celu)
threshold_ = _inplace_form(threshold)
rrelu_ = _inplace_form(rrelu)


def sigmoid(input: Tensor) -> Tensor:
    """Logistic function."""
    return _unary.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return _unary.tanh(input)
