"""Activation kernels with fused derivatives, as PyTorch's nodes (``ReluBackward0``,
``EluBackward0``, ``GeluBackward0``...); ``ember/nn/functional/activation.py`` checks the
arguments and calls them.

The family's surface: PyTorch's top-level activations (``torch.relu``, ``torch.selu_``...)
and their methods, which are the checked functions of ``nn.functional``.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _xp
from ..._tensor import Tensor
from .. import unary as _unary
from .._select import _fast, _select, _zero_where
from ..autocast import autocast_op
from ..registry import defop, public
from . import _gelu32

# --------------------------------------------------------------------------- activations


def _act(name, forward, rule, n_params=0):
    op = defop(name, n_in=1, promote="float", jvp="elementwise", batch="pointwise")(forward)
    op.defvjp(rule)
    return op


def _blocked(kernel, n_arrays):
    """``kernel(xp, *arrays, *params)`` run over L2-sized blocks (``_blockwise``) where its
    ``n_arrays`` arrays are large float NumPy arrays of one shape: a mask and a blend on
    4M-byte arrays stream each pass through memory, on blocks they stay in cache (the
    piecewise activations' derivatives 10-40% faster at 1M), bit for bit the same values."""
    names = kernel.__code__.co_varnames[1 + n_arrays:kernel.__code__.co_argcount]
    blocks = _unary._blockwise(kernel)

    def run(xp, *args):
        if _fast(*args[:n_arrays]):
            return blocks(xp, *args[:n_arrays], **dict(zip(names, args[n_arrays:])))
        return kernel(xp, *args)
    run.__name__ = kernel.__name__
    return run


def _backward_op(name, forward):
    """A piecewise-linear activation's derivative as an op of its own, as PyTorch declares
    ``name(grad, self, ...)``: linear in ``grad``, a function of ``self`` only through where
    the pieces change (its derivative in ``self`` is zero). Rules call it as ``xp.<name>``; so
    under ``create_graph`` the gradient requires grad whenever ``self`` does, and its own
    derivative in ``self`` is zeros, as PyTorch's double backward gives
    (``ThresholdBackwardBackward0``)."""
    op = defop(name, n_in=2, jvp="transpose", batch="loop")(forward)
    linear = lambda xp, gg, ans, grad, self, *params: getattr(xp, name)(gg, self, *params)
    op.defvjp(linear, lambda xp, gg, ans, grad, self, *params: xp.zeros_like(self))
    _xp.register_extra(name, _blocked(forward, 2), op)  # (what an ordinary backward calls)
    return op


_backward_op("threshold_backward",
             lambda xp, grad, self, threshold: _zero_where(xp, self <= threshold, grad))
_backward_op("hardtanh_backward", lambda xp, grad, self, low, high: _zero_where(
    xp, (self <= low) | (self >= high), grad))
def _leaky_relu_backward(xp, grad, self, slope):
    if _fast(grad, self):  # grad times 1 or slope: the factor's words picked, one multiply
        one = grad.dtype.type(1)
        return grad * _select(xp, self > 0, one, grad.dtype.type(slope))
    return xp.where(self > 0, grad, grad * slope)


_backward_op("leaky_relu_backward", _leaky_relu_backward)


# relu keeps integer dtypes, NaN and -0.0, as PyTorch's; negative numbers give 0 (not -0).
# Its derivative passes ``g`` wherever the result is not <= 0, NaN included (threshold_backward).
_relu = defop("relu", n_in=1, jvp="elementwise", batch="pointwise")(
    lambda xp, input: _zero_where(xp, input < 0, input)).defvjp(
    lambda xp, g, ans, input: xp.threshold_backward(g, ans, 0))


@defop("leaky_relu", n_in=1, jvp="elementwise", batch="pointwise")
def _leaky_relu(xp, input, slope):
    # With 0 < slope <= 1, input * slope is the larger of the two exactly below 0 (and at
    # +-0, +-inf and NaN as well): a maximum, no branch, 4x faster than where at 1M.
    if 0 < slope <= 1:
        return xp.maximum(input, input * slope)
    return _select(xp, input > 0, input, input * slope)


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


_leaky_relu_ = defop("leaky_relu", n_in=1, overload=1, jvp="elementwise", batch="pointwise")(
    _leaky_relu.forward).defvjp(_leaky_relu_result_rule)


# rrelu: ``input * noise``, the noise (drawn by ``nn.functional``: slopes in [lower, upper]
# where input <= 0, 1 elsewhere) a raw array of the input's dtype, never differentiable; out of
# training, leaky_relu with the mean slope. The same node (RreluWithNoiseBackward) either way.
@defop("rrelu_with_noise", n_in=1, jvp="elementwise", batch="pointwise")
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
_rrelu_ = defop("rrelu_with_noise", n_in=1, overload=1, jvp="elementwise", batch="pointwise")(
    _rrelu.forward).defvjp(_rrelu_result_rule)


# PyTorch's one elu kernel serves elu, selu (EluBackward) and celu (CeluBackward): ``x * scale``
# above 0, ``alpha * scale * (exp(x * input_scale) - 1)`` at and below; the derivative at 0 is
# the lower branch's, and NaN takes the upper one.
def _elu_forward(xp, input, alpha, scale, input_scale):
    if _fast(input) and alpha * scale >= 0:
        return _elu_block(xp, input, alpha=alpha, scale=scale, input_scale=input_scale)
    below = xp.where(input <= 0, input, 0)  # (no overflow above 0; -0.0 kept)
    return xp.where(input <= 0, xp.expm1(below * input_scale) * (alpha * scale), input * scale)


@_unary._blockwise
def _elu_block(xp, x, alpha, scale, input_scale):
    # Branch-free, 5x faster than the wheres at 1M: the lower piece of min(x, 0) plus the
    # upper of max(x, 0), each 0 where the other is taken (so the sum is the piece taken,
    # exactly), NaN kept; a zero result then gets the input's sign bit, as each piece gives
    # it (with alpha * scale >= 0: the lower piece is <= 0). (The bits by an or: copysign
    # costs 4 such passes.)
    out = np.minimum(x, 0)
    if input_scale != 1:
        out *= input_scale
    np.expm1(out, out=out)
    if alpha * scale != 1:
        out *= alpha * scale
    high = np.maximum(x, 0)
    if scale != 1:
        high *= scale
    out += high
    word = np.dtype(f"u{x.itemsize}")
    sign = np.bitwise_and(x.view(word), word.type(1 << (8 * x.itemsize - 1)), out=high.view(word))
    np.bitwise_or(out.view(word), sign, out=out.view(word))
    return out


def _elu_rule(xp, g, ans, input, alpha, scale, input_scale):
    if _fast(input, g):
        return _elu_grad_block(xp, g, input, alpha=alpha, scale=scale, input_scale=input_scale)
    # (``input < 0`` inside: at 0 the slope is a constant, so the second derivative there is
    # 0, as PyTorch's elu_double_backward masks it)
    below = xp.exp(xp.where(input < 0, input, 0) * input_scale)
    return xp.where(input <= 0, g * (input_scale * alpha * scale) * below, g * scale)


@_unary._blockwise
def _elu_grad_block(xp, g, x, alpha, scale, input_scale):
    """The rule's values on one block: ``(g * m) * exp(fmin(x, 0) * input_scale)`` with ``m``
    the lower piece's coefficient where ``x <= 0``, else ``scale`` (whose exp factor is then
    exactly 1, NaN included: fmin drops it), so the values of the select below, bit for bit,
    in 8 passes instead of 10 (the coefficient picked as words)."""
    word = np.dtype(f"u{x.itemsize}")
    low, high = (x.dtype.type(c).view(word) for c in (input_scale * alpha * scale, scale))
    m = np.negative(x <= 0, dtype=word)
    m &= low ^ high
    m ^= high
    out = np.multiply(g, m.view(x.dtype), out=m.view(x.dtype))
    e = np.fmin(x, 0)
    if input_scale != 1:
        e *= input_scale
    np.exp(e, out=e)
    out *= e
    return out


def _elu_result_rule(xp, g, ans, input, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format(name="elu"))
    # alpha * scale * exp(x * input_scale) = result + alpha * scale
    if _fast(ans, g):
        return _elu_result_grad_block(xp, g, ans, alpha=alpha, scale=scale,
                                      input_scale=input_scale)
    return xp.where(ans <= 0, g * input_scale * (xp.where(ans < 0, ans, 0) + alpha * scale),
                    g * scale)


@_unary._blockwise
def _elu_result_grad_block(xp, g, ans, alpha, scale, input_scale):
    """The result rule's values on one block, in place on two buffers (min(ans, 0) is ans
    where it is taken, but at -0)."""
    low = np.minimum(ans, 0)
    low += alpha * scale
    low *= g * input_scale if input_scale != 1 else g
    return _select(xp, ans <= 0, low, g * scale if scale != 1 else g)


# PyTorch's celu derivatives take input_scale as 1 / alpha with alpha rounded to a C float.
def _celu_rule(xp, g, ans, input, alpha, scale, input_scale):
    return _elu_rule(xp, g, None, input, alpha, scale, 1 / float(np.float32(alpha)))


def _celu_result_rule(xp, g, ans, input, alpha, scale, input_scale):
    return _elu_result_rule(xp, g, ans, None, alpha, scale, 1 / float(np.float32(alpha)))


def _elu_ops(name, rule, result_rule):
    """The op and its in-place form (overload 1)."""
    return (defop(name, n_in=1, jvp="elementwise", batch="pointwise")(_elu_forward).defvjp(rule),
            defop(name, n_in=1, overload=1, jvp="elementwise",
                  batch="pointwise")(_elu_forward).defvjp(result_rule))


_elu, _elu_ = _elu_ops("elu", _elu_rule, _elu_result_rule)
_celu, _celu_ = _elu_ops("celu", _celu_rule, _celu_result_rule)

@defop("gelu", n_in=1, jvp="elementwise", batch="pointwise")
def _gelu(xp, input, approximate, saved):
    """``saved``: a dict where a backward will follow (else None). Exact GELU of a float32
    NumPy array leaves its slope there (``saved["slope"]``, one activation more, as the
    norms keep theirs): the forward's exp and rational give it in 4 passes more, where the
    backward would redo all ~30 of them (nanoGPT's MLP: 2.4 -> 0.1 ms a backward)."""
    if approximate == "tanh":
        if type(input) is np.ndarray and input.ndim:
            return _gelu32.tanh_buffer(input)
        inner = _gelu32.SQRT_2_OVER_PI * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + xp.tanh(inner))
    if _unary._narrow(input) and input.ndim:
        if saved is not None and type(input) is np.ndarray and input.dtype == np.float32:
            out, saved["slope"] = _gelu32.and_slope(xp, input)
            return out
        return _gelu32.narrow(xp, input)
    return 0.5 * input * (1 + xp.erf(input * _gelu32.INV_SQRT_2))


