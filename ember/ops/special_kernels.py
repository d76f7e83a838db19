"""Blocked kernels of ``torch.special`` functions: the modified Bessel functions I0 and I1
(plain and exponentially scaled) and the normal distribution's ``erfcx`` / ``log_ndtr`` /
``ndtri``, for float32 (and narrower) inputs and float64 alike.

Each kernel runs on L2-sized blocks (``_blocks._blockwise``) in float64 and rounds once to the
input's dtype: float32's kernels stay within an ulp of the exact value, and a block's dozen
passes stay in the cache. Each dtype gets its own coefficients (float32's: fewer terms), and a
branch is computed only for the blocks that hold an element of it (a block of one branch, the
common case, pays for one; a mixed block computes both and selects).

The I functions (DLMF 10.25.2, 10.40.1), with t = x²/4 and w = 1/|x|:
I0(x) = P0(t) and I1(x) = x/2 P1(t) for |x| <= 12 (float32: 8), e^-|x| I0(x) = G0(w) /
sqrt(|x|) and e^-|x| |I1(x)| = G1(w) / sqrt(|x|) beyond. P and G are polynomials of our own:
Chebyshev interpolants (degree as listed) of (I0(2 sqrt t) - 1) / t, (I1(2 sqrt t) / sqrt t - 1)
/ t, sqrt(x) e^-x I0(x) and sqrt(x) e^-x I1(x) on their intervals, computed with mpmath at 50
digits, converted to powers of t and w. Their relative error in float64 arithmetic, measured
against mpmath on 4000 points of each interval: P 5e-16, G 1.4e-16 (float32's: 1.6e-10 and
1.2e-10). (P's coefficients are positive: Horner's rule loses nothing.)
"""
from __future__ import annotations

import math

import numpy as np

from ._blocks import _blockwise
from .unary import _ERFCX32_P, _ERFCX32_Q, _horner, _numpy_pair, _rational

# --------------------------------------------------------------------------- running kernels


def in_blocks(wide, narrow):
    """A raw function of one array: ``narrow(xp, v)`` for float32 and narrower inputs,
    ``wide(xp, v)`` for float64 ones, ``v`` the input in float64 (a block of it on NumPy), the
    result rounded to the input's dtype. A 0-d input runs as one element (NumPy makes 0-d
    results scalars)."""
    def block(xp, x):
        kernel = narrow if x.dtype.itemsize < 8 else wide
        out = kernel(xp, x.astype(xp.float64, copy=False))  # (kernels leave their input)
        return xp.asarray(out).astype(x.dtype, copy=False)
    blocks = _blockwise(block)

    def raw(xp, x):
        x = xp.asarray(x)
        if x.dtype.kind != "f":
            x = x.astype(xp.float64)
        if x.ndim == 0:
            return raw(xp, x.reshape(1)).reshape(())
        return blocks(xp, x)
    raw.__name__ = wide.__name__
    return raw


def branches(xp, inside, args, first, second):
    """``first(*args)`` where ``inside`` holds, ``second(*args)`` elsewhere (``args``: arrays
    of the block's shape). A branch no element takes is not computed; otherwise the branch
    most elements take runs on the whole block and the other on its own elements only
    (gathered, then written into the first's result): each branch is a dozen passes or more,
    a gather and a scatter a few (Y1 on (0, 30) at 1M: 2.0x -> 1.5x PyTorch's time, against
    both branches over the block selected by ``where``)."""
    hits = int(xp.count_nonzero(inside))
    if hits == inside.size:
        return first(*args)
    if hits == 0:
        return second(*args)
    few, many, mask = (first, second, inside) if 2 * hits < inside.size else \
        (second, first, ~inside)
    out = many(*args)
    at = xp.flatnonzero(mask)
    out.reshape(-1)[at] = few(*(a.reshape(-1)[at] for a in args))
    return out


# --------------------------------------------------------------------------- I0 and I1
_I0_SMALL64 = (1.0, 1.0, 0.25000000000000083, 0.027777777777775296, 0.0017361111111140444,
               6.944444444261747e-05, 1.92901234637099e-06, 3.936759871803453e-08,
               6.151187630017006e-10, 7.594054591344606e-12, 7.594094383161544e-14,
               6.275828168639617e-16, 4.359738522990849e-18, 2.5734964200293303e-20,
               1.3321803191887927e-22, 5.484063802148101e-25, 2.8560963009383293e-27,
               1.9677691860029712e-30, 5.936292866101849e-32)
