"""``ember.nn.functional``: stateless neural-network functions (activations, losses, layers)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _creation, _dtypes
from .._tensor import _wrap_dim
from ..autograd import grad_mode as _grad_mode
from ..ops import batching
from ..ops import conv as _conv
from ..ops import nn_layers as _layers
from ..ops import nn_ops as _nn
from ..ops import pointwise as _pointwise
from ..ops import reduction as _red
from ..ops import shape as _shape
from ..ops import unary as _unary
from ..ops.nn_ops import binary_cross_entropy_with_logits
from ..ops.registry import saves_also
from . import attention as _attention

softmax = _red.softmax
log_softmax = _red.log_softmax


def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction the deprecated ``size_average`` / ``reduce`` flags stand for."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _get_enum(reduction):
    """``reduction`` checked, as PyTorch's ``_Reduction.get_enum`` (but kept a string)."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _get_enum(reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _apply(input, inplace, fn):
    """``fn(input)``, or written into ``input`` in place (history rebased like PyTorch)."""
    return input._inplace(fn) if inplace else fn(input)


def _word(dtype):
    """PyTorch's name of a dtype in messages: 'Float', 'Long'..."""
    return dtype._legacy[:-len("Tensor")]


def _floating_only(kernel, *tensors):
    """PyTorch's kernels for these functions exist for floating dtypes only."""
    for t in tensors:
        if t._data.dtype.kind != "f":
            break
    else:
        return  # floating tensors promote to a floating type
    dt = _dtypes.result_type(*tensors)
    if not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_word(dt)}\'')


# --------------------------------------------------------------------------- activations


def relu(input, inplace=False):
    """``max(input, 0)``."""
    if input.dtype is _dtypes.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _apply(input, inplace, _nn._relu)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``: hardtanh from 0 to 6 (as PyTorch records it)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    _floating_only("leaky_relu_cpu", input)
    op = _nn._leaky_relu_ if inplace else _nn._leaky_relu
    return _apply(input, inplace, lambda x: op(x, negative_slope))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
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


def elu(input, alpha=1.0, inplace=False):
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere."""
    return _elu(input, inplace, _nn._elu, _nn._elu_, alpha, 1.0, 1.0)


# SELU's constants (Klambauer et al., 2017), as PyTorch writes them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with SELU's fixed ``alpha`` and ``scale``."""
    return _elu(input, inplace, _nn._elu, _nn._elu_, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input, alpha=1.0, inplace=False):
    """``input`` where positive, ``alpha * (exp(input / alpha) - 1)`` elsewhere."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _elu(input, inplace, _nn._celu, _nn._celu_, alpha, 1.0, 1.0 / alpha)


def _elu(input, inplace, op, op_, alpha, scale, input_scale):
    """PyTorch's one elu kernel, behind elu, selu and celu."""
    _floating_only("elu_cpu", input)
    op = op_ if inplace else op
    return _apply(input, inplace, lambda x: op(x, alpha, scale, input_scale))


def gelu(input, approximate="none"):
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _floating_only("GeluKernelImpl", input)
    return _nn._gelu(input, approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)``."""
    _floating_only("silu_cpu", input)
    return _apply(input, inplace, _nn._silu)


def mish(input, inplace=False):
    """``input * tanh(softplus(input))``."""
    _floating_only("mish_cpu", input)
    return _apply(input, inplace, _nn._mish)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold``."""
    _floating_only("softplus_cpu", input)
    return _nn._softplus(input, beta, threshold)


def logsigmoid(input):
    """``log(sigmoid(input))``, computed stably."""
    _floating_only("log_sigmoid_cpu", input)
    return _nn._log_sigmoid(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dtypes.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dtypes.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _apply(input, inplace, lambda x: _nn._hardtanh(x, min_val, max_val))


def hardsigmoid(input, inplace=False):
    """``relu6(input + 3) / 6``."""
    _floating_only("hardsigmoid_cpu", input)
    return _apply(input, inplace, _nn._hardsigmoid)


def hardswish(input, inplace=False):
    """``input * relu6(input + 3) / 6``."""
    _floating_only("hardswish_cpu", input)
    return _apply(input, inplace, _nn._hardswish)


def hardshrink(input, lambd=0.5):
    """``input`` where ``|input| > lambd``, 0 elsewhere."""
    _floating_only("hardshrink_cpu", input)
    return _nn._hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    """``input`` moved ``lambd`` towards 0 where ``|input| > lambd``, 0 elsewhere."""
    _floating_only("softshrink_check", input)
    top = float(np.finfo(input.dtype.np).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_word(input.dtype)}, but found {lambd:g}")
    return _nn._softshrink(input, lambd)


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, ``input`` elsewhere."""
    if input.dtype is _dtypes.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if not input.is_floating_point():  # PyTorch casts the numbers to the integer dtype
        threshold, value = math.trunc(threshold), math.trunc(value)
    op = _nn._threshold_ if inplace else _nn._threshold
    return _apply(input, inplace, lambda x: op(x, threshold, value))


def softsign(input):
    """``input / (1 + |input|)``."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``input - tanh(input)``."""
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``; ``dtype`` casts the input first."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.ndim, _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def _get_softmax_dim(name, ndim, stacklevel):
    """PyTorch's implicit dim (deprecated, with its warning): 0 for 0, 1 and 3 dims, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def glu(input, dim=-1):
    """``a * sigmoid(b)``, ``a`` and ``b`` the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    _floating_only("glu_cpu", input)
    return _nn._glu(input, dim)


def prelu(input, weight):
    """``input`` where positive, ``weight * input`` elsewhere; ``weight`` holds one slope, or
    one per channel (dim 1 of ``input``)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_word(input.dtype)} and "
                           f"{_word(weight.dtype)}")
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


def _inplace_form(fn):
    """PyTorch's ``F.<name>_(input, ...)``: ``fn(input, ..., inplace=True)``."""
    def inplace(input, *args, **kwargs):
        return fn(input, *args, inplace=True, **kwargs)
    inplace.__name__ = inplace.__qualname__ = fn.__name__ + "_"
    inplace.__doc__ = f"In-place :func:`{fn.__name__}`."
    return inplace


relu_, elu_, leaky_relu_, hardtanh_, selu_, celu_, threshold_, rrelu_ = map(
    _inplace_form, (relu, elu, leaky_relu, hardtanh, selu, celu, threshold, rrelu))


def sigmoid(input):
    """Logistic function."""
    return _unary.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _unary.tanh(input)


# --------------------------------------------------------------------------- linear, dropout


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, recorded as PyTorch records it: one ``addmm`` for a matrix
    input, and for a contiguous input of another rank flattened to a matrix when the bias is a
    vector (up to dims of size 1); otherwise ``matmul`` and an in-place ``add_`` of the bias."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is not None:
        if input.ndim == 2:
            return bias.addmm(input, weight.t())
        vector_bias = bias.ndim == 1 or sum(n != 1 for n in bias.shape) == 1
        if vector_bias and bias.is_contiguous() and input.is_contiguous():
            *batch, n = input.shape
            out = bias.addmm(input.view(math.prod(batch), n), weight.t())
            return out.view(*batch, out.shape[1])
    out = input.matmul(weight.t())
    return out if bias is None else out.add_(bias)


def dropout(input, p=0.5, training=True, inplace=False):
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
                           f"{_word(input.dtype)}")
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
                           f"{_word(input.dtype)}")
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


