"""The Bessel functions J0, J1, Y0, Y1 (and K0, K1) of float32 (and narrower) inputs, to
float32's accuracy: polynomials evaluated in float64 on L2-sized blocks (``special_kernels.
in_blocks``), where the float64 kernels of ``bessel.py`` sum a series of 40 terms and a
quadrature of 27 nodes (30-60x PyTorch's float32 time at 1M).

With t = x²/4 (DLMF 10.2.2, 10.8.1), for 0 <= x <= 5: J0 = PJ0(t), J1 = x/2 PJ1(t), and
Y0 - 2/pi log(x) J0 = PY0(t), Y1 - 2/pi log(x) J1 + 2/(pi x) = x PY1(t) (entire functions of
t: the logarithms are split off). Beyond (DLMF 10.17, Hankel's expansions), with u = 1/x² and
chi = x - (2 nu + 1) pi/4: J_nu = sqrt(2/(pi x)) (P(u) cos chi - Q(u)/x sin chi) and Y_nu =
sqrt(2/(pi x)) (P(u) sin chi + Q(u)/x cos chi), P and Q the modulus functions. Every
polynomial is our own: the Chebyshev interpolant on its interval (t in [0, 6.25], u in [0,
1/25]) of the function, computed with mpmath at 50 digits and converted to powers; absolute
errors 1e-12..2e-11: far below float32's spacing. Below 5 the results are the exact values
rounded (0.5 ulp, 6 near the zeros of Y1); beyond, cos x and sin x are float32's own, as in
PyTorch's float32 kernels (float64's cost 15 ms each at 1M: 5x the whole of PyTorch's J0),
which leaves an absolute error of about 1e-8 (PyTorch's: 3e-7).

K0 and K1 (DLMF 10.31.1, 10.40.2): for 0 < x <= 2, K0 = RK0(t) - log(x) I0(x) and K1 = 1/x +
log(x) I1(x) + x RK1(t) (I from ``special_kernels``' float32 polynomials); beyond, e^x K_nu(x)
= GK_nu(1/x) / sqrt(x). RK are Chebyshev interpolants as above (absolute error 9e-13), GK
relative error 4.3e-10 (10 terms on [0, 1/2]).
"""
from __future__ import annotations

import math

import numpy as np

from .special_kernels import _I0_SMALL32, _I1_SMALL32, _horner, branches

_J0_SMALL = (0.9999999999899688, -0.9999999996780998, 0.2499999982945293, -0.02777777426994903,
             0.0017361074427478195, -6.944223697194816e-05, 1.928201275442998e-06,
             -3.91822041182926e-08, 5.892441592514171e-10, -5.5433957004131985e-12)
_J1_SMALL = (0.9999999999990669, -0.499999999970062, 0.08333333317476542,
             -0.006944444118422866, 0.00034722188144535745, -1.1573869140987207e-05,
             2.754979639817306e-07, -4.903777570433863e-09, 6.595529447565741e-11,
             -5.707291833288474e-13)
_Y0_SMALL = (-0.073804295089403, 0.710424066857387, -0.2571834851357395, 0.03447056393338034,
             -0.002430714276812965, 0.00010606654773753337, -3.1495246351760174e-06,
             6.753121513669957e-08, -1.0598416991009476e-09, 1.0279201807003427e-11)
_Y1_SMALL = (-0.19605709064532753, 0.217394752612799, -0.047284885222381355,
             0.00458513168147423, -0.0002541242268828388, 9.146044450959769e-06,
             -2.3126954431244427e-07, 4.3241161851704625e-09, -6.051852602536872e-11,
             5.390389101544466e-13)
_P0 = (0.9999999999883764, -0.07031246034516714, 0.11212937124287627, -0.5673421462980277,
       5.458176764582201, -64.52244617646647, 608.7646547294848, -2882.8738313276112)
_Q0 = (-0.1249999999871813, 0.07324213183697362, -0.2270672661173154, 1.715816904859339,
       -22.524605837062126, 369.9224990989731, -5440.370121292578, 53865.54989517446,
       -249445.40138264163)
_P1 = (1.0000000000127194, 0.11718745662879086, -0.1441707162039288, 0.6709599947403243,
       -6.212711020317585, 72.15988326212894, -675.4598262586959, 3186.5794814296232)