_I1_SMALL64 = (1.0, 0.5000000000000001, 0.08333333333333177, 0.006944444444448598,
               0.000347222222217853, 1.1574074076491887e-05, 2.755731914286417e-07,
               4.920950040751133e-09, 6.834649832622588e-11, 7.594088787896751e-13,
               6.903443668894708e-15, 5.231546103520962e-17, 3.3459836686116475e-19,
               1.8640696127005647e-21, 8.24135556891191e-24, 4.554357554616836e-26,
               3.434299858426317e-29, 1.0663676351361173e-30)
_I0_LARGE64 = (0.39894228040143265, 0.04986778505033168, 0.028050628949916938,
               0.02921945639745648, 0.04473255063513317, 0.09169698889775686,
               0.1482001753841282, 4.6780887813687135, -135.7966308059057, 3382.256265044623,
               -57652.0157085267, 676982.8861350178, -5174117.596570588, 23172127.984177813,
               -45657432.263178006)
_I1_LARGE64 = (0.3989422804014327, -0.149603355150705, -0.04675104833030025,
               -0.04090722320332694, -0.0575151890510093, -0.11192358780750145,
               -0.1832060178310357, -5.095602938850939, 145.83634156159778, -3626.095697950474,
               61631.05961923407, -721815.0486420691, 5502399.09627044, -24579633.870018773,
               48304872.75527635)
_I0_SMALL32 = (1.0, 1.000000000062809, 0.24999999905405648, 0.027777780130587286,
               0.0017361088313611228, 6.944557550857035e-05, 1.9286857159007588e-06,
               3.9426206858279174e-08, 6.084006747204614e-10, 8.084223884309534e-12,
               5.413839670596113e-14, 1.15035673560079e-15)
_I1_SMALL32 = (1.0, 0.49999999981253024, 0.08333333566477358, 0.006944439665676591,
               0.0003472260157069071, 1.1572548206911863e-05, 2.759245598429473e-07,
               4.871949916057271e-09, 7.253729194641739e-11, 5.467495865793952e-13,
               1.2603087319993433e-14)
_I0_LARGE32 = (0.3989422803690879, 0.04986782113871656, 0.028044099370874324,
               0.029662339387692527, 0.030339937931161538, 0.33478169463149254,
               -1.8901138089883356, 8.487890271986297)
_I1_LARGE32 = (0.39894228044120644, -0.14960339879793716, -0.04674326729232406,
               -0.04142802156836356, -0.040791004798784364, -0.3914317178494609,
               2.1422547728741925, -9.603106145265656)
# (|x| below which P is used, P0, P1, G0, G1) for float64 and for float32
_I64 = (12.0, _I0_SMALL64, _I1_SMALL64, _I0_LARGE64, _I1_LARGE64)
_I32 = (8.0, _I0_SMALL32, _I1_SMALL32, _I0_LARGE32, _I1_LARGE32)


def _i_small(xp, x, nu, scaled, table):
    """I_nu(x) (``scaled``: e^-|x| I_nu(x)) by P, for |x| <= table[0]."""
    t = x * x
    t *= 0.25
    out = _horner(xp, t, table[1 + nu])
    if nu:
        out *= x
        out *= 0.5
        out += 0.0  # (+0 at -0, as PyTorch's)
    if scaled:
        xp.abs(x, out=t)
        xp.negative(t, out=t)
        out *= xp.exp(t, out=t)
    return out


def _i_large(xp, x, nu, scaled, table):
    """I_nu(x) (``scaled``: e^-|x| I_nu(x)) by G, for |x| > table[0] (0 at ±inf scaled, NaN
    unscaled, as PyTorch's: inf times 0)."""
    y = xp.abs(x)
    w = xp.divide(1.0, y)
    out = _horner(xp, w, table[3 + nu])
    xp.sqrt(w, out=w)
    out *= w
    if nu:
        out = xp.copysign(out, x, out=out)
    if not scaled:
        out *= xp.exp(y, out=y)  # (overflows past 709.8, where I's value does too nearly)
    return out