def dropout1d(input, p=0.5, training=True, inplace=False):
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


def dropout2d(input, p=0.5, training=True, inplace=False):
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


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability ``p``."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        _feature_rank_warning("dropout3d", 3, inp_dim)
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance (dropped values -> SELU's floor)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` with one draw per channel (dims 0 and 1)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    from ..ops.linalg import einsum
    batch = tuple(input1.shape[:-1])
    flat = einsum("bi,oij,bj->bo", input1.reshape(-1, input1.shape[-1]), weight,
                  input2.reshape(-1, input2.shape[-1]))
    out = flat.view(*batch, weight.shape[0])
    return out if bias is None else out + bias


# --------------------------------------------------------------------------- regression losses


def _check_same_size(input, target):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      stacklevel=4)  # the caller of the loss function


def _check_weight_size(weight, input):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")


def _weighted(loss, weight, reduction, mean_by_weight):
    """PyTorch's Python-level weighting of an elementwise loss (mse, l1, huber)."""
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _pointwise_loss(input, target, size_average, reduce, reduction):
    """The size warning, the legacy flags and the broadcast every pointwise loss starts with."""
    _check_same_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _shape.broadcast_tensors(input, target) + (reduction,)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    input_, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((input_ - target).pow(2), weight, reduction, True)
    reduction = _get_enum(reduction)
    _floating_only("mse_cpu", input_, target)
    return _nn._mse_loss(input_, target, reduction)


def _l1(input, target, reduction):
    """ATen's l1_loss: a composite of sub, abs and the reduction."""
    return _reduce((input - target).abs(), _get_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error."""
    input_, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((input_ - target).abs(), weight, reduction, True)
    return _l1(input_, target, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error below ``beta``, absolute error (shifted) above."""
    input, target, reduction = _pointwise_loss(input, target, size_average, reduce, reduction)
    if beta == 0.0:
        return _l1(input, target, reduction)
    reduction = _get_enum(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _floating_only("smooth_l1_cpu", input, target)
    return _nn._smooth_l1_loss(input, target, reduction, beta)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``, targets of 1 or -1."""
    if target.requires_grad and _grad_mode._state.grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    t = target._data if target.dtype == input.dtype else target.to(input.dtype)._data
    return saves_also(_nn._soft_margin_loss(input, t, _reduction(size_average, reduce,
                                                                 reduction)), target)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error below ``delta``, ``delta``-scaled absolute error above."""
    input_, target, _ = _pointwise_loss(input, target, None, None, reduction)
    if weight is None:
        return _huber(input_, target, _get_enum(reduction), delta)
    _check_weight_size(weight, input)
    return _weighted(_huber(input_, target, "none", delta), weight, reduction, False)


def _huber(input, target, reduction, delta):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _floating_only("huber_cpu", input, target)
    return _nn._huber_loss(input, target, reduction, delta)


# --------------------------------------------------------------------------- classification


def _class_weight_raw(weight, input):
    """A class weight as the ops take it: a raw array (PyTorch refuses other dtypes)."""
    if weight is None:
        return None
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_word(input.dtype)} but found "
                           f"{_word(weight.dtype)}")
    return weight._data.reshape(-1)  # nll_loss2d takes any weight of C elements