def _gelu_rule(xp, g, ans, input, approximate, saved):
    slope = saved.get("slope") if saved is not None else None
    if slope is not None and type(g) is np.ndarray:  # (recorded rules compute, below)
        return np.multiply(g, slope, dtype=slope.dtype)
    numpy_pair = _unary._numpy_pair(g, input)
    if approximate == "tanh":
        if numpy_pair:
            return _gelu32.tanh_grad_buffer(g, input)
        x2 = input * input
        t = xp.tanh(_gelu32.SQRT_2_OVER_PI * (input + 0.044715 * x2 * input))
        dinner = _gelu32.SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x2)
        return g * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * dinner)
    if numpy_pair and _unary._narrow(input) and input.ndim:
        return _gelu32.grad_narrow(xp, g, input)
    cdf = 0.5 * (1 + xp.erf(input * _gelu32.INV_SQRT_2))
    return g * (cdf + input * _gelu32.INV_SQRT_2PI * xp.exp(-0.5 * input * input))


_gelu.defvjp(_gelu_rule)

# silu, hardswish, softplus and the elus chain 4-12 passes: on large NumPy arrays they run
# over L2-sized blocks (``_blockwise``), each pass then reading the cache, not memory (silu's
# forward + backward 3.5 -> 2.4 ms at 1M); the values are the expressions' below, bit for bit.
@_unary._blockwise
def _silu_block(xp, x):
    out = np.negative(x)
    np.exp(out, out=out)
    out += 1
    return np.divide(x, out, out=out)


