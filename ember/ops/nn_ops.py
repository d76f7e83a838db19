"""Neural-network ops with fused derivatives (losses); layers come with the nn issue."""
from __future__ import annotations

import math

from .registry import defop

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(xp, loss, reduction):
    if reduction == "mean":
        return xp.mean(loss)
    if reduction == "sum":
        return xp.sum(loss)
    return loss


def _softplus_neg(xp, x):
    """log(1 + exp(-x)), stable for large |x|."""
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0 * x)


@defop("binary_cross_entropy_with_logits", n_in=2, promote=True)
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


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross-entropy in one numerically stable op."""
    from .._tensor import Tensor
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    raw = [w._data if isinstance(w, Tensor) else w for w in (weight, pos_weight)]
    return _bce_logits(input, target, raw[0], raw[1], reduction)


# --------------------------------------------------------------------------- activations


def _act(name, forward, rule, n_params=0):
    op = defop(name, n_in=1, promote="float")(forward)
    op.defvjp(rule)
    return op


_relu = _act("relu", lambda xp, input: xp.maximum(input, 0 * input),
             lambda xp, g, ans, input: xp.where(ans > 0, g, 0 * g))


@defop("leaky_relu", n_in=1)
def _leaky_relu(xp, input, slope):
    return xp.where(input > 0, input, input * slope)


_leaky_relu.defvjp(lambda xp, g, ans, input, slope: xp.where(input > 0, g, g * slope))


@defop("elu", n_in=1)
def _elu(xp, input, alpha):
    return xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0 * input)))


_elu.defvjp(lambda xp, g, ans, input, alpha:
            xp.where(input > 0, g, g * alpha * xp.exp(xp.minimum(input, 0 * input))))

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@defop("gelu", n_in=1)
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

_silu = _act("silu", lambda xp, input: input * xp.sigmoid(input),
             lambda xp, g, ans, input: g * xp.sigmoid(input)
             * (1 + input * (1 - xp.sigmoid(input))))


def _softplus_raw(xp, x):
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0 * x)


def _mish_rule(xp, g, ans, input):
    tsp = xp.tanh(_softplus_raw(xp, input))
    return g * (tsp + input * xp.sigmoid(input) * (1 - tsp * tsp))


_mish = _act("mish", lambda xp, input: input * xp.tanh(_softplus_raw(xp, input)), _mish_rule)


@defop("softplus", n_in=1)
def _softplus(xp, input, beta, threshold):
    bx = input * beta
    return xp.where(bx > threshold, input, _softplus_raw(xp, bx) / beta)


_softplus.defvjp(lambda xp, g, ans, input, beta, threshold:
                 xp.where(input * beta > threshold, g, g * xp.sigmoid(input * beta)))


@defop("hardtanh", n_in=1)
def _hardtanh(xp, input, low, high):
    return xp.minimum(xp.maximum(input, 0 * input + low), 0 * input + high)


_hardtanh.defvjp(lambda xp, g, ans, input, low, high:
                 xp.where((input > low) & (input < high), g, 0 * g))


# --------------------------------------------------------------------------- the family's surface
__all__ = ["binary_cross_entropy_with_logits"]
METHODS = {}
INPLACE = ()