def _nll_loss_2d(input, target, weight, reduction, ignore_index):
    """ATen's nll_loss (1-d or 2-d input) and nll_loss2d (4-d input), with their checks in
    PyTorch's order."""
    four_d = input.ndim == 4
    _nn._not_differentiable(weight, "weight", "nll_loss2d_forward" if four_d else
                            "nll_loss_forward")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if four_d and target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if not four_d and target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dtype not in (_dtypes.int64, _dtypes.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_word(target.dtype)}")
    if four_d:
        if weight is not None and weight.numel() != c:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if (input.shape[0],) + input.shape[2:] != target.shape:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    else:
        if input.ndim == 1 and target.ndim == 1:
            if target.shape[0] != 1:
                raise ValueError("For 1D input, 1D target must have size 1, but got target "
                                 f"size: {target.shape[0]}")
            target = target.reshape(())
        if weight is not None and (weight.ndim != 1 or weight.numel() != c):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: "
                               f"{list(weight.shape)}")
    _floating_only("nll_loss2d_forward_out_frame" if four_d else "nll_loss_out_frame", input)
    raw_weight = _class_weight_raw(weight, input)
    if four_d and target.dtype != _dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {_word(target.dtype)}")
    t = target._data.astype(np.int64)
    lo, hi = (t.min(), t.max()) if t.size else (0, -1)
    if lo < 0 or hi >= c:  # then look closer: ignore_index may be out
        bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
        if bad.size:
            raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    if t.size and not lo <= ignore_index <= hi:
        ignore_index = None  # no target is ignored (the ops' shorter path)
    op = _nn._nll_loss2d if four_d else _nn._nll_loss
    return saves_also(op(input, t, raw_weight, reduction, ignore_index), target, weight)


def _nll_loss_batched(fn, input, target, weight, reduction, ignore_index):
    """nll_loss under vmap: the vmap batch folded into the loss's own (N), losses per element,
    then each sample's reduction (the mean weighted by the targets' class weights)."""
    if batching.is_batched(weight):
        return batching.loop(fn, (input, target, weight, reduction, ignore_index))
    levels = tuple(sorted(set(batching.levels_of(input)) | set(batching.levels_of(target))))
    k = 1 if input.ndim >= 2 else 0  # the sample's own batch dim, folded in too
    x = batching.physical(input, levels, expand=True)
    t = batching.physical(target, levels, expand=True)
    batch = tuple(x.shape[:len(levels)])
    losses = fn(x.reshape((-1,) + tuple(input.shape[k:])),
                t.reshape((-1,) + tuple(target.shape[k:])), weight, "none", ignore_index)
    out = losses.reshape(batch + tuple(target.shape))
    dims = tuple(range(len(levels), out.ndim))  # a sample's elements (none for a 0-d target)
    if reduction == "sum" and dims:
        out = out.sum(dims)
    elif reduction == "mean" and weight is None and not (t._data == ignore_index).any():
        out = out.mean(dims) if dims else out  # every target counts once
    elif reduction == "mean":  # NaN where every target is ignored, with a zero gradient
        kept = (t != ignore_index).to(x.dtype)
        if weight is not None:
            kept = kept * weight[t.clamp(0, weight.shape[0] - 1)]
        total, count = (out.sum(dims), kept.sum(dims)) if dims else (out, kept)
        some = count != 0
        out = (total / count.masked_fill(~some, 1)).masked_fill(~some, math.nan)
    return batching.wrap(out, levels)


@batching.per_sample_with(_nll_loss_batched)
def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """ATen's nll_loss_nd: other inputs of 3 or more dims go through the 4-d op as (N, C, 1, -1)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    batch = target.shape[0] if target.ndim else 0
    if input.ndim != 1 and input.shape[0] != batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({batch}).")
    if input.ndim in (1, 2, 4):
        return _nll_loss_2d(input, target, weight, reduction, ignore_index)
    n, c = input.shape[:2]
    out_size = (n,) + input.shape[2:]
    if target.shape != out_size:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    empty = input.numel() == 0
    x = input.contiguous().view(n, c, 0, 0) if empty else input.contiguous().view(n, c, 1, -1)
    t = target.contiguous().view(n, 0, 0) if empty else target.contiguous().view(n, 1, -1)
    out = _nll_loss_2d(x, t, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == "none" else out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of class-index targets given log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


def _class_weight_view(weight, input, class_dim):
    """``weight`` shaped to broadcast along the class dim of ``input``."""
    shape = [1] * input.ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    """ATen's cross_entropy with class probabilities (a composite of ordinary ops)."""
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = _pointwise._mul_scalar(target, 1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * (_class_weight_view(weight, input, class_dim) if input.ndim > 1 else weight)
    if reduction == "mean":
        if input.numel() == 0:
            return -prod.sum().fill_(math.nan)
        return _pointwise._div_scalar(-prod.sum(), input.numel() // c)
    return -prod.sum() if reduction == "sum" else -prod.sum(class_dim)


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, label_smoothing):
    """ATen's cross_entropy with class indices and label smoothing: the nll loss mixed with
    the mean negative log-probability over the classes."""
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    c = logp.shape[class_dim]
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight_view(weight, logp, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth.masked_fill_(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:  # normalised by the targets' weights, as nll_loss is
            # (flattened before masked_select, which refuses 0-d tensors in ember)
            total = weight.gather(0, target.flatten().masked_select(~ignore_mask.flatten())).sum()
        else:
            total = (~ignore_mask).sum()
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (_pointwise._mul_scalar(nll, 1 - label_smoothing)
            + _pointwise._mul_scalar(smooth, label_smoothing / c))


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input))`` for class indices; soft-target cross entropy for class
    probabilities (a target of the input's shape)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_word(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_smoothed(input, target, weight, reduction, ignore_index,
                                       label_smoothing)
    logp = log_softmax(input, 0 if input.ndim == 1 else 1)
    return _nll_loss_nd(logp, target, weight, reduction, ignore_index)


def _broadcast_weight(weight, target):
    """``weight`` expanded to its broadcast shape with the target (PyTorch's error text)."""
    shape = [1] * max(target.ndim, weight.ndim)
    for arg, size in enumerate((target.shape, weight.shape)):
        for i in range(-1, -1 - len(size), -1):
            if shape[i] == 1:
                shape[i] = size[i]
            elif size[i] not in (1, shape[i]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size[i]} at {i}! "
                    f"Mismatching argument at index {arg} had {size}; but expected shape should "
                    f"be broadcastable to {shape}")
    return weight.expand(*shape)