@_unary._blockwise
def _silu_grad_block(xp, g, x):
    s = _unary._sigmoid_raw(xp, x)
    t = 1 - s
    t *= x
    t += 1
    s *= g
    s *= t
    return s


def _silu_forward(xp, input):  # PyTorch's formula
    if _fast(input):
        return _silu_block(xp, input)
    return input / (1 + xp.exp(-input))


def _silu_rule(xp, g, ans, input):
    if _fast(g, input):
        return _silu_grad_block(xp, g, input)
    s = xp.sigmoid(input)
    return g * s * (1 + input * (1 - s))


_silu = _act("silu", _silu_forward, _silu_rule)


def _softplus_raw(xp, x):
    # (maximum(x, 0): only NaN differs from max(x, 0 * x), and the sum is NaN there anyway)
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0)


def _mish_rule(xp, g, ans, input):
    # tanh(softplus(x)) through the sigmoid, smooth everywhere (softplus's stable form has
    # |x| and max(x, 0) in it, whose second derivatives vanish at 0 and give wrong Hessians)
    s = xp.sigmoid(input)
    tsp = s * (2 - s) / (1 + (1 - s) * (1 - s))
    return g * (tsp + input * s * (1 - tsp * tsp))


_mish = _act("mish", lambda xp, input: input * xp.tanh(_softplus_raw(xp, input)), _mish_rule)


