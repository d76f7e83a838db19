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

from ._blocks import _blockwise
from .unary import _horner

# --------------------------------------------------------------------------- running kernels


def in_blocks(wide, narrow):
    """A raw function of one array: ``narrow(xp, v)`` for float32 and narrower inputs,
    ``wide(xp, v)`` for float64 ones, ``v`` the input in float64 (a block of it on NumPy), the
    result rounded to the input's dtype. A 0-d input runs as one element (NumPy makes 0-d
    results scalars)."""
    def block(xp, x):
        kernel = narrow if x.dtype.itemsize < 8 else wide
        return xp.asarray(kernel(xp, x.astype(xp.float64))).astype(x.dtype, copy=False)
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


def branches(xp, inside, v, first, second):
    """``first(v)`` where ``inside`` holds, ``second(v)`` elsewhere, each computed only if
    some element takes it (both over the whole block otherwise, selected by ``where``)."""
    if bool(inside.all()):
        return first(v)
    if not bool(inside.any()):
        return second(v)
    return xp.where(inside, first(v), second(v))


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
            return branches(xp, xp.abs(x) <= table[0], x,
                            lambda v: _i_small(xp, v, nu, scaled, table),
                            lambda v: _i_large(xp, v, nu, scaled, table))
        return run
    wide = kernel(_I64)
    wide.__name__ = f"i{nu}{'e' if scaled else ''}"
    return in_blocks(wide, kernel(_I32))