_Q1 = (0.37499999998612354, -0.10253900226910231, 0.27753239383666173, -1.9806622588905438,
       25.24612958692857, -408.5007258823398, 5965.069612772218, -58851.77598366651,
       272011.67960298766)
_JY_SMALL_BELOW = 5.0
_T_SMALL_BELOW = _JY_SMALL_BELOW ** 2 / 4
_TWO_OVER_PI = 2 / math.pi


def _j_small(xp, x, t, nu):
    out = _horner(xp, t, _J1_SMALL if nu else _J0_SMALL)
    if nu:
        out *= x
        out *= 0.5
    return out


def _y_small(xp, x, t, nu):
    out = _horner(xp, t, _Y1_SMALL if nu else _Y0_SMALL)
    log = xp.log(x)
    log *= _TWO_OVER_PI
    log *= _j_small(xp, x, t, nu)
    if nu:
        out *= x
        out -= _TWO_OVER_PI / x
    out += log
    return out


def _jy_large(xp, x, nu, want_y):
    """J_nu(|x|) (``want_y``: Y_nu(x), x > 0) by Hankel's expansions."""
    x = xp.abs(x)
    u = xp.divide(1.0, x)
    u *= u
    p = _horner(xp, u, _P1 if nu else _P0)
    q = _horner(xp, u, _Q1 if nu else _Q0)
    q /= x
    # cos and sin of chi = x - (2 nu + 1) pi/4 from those of x (exact in float32)
    narrow = x.astype(xp.float32)
    c = xp.cos(narrow).astype(xp.float64)
    s = xp.sin(narrow, out=narrow).astype(xp.float64)
    cos_chi, sin_chi = (c + s, s - c) if nu == 0 else (s - c, -(s + c))
    if want_y:
        p *= sin_chi
        q *= cos_chi
        p += q
    else:
        p *= cos_chi
        q *= sin_chi
        p -= q
    xp.divide(1 / math.pi, x, out=u)  # sqrt(2 / (pi x)) sqrt(1/2), the latter from chi's
    xp.sqrt(u, out=u)
    p *= u
    return p


def j32(nu):
    """The float32 kernel of J_nu (odd for nu = 1; NaN at ±inf, from cos)."""
    def kernel(xp, v):
        t = v * v
        t *= 0.25
        out = branches(xp, t <= _T_SMALL_BELOW, (v, t), lambda a, b: _j_small(xp, a, b, nu),
                       lambda a, b: _jy_large(xp, a, nu, False))
        if nu:  # (the small branch's is odd already: x/2 P(t))
            out = xp.where(t <= _T_SMALL_BELOW, out, xp.copysign(1.0, v) * out) \
                if bool((v < 0).any()) else out
        return out
    return kernel


def y32(nu):
    """The float32 kernel of Y_nu: -inf at 0, NaN below 0 and at ±inf."""
    def kernel(xp, v):
        fine = v > 0
        everywhere = bool(fine.all())
        x = v if everywhere else xp.where(fine, v, 1.0)
        t = x * x
        t *= 0.25
        out = branches(xp, t <= _T_SMALL_BELOW, (x, t), lambda a, b: _y_small(xp, a, b, nu),
                       lambda a, b: _jy_large(xp, a, nu, True))
        if not everywhere:
            out = xp.where(fine, out, xp.where(v == 0, -math.inf, math.nan))
        return out
    return kernel


# --------------------------------------------------------------------------- K0, K1
_K0_SMALL = (0.11593151565835627, 1.1159315156655965, 0.40398287876390165, 0.05414624700919332,
             0.003818163420709088, 0.00016662565307681103, 4.937909778536634e-06,
             1.1382900024920292e-07)
_K1_SMALL = (-0.307965757830085, -0.3414828788285795, -0.07427492563790805,
             -0.007202300274158297, -0.00039920136521705914, -1.4332684696457102e-05,
             -3.8801351147348175e-07)
_K0_LARGE = (1.2533141368535616, -0.15666407052970185, 0.08810958587583263,
             -0.09139459471696935, 0.13451071555878946, -0.22844696164739298,
             0.3601469708118683, -0.43301638192290115, 0.32824333853402193,
             -0.11391961252589725)