@defop("softplus", n_in=1, jvp="elementwise", batch="pointwise")
def _softplus(xp, input, beta, threshold):
    if _fast(input) and input.dtype.char in "fd":
        return _softplus_block(xp, input, beta=beta, threshold=threshold)
    return _softplus_buffer(xp, input, beta, threshold)


def _softplus_buffer(xp, input, beta, threshold):
    # PyTorch's formula: log1p(exp(beta * x)) / beta, x itself above the threshold
    bx = input * beta
    if input.dtype.char not in "fd":  # (exp would overflow float16 below the threshold)
        return _select(xp, bx > threshold, input, _softplus_raw(xp, bx) / beta)
    above = bx > threshold
    bx = xp.asarray(bx)  # (NumPy gives scalars for 0-d results: a buffer to write into)
    xp.exp(bx, out=bx)
    xp.log1p(bx, out=bx)
    if beta != 1:
        bx /= beta
    if type(above) is np.ndarray and not above.any():  # (the select is 4 passes)
        return bx
    return _select(xp, above, input, bx)


_softplus_block = _unary._blockwise(_softplus_buffer)


def _softplus_rule(xp, g, ans, input, beta, threshold):
    if _fast(g, input) and input.dtype.char in "fd":
        return _softplus_grad_block(xp, g, input, beta=beta, threshold=threshold)
    bx = input * beta
    if isinstance(bx, Tensor):  # (recorded: sigmoid's own derivative stays finite where
        return _select(xp, bx > threshold, g, g * xp.sigmoid(bx))  # exp(-bx) overflows)
    return _select(xp, bx > threshold, g, g / (1 + xp.exp(-bx)))


@_unary._blockwise
def _softplus_grad_block(xp, g, x, beta, threshold):
    """The rule's values on one block, in place (``-bx`` is ``x * -beta`` exactly); a block
    with nothing above the threshold skips the select."""
    e = np.multiply(x, -beta)
    above = e < -threshold
    np.exp(e, out=e)
    e += 1
    out = np.divide(g, e, out=e)
    return _select(xp, above, g, out) if above.any() else out


_softplus.defvjp(_softplus_rule)

_log_sigmoid = _act("log_sigmoid",  # PyTorch's formula
                    lambda xp, input: xp.minimum(input, 0) - xp.log1p(xp.exp(-xp.abs(input))),
                    lambda xp, g, ans, input: g * xp.sigmoid(-input))


# hardtanh keeps integer dtypes, NaN and -0.0 (a clamp, as PyTorch's); its derivative passes
# ``g`` strictly between the bounds, and at NaN.
@defop("hardtanh", n_in=1, jvp="elementwise", batch="pointwise")
def _hardtanh(xp, input, low, high):
    return xp.clip(input, low, high).astype(input.dtype, copy=False)


_hardtanh.defvjp(lambda xp, g, ans, input, low, high: xp.hardtanh_backward(g, input, low, high))

# hardsigmoid and hardswish, PyTorch's formulas; the derivatives' kinks as PyTorch's kernels
# put them (hardsigmoid's slope 1/6 is a C float there, in every dtype).
_ONE_SIXTH_F32 = float(np.float32(1 / 6))

_backward_op("hardsigmoid_backward", lambda xp, grad, self: _zero_where(
    xp, ~((self > -3) & (self < 3)), grad * _ONE_SIXTH_F32))


def _hardsigmoid_forward(xp, input):
    out = xp.asarray(input + 3)  # (in place on one buffer; 3 passes: no faster in blocks)
    xp.clip(out, 0, 6, out=out)
    out /= 6
    return out


_hardsigmoid = _act("hardsigmoid", _hardsigmoid_forward,
                    lambda xp, g, ans, input: xp.hardsigmoid_backward(g, input))


def _hardswish_buffer(xp, input):
    out = xp.asarray(input + 3)  # input * clip(input + 3, 0, 6) / 6, in place on one buffer
    xp.clip(out, 0, 6, out=out)
    out *= input
    out /= 6
    return out


