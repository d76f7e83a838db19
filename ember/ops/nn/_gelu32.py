"""GELU's NumPy kernels: exact GELU of float32 arrays in float32 arithmetic (and its slope,
which the forward keeps for the backward), and PyTorch's tanh approximation in one buffer.
``ops/nn/activation.py`` declares the op and chooses among these and the array-API formulas.
"""
from __future__ import annotations

import math

import numpy as np

from .._blocks import _blockwise
from ..unary import _horner

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
INV_SQRT_2 = 1 / math.sqrt(2)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# Exact GELU for float32, in float32 arithmetic. With Phi(-a) = exp(-a²/2) S(a) for a = |x|,
# Phi(x) = [x >= 0] - sign(x) Phi(-a) (1 - Phi(-a) above 0, Phi(-a) below: free of the
# cancellation of PyTorch's 1 + erf in the negative tail), the output is x Phi(x) and the
# slope Phi(x) + x phi(x) = Phi(x) + x exp(-x²/2) / sqrt(2 pi): the backward's phi is the
# forward's exp. S(a) = P(a) / Q(a) on [0, 14.85] is a fit of our own (linearized least
# squares on Chebyshev nodes against math.erfc, relative error 8.2e-9): every coefficient
# positive, so Horner in float32 on a >= 0 adds no cancellation (erfc's rational of
# ops/unary.py, with mixed signs, gave more). exp(-x²/2) from a float32 x² is off by up to
# x²/2 float32 ulps of its argument: harmless above 0 (the tail term is small beside 1) and
# down to -2.5 (within 6.3 ulp of x Phi(x) there, 4.1 near 0), but ~80 ulp at -13. So the
# exp runs in float32, and the elements below -2.5 (0.6% of a standard normal's; none in
# most blocks, found by a compare and an ``any``) get theirs again from a float64 square,
# and their output as (x exp(-x²/2)) S(a): within 7.1 ulp of x Phi(x) there. The float64
# exp for every element was a fifth of the kernel; the slope's 3 passes reuse Phi(x).
# At 1M: fwd 10 -> 6 ms, bwd 12 -> 6 ms (the erfc kernel in float64, ~35 passes, before);
# forward with its slope 2.45 -> 1.85-2.1 ms on nanoGPT's (768, 512) for activations of
# std 0.25-1 (flat at std 2, where 10% of the elements are in the tail).
_S_P = tuple(c / 0.010300232479760764 for c in (
    0.5000000024010445, 0.43818017671045945, 0.1831341253927425, 0.04059455858363446,
    0.004109245573068621))
_S_Q = tuple(c / 0.010300232479760764 for c in (
    1.0, 1.6742452909859746, 1.202118252875428, 0.4691999983851081, 0.10176188495462456,
    0.010300232479760764))  # (both over Q's leading coefficient: Q monic, a pass fewer)
_S_P32 = tuple(np.float32(c) for c in _S_P)
_S_Q32 = tuple(np.float32(c) for c in _S_Q)
_A_MAX = np.float32(14.85)  # exp(-a²/2) S(a) is below float32's least subnormal beyond
_EXP32_FROM = np.float32(-2.5)  # below, exp(-x²/2) from float64 (see above)


