"""Neural-network ops with fused derivatives: losses and activations, as PyTorch's nodes.

The losses take their reduction as a string ('none', 'mean', 'sum'); ``nn.functional`` checks
the arguments and gives PyTorch's errors before calling them.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _xp
from ..autograd import grad_mode
from . import batching
from .autocast import autocast_op
from .registry import defop

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return xp.mean(loss)
    if reduction == "sum":
        return xp.sum(loss)
    return loss


def _mean_scale(grad, reduction):
    """The elementwise gradient ``grad`` of a loss, divided by its element count for 'mean'."""
    return grad / math.prod(grad.shape) if reduction == "mean" else grad


# --------------------------------------------------------------------------- regression losses
# Input and target are differentiable (the target's gradient is minus the input's); the
# forwards get tensors already broadcast to one shape.


@defop("mse_loss", n_in=2, promote=True, jvp="transpose")
def _mse_loss(xp, input, target, reduction):
    d = input - target
    return _reduce(xp, d * d, reduction)


def _mse_grad(xp, g, ans, input, target, reduction):
    return g * _mean_scale(2 * (input - target), reduction)


_mse_loss.defvjp(_mse_grad, lambda xp, g, ans, input, target, reduction:
                 -_mse_grad(xp, g, None, input, target, reduction))


@defop("smooth_l1_loss", n_in=2, promote=True, jvp="transpose")
def _smooth_l1_loss(xp, input, target, reduction, beta):
    z = xp.abs(input - target)
    return _reduce(xp, xp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def _smooth_l1_grad(xp, g, ans, input, target, reduction, beta):
    # d/dd of the loss: d / beta strictly inside (-beta, beta), the sign of d elsewhere (so
    # the second derivative is 1 / beta strictly inside only, as PyTorch's double backward).
    d = input - target
    return g * _mean_scale(xp.where(xp.abs(d) < beta, d / beta, xp.sign(d)), reduction)


_smooth_l1_loss.defvjp(_smooth_l1_grad, lambda xp, g, ans, input, target, reduction, beta:
                       -_smooth_l1_grad(xp, g, None, input, target, reduction, beta))


@defop("soft_margin_loss", n_in=1, jvp="transpose")  # (the target is not differentiable)
def _soft_margin_loss(xp, input, target, reduction):
    return _reduce(xp, xp.log1p(xp.exp(-input * target)), reduction)


def _soft_margin_grad(xp, g, ans, input, target, reduction):
    """PyTorch's soft_margin_loss_backward: ``-target * z / (1 + z)``, ``z = exp(-input *
    target)``."""
    z = xp.exp(-input * target)
    return g * _mean_scale(-target * z / (1 + z), reduction)


_soft_margin_loss.defvjp(_soft_margin_grad)


@defop("huber_loss", n_in=2, promote=True, jvp="transpose")
def _huber_loss(xp, input, target, reduction, delta):
    z = xp.abs(input - target)
    return _reduce(xp, xp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def _huber_grad(xp, g, ans, input, target, reduction, delta):
    return g * _mean_scale(xp.clip(input - target, -delta, delta), reduction)


_huber_loss.defvjp(_huber_grad, lambda xp, g, ans, input, target, reduction, delta:
                   -_huber_grad(xp, g, None, input, target, reduction, delta))


# --------------------------------------------------------------------------- classification
# ``weight`` and ``pos_weight`` are raw arrays of the input's dtype (never differentiable, as in
# PyTorch); nll's ``target`` is a raw int64 array.


def _not_differentiable(tensor, arg, fn):
    """PyTorch refuses a class weight that requires grad (when grad mode is on)."""
    if tensor is not None and tensor.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


# PyTorch's floor on x * (1 - x) in the gradient of binary_cross_entropy: 1e-12 as a C float.
_BCE_EPS = 9.999999960041972e-13


@defop("binary_cross_entropy", n_in=2, jvp="transpose")
def _binary_cross_entropy(xp, input, target, weight, reduction):
    # PyTorch clamps both logs at -100, so the loss stays finite at input 0 and 1.
    loss = (target - 1) * xp.maximum(xp.log1p(-input), -100) \
        - target * xp.maximum(xp.log(input), -100)
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


def _bce_prob_input_rule(xp, g, ans, input, target, weight, reduction):
    q = (1 - input) * input
    grad = (input - target) / xp.maximum(q, 0 * q + _BCE_EPS)
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


def _bce_prob_target_rule(xp, g, ans, input, target, weight, reduction):
    grad = -xp.log(input / (1 - input))  # minus logit(input), unclamped as in PyTorch
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


_binary_cross_entropy.defvjp(_bce_prob_input_rule, _bce_prob_target_rule)


# ``ignore_index`` is None when the caller found that no target is ignored: without class
# weights every target then counts once, and the forward and rule below take a shorter path
# (the same values: each weight is 1, the mean divides by the number of targets).

def _nll_picks(target, weight, ignore_index, dtype):
    """Per-target class (0 where ignored), weight (0 where ignored) and 'not ignored' mask."""
    xp = _xp.namespace_of(target)
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    w = valid if weight is None else xp.where(valid, weight[safe], 0)
    return safe, w.astype(dtype), valid


def _class_axis(input):
    return 0 if input.ndim == 1 else 1


def _class_entries(xp, classes):
    """The index of each target's class entry in the (N, C, *rest) input (C for 0-d
    ``classes``): ``classes`` at the class dim, ranges broadcast along the others. Plain
    indexing with it costs a third of ``take_along_axis`` on a batch of class scores, whose
    cost is NumPy's Python-level setup."""
    if classes.ndim == 0:
        return (classes,)
    n, rest = classes.shape[0], classes.shape[1:]
    ranges = [xp.arange(k).reshape((-1,) + (1,) * (len(rest) - i))
              for i, k in enumerate((n,) + rest)]
    return (ranges[0], classes, *ranges[1:])