def _check_probabilities(x, y):
    """PyTorch's kernel checks input then target, element by element (NaN fails too)."""
    bad_x = ~((x >= 0) & (x <= 1))
    bad = bad_x | ~((y >= 0) & (y <= 1))
    if bad.any():
        which = "input" if bad_x.reshape(-1)[bad.reshape(-1).argmax()] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities (log clamped at -100 like PyTorch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = _broadcast_weight(weight, target)
    _nn._not_differentiable(weight, "weight", "binary_cross_entropy")
    if batching.is_batched(weight):  # read as a raw array below: one sample at a time
        return batching.loop(binary_cross_entropy, (input, target, weight),
                             dict(reduction=reduction))
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_word(target.dtype)} but expected "
                           f"{_word(input.dtype)}")
    _floating_only("binary_cross_entropy", input)
    x = input._data
    _check_probabilities(x, target._data)
    if weight is not None and weight.shape != input.shape:  # PyTorch's in-place loss *= weight
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(weight.shape)}")
    raw_weight = None if weight is None else weight._data.astype(x.dtype)
    return _nn._binary_cross_entropy(input, target, raw_weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence; ``input`` holds log-probabilities."""
    if size_average is not None or reduce is not None:
        enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        enum = _get_enum("sum" if reduction == "batchmean" else reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from ..ops.pointwise import xlogy
        loss = xlogy(target, target) - target * input
    loss = _reduce(loss, enum)
    if reduction == "batchmean" and input.ndim != 0:
        loss = loss / input.shape[0]
    return loss


# --------------------------------------------------------------------------- similarity, misc


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else _pointwise.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    PyTorch's algorithm: each input divided by its norm, clamped to ``eps`` out of autograd's
    sight, then the sum of the products (the result stays within [-1, 1]).
    """
    from .._broadcast import broadcast_shapes
    from ..autograd.grad_mode import no_grad
    dt = _dtypes.result_type(x1, x2)
    if not dt.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_word(dt)}")
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    x1, x2 = (x if x.is_floating_point() else x.to(dt) for x in (x1, x2))
    if x1.shape != x2.shape:  # ATen's expand_outplace: both expanded, unless already equal
        shape = broadcast_shapes(x1.shape, x2.shape)
        x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last dim (ATen's composite)."""
    return (x1 - x2 + eps).norm(p, max(x1.ndim, x2.ndim) - 1, keepdim)


def one_hot(tensor, num_classes=-1):
    """Class indices -> int64 one-hot vectors in a new last dim."""
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    v = tensor.numpy().astype(np.int64)
    if num_classes == -1:
        num_classes = int(v.max()) + 1 if v.size else 0
    if v.size and v.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if v.size and v.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _creation.tensor((v[..., None] == np.arange(num_classes)).astype(np.int64))


def pad(input, pad, mode="constant", value=None):  # noqa: A002 - PyTorch's names
    """Pad the last ``len(pad) // 2`` dims: constant, reflect, replicate or circular."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return _constant_pad(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if not (len(pad) in (2, 4, 6) and nd + 1 <= input.ndim <= nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    _check_pad_sizes(input, pad, mode)
    return _layers.PADS[(mode, nd)](input, pad)


def _constant_pad(input, pad, value):
    """``constant_pad_nd`` with PyTorch's checks of negative (cropping) pads."""
    nd = len(pad) // 2
    for i in range(nd):
        n = input.shape[input.ndim - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if (lo < 0 and n + lo < 0) or (hi < 0 and n + min(lo, 0) + hi < 0):
            raise RuntimeError("narrow(): length must be non-negative.")
        if n + lo + hi < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} "
                               "resulted in a negative output size, which is invalid. Check "
                               f"dimension {input.ndim - 1 - i} of your input.")
    return _layers._constant_pad_nd(input, pad, value)


