"""GELU's NumPy kernels: exact GELU of float32 arrays in float32 arithmetic (and its slope,
which the forward keeps for the backward), and PyTorch's tanh approximation in one buffer.
``ops/nn/activation.py`` declares the op and chooses among these and the array-API formulas.
"""
from __future__ import annotations

import math

import numpy as np

from .._blocks import _BLOCK
from ..unary import _horner

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
INV_SQRT_2 = 1 / math.sqrt(2)
INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# Exact GELU for float32, in float32 arithmetic. With a = |x| and Phi(-a) = w = exp(-a²/2) S(a),
# the output is x (1 - w) above 0 and x w below: with r = x w, max(x - r, r) (r <= x - r
# exactly when x >= 0), free of the cancellation of PyTorch's 1 + erf in the negative tail;
# the slope is Phi(x) + x exp(-x²/2) / sqrt(2 pi), Phi(x) = 1/2 + sign(x) (1/2 - w) with the
# sign put in through the bits (CuPy has the same calls; ``copysign`` is 5x slower than a
# multiply in NumPy, a ``where`` on a mixed mask 40x).
# S(a) = P(a) / Q(a), degrees 3 and 4, is a fit of our own (linearized weighted least
# squares against mpmath's erfc, coefficients rounded to float32 and Q refitted): relative
# error 2e-8 on [0, 2.5], looser above, where x > 0 only reads it and w is small beside 1
# (exp(-a²/2) S(a) times the error stays below 2e-8 of the output); every coefficient
# positive and Q's roots complex with negative real parts, so S is finite and positive on
# a >= 0 and its float32 sums of positive terms cancel nothing. P, Q and the exp's
# argument -a²/2 are one matrix product of the rows 1, a, a², a³, a⁴ (3 passes build them):
# BLAS does the 13 multiply-adds in about the time of 3 NumPy passes, where Horner takes 15.
# With the exp, the quotient, and the 3 + 7 passes of output and slope written straight
# into the results' blocks (one scratch for all blocks), the forward with its slope on
# nanoGPT's (768, 512) takes 1.6 ms where a (4, 5) rational by Horner took 1.9 (2.2 at
# std 0.7, with the tail redone per block: 1.75 now). exp(-a²/2) from a float32 a² is off
# by up to a²/2 float32 ulps of its argument: within 6.1 ulp of x Phi(x) above -2.5 (5.2
# on [-1, 1], where the Horner form gave 3.6 and numpy's exp alone gives up to 1.6), but
# ~80 ulp at -13. So the elements below -2.5 (0.6% of a standard normal's; none in most
# blocks, found by a ``min``) and the huge (x > 1e9, where the powers would overflow;
# ``inf``) take both again in float64, gathered from all blocks into one evaluation, from
# a fit of S over all of [0, 14.85] (relative error 8.2e-9): within 1 ulp there.
_P = (0.5, 0.30187225341796875, 0.08837487548589706, 0.010313726030290127)
_Q = (1.0, 1.4016289710998535, 0.7950899600982666, 0.22015266120433807, 0.02592507004737854)
_ROWS = np.array([_P + (0.0,), _Q, (0.0, 0.0, -0.5, 0.0, 0.0)], np.float32)
# The float64 fit for the tail (P over Q's leading coefficient: Q monic, a pass fewer).
_TAIL_P = tuple(c / 0.010300232479760764 for c in (
    0.5000000024010445, 0.43818017671045945, 0.1831341253927425, 0.04059455858363446,
    0.004109245573068621))
_TAIL_Q = tuple(c / 0.010300232479760764 for c in (
    1.0, 1.6742452909859746, 1.202118252875428, 0.4691999983851081, 0.10176188495462456,
    0.010300232479760764))
_A_MAX = 14.85  # exp(-a²/2) S(a) is below float32's least subnormal beyond
_TAIL = np.float32(-2.5)  # below, both from float64 (see above)
_BIG = np.float32(1e9)  # above, a⁴ would overflow (inf times the rows' zeros: NaN)
_SIGN = np.uint32(0x80000000)


def _scratch(xp, n):
    """The rows 1, a, a², a³, a⁴ (the first filled once) and the product's three rows."""
    rows = xp.empty((5, n), xp.float32)
    rows[0] = 1
    return rows, xp.empty((3, n), xp.float32)