def bessel_i(nu, scaled):
    """The kernel of I_nu (``scaled``: e^-|x| I_nu(x)), nu = 0 or 1, for ``in_blocks``."""
    def kernel(table):
        def run(xp, x):
            return branches(xp, xp.abs(x) <= table[0], (x,),
                            lambda v: _i_small(xp, v, nu, scaled, table),
                            lambda v: _i_large(xp, v, nu, scaled, table))
        return run
    wide = kernel(_I64)
    wide.__name__ = f"i{nu}{'e' if scaled else ''}"
    return in_blocks(wide, kernel(_I32))


# --------------------------------------------------------------------------- the normal law
# float32's erfcx(y) for y >= 0: ``unary``'s rational for erfc(y) exp(y²) on [0, 10.5]
# (relative error 3.2e-9), and beyond, where float32's erfc is 0 but erfcx and log_ndtr are
# not, the asymptotic series 1/(sqrt(pi) y) sum (-1)^k (2k-1)!! / (2y²)^k (DLMF 7.12.1) to
# k = 6: its first omitted term, 10395/128/y^14 relative, is below 1e-10 from 10.5.
_ERFCX32_TAIL_FROM = 10.5
_ERFCX32_TAIL = tuple((-1) ** k * math.prod(range(1, 2 * k, 2)) / 2 ** k for k in range(7))
_SQRT_PI = math.sqrt(math.pi)


def _erfcx32_tail(xp, y):
    w = xp.divide(1.0, y)
    out = _horner(xp, w * w, _ERFCX32_TAIL)
    out *= w
    out *= 1 / _SQRT_PI
    return out


def erfcx_positive32(xp, y):
    """erfcx(y) for y = |x| (float64 values, to float32's accuracy); 0 at inf."""
    return branches(xp, y <= _ERFCX32_TAIL_FROM, (y,),
                    lambda v: _rational(xp, v, _ERFCX32_P, _ERFCX32_Q),
                    lambda v: _erfcx32_tail(xp, v))


def _reflect(xp, x, r):
    """erfcx(x) for x < 0 from r = erfcx(-x): 2 exp(x²) - r (no cancellation: r <= 1 <=
    exp(x²); x² is exact for a float32 x)."""
    out = x * x
    xp.exp(out, out=out)
    out *= 2
    out -= r
    return out


def erfcx32(xp, x):
    """erfcx of float32 values (given in float64)."""
    r = erfcx_positive32(xp, xp.abs(x))
    return branches(xp, ~(x < 0), (x, r), lambda x, r: r, lambda x, r: _reflect(xp, x, r))


def _log_ndtr_below(xp, half, y2):
    out = xp.log(half)
    out -= y2
    return out


def _log_ndtr_above(xp, half, y2):
    out = xp.negative(y2)
    xp.exp(out, out=out)
    out *= half
    xp.negative(out, out=out)
    return xp.log1p(out, out=out)


def log_ndtr32(xp, x):
    """log_ndtr of float32 values (given in float64), with z = x / sqrt(2), y = |z|:
    log(erfcx(y) / 2) - y² below 0 (no underflow, no cancellation), log1p(-erfc(y) / 2)
    above (erfc(y) = exp(-y²) erfcx(y))."""
    y = xp.abs(x)
    y *= math.sqrt(0.5)
    half = erfcx_positive32(xp, y)
    half *= 0.5
    y *= y
    return branches(xp, x < 0, (half, y), lambda h, y2: _log_ndtr_below(xp, h, y2),
                    lambda h, y2: _log_ndtr_above(xp, h, y2))


# P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
# function" (2003), relative error 1.15e-9: in the middle (0.02425 <= p <= 0.97575) x = u
# A(u²) / B(u²), u = p - 1/2; in the tails x = C(r) / D(r), r = sqrt(-2 log q), q = min(p,
# 1 - p) (negative: the lower tail's).
ACKLAM_A = (2.506628277459239e+00, -3.066479806614716e+01, 1.383577518672690e+02,
            -2.759285104469687e+02, 2.209460984245205e+02, -3.969683028665376e+01)