def _hardswish_forward(xp, input):
    return (_hardswish_block if _fast(input) else _hardswish_buffer)(xp, input)


_hardswish_block = _unary._blockwise(_hardswish_buffer)


def _hardswish_rule(xp, g, ans, input):
    if _fast(g, input):
        return _hardswish_grad_block(xp, g, input)
    return _zero_where(xp, input <= -3, _select(xp, input < 3, g * (input / 3 + 0.5), g))


@_unary._blockwise
def _hardswish_grad_block(xp, g, x):
    """The rule's values on one block: ``g * (x / 3 + 0.5)``, ``g`` where ``x < 3`` fails
    (NaN too), +0 at and below -3, blended as words (see ``_select``), 12 cache-resident
    passes."""
    word = np.dtype(f"u{x.itemsize}")
    out = np.divide(x, 3)
    out += 0.5
    out *= g
    bits, gbits = out.view(word), g.view(word)
    bits ^= gbits
    bits &= np.negative(x < 3, dtype=word)  # (all ones where it holds)
    bits ^= gbits
    bits &= np.less_equal(x, -3).astype(word) - word.type(1)  # (all ones where it fails)
    return out


_hardswish = _act("hardswish", _hardswish_forward, _hardswish_rule)


def _shrunk(input, lambd):
    """Where hardshrink and softshrink give 0 and pass no gradient: ``|input| <= lambd``."""
    return abs(input) <= lambd  # (NaN: False; two passes, not three)


_backward_op("hardshrink_backward",
             lambda xp, grad, self, lambd: _zero_where(xp, _shrunk(self, lambd), grad))
_backward_op("softshrink_backward",
             lambda xp, grad, self, lambd: _zero_where(xp, _shrunk(self, lambd), grad))
_hardshrink_blocked = _blocked(
    lambda xp, input, lambd: _zero_where(xp, _shrunk(input, lambd), input), 1)
_hardshrink = _act("hardshrink", lambda xp, input, lambd: _hardshrink_blocked(xp, input, lambd),
                   lambda xp, g, ans, input, lambd: xp.hardshrink_backward(g, input, lambd))


def _softshrink_forward(xp, input, lambd):
    # input - lambd above, input + lambd below and input * 0 inside (-0.0, NaN kept) as
    # PyTorch's: each is input - clip(input, -lambd, lambd), its sign input's (lambd >= 0).
    # No branch: 6x faster than two wheres at 1M.
    if _fast(input):
        return _softshrink_block(xp, input, lambd=lambd)
    out = xp.asarray(xp.clip(input, -lambd, lambd))
    xp.subtract(input, out, out=out)
    return xp.copysign(out, input, out=out)


@_unary._blockwise
def _softshrink_block(xp, x, lambd):
    """As above on one block, the sign by a bit or (copysign costs 4 such passes): the
    difference is >= 0 for x >= 0 (x - x is +0), so only a negative x's sign is missing."""
    out = np.clip(x, -lambd, lambd)
    np.subtract(x, out, out=out)
    word = np.dtype(f"u{x.itemsize}")
    bits = out.view(word)
    bits |= np.bitwise_and(x.view(word), word.type(1 << (8 * x.itemsize - 1)))
    return out


_softshrink = _act("softshrink", _softshrink_forward,
                   lambda xp, g, ans, input, lambd: xp.softshrink_backward(g, input, lambd))


# threshold keeps integer dtypes (``nn.functional`` truncates the numbers for them); in place,
# PyTorch's node (numbered 1) reads the input as it was.
def _threshold_rule(xp, g, ans, input, threshold, value):
    return xp.threshold_backward(g, input, threshold)


_threshold_blocked = _blocked(
    lambda xp, input, threshold, value: _select(xp, input <= threshold, value, input), 1)


@defop("threshold", n_in=1, jvp="elementwise", batch="pointwise")
def _threshold(xp, input, threshold, value):
    return _threshold_blocked(xp, input, threshold, value)


_threshold.defvjp(_threshold_rule)
_threshold_ = defop("threshold", n_in=1, overload=1, jvp="elementwise", batch="pointwise")(
    _threshold.forward).defvjp(_threshold_rule)


# prelu's kernel, on a weight already shaped to broadcast along dim 1; the engine sums the
# weight's gradient back to its shape.
@defop("_prelu_kernel", n_in=2, jvp="elementwise", batch="pointwise")
def _prelu_kernel(xp, input, weight):
    return _select(xp, input > 0, input, weight * input)