def _nll_forward(xp, input, target, weight, reduction, ignore_index):
    """``-input[target] * weight[target]`` along the class dim (1, or 0 for a 1-d input)."""
    if ignore_index is None and weight is None:
        loss = -input[_class_entries(xp, target)]
        return loss.sum() / loss.size if reduction == "mean" else _reduce(xp, loss, reduction)
    safe, w, valid = _nll_picks(target, weight, ignore_index, input.dtype)
    loss = xp.where(valid, -input[_class_entries(xp, safe)] * w, 0)
    if reduction == "mean":
        return loss.sum() / w.sum()  # NaN when every target is ignored, as in PyTorch
    return _reduce(xp, loss, reduction)


def _nll_rule(xp, g, ans, input, target, weight, reduction, ignore_index):
    raw = _xp.namespace_of(target)  # the picks are raw arrays in every backward
    if ignore_index is None and weight is None and xp is raw:  # (not recording)
        grad = xp.zeros(input.shape, g.dtype)
        grad[_class_entries(xp, target)] = -g * (g.dtype.type(1) / target.size
                                                 if reduction == "mean" else 1)
        return grad
    axis = _class_axis(input)
    safe, w, valid = _nll_picks(target, weight, ignore_index, getattr(g.dtype, "np", g.dtype))
    if reduction == "mean":
        w = raw.where(valid, w / w.sum(), 0)
    # -g * w lands on each target's class; every other entry's gradient is zero.
    return xp.scatter_along_axis(xp.expand_dims(-g * w, axis=axis), raw.expand_dims(safe, axis),
                                 axis, tuple(input.shape))


# Inputs of 1 or 2 dims, and of 4 dims (N, C, H, W): the same op under PyTorch's two names.
_nll_loss = defop("nll_loss", n_in=1, jvp="transpose")(_nll_forward).defvjp(_nll_rule)
_nll_loss2d = defop("nll_loss2d", n_in=1, jvp="transpose")(_nll_forward).defvjp(_nll_rule)


def _softplus_neg(xp, x):
    """log(1 + exp(-x)), stable for large |x|."""
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0 * x)


@defop("binary_cross_entropy_with_logits", n_in=2, promote=True, jvp="transpose")
def _bce_logits(xp, input, target, weight, pos_weight, reduction):
    sp = _softplus_neg(xp, input)
    if pos_weight is None:
        loss = (1 - target) * input + sp
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(xp, loss, reduction)


def _scale(xp, g, grad, weight, reduction, n):
    if weight is not None:
        grad = grad * weight
    if reduction == "mean":
        grad = grad / n
    return g * grad