def _check_pad_sizes(input, pad, mode):
    """Reflection and replication padding's checks of the input and output sizes."""
    nd = len(pad) // 2
    first = input.ndim - nd - 1  # the channel dim (or the first dim when unbatched)
    if any(n == 0 for n in input.shape[first:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    sizes = input.shape[-nd:]
    for i in range(nd):  # last dim first, as PyTorch numbers its arguments
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and not (lo < input.shape[dim] and hi < input.shape[dim]):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                f"{list(input.shape)}")
    outs = [n + pad[2 * (nd - 1 - k)] + pad[2 * (nd - 1 - k) + 1] for k, n in enumerate(sizes)]
    if all(o < 1 for o in outs) or (nd == 1 and outs[0] < 1):
        names = ("D", "H", "W")[3 - nd:]
        inp = ", ".join(f"{a}: {n}" for a, n in zip(names, sizes))
        if nd == 3:
            inp = inp.replace("D: " + str(sizes[0]) + ",", "D: " + str(sizes[0]))
        elif nd == 2 and mode == "replicate":
            inp += " "
        out = " ".join(f"{a}: {o}" for a, o in zip(names, outs))
        raise RuntimeError(f"input ({inp}) is too small. Calculated output {out}")
    if min(outs) < 0:
        shape = list(input.shape[:-nd]) + outs
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{shape}")


@batching.per_sample  # writes into a fresh tensor: under vmap, one sample at a time
def _pad_circular(input, pad):
    """PyTorch's composite: copy the input into the middle, then wrap each side around."""
    nd = len(pad) // 2
    lead = input.ndim - nd
    shape = list(input.shape)
    for i in range(nd):
        lo, hi = pad[2 * (nd - 1 - i)], pad[2 * (nd - 1 - i) + 1]
        n = input.shape[lead + i]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        shape[lead + i] = n + lo + hi
    out = _creation.empty(*shape, dtype=input.dtype, device=input.device)
    middle, source = out, input
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        middle = middle.narrow(dim, max(lo, 0), shape[dim] - max(lo, 0) - max(hi, 0))
        source = source.narrow(dim, max(-lo, 0), input.shape[dim] - max(-lo, 0) - max(-hi, 0))
    middle.copy_(source)
    for i in range(nd):
        dim = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(dim, 0, lo).copy_(out.narrow(dim, shape[dim] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(dim, shape[dim] - hi, hi).copy_(out.narrow(dim, max(lo, 0), hi))
    return out


def _embedding_batched(fn, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                       scale_grad_by_freq=False, sparse=False):
    """embedding under vmap: any shape of indices picks rows, so batched indices are just more
    indices; a weight per sample (per-sample gradients) is indexed per sample — the same rows
    and gradients while no padding row, renormalization or frequency scaling is asked for
    (those loop)."""
    options = (padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    if batching.is_batched(weight):
        if padding_idx is None and max_norm is None and not scale_grad_by_freq:
            return weight[input]
        return batching.loop(fn, (input, weight, *options))
    return batching.wrap(fn(input._value, weight, *options), input._levels)


@batching.per_sample_with(_embedding_batched)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by ``input``; ``padding_idx`` rows get no gradient."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if str(input.dtype) not in ("torch.int64", "torch.int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{input.dtype._legacy} instead (while checking arguments for "
                           "embedding)")
    if sparse:
        raise NotImplementedError("ember: embedding with sparse=True (sparse gradients)")
    indices = input._data.astype(np.int64)  # a private copy: the node keeps it
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, indices, max_norm, norm_type)
    return saves_also(_layers._embedding(weight, indices, weight.shape[0], padding_idx,
                                         bool(scale_grad_by_freq)), input)


def _embedding_renorm(weight, indices, max_norm, norm_type):
    """Rescale in place the rows ``indices`` uses whose norm exceeds ``max_norm``."""
    from .. import _xp
    from ..autograd.grad_mode import no_grad
    xp = _xp.namespace_of(indices)
    rows = xp.unique(indices)
    data = weight._data[rows]
    norms = xp.linalg.norm(data.astype(np.float64), ord=norm_type, axis=1)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    wrap = _tensor_cls()._make
    with no_grad():  # an in-place write: the weight's version moves, as in PyTorch
        weight.detach()[wrap(rows, None, False)] = wrap(data * scale[:, None], None, False)


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


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation over (N, C, L) inputs."""
    return _conv_nd(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(2, input, weight, bias, stride, padding, dilation, groups)


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


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 1-d convolution (the gradient of conv1d in its input)."""
    return _conv_transpose_nd(1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-d convolution (the gradient of conv2d in its input)."""
    return _conv_transpose_nd(2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 3-d convolution (the gradient of conv3d in its input)."""
    return _conv_transpose_nd(3, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


# --------------------------------------------------------------------------- pixel shuffle, fold


def _check_shuffle(name, input, factor, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    _check_shuffle("pixel_shuffle", input, upscale_factor, "upscale_factor")
    c, sq = input.shape[-3], upscale_factor * upscale_factor
    if c % sq:
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {sq}")
    return _layers._pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    _check_shuffle("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({dim})={input.shape[dim]} is "
                               f"not divisible by {downscale_factor}")
    return _layers._pixel_unshuffle(input, downscale_factor)


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


# --------------------------------------------------------------------------- pooling

_WORDS = {1: "one", 2: "two", 3: "three"}
_DIM_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _pool_args(name, nd, kernel_size, stride, padding, dilation=1):
    """Kernel, stride, padding, dilation as ``nd``-tuples (stride defaults to the kernel)."""
    words = _WORDS[nd]

    def expand(value, label, rule):
        value = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if len(value) not in (1, nd):
            raise RuntimeError(f"{name}: {label} {rule} {words} ints")
        return value * nd if len(value) == 1 else value

    kernel = expand(kernel_size, "kernel_size", "must either be a single int, or a tuple of")
    if _no_stride(stride):
        stride = kernel
    else:
        stride = expand(stride, "stride", "must either be omitted, a single int, or a tuple of")
    padding = expand(padding, "padding", "must either be a single int, or a tuple of")
    dilation = expand(dilation, "dilation", "must be either a single int, or a tuple of")
    return kernel, stride, padding, dilation


def _pool_output(input, nd, kernel, stride, padding, dilation, ceil_mode, name=None):
    """PyTorch's pooling shape checks; returns the output sizes. ``name``: the 3-d check's
    (average pooling's wants the input at least the size of the kernel)."""
    names = _DIM_NAMES[nd]
    outs = []
    for n, k, s, p, d in zip(input.shape[-nd:], kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
        outs.append(_layers.pool_output_size(n, k, s, p, d, ceil_mode))

    def listing(prefix, values):
        return " ".join(f"{prefix}{a}: {v}" for a, v in zip(names, values))
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{listing('k', kernel)}")
    if min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got {listing('d', stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{listing('dilation', dilation)}")
    _check_pool_sizes(input, nd, kernel, name)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        if nd == 2:
            raise RuntimeError(
                f"pad should be smaller than or equal to half of kernel size, but got padW = "
                f"{padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got kT: "
            f"{kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {padding[0]} padW: "
            f"{padding[2]} padH: {padding[1]}")
    if min(outs) < 1:
        sizes = "x".join(map(str, input.shape[-nd - 1:]))
        out = "x".join(map(str, [input.shape[-nd - 1]] + outs))
        raise RuntimeError(f"Given input size: ({sizes}). Calculated output size: ({out}). "
                           "Output size is too small")
    return outs


def _check_pool_input(input, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")


def _check_pool_sizes(input, nd, kernel, name):
    """The input-size checks of ATen's pool2d_shape_check / pool3d_shape_check."""
    shape = list(input.shape)
    if nd == 2 and (input.ndim not in (3, 4) or 0 in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{shape}")
    if nd == 3 and 0 in shape[-4:]:
        raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension 0 "
                           "has length zero!")
    if nd == 3 and name == "avg_pool3d()" and any(n < k for n, k in zip(shape[-3:], kernel)):
        raise RuntimeError(f"input image (T: {shape[-3]} H: {shape[-2]} W: {shape[-1]}) smaller "
                           f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    kernel, stride, padding, dilation = _pool_args(f"max_pool{nd}d", nd, kernel_size, stride,
                                                   padding, dilation)
    _check_pool_input(input, nd)
    _pool_output(input, nd, kernel, stride, padding, dilation, ceil_mode,
                 "max_pool3d_with_indices_out_cpu_template()")
    op = _layers._max_pool2d if nd == 2 else _layers._max_pool3d
    saved = {}
    out = op(input, kernel, stride, padding, dilation, bool(ceil_mode), saved)
    return (out, _indices(saved, out)) if return_indices else out


def _indices(saved, out):
    """The indices a max-pooling op saved, as an int64 tensor (a copy: the node keeps its own),
    shaped like its output ``out`` (under vmap: batched like it). The node checks its version,
    as PyTorch's, which saves the very tensor it returns."""
    indices = _tensor_cls()._make(saved["indices"].copy(), None, False)
    if batching.levels_of(out):
        return batching.wrap(indices.reshape(out._value.shape), out._levels)
    saves_also(out, indices)
    return indices


def _one(value, message):
    """A 1-d pooling argument as an int; ``message`` (with ``{n}``) for a longer sequence."""
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(message.format(n=len(value)))
        return value[0]
    return value


def _no_stride(stride):
    return stride is None or (isinstance(stride, (tuple, list)) and not stride)


def _check_1d_input(input, name):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {name})")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling: PyTorch's 2-d op on a height-1 view."""
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    size = "of size 1 but got size {n}"
    k = _one(kernel_size, "max_pool1d() kernel_size must be an int, list of ints or tuple of "
                          "ints " + size)
    s = k if _no_stride(stride) else _one(
        stride, "max_pool1d() stride must be None, an int, list of ints, or tuple of ints " + size)
    p = _one(padding, "max_pool1d() padding must be an int, list of ints, or tuple of ints " + size)
    d = _one(dilation,
             "max_pool1d() dilation must be an int, list of ints or tuple of ints " + size)
    for ok, message in ((k > 0, f"kernel_size must be greater than zero, but got {k}"),
                        (s > 0, f"stride must be greater than zero, but got {s}"),
                        (p >= 0, f"padding must be non-negative, but got {p}"),
                        (p <= k // 2, "padding should be at most half of kernel size, but got "
                                      f"padding={p} and kernel_size={k}"),
                        (d > 0, f"dilation must be greater than zero, but got {d}")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {message}")
    out = _layers.pool_output_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    res = _max_pool(2, input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                    return_indices)
    return (res[0].squeeze(-2), res[1].squeeze(-2)) if return_indices else res.squeeze(-2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling; the gradient flows to each window's maximum."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-d max pooling; the gradient flows to each window's maximum."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    kernel, stride, padding, _ = _pool_args(f"avg_pool{nd}d", nd, kernel_size, stride, padding)
    if nd == 3:
        _check_pool_input(input, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if input.ndim < nd + 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                         f"{input.ndim - 1}], but got {-nd - 1})")
    if input.ndim > nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")
    _pool_output(input, nd, kernel, stride, padding, (1,) * nd, ceil_mode, "avg_pool3d()")
    op = _layers._avg_pool2d if nd == 2 else _layers._avg_pool3d
    return op(input, kernel, stride, padding, bool(ceil_mode), bool(count_include_pad),
              divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling: PyTorch's 2-d op on a height-1 view."""
    _check_1d_input(input, "avg_pool1d")
    message = "avg_pool1d() argument '{}' should contain one int (got {{n}})"
    k = _one(kernel_size, message.format("kernel_size"))
    s = k if _no_stride(stride) else _one(stride, message.format("stride"))
    p = _one(padding, message.format("padding"))
    out = _avg_pool(2, input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                    count_include_pad, None)
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-d average pooling."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_sizes(input, output_size, nd):
    """``output_size`` as a tuple, ``None`` taking the input's size (``_list_with_default``)."""
    if not isinstance(output_size, (tuple, list)):
        return (output_size,) * nd
    if None in output_size and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return tuple(n if o is None else o for o, n in zip(output_size,
                                                       input.shape[-len(output_size):]))


def _check_adaptive_input(name, nd, input, dims, colon=""):
    """The rank and the non-zero sizes (of ``dims``) adaptive pooling wants."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} "
                           f"{list(input.shape)}")
    _check_nonzero_sizes(name, input, dims)


def _check_nonzero_sizes(name, input, dims):
    for dim in dims:
        if input.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")


def _adaptive_avg(nd, input, output_size):
    name = f"adaptive_avg_pool{nd}d"
    sizes = _adaptive_sizes(input, output_size, nd)
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if min(sizes) < 0:
        shown = ", ".join(map(str, sizes[:2])) + "".join(f",{s}" for s in sizes[2:])
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    if all(o == 1 for o in sizes):  # PyTorch takes the mean (no more checks), as here
        return input.mean(tuple(range(-1, -nd - 1, -1)), keepdim=True)
    if nd == 3:  # (the 3-d op checks the sizes first)
        _check_nonzero_sizes(name, input, range(1, input.ndim))
    _check_adaptive_input(name, nd, input, (input.ndim - 2, input.ndim - 1))
    op = _layers._adaptive_avg_pool2d if nd == 2 else _layers._adaptive_avg_pool3d
    return op(input, sizes)


def adaptive_avg_pool1d(input, output_size):
    """1-d average pooling to a fixed output size: the 2-d op on a height-1 view."""
    _check_1d_input(input, "adaptive_avg_pool1d")
    size = _one(output_size, "adaptive_avg_pool1d() argument 'output_size' should contain one "
                             "int (got {n})")
    return _adaptive_avg(2, input.unsqueeze(-2), (1, size)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """2-d average pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """3-d average pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd, input, output_size, return_indices):
    name = f"adaptive_max_pool{nd}d"
    sizes = _adaptive_sizes(input, output_size, nd)
    _check_adaptive_input(name, nd, input, range(1, input.ndim), colon=":")
    if len(sizes) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    _creation.check_sizes(tuple(input.shape[:-nd]) + sizes)
    op = _layers._adaptive_max_pool2d if nd == 2 else _layers._adaptive_max_pool3d
    saved = {}
    out = op(input, sizes, saved)
    return (out, _indices(saved, out)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-d max pooling to a fixed output size: the 2-d op on a height-1 view."""
    _check_1d_input(input, "adaptive_max_pool1d")
    size = _one(output_size, "adaptive_max_pool1d() argument 'output_size' should contain one "
                             "int (got {n})")
    _check_nonzero_sizes("adaptive_max_pool1d", input, range(1, input.ndim))
    res = _adaptive_max(2, input.unsqueeze(-2), (1, size), return_indices)
    return (res[0].squeeze(-2), res[1].squeeze(-2)) if return_indices else res.squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-d max pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-d max pooling to a fixed output size (PyTorch's window boundaries)."""
    return _adaptive_max(3, input, output_size, return_indices)


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


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
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


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
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
                                  f"'{_word(input.dtype)}'")
    _check_mixed_dtypes(input, weight, bias)
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    return _layers._layer_norm(input, weight, bias, axes, eps, {})


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
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


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each (sample, channel) plane: ATen's composite, ``batch_norm`` over the input
    viewed as (1, N * C, ...) with the affine parameters and running stats repeated N times;
    the running stats then take the mean of their N updated copies."""
    from ..autograd.grad_mode import no_grad
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


# --------------------------------------------------------------------------- interpolate

_INTERP_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _check_interp_sizes(sp, size):
    names = _DIM_NAMES[len(sp)] if len(sp) < 3 else ("D", "H", "W")
    if min(sp) > 0 and min(size) > 0:
        return
    inp = ", ".join(f"{a}: {v}" for a, v in zip(names, sp))
    out = ", ".join(f"{a}: {v}" for a, v in zip(names, size))
    sep = " and" if len(sp) == 1 else ""
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({inp})"
                       f"{sep} output ({out})")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (PyTorch's modes and source-index rules)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    sp = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(sp)} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            out_size = tuple(size)
        else:
            out_size = (size,) * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(sp)} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = tuple(scale_factor)
        else:
            scales = (scale_factor,) * nd
        out_size = tuple(int(math.floor(n * s)) for n, s in zip(sp, scales))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "area" and 1 <= nd <= 3:
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](
            input, out_size)
    if mode == "lanczos" and nd == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("ember: interpolate mode 'lanczos'")
    op = _layers.UPSAMPLE.get((mode, nd))
    if op is None:
        want = _INTERP_DIMS.get(mode)
        if want is not None and 1 <= nd <= 3:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{want + 2}D input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_INTERP_MODES} (got {mode})")
    if antialias:
        raise NotImplementedError(f"ember: interpolate antialias=True (mode {mode!r})")
    if not all(isinstance(s, int) for s in out_size):
        raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                        f"Tuple[int, int, int], but got size with types "
                        f"{[type(s) for s in out_size]}")
    _check_interp_sizes(sp, out_size)
    return op(input, sp, out_size, bool(align_corners), scales)


# --------------------------------------------------------------------------- attention


def _is_bool(t):
    from .. import _dtypes
    return t.dtype == _dtypes.bool


def _bool_mask_to_float(mask, dtype):
    """A boolean "take part" mask as an additive one: 0 where True, -inf where False."""
    zeros = _creation.zeros(tuple(mask.shape), dtype=dtype, device=mask.device)
    return zeros.masked_fill(mask.logical_not(), float("-inf"))


def _safe_softmax(x):
    """Softmax over the last dim where rows that are all -inf give zeros, not nan (PyTorch's
    ``_safe_softmax``); their gradient is zero too (the -inf are replaced before the softmax,
    so no nan reaches the backward)."""
    dead = (x == float("-inf")).all(-1, keepdim=True)
    if not dead.any():
        return softmax(x, -1)
    return softmax(x.masked_fill(dead, 0.0), -1).masked_fill(dead, 0.0)


def _check_sdpa_inputs(query, key, value, attn_mask):
    from .. import _dtypes
    from ..ops.linalg import _cpp  # C++ type names, as the kernel prints them
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cpp(query)} key.dtype: {_cpp(key)} and value.dtype: {_cpp(value)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtypes.bool, _dtypes.float32,
                                                         query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cpp(attn_mask)} and  query.dtype: {_cpp(query)} instead.")


def _expand_gqa(query, key, value):
    """Grouped-query attention: repeat each key/value head for its group of query heads."""
    hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
    if hq == hk == hv:
        return key, value
    if hq % hk or hq % hv:  # (PyTorch's message stops short like this)
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return key.repeat_interleave(hq // hk, -3), value.repeat_interleave(hq // hv, -3)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(query @ key^T * scale + mask) @ value``, step for step as PyTorch's math
    backend computes it (so values, rounding and the grad_fn match).

    A boolean ``attn_mask`` is True where a position takes part; a float one is added to the
    scores. Rows with no position taking part give zeros.
    """
    _check_sdpa_inputs(query, key, value, attn_mask)
    _attention._check_enabled(query, key, value, dropout_p)  # under nn.attention.sdpa_kernel
    if attn_mask is not None and _is_bool(attn_mask):
        attn_mask = _bool_mask_to_float(attn_mask, query.dtype)
    # Both query and key are scaled by sqrt(scale), for stability; a negative scale goes on q.
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    factor = math.sqrt(abs(scale))
    q = query * (-factor if scale < 0 else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        causal = _creation.ones((q.size(-2), key.size(-2)), device=q.device).tril().bool()
        attn_mask = _bool_mask_to_float(causal, q.dtype)
    if enable_gqa:
        key, value = _expand_gqa(q, key, value)
    attn = q.matmul(key.transpose(-2, -1) * factor)
    if attn_mask is not None:
        attn.add_(attn_mask)
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        if dropout_p > 1.0:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                               f"{dropout_p}")
        attn = dropout(attn, dropout_p)
    return attn.matmul(value)


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _tensor_cls()):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean "masked out" mask as an additive float one (-inf where True); float masks
    pass unchanged."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if not _is_bool(mask) and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    if not is_float:
        mask = _creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-d query) or not (2-d); AssertionError on bad ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed weight ``w`` (q, k, v rows stacked); one matrix
    product where inputs are shared (self-attention, or key is value)."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2)
            proj = proj.squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2)
        kv = kv.squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k, v projected by separate weights (key and value may have their own widths)."""
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)),
                           ("key bias", b_k, (Eq,)), ("value bias", b_v, (Eq,))):
        if t is not None and t.shape != shape:
            raise AssertionError(f"expecting {what} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention over (L, N, E) inputs (or unbatched (L, E)), as
    ``nn.MultiheadAttention`` runs it; returns ``(attn_output, attn_weights or None)``.

    Boolean masks here are True where a position is *masked out* (the opposite of
    ``scaled_dot_product_attention``).
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:  # run as a batch of one, squeezed again at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone tells scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    # attention mask as (1 or N*heads, L, S)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # learned key/value biases: one more source position
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _shape.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _shape.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads into the batch: (N*heads, L or S, head_dim)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _static_or_heads(v, static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:  # one more source position of zeros
        zeros = (bsz * num_heads, 1, head_dim)
        k = _shape.cat([k, _creation.zeros(zeros, dtype=k.dtype, device=k.device)], 1)
        v = _shape.cat([v, _creation.zeros(zeros, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:  # merged into the attention mask
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        E = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = attn_mask.baddbmm(q_scaled, k.transpose(-2, -1))
        else:
            weights = q_scaled.bmm(k.transpose(-2, -1))
        weights = softmax(weights, -1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    # no weights wanted: scaled_dot_product_attention over (N, heads, L, head_dim)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if is_batched else out.squeeze(1)), None


def _static_or_heads(x, static, name, batch_heads, head_dim):
    """Projected keys (or values) split into heads, or the given precomputed ``static`` ones."""
    if static is None:
        return x.view(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    return static


__all__ = [
    "relu", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "hardtanh", "sigmoid",
    "tanh", "relu6", "selu", "celu", "glu", "hardsigmoid", "hardswish", "logsigmoid", "softmin",
    "softshrink", "softsign", "tanhshrink", "threshold", "hardshrink", "prelu", "rrelu", "relu_",
    "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "threshold_", "rrelu_",
    "softmax", "log_softmax", "linear", "bilinear", "dropout", "mse_loss", "l1_loss",
    "smooth_l1_loss", "soft_margin_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity",
    "normalize", "one_hot",
    "pad", "embedding", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm",
    "layer_norm", "group_norm", "interpolate",
    "max_pool3d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "scaled_dot_product_attention", "multi_head_attention_forward",
]