_prelu_kernel.defvjp(lambda xp, g, ans, input, weight: _select(xp, input > 0, g, weight * g),
                     lambda xp, g, ans, input, weight: _zero_where(xp, input > 0, input * g))


# glu: the first half of ``dim`` times the sigmoid of the second.
def _halves(x, dim):
    n = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(0, n),)], x[lead + (slice(n, None),)]


@defop("glu", n_in=1, jvp="transpose", batch="moved")
def _glu(xp, input, dim):
    a, b = _halves(input, dim)
    return a * xp.sigmoid(b)


def _glu_rule(xp, g, ans, input, dim):
    """``g * s`` and ``g * a * s * (1 - s)``. On NumPy floats the halves along ``dim`` and
    ``g`` are seen as (L, M) matrices (L the product of the dims before ``dim``), the gradient
    as (L, 2, M), in blocks of about ``_unary._BLOCK`` elements: each block's passes (the
    sigmoid's four and five more) run while it is in cache, written into the gradient's
    halves (no temporaries of the input's size, no concatenation: at 1M 2.3 -> 1.8 ms)."""
    if not (type(input) is np.ndarray and type(g) is np.ndarray and input.dtype.char in "fd"
            and g.dtype == input.dtype and input.size > 0):
        a, b = _halves(input, dim)
        s = xp.sigmoid(b)
        return xp.concatenate((g * s, g * a * s * (1 - s)), axis=dim)
    lead = math.prod(input.shape[:dim])
    m, step = input.size // lead // 2, _unary._BLOCK
    x, g = np.ascontiguousarray(input).reshape(lead, 2, m), np.ascontiguousarray(g).reshape(lead, m)
    out = np.empty((lead, 2, m), input.dtype)
    cuts = ([(i, slice(j, j + step)) for i in range(lead) for j in range(0, m, step)] if m >= step
            else [(slice(i, i + step // m), slice(None)) for i in range(0, lead, step // m)])
    for i, j in cuts:  # (the operations above, in that order: the same values)
        s = _unary._sigmoid_raw(_xp.NUMPY, x[i, 1, j])
        np.multiply(g[i, j], s, out=out[i, 0, j])
        second = np.multiply(g[i, j], x[i, 0, j], out=out[i, 1, j])
        second *= s
        second *= np.subtract(s.dtype.type(1), s, out=s)
    return out.reshape(input.shape)


_glu.defvjp(_glu_rule)


# --------------------------------------------------------------------------- the family's surface
# PyTorch's top-level activations (``torch.relu``...) are the functions of ``nn.functional``,
# which checks their arguments (and imports this module: looked up when called).


def _functional():
    global _F
    if _F is None:  # (an import statement per call would cost more than relu itself)
        from ...nn.functional import activation as _F  # lazy: it imports this module
    return _F


_F = None  # ember.nn.functional.activation, once imported


@public(inplace=True)
def relu(input):
    """``max(input, 0)``: :func:`ember.nn.functional.relu`."""
    return _functional().relu(input)


@public(method=False)
def relu_(input):
    """In-place :func:`relu`."""
    return _functional().relu_(input)


@public(method=False)
def selu(input):
    """:func:`ember.nn.functional.selu`."""
    return _functional().selu(input)


@public(method=False)
def selu_(input):
    """In-place :func:`selu`."""
    return _functional().selu_(input)


@public(method=False)
def celu(input, alpha=1.0):
    """:func:`ember.nn.functional.celu`."""
    return _functional().celu(input, alpha)


@public(method=False)
def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return _functional().celu_(input, alpha)


@public(method=False)
def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``: :func:`ember.nn.functional.threshold`."""
    return _functional().threshold(input, threshold, value)


@public(method=False)
def threshold_(input, threshold, value):
    """In-place :func:`threshold`."""
    return _functional().threshold_(input, threshold, value)


@public
def hardshrink(input, lambd=0.5):
    """:func:`ember.nn.functional.hardshrink`."""
    return _functional().hardshrink(input, lambd)


@public
@autocast_op("prelu")
def prelu(input, weight):
    """:func:`ember.nn.functional.prelu`."""
    return _functional().prelu(input, weight)


@public(method=False)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """:func:`ember.nn.functional.rrelu`, its random slopes from ``generator``."""
    return _functional()._rrelu(input, lower, upper, training, False, generator)


@public(method=False)
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place :func:`rrelu`."""
    return _functional()._rrelu(input, lower, upper, training, True, generator)