ACKLAM_B = (1.0, -1.328068155288572e+01, 6.680131188771972e+01, -1.556989798598866e+02,
            1.615858368580409e+02, -5.447609879822406e+01)
ACKLAM_C = (2.938163982698783e+00, 4.374664141464968e+00, -2.549732539343734e+00,
            -2.400758277161838e+00, -3.223964580411365e-01, -7.784894002430293e-03)
ACKLAM_D = (1.0, 3.754408661907416e+00, 2.445134137142996e+00, 3.224671290700398e-01,
            7.784695709041462e-03)
NDTRI_TAIL = 0.02425


def _acklam_middle(xp, p):
    u = p - 0.5
    out = _rational(xp, u * u, ACKLAM_A, ACKLAM_B)
    out *= u
    return out


def acklam_tail(xp, p):
    """Acklam's rational for the tails (p or 1 - p below 0.02425; 0 and 1: anything)."""
    q = xp.minimum(p, 1 - p)
    r = xp.sqrt(-2 * xp.log(xp.where(q > 0, q, NDTRI_TAIL)))  # (0: the ends, set after)
    x = _horner(xp, r, ACKLAM_C)
    x /= _horner(xp, r, ACKLAM_D)  # (negative: the lower tail)
    return xp.where(p > 0.5, -x, x)


def ndtri_ends(xp, p, out):
    """``out`` with -inf at 0, inf at 1 and NaN outside [0, 1]."""
    out = xp.where(p == 0, -math.inf, xp.where(p == 1, math.inf, out))
    return xp.where((p < 0) | (p > 1), math.nan, out)


def ndtri32(xp, p):
    """ndtri of float32 values (given in float64), to float32's accuracy: Acklam's rationals
    alone (the tails' computed only for the elements that take them), the ends set only in
    blocks that hold one."""
    q = xp.minimum(p, 1 - p)  # (1 - p is exact)
    out = branches(xp, ~(q < NDTRI_TAIL), (p,), lambda v: _acklam_middle(xp, v),  # (and NaN)
                   lambda v: acklam_tail(xp, v))
    if not bool(q.min() > 0):  # (0, 1, outside [0, 1] or NaN)
        out = ndtri_ends(xp, p, out)
    return out


# --------------------------------------------------------------------------- rules in one buffer


def rule_in_blocks(expression, buffer, reads_input=True):
    """A derivative rule: ``expression(xp, g, ans, input)`` on Tensors (recorded, under
    create_graph) and other arrays, ``buffer(xp, g, ans, input)`` on NumPy arrays of one
    shape, on blocks: its steps in place in one buffer (3-4 temporaries fewer), in the cache.
    (``reads_input=False``: a rule of ``ans`` alone, which the op then does not save its
    input for: the rule's text says which it reads.)"""
    blocks = _blockwise(buffer)

    def rule(xp, g, ans, input):
        if _numpy_pair(g, ans) and type(input) is np.ndarray and input.shape == g.shape:
            return blocks(xp, g, ans, input)
        return expression(xp, g, ans, input)

    def rule_of_ans(xp, g, ans, input):
        if _numpy_pair(g, ans):
            return blocks(xp, g, ans, ans)
        return expression(xp, g, ans, ans)
    return rule if reads_input else rule_of_ans


def erfcx_slope(xp, g, ans, x):
    """g (2 x erfcx(x) - 2 / sqrt(pi))."""
    out = xp.multiply(x, ans)
    out *= 2
    out -= 2 / _SQRT_PI
    out *= g
    return out


def log_ndtr_slope(xp, g, ans, x):
    """g exp(-x²/2) / (sqrt(2 pi) ndtr(x)) = g exp(-(ans + x²/2)) / sqrt(2 pi)."""
    out = xp.multiply(x, x)
    out *= 0.5
    out += ans
    xp.negative(out, out=out)
    xp.exp(out, out=out)
    out *= 1 / math.sqrt(2 * math.pi)
    out *= g
    return out


def ndtri_slope(xp, g, ans, _):
    """g sqrt(2 pi) exp(ans² / 2)."""
    out = xp.multiply(ans, ans)
    out *= 0.5
    xp.exp(out, out=out)
    out *= math.sqrt(2 * math.pi)
    out *= g
    return out