def _bce_input_rule(xp, g, ans, input, target, weight, pos_weight, reduction):
    s = xp.sigmoid(input)
    if pos_weight is None:
        grad = s - target
    else:
        grad = (1 + (pos_weight - 1) * target) * s - pos_weight * target
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


def _bce_target_rule(xp, g, ans, input, target, weight, pos_weight, reduction):
    if pos_weight is None:
        grad = -input
    else:
        grad = -input + (pos_weight - 1) * _softplus_neg(xp, input)
    return _scale(xp, g, grad, weight, reduction, math.prod(input.shape))


_bce_logits.defvjp(_bce_input_rule, _bce_target_rule)


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross-entropy in one numerically stable op."""
    from .._tensor import Tensor
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    for w in (weight, pos_weight):
        _not_differentiable(w, "weight" if w is weight else "pos_weight",
                            "binary_cross_entropy_with_logits")
    if batching.is_batched(weight, pos_weight):  # read as raw arrays below: one sample a time
        return batching.loop(binary_cross_entropy_with_logits, (input, target, weight),
                             dict(reduction=reduction, pos_weight=pos_weight))
    raw = [w._data if isinstance(w, Tensor) else w for w in (weight, pos_weight)]
    return _bce_logits(input, target, raw[0], raw[1], reduction)


# --------------------------------------------------------------------------- activations


def _act(name, forward, rule, n_params=0):
    op = defop(name, n_in=1, promote="float", jvp="elementwise")(forward)
    op.defvjp(rule)
    return op


_MASK_MIN_SIZE = 4096  # see _zero_where


def _zero_where(xp, cond, x):
    """``where(cond, 0, x)``, bit for bit: +0.0 where ``cond`` holds, ``x`` (-0.0 and NaN
    included) elsewhere.

    NumPy's ``where`` branches on every element, about 5 ns each on a mask as random as a
    ReLU's (8x a multiply). On a NumPy float array the same bits come from masking ``x``'s
    bits with all-zeros or all-ones words, in three vectorised passes (which cost more calls:
    ``where`` stays faster below a few thousand elements).
    """
    if (type(x) is not np.ndarray or type(cond) is not np.ndarray or cond.shape != x.shape
            or x.dtype.char not in "efd" or x.size < _MASK_MIN_SIZE):
        return xp.where(cond, _xp.constant(0, x.dtype) if type(x) is np.ndarray else 0, x)
    word = np.dtype(f"u{x.itemsize}")
    mask = cond.astype(word)  # 1 where zeroed
    mask -= 1                 # there 0, elsewhere all ones (unsigned wrap-around)
    mask &= x.view(word)
    return mask.view(x.dtype)


def _backward_op(name, forward):
    """A piecewise-linear activation's derivative as an op of its own, as PyTorch declares
    ``name(grad, self, ...)``: linear in ``grad``, a function of ``self`` only through where
    the pieces change (its derivative in ``self`` is zero). Rules call it as ``xp.<name>``; so
    under ``create_graph`` the gradient requires grad whenever ``self`` does, and its own
    derivative in ``self`` is zeros, as PyTorch's double backward gives
    (``ThresholdBackwardBackward0``)."""
    op = defop(name, n_in=2, jvp="transpose")(forward)
    linear = lambda xp, gg, ans, grad, self, *params: getattr(xp, name)(gg, self, *params)
    op.defvjp(linear, lambda xp, gg, ans, grad, self, *params: xp.zeros_like(self))
    _xp.register_extra(name, forward, op)
    return op


_backward_op("threshold_backward",
             lambda xp, grad, self, threshold: _zero_where(xp, self <= threshold, grad))
_backward_op("hardtanh_backward", lambda xp, grad, self, low, high: _zero_where(
    xp, (self <= low) | (self >= high), grad))
_backward_op("leaky_relu_backward",
             lambda xp, grad, self, slope: xp.where(self > 0, grad, grad * slope))


# relu keeps integer dtypes, NaN and -0.0, as PyTorch's; negative numbers give 0 (not -0).
# Its derivative passes ``g`` wherever the result is not <= 0, NaN included (threshold_backward).
_relu = defop("relu", n_in=1, jvp="elementwise")(
    lambda xp, input: _zero_where(xp, input < 0, input)).defvjp(
    lambda xp, g, ans, input: xp.threshold_backward(g, ans, 0))


@defop("leaky_relu", n_in=1, jvp="elementwise")
def _leaky_relu(xp, input, slope):
    return xp.where(input > 0, input, input * slope)


def _leaky_relu_rule(xp, g, ans, input, slope):
    return xp.leaky_relu_backward(g, input, slope)


_leaky_relu.defvjp(_leaky_relu_rule)

# The in-place forms of leaky_relu, the elus and rrelu overwrite their input, so (as in PyTorch:
# nodes numbered 1) their derivatives read the result instead, which needs a non-negative slope.
_NEGATIVE_SLOPE = ("In-place {name} backward calculation is triggered with a negative slope which "
                   "is not supported. This is caused by calling in-place forward function with a "
                   "negative slope, please call out-of-place version instead.")


def _leaky_relu_result_rule(xp, g, ans, input, slope):
    if slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(name="leakyReLu") + (
            " File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope"))
    return xp.leaky_relu_backward(g, ans, slope)


_leaky_relu_ = defop("leaky_relu", n_in=1, overload=1, jvp="elementwise")(
    _leaky_relu.forward).defvjp(_leaky_relu_result_rule)


# rrelu: ``input * noise``, the noise (drawn by ``nn.functional``: slopes in [lower, upper]
# where input <= 0, 1 elsewhere) a raw array of the input's dtype, never differentiable; out of
# training, leaky_relu with the mean slope. The same node (RreluWithNoiseBackward) either way.
@defop("rrelu_with_noise", n_in=1, jvp="elementwise")
def _rrelu(xp, input, noise, lower, upper, training):
    if training:
        return input * noise
    return _leaky_relu.forward(xp, input, (lower + upper) / 2)


def _rrelu_rule(xp, g, ans, input, noise, lower, upper, training):
    if training:
        return g * noise
    return _leaky_relu_rule(xp, g, None, input, (lower + upper) / 2)


def _rrelu_result_rule(xp, g, ans, input, noise, lower, upper, training):
    if training:
        return g * noise
    return _leaky_relu_result_rule(xp, g, ans, None, (lower + upper) / 2)


_rrelu.defvjp(_rrelu_rule)
_rrelu_ = defop("rrelu_with_noise", n_in=1, overload=1, jvp="elementwise")(
    _rrelu.forward).defvjp(_rrelu_result_rule)


# PyTorch's one elu kernel serves elu, selu (EluBackward) and celu (CeluBackward): ``x * scale``
# above 0, ``alpha * scale * (exp(x * input_scale) - 1)`` at and below; the derivative at 0 is
# the lower branch's, and NaN takes the upper one.
def _elu_forward(xp, input, alpha, scale, input_scale):
    below = xp.where(input <= 0, input, 0)  # (no overflow above 0; -0.0 kept)
    return xp.where(input <= 0, xp.expm1(below * input_scale) * (alpha * scale), input * scale)


def _elu_rule(xp, g, ans, input, alpha, scale, input_scale):
    # (``input < 0`` inside: at 0 the slope is a constant, so the second derivative there is
    # 0, as PyTorch's elu_double_backward masks it)
    below = xp.exp(xp.where(input < 0, input, 0) * input_scale)
    return xp.where(input <= 0, g * (input_scale * alpha * scale) * below, g * scale)


def _elu_result_rule(xp, g, ans, input, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(name="elu"))
    # alpha * scale * exp(x * input_scale) = result + alpha * scale
    return xp.where(ans <= 0, g * input_scale * (xp.where(ans < 0, ans, 0) + alpha * scale),
                    g * scale)


# PyTorch's celu derivatives take input_scale as 1 / alpha with alpha rounded to a C float.
def _celu_rule(xp, g, ans, input, alpha, scale, input_scale):
    return _elu_rule(xp, g, None, input, alpha, scale, 1 / float(np.float32(alpha)))


def _celu_result_rule(xp, g, ans, input, alpha, scale, input_scale):
    return _elu_result_rule(xp, g, ans, None, alpha, scale, 1 / float(np.float32(alpha)))


def _elu_ops(name, rule, result_rule):
    """The op and its in-place form (overload 1)."""
    return (defop(name, n_in=1, jvp="elementwise")(_elu_forward).defvjp(rule),
            defop(name, n_in=1, overload=1, jvp="elementwise")(_elu_forward).defvjp(result_rule))


_elu, _elu_ = _elu_ops("elu", _elu_rule, _elu_result_rule)
_celu, _celu_ = _elu_ops("celu", _celu_rule, _celu_result_rule)

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@defop("gelu", n_in=1, jvp="elementwise")
def _gelu(xp, input, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + xp.tanh(inner))
    return 0.5 * input * (1 + xp.erf(input * _INV_SQRT_2))


def _gelu_rule(xp, g, ans, input, approximate):
    if approximate == "tanh":
        x2 = input * input
        t = xp.tanh(_SQRT_2_OVER_PI * (input + 0.044715 * x2 * input))
        dinner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x2)
        return g * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * dinner)
    cdf = 0.5 * (1 + xp.erf(input * _INV_SQRT_2))
    return g * (cdf + input * _INV_SQRT_2PI * xp.exp(-0.5 * input * input))


_gelu.defvjp(_gelu_rule)

_silu = _act("silu", lambda xp, input: input / (1 + xp.exp(-input)),  # PyTorch's formula
             lambda xp, g, ans, input: g * xp.sigmoid(input)
             * (1 + input * (1 - xp.sigmoid(input))))


def _softplus_raw(xp, x):
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.where(x > 0, x, 0)  # (max(x, 0 * x): NaN at -inf)


def _mish_rule(xp, g, ans, input):
    # tanh(softplus(x)) through the sigmoid, smooth everywhere (softplus's stable form has
    # |x| and max(x, 0) in it, whose second derivatives vanish at 0 and give wrong Hessians)
    s = xp.sigmoid(input)
    tsp = s * (2 - s) / (1 + (1 - s) * (1 - s))
    return g * (tsp + input * xp.sigmoid(input) * (1 - tsp * tsp))


_mish = _act("mish", lambda xp, input: input * xp.tanh(_softplus_raw(xp, input)), _mish_rule)


@defop("softplus", n_in=1, jvp="elementwise")
def _softplus(xp, input, beta, threshold):
    bx = input * beta
    return xp.where(bx > threshold, input, _softplus_raw(xp, bx) / beta)


_softplus.defvjp(lambda xp, g, ans, input, beta, threshold:
                 xp.where(input * beta > threshold, g, g * xp.sigmoid(input * beta)))

_log_sigmoid = _act("log_sigmoid",  # PyTorch's formula
                    lambda xp, input: xp.minimum(input, 0) - xp.log1p(xp.exp(-xp.abs(input))),
                    lambda xp, g, ans, input: g * xp.sigmoid(-input))


# hardtanh keeps integer dtypes, NaN and -0.0 (a clamp, as PyTorch's); its derivative passes
# ``g`` strictly between the bounds, and at NaN.
@defop("hardtanh", n_in=1, jvp="elementwise")
def _hardtanh(xp, input, low, high):
    return xp.clip(input, low, high).astype(input.dtype, copy=False)


_hardtanh.defvjp(lambda xp, g, ans, input, low, high: xp.hardtanh_backward(g, input, low, high))

# hardsigmoid and hardswish, PyTorch's formulas; the derivatives' kinks as PyTorch's kernels
# put them (hardsigmoid's slope 1/6 is a C float there, in every dtype).
_ONE_SIXTH_F32 = float(np.float32(1 / 6))

_backward_op("hardsigmoid_backward", lambda xp, grad, self: xp.where(
    (self > -3) & (self < 3), grad * _ONE_SIXTH_F32, 0))
_hardsigmoid = _act("hardsigmoid", lambda xp, input: xp.clip(input + 3, 0, 6) / 6,
                    lambda xp, g, ans, input: xp.hardsigmoid_backward(g, input))


def _hardswish_rule(xp, g, ans, input):
    return _zero_where(xp, input <= -3, xp.where(input < 3, g * (input / 3 + 0.5), g))


_hardswish = _act("hardswish", lambda xp, input: input * xp.clip(input + 3, 0, 6) / 6,
                  _hardswish_rule)


def _shrunk(input, lambd):
    """Where hardshrink and softshrink give 0 and pass no gradient: ``|input| <= lambd``."""
    return (input >= -lambd) & (input <= lambd)


_backward_op("hardshrink_backward",
             lambda xp, grad, self, lambd: _zero_where(xp, _shrunk(self, lambd), grad))
_backward_op("softshrink_backward",
             lambda xp, grad, self, lambd: _zero_where(xp, _shrunk(self, lambd), grad))
_hardshrink = _act("hardshrink", lambda xp, input, lambd: _zero_where(
    xp, _shrunk(input, lambd), input),
    lambda xp, g, ans, input, lambd: xp.hardshrink_backward(g, input, lambd))


def _softshrink_forward(xp, input, lambd):  # input * 0 inside: -0.0, NaN kept (PyTorch's)
    return xp.where(input > lambd, input - lambd,
                    xp.where(input < -lambd, input + lambd, input * 0))


_softshrink = _act("softshrink", _softshrink_forward,
                   lambda xp, g, ans, input, lambd: xp.softshrink_backward(g, input, lambd))


# threshold keeps integer dtypes (``nn.functional`` truncates the numbers for them); in place,
# PyTorch's node (numbered 1) reads the input as it was.
def _threshold_rule(xp, g, ans, input, threshold, value):
    return xp.threshold_backward(g, input, threshold)


@defop("threshold", n_in=1, jvp="elementwise")
def _threshold(xp, input, threshold, value):
    return xp.where(input <= threshold, value, input)


_threshold.defvjp(_threshold_rule)
_threshold_ = defop("threshold", n_in=1, overload=1, jvp="elementwise")(
    _threshold.forward).defvjp(_threshold_rule)


# prelu's kernel, on a weight already shaped to broadcast along dim 1; the engine sums the
# weight's gradient back to its shape.
@defop("_prelu_kernel", n_in=2, jvp="elementwise")
def _prelu_kernel(xp, input, weight):
    return xp.where(input > 0, input, weight * input)


_prelu_kernel.defvjp(lambda xp, g, ans, input, weight: xp.where(input > 0, g, weight * g),
                     lambda xp, g, ans, input, weight: _zero_where(xp, input > 0, input * g))


# glu: the first half of ``dim`` times the sigmoid of the second.
def _halves(x, dim):
    n = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(0, n),)], x[lead + (slice(n, None),)]


@defop("glu", n_in=1, jvp="transpose")
def _glu(xp, input, dim):
    a, b = _halves(input, dim)
    return a * xp.sigmoid(b)


def _glu_rule(xp, g, ans, input, dim):
    a, b = _halves(input, dim)
    s = xp.sigmoid(b)
    return xp.concatenate((g * s, g * a * s * (1 - s)), axis=dim)


_glu.defvjp(_glu_rule)


# --------------------------------------------------------------------------- the family's surface
# PyTorch's top-level activations (``torch.relu``...) are the functions of ``nn.functional``,
# which checks their arguments (and imports this module: looked up when called).


def _functional():
    global _F
    if _F is None:  # (an import statement per call would cost more than relu itself)
        from ..nn.functional import activation as _F
    return _F


_F = None  # ember.nn.functional, once imported


def relu(input):
    """``max(input, 0)``: :func:`ember.nn.functional.relu`."""
    return _functional().relu(input)


def relu_(input):
    """In-place :func:`relu`."""
    return _functional().relu_(input)


def selu(input):
    """:func:`ember.nn.functional.selu`."""
    return _functional().selu(input)


def selu_(input):
    """In-place :func:`selu`."""
    return _functional().selu_(input)


def celu(input, alpha=1.0):
    """:func:`ember.nn.functional.celu`."""
    return _functional().celu(input, alpha)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return _functional().celu_(input, alpha)


def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``: :func:`ember.nn.functional.threshold`."""
    return _functional().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return _functional().threshold_(input, threshold, value)


def hardshrink(input, lambd=0.5):
    """:func:`ember.nn.functional.hardshrink`."""
    return _functional().hardshrink(input, lambd)


@autocast_op("prelu")
def prelu(input, weight):
    """:func:`ember.nn.functional.prelu`."""
    return _functional().prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """:func:`ember.nn.functional.rrelu`, its random slopes from ``generator``."""
    return _functional()._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place :func:`rrelu`."""
    return _functional()._rrelu(input, lower, upper, training, True, generator)


__all__ = ["binary_cross_entropy_with_logits", "relu", "relu_", "selu", "selu_", "celu", "celu_",
           "threshold", "threshold_", "hardshrink", "prelu", "rrelu", "rrelu_"]
METHODS = {"relu": relu, "hardshrink": hardshrink, "prelu": prelu}
INPLACE = ("relu",)