_K1_LARGE = (1.2533141378549066, 0.46999257207333434, -0.14685635926241744,
             0.12804717747199648, -0.17369644038402243, 0.2828623850864051,
             -0.4364860523334718, 0.5190186514848937, -0.39104887072887695, 0.1352276999747511)
_K_SMALL_BELOW = 2.0


def _k_small(xp, x, nu, scaled):
    t = x * x
    t *= 0.25
    out = _horner(xp, t, _K1_SMALL if nu else _K0_SMALL)
    log_i = _horner(xp, t, _I1_SMALL32 if nu else _I0_SMALL32)
    if nu:
        log_i *= x
        log_i *= 0.5
        out *= x
        out += xp.divide(1.0, x, out=t)
    log_i *= xp.log(x)
    if nu:
        out += log_i
    else:
        out -= log_i
    if scaled:
        out *= xp.exp(x)
    return out


def _k_large(xp, x, nu, scaled):
    w = xp.divide(1.0, x)
    out = _horner(xp, w, _K1_LARGE if nu else _K0_LARGE)
    out *= xp.sqrt(w, out=w)
    if not scaled:
        out *= xp.exp(xp.negative(x))
    return out


def k32(nu, scaled):
    """The float32 kernel of K_nu (``scaled``: e^x K_nu): inf at 0, NaN below 0, 0 at inf."""
    def kernel(xp, v):
        fine = v > 0
        everywhere = bool(fine.all())
        x = v if everywhere else xp.where(fine, v, 1.0)
        out = branches(xp, x <= _K_SMALL_BELOW, (x,), lambda a: _k_small(xp, a, nu, scaled),
                       lambda a: _k_large(xp, a, nu, scaled))
        if not everywhere:
            out = xp.where(fine, out, xp.where(v == 0, math.inf, math.nan))
        return out
    return kernel


# --------------------------------------------------------------------------- spherical j0
# sin of float32 values in float64 without NumPy's float64 sin (15 ms at 1M: twice PyTorch's
# whole op): x = k pi/2 + r, |r| <= pi/4, with pi/2 cut into three parts (the first two of
# 24 bits: k times them is exact while |k| < 2^24, so r is exact to 1e-16), then the Taylor
# polynomials of sin r and cos r (their first omitted terms: 2e-14, 1e-15).
_PIO2_1 = float(np.float32(math.pi / 2))
_PIO2_2 = float(np.float32(math.pi / 2 - _PIO2_1))
_PIO2_3 = math.pi / 2 - _PIO2_1 - _PIO2_2
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(1, 7))   # (sin r / r - 1) / r²
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(1, 8))       # (cos r - 1) / r²
_REDUCED_BELOW = 2.0 ** 23


def _sin_reduced(xp, x):
    """sin x for |x| < 2^23 (float32 values in float64)."""
    k = x * (2 / math.pi)
    xp.rint(k, out=k)
    r = x - k * _PIO2_1
    r -= k * _PIO2_2
    r -= k * _PIO2_3
    r2 = r * r
    sin = _horner(xp, r2, _SIN)
    sin *= r2
    sin *= r
    sin += r
    cos = _horner(xp, r2, _COS)
    cos *= r2
    cos += 1.0
    # sin x = sin r, cos r, -sin r, -cos r for k = 0, 1, 2, 3 mod 4: blended by arithmetic
    # (``where`` on a mask this random costs 5 ns an element, 4x these passes)
    m = k * 0.25
    xp.floor(m, out=m)
    m *= -4
    m += k  # k mod 4
    half = m * 0.5
    xp.floor(half, out=half)  # 0 or 1: the sign
    m -= 2 * half  # 0 or 1: cos
    cos -= sin
    cos *= m
    cos += sin
    half *= -2
    half += 1
    cos *= half
    return cos


def spherical_j0_32(xp, x):
    """sin(x) / x for float32 values (given in float64), sin as above (NumPy's beyond 2^23)."""
    out = branches(xp, xp.abs(x) < _REDUCED_BELOW, (x,), lambda a: _sin_reduced(xp, a),
                   lambda a: xp.sin(a))
    out /= x
    if not bool(xp.isfinite(out).all()):  # 1 at 0, 0 at ±inf, NaN at NaN
        out = xp.where(x == 0, 1.0, xp.where(xp.isinf(x), 0.0, out))
    return out