def _evaluate(xp, x, out, slope, scratch):
    """Fill ``out`` with x Phi(x) and ``slope`` with Phi(x) + x phi(x) (either may be None)
    for the contiguous 1-d float32 ``x`` (see above), on ``scratch`` (``_scratch``); return
    the positions that ``_tail`` must redo (None if there are none)."""
    rows, (w, r, e) = scratch
    a = xp.abs(x, out=rows[1])
    huge = not a.max() <= _BIG  # (NaN too: harmless)
    if huge:
        xp.minimum(a, _BIG, out=a)
    t = xp.multiply(a, a, out=rows[2])
    xp.multiply(t, a, out=rows[3])
    xp.multiply(t, t, out=rows[4])
    xp.matmul(xp.asarray(_ROWS), rows, out=scratch[1])  # P(a), Q(a), -a²/2
    xp.exp(e, out=e)
    xp.divide(w, r, out=w)
    w *= e  # Phi(-a)
    if out is not None:
        xp.multiply(x, w, out=r)
        xp.maximum(xp.subtract(x, r, out=t), r, out=out)  # (equal: r, which keeps -0's sign)
    if slope is not None:
        e *= x
        e *= xp.float32(INV_SQRT_2PI)
        xp.subtract(xp.float32(0.5), w, out=w)
        w_bits = w.view(xp.uint32)
        w_bits ^= xp.bitwise_and(x.view(xp.uint32), _SIGN, out=rows[3].view(xp.uint32))
        w += xp.float32(0.5)
        xp.add(w, e, out=slope)
    if huge or not x.min() >= _TAIL:  # (NaN: the mask below leaves it out)
        return xp.flatnonzero((x < _TAIL) | (x > _BIG) if huge else x < _TAIL)
    return None


def _tail(xp, x, out, slope, at):
    """``_evaluate``'s results again, in float64, at the positions ``at`` of ``x`` (where
    x < -2.5 or x > 1e9): gathered from every block, one evaluation."""
    v = x[at].astype(xp.float64)
    e = xp.exp(-0.5 * v * v)
    a = xp.minimum(xp.abs(v), _A_MAX)  # (S(inf) would be inf / inf)
    q = a + _TAIL_Q[-2]
    for c in _TAIL_Q[-3::-1]:
        q *= a
        q += c
    es = e * _horner(xp, a, _TAIL_P) / q
    cdf = xp.where(v < 0, es, 1 - es)
    if out is not None:
        out[at] = v * cdf  # (-inf: -inf * 0, NaN, as PyTorch's formula gives)
    if slope is not None:
        slope[at] = cdf + INV_SQRT_2PI * v * e


def _run(xp, x, want_out, want_slope):
    """``(out, slope)`` (each None unless wanted) of a float32 array ``x``: NumPy arrays in
    blocks of ``_BLOCK`` elements, whose temporaries stay in L2, on one scratch, each
    result written into its block (CuPy arrays whole)."""
    flat = xp.ascontiguousarray(x).reshape(-1)
    n = flat.size
    res = [xp.empty(n, xp.float32) if want else None for want in (want_out, want_slope)]
    step = _BLOCK if type(flat) is np.ndarray else max(n, 1)
    scratch = _scratch(xp, min(n, step))
    tails = []
    for start in range(0, n, step):
        stop = min(start + step, n)
        if stop - start < scratch[1].shape[1]:
            scratch = _scratch(xp, stop - start)
        at = _evaluate(xp, flat[start:stop], *(r if r is None else r[start:stop] for r in res),
                       scratch)
        if at is not None:
            tails.append(at + start if start else at)
    if tails:  # (a dozen float64 passes on a few elements: once, not per block)
        _tail(xp, flat, *res, tails[0] if len(tails) == 1 else xp.concatenate(tails))
    return [r if r is None else r.reshape(x.shape) for r in res]


def narrow(xp, x):
    """``x Phi(x)`` for float32 (and narrower) ``x`` (see above); -inf gives NaN (-inf * 0),
    as PyTorch's formula does."""
    out, _ = _run(xp, x.astype(xp.float32, copy=False), True, False)
    return out.astype(x.dtype, copy=False)


def grad_narrow(xp, g, x):
    """``g (Phi(x) + x phi(x))`` for float32 (and narrower) ``x`` (see above). (The rule
    reads the input only, as PyTorch's GeluBackward saves it: reading Phi off the output
    would break on an output modified in place.)"""
    _, slope = _run(xp, x.astype(xp.float32, copy=False), False, True)
    slope *= g
    return slope.astype(x.dtype, copy=False)


def and_slope(xp, x):
    """``narrow`` and the slope ``grad_narrow`` multiplies ``g`` by, from one
    evaluation of the parts, for float32 ``x``: the same bits as each."""
    return tuple(_run(xp, x, True, True))


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