def _parts(xp, x):
    """For float32 ``x``: ``Phi(x)`` (a new array), ``exp(-x²/2)``, and for the elements
    below -2.5 (the deep tail: None if there are none) their positions and output. Phi(x) is
    1 - Phi(-a) above 0 and Phi(-a) = exp(-a²/2) S(a) below, the sign taken through the bits
    (CuPy has the same calls): ``copysign`` is 5x slower than a multiply in NumPy, a
    ``where`` on a mixed mask 40x. The output x Phi(x) and the slope Phi(x) + x phi(x) then
    take 1 and 3 passes more. Below -2.5 the output is (x exp(-x²/2)) S(a) instead: x e
    first keeps it normal where the output is, where Phi(x) alone may be subnormal."""
    e = x * x
    e *= xp.float32(-0.5)
    xp.exp(e, out=e)
    tail = x < _EXP32_FROM  # (NaN compares False: NaN stays in e)
    if tail.any():  # (a compare and an any: a third of a ``min``'s time)
        tail = xp.flatnonzero(tail)
        deep = x.ravel()[tail].astype(xp.float64)
        deep *= deep
        deep *= -0.5
        e.ravel()[tail] = xp.exp(deep)  # (x and e: contiguous blocks)
    else:
        tail = None
    a = xp.abs(x)
    xp.minimum(a, _A_MAX, out=a)  # NaN stays NaN; S(huge) would be inf / inf
    s = _horner(xp, a, _S_P32)
    q = a + _S_Q32[-2]  # Q is monic
    for c in _S_Q32[-3::-1]:
        q *= a
        q += c
    s /= q
    if tail is not None:
        deep = x.ravel()[tail] * e.ravel()[tail]
        deep *= s.ravel()[tail]
        tail = tail, deep
    s *= e  # Phi(-a)
    sign = xp.bitwise_and(x.view(xp.uint32), xp.uint32(0x80000000))
    s_bits = s.view(xp.uint32)
    s_bits ^= sign  # -Phi(-a) below 0 (and at -0)
    step = xp.bitwise_xor(sign, xp.float32(0.5).view(xp.uint32), out=a.view(xp.uint32))
    step = step.view(xp.float32)
    step += xp.float32(0.5)  # [x >= +0]: 0.5 + (±0.5), 0 at -0 (x Phi(x) keeps its sign)
    step -= s
    return step, e, tail


def _output(xp, x, cdf, tail):
    """``x Phi(x)`` from ``_parts``."""
    out = x * cdf
    if tail is not None:
        out.ravel()[tail[0]] = tail[1]
    return out


def _slope(xp, x, cdf, e):
    """``Phi(x) + x phi(x)`` from ``_parts``."""
    slope = x * xp.float32(INV_SQRT_2PI)
    slope *= e
    slope += cdf
    return slope


@_blockwise
def narrow(xp, x):
    """``x Phi(x)`` for float32 (and narrower) ``x`` (see above); -inf gives NaN (-inf * 0),
    as PyTorch's formula does."""
    x32 = x.astype(xp.float32, copy=False)
    cdf, _, tail = _parts(xp, x32)
    return _output(xp, x32, cdf, tail).astype(x.dtype, copy=False)


@_blockwise
def grad_narrow(xp, g, x):
    """``g (Phi(x) + x phi(x))`` for float32 (and narrower) ``x`` (see above). (The rule
    reads the input only, as PyTorch's GeluBackward saves it: reading Phi off the output
    would break on an output modified in place.)"""
    x32 = x.astype(xp.float32, copy=False)
    cdf, e, _ = _parts(xp, x32)
    slope = _slope(xp, x32, cdf, e)
    slope *= g
    return slope.astype(x.dtype, copy=False)


@_blockwise
def and_slope(xp, x):
    """``narrow`` and the slope ``grad_narrow`` multiplies ``g`` by, from one
    evaluation of the parts, for float32 ``x``: the same bits as each."""
    cdf, e, tail = _parts(xp, x)
    return _output(xp, x, cdf, tail), _slope(xp, x, cdf, e)


def tanh_buffer(x):
    """PyTorch's tanh approximation, in its order of operations, in one buffer."""
    c = x.dtype.type
    out = np.multiply(x, x)
    out *= x
    out *= c(0.044715)
    out += x
    out *= c(SQRT_2_OVER_PI)
    np.tanh(out, out=out)
    out += c(1)
    out *= x
    out *= c(0.5)
    return out


def tanh_grad_buffer(g, x):
    """The tanh form's derivative in two buffers, in PyTorch's order of operations."""
    c = x.dtype.type
    d = np.multiply(x, x)
    t = np.multiply(d, x)
    d *= c(3 * 0.044715)
    d += c(1)
    d *= c(SQRT_2_OVER_PI)  # the inner function's derivative
    t *= c(0.044715)
    t += x
    t *= c(SQRT_2_OVER_PI)
    np.tanh(t, out=t)
    out = np.multiply(t, t)
    np.subtract(c(1), out, out=out)
    out *= d
    out *= x
    out *= c(0.5)
    t += c(1)
    t *= c(0.5)
    out += t
    out *= g
    return out
