"""The Bessel and Airy functions of ``torch.special`` that PyTorch gives no derivative:
``bessel_j0``/``j1``/``y0``/``y1``, ``modified_bessel_i0``/``i1``/``k0``/``k1``,
``scaled_modified_bessel_k0``/``k1``, ``spherical_bessel_j0`` and ``airy_ai``. Their results
never require grad (as PyTorch's do not); integers give the default float dtype.

All compute in float64 (on L2-sized blocks) from the math (DLMF chapters 9 and 10),
vectorised over the elements:

- small arguments (|x| <= 4 for J and Y, x <= 2 for K): the power series, DLMF 10.2.2 and
  10.8.1 (J, Y), 10.25.2 and 10.31.1 (I, K), with harmonic numbers for psi(k + 1);
- larger arguments: Hankel's integral (G. N. Watson, A Treatise on the Theory of Bessel
  Functions, §7.2: the integral behind the asymptotic expansions DLMF 10.17 and 10.40):
  H_nu(x) = sqrt(2 / (pi x)) e^{i w} / Gamma(nu + 1/2)
  * int_0^inf e^-u u^(nu - 1/2) (1 + i u / (2x))^(nu - 1/2) du,  w = x - nu pi/2 - pi/4,
  and K_nu(x) = sqrt(pi / (2x)) e^-x / Gamma(nu + 1/2) * (the same integral with 1 + u/(2x)).
  With u = s^2 (s^6 for nu = 1/3) the integrand is even and analytic in a strip around the
  real line, so the trapezoidal rule over it converges geometrically (Trefethen & Weideman,
  SIAM Review 56 (2014)): a few dozen nodes give float64's precision for every x past the
  series' range, with no cancellation (J and Y are its real and imaginary parts);
- the I functions: ``special_kernels``' polynomials (float32 inputs computed to float32's
  accuracy, as for ``special.i0``);
- Airy Ai: its Maclaurin series (DLMF 9.4.1) for |x| <= 1, and beyond, Ai(x) = sqrt(x/3) /
  pi K_{1/3}(zeta) and Ai(-x) = sqrt(x) / 3 (J_{1/3} + J_{-1/3})(zeta) = sqrt(x/3)
  Re(e^{i pi/6} H_{1/3}(zeta)), zeta = 2/3 x^{3/2} (DLMF 9.6.1, 9.6.6; J_{-nu} = cos(nu pi)
  J_nu - sin(nu pi) Y_nu), through the same integral.

The values off the domain are PyTorch's: NaN for Y and K below 0 and for J, Y, I and Ai at
±inf, -inf for Y at 0, inf for K at 0, 0 for K at inf.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from . import operands as _operands
from .bessel32 import j32, k32, spherical_j0_32, y32
from .registry import defop
from .special_functions import refuse_half, split
from .special_kernels import bessel_i, in_blocks

_EULER_GAMMA = 0.57721566490153286060651209008240243
_TWO_OVER_PI = 2 / math.pi


# --------------------------------------------------------------------------- power series


def _series(xp, x, nu, sign, harmonic, terms=40):
    """sum_k sign^k t^k / (k! (k + nu)!) (x/2)^nu and, with ``harmonic``, the same with
    each term times (H_k + H_{k+nu}), t = x²/4."""
    t = x * x / 4
    term = xp.ones_like(x) if nu == 0 else x / 2
    plain = term
    weighted = xp.zeros_like(x) if nu == 0 else term * 1.0  # H_0 + H_1 = 1
    h_k, h_knu = 0.0, float(nu)
    for k in range(1, terms):
        term = term * (sign * t) / (k * (k + nu))
        h_k += 1 / k
        h_knu += 1 / (k + nu)
        plain = plain + term
        if harmonic:
            weighted = weighted + term * (h_k + h_knu)
    return plain, weighted


# --------------------------------------------------------------------------- Hankel's integral
# The nodes s_j = j h of the trapezoidal rule for int_0^inf e^{-s^2} f(s^2) ds (even in s):
# h = 1/4 and s up to 6.5 (e^{-42}) give 1e-16 once x >= 4, where the integrand's nearest
# singularity (s^2 = ±2ix, or -2x for K) is at least 2 from the real line.
_H = 0.25
_S = tuple(j * _H for j in range(27))
_W = tuple((_H / 2 if j == 0 else _H) * math.exp(-s * s) for j, s in enumerate(_S))


def _hankel(xp, x, nu):
    """(P, Q): the integral's real and imaginary parts over Gamma(nu + 1/2), for J_nu and
    Y_nu (nu = 0, 1) at x >= 4 (other elements: anything)."""
    re = xp.zeros_like(x)
    im = xp.zeros_like(x)
    for s, w in zip(_S, _W):
        # (1 + i c)^(nu - 1/2) = r^(nu - 1/2) e^{i (nu - 1/2) phi}, c = s²/(2x), r = |1 + i c|
        c = (s * s) / (2 * x)
        r = xp.sqrt(1 + c * c)
        cos_half = xp.sqrt((r + 1) / (2 * r))  # cos(phi / 2), sin(phi / 2): no cancellation
        sin_half = c / xp.sqrt(2 * r * (r + 1))
        if nu == 0:
            mag = w / xp.sqrt(r)
            re = re + mag * cos_half
            im = im - mag * sin_half
        else:
            mag = w * s * s * xp.sqrt(r)
            re = re + mag * cos_half
            im = im + mag * sin_half
    scale = 2 / math.gamma(nu + 0.5)
    return re * scale, im * scale


def _k_integral(xp, x, nu):
    """e^x K_nu(x) sqrt(2x / pi) for x >= 2, nu = 0, 1 (the integral over Gamma(nu + 1/2))."""
    total = xp.zeros_like(x)
    for s, w in zip(_S, _W):
        c = 1 + (s * s) / (2 * x)
        total = total + (w / xp.sqrt(c) if nu == 0 else w * s * s * xp.sqrt(c))
    return total * (2 / math.gamma(nu + 0.5))


# --------------------------------------------------------------------------- J and Y

_JY_SERIES_BELOW = 4.0


def _phases(xp, x, nu):
    """cos and sin of x - nu pi/2 - pi/4, from cos x and sin x of the exact x."""
    c, s = xp.cos(x), xp.sin(x)
    r = math.sqrt(0.5)
    if nu == 0:
        return (c + s) * r, (s - c) * r
    return (s - c) * r, -(s + c) * r


def _jy64(xp, x, nu, want_y):
    """J_nu(x) (``want_y``: Y_nu(x)) for x >= 0."""
    return split(xp, x <= _JY_SERIES_BELOW, x, lambda xs: _jy_series(xp, xs, nu, want_y),
                 lambda xl: _jy_hankel(xp, xl, nu, want_y))


def _jy_series(xp, xs, nu, want_y):
    plain, weighted = _series(xp, xs, nu, -1.0, want_y)
    if not want_y:
        return plain
    if nu == 0:  # Y0 = 2/pi ((log(x/2) + gamma) J0 - sum H_k (-t)^k / k!^2)
        return _TWO_OVER_PI * ((xp.log(xs / 2) + _EULER_GAMMA) * plain - weighted / 2)
    # Y1 = -2/(pi x) + 2/pi log(x/2) J1 - x/(2 pi) sum (psi(k+1) + psi(k+2)) ...
    return (-_TWO_OVER_PI / xs + _TWO_OVER_PI * (xp.log(xs / 2) + _EULER_GAMMA) * plain
            - weighted / math.pi)


def _jy_hankel(xp, xl, nu, want_y):
    p, q = _hankel(xp, xl, nu)
    cw, sw = _phases(xp, xl, nu)
    amp = xp.sqrt(2 / (math.pi * xl))
    return amp * (p * sw + q * cw) if want_y else amp * (p * cw - q * sw)


def _j0_64(xp, x):
    return _jy64(xp, xp.abs(x), 0, False)


def _j1_64(xp, x):
    return _jy64(xp, xp.abs(x), 1, False) * xp.copysign(1.0, x)  # (odd: -0 at -0)


def _y64(nu):
    def kernel(xp, x):
        out = _jy64(xp, xp.where(x > 0, x, 1.0), nu, True)
        out = xp.where(x == 0, -math.inf, out)
        return xp.where((x < 0) | xp.isnan(x), math.nan, out)
    return kernel


# --------------------------------------------------------------------------- I and K

_K_SERIES_BELOW = 2.0


def _k_scaled64(xp, x, nu):
    """e^x K_nu(x) for x > 0 (nu = 0, 1)."""
    return split(xp, x <= _K_SERIES_BELOW, x, lambda xs: _k_series(xp, xs, nu),
                 lambda xl: _k_integral(xp, xl, nu) * xp.sqrt(math.pi / (2 * xl)))


def _k_series(xp, xs, nu):
    plain, weighted = _series(xp, xs, nu, 1.0, True)
    log_half = xp.log(xs / 2) + _EULER_GAMMA
    if nu == 0:  # K0 = -(log(x/2) + gamma) I0 + sum H_k t^k / k!^2
        small = -log_half * plain + weighted / 2
    else:  # K1 = 1/x + (log(x/2) + gamma) I1 - x/4 sum (H_k + H_{k+1}) t^k / (k! (k+1)!)
        small = 1 / xs + log_half * plain - weighted / 2
    return small * xp.exp(xs)


def _k_kernel(nu, scaled):
    def kernel(xp, x):
        out = _k_scaled64(xp, xp.where(x > 0, x, 1.0), nu)
        if not scaled:
            out = out * xp.exp(-xp.where(x > 0, x, 1.0))
        out = xp.where(x == 0, math.inf, xp.where(x == math.inf, 0.0, out))
        return xp.where((x < 0) | xp.isnan(x), math.nan, out)
    return kernel


# --------------------------------------------------------------------------- spherical, Airy


def _spherical_j0_64(xp, x):
    safe = xp.where(x == 0, 1.0, x)
    out = xp.where(x == 0, 1.0, xp.sin(safe) / safe)
    return xp.where(xp.isinf(x), 0.0, out)


# Ai(0) and -Ai'(0) (DLMF 9.2.3, 9.2.4)
_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))
_AIP0 = 1 / (3 ** (1 / 3) * math.gamma(1 / 3))
# the trapezoidal rule for int_0^inf e^{-u} u^(-1/6) g(u) du with u = s^6: 6 int_0^inf
# s^4 e^{-s^6} g(s^6) ds (even in s); the singularity of g nearest the real line is at
# |s| = (2 zeta)^(1/6), 0.27 from it at zeta = 2/3 (x = 1): h = 1/32 to s = 1.9 (e^{-47})
def _airy_nodes(h, count):
    """The trapezoidal rule's nodes s and weights (the node at 0 has weight 0: left out)."""
    s = tuple(j * h for j in range(1, count))
    return s, tuple(6 * h * v ** 4 * math.exp(-v ** 6) for v in s)


_A64 = _airy_nodes(1 / 32, 62)
# float32 inputs: h = 1/10 to s = 1.6 (e^{-16.8}), 16 nodes for 62, and 6 terms of the
# series for 20; measured against the float64 rule on x in [1, 40]: relative error 1.3e-10
# for Ai(x), 7.7e-9 of the envelope for Ai(-x) (3.3e-7 with its terms summed in float32,
# below), the series 2.1e-11; PyTorch's float32 Ai is off by 5.8e-5. 1M elements on (0.5,
# 4.5): 3.4x -> 1.06x PyTorch's time; on (-5, 5): 9.5x -> 1.5x.
_A32 = _airy_nodes(1 / 10, 17)
_AIRY_SERIES_BELOW = 1.0


def _airy_kernel(nodes, terms, dtype):
    def kernel(xp, x):
        out = split(xp, xp.abs(x) <= _AIRY_SERIES_BELOW, x,
                    lambda xs: _airy_series(xp, xs, terms),
                    lambda xl: split(xp, xl > 0, xl, lambda xp_: _airy_positive(xp, xp_, nodes),
                                     lambda xn: _airy_negative(xp, -xn, nodes, dtype)))
        return xp.where(xp.isinf(x), math.nan, out)
    return kernel


def _airy_series(xp, x, terms):
    """Maclaurin: Ai = Ai(0) f - (-Ai'(0)) g, f = sum x^3k / ((2·3)(5·6)...), g = x sum ..."""
    cube = x * x * x
    f_term, g_term = xp.ones_like(x), x * 1.0
    f, g = f_term, g_term
    for k in range(1, terms):
        f_term = f_term * cube / ((3 * k) * (3 * k - 1))
        g_term = g_term * cube / ((3 * k + 1) * (3 * k))
        f, g = f + f_term, g + g_term
    return _AI0 * f - _AIP0 * g


_G56 = math.gamma(5 / 6)


def _airy_positive(xp, z, nodes):
    """Ai(z), z > 1: sqrt(z/3)/pi sqrt(pi/(2 zeta)) e^-zeta / Gamma(5/6) int e^-u u^(-1/6)
    (1 + u/(2 zeta))^(-1/6) du."""
    zeta = 2 / 3 * z * xp.sqrt(z)
    k_int = xp.zeros_like(z)
    for s, w in zip(*nodes):
        k_int = k_int + w * (1 + s ** 6 / (2 * zeta)) ** (-1 / 6)
    return xp.sqrt(z / 3) / math.pi * xp.sqrt(math.pi / (2 * zeta)) * xp.exp(-zeta) \
        * k_int / _G56


def _airy_negative(xp, z, nodes, dtype):
    """Ai(-z), z > 1: sqrt(z/3) sqrt(2/(pi zeta)) / Gamma(5/6) Re(e^{i(zeta - pi/4)} int e^-u
    u^(-1/6) (1 + i u/(2 zeta))^(-1/6) du), the nodes' terms summed in ``dtype``."""
    zeta = 2 / 3 * z * xp.sqrt(z)
    # (float32 inputs sum the nodes' terms in float32, as PyTorch computes Ai: their four
    # transcendental functions are 3x faster there; 3.3e-7 of the envelope against float64)
    half = (0.5 / zeta).astype(dtype)
    re, im = xp.zeros_like(half), xp.zeros_like(half)
    for s, w in zip(*nodes):
        c = half * dtype(s ** 6)
        r = (c * c + dtype(1)) ** dtype(-1 / 12)
        r *= dtype(w)
        phi = xp.arctan(c)
        phi *= dtype(1 / 6)
        re += r * xp.cos(phi)
        im -= r * xp.sin(phi)
    re, im = re.astype(z.dtype), im.astype(z.dtype)
    c, s = xp.cos(zeta), xp.sin(zeta)
    cw, sw = (c + s) * math.sqrt(0.5), (s - c) * math.sqrt(0.5)  # of zeta - pi/4
    return xp.sqrt(z / 3) * xp.sqrt(2 / (math.pi * zeta)) / _G56 * (re * cw - im * sw)


# --------------------------------------------------------------------------- the ops


# the functions whose argument PyTorch calls ``x`` (the others: ``input``)
_ARGUMENT_X = {"airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
               "spherical_bessel_j0"}


def _declare(name, raw):
    op = defop("special_" + name, promote="float", batch="pointwise", method=False)(
        lambda xp, input: raw(xp, input))

    def public(input):
        if not isinstance(input, Tensor):
            _operands._check_tensor("special_" + name, input,
                                    "x" if name in _ARGUMENT_X else "input")
        refuse_half(name + "_cpu", input)
        return op(input)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = f"The function ``{name}`` of DLMF (no derivative, as in PyTorch)."
    return public


# (each on L2-sized blocks, in float64: ``special_kernels.in_blocks``)
FUNCTIONS = {name: _declare(name, in_blocks(kernel, narrow)) for name, kernel, narrow in (
    ("bessel_j0", _j0_64, j32(0)), ("bessel_j1", _j1_64, j32(1)),
    ("bessel_y0", _y64(0), y32(0)), ("bessel_y1", _y64(1), y32(1)),
    ("modified_bessel_k0", _k_kernel(0, False), k32(0, False)),
    ("modified_bessel_k1", _k_kernel(1, False), k32(1, False)),
    ("scaled_modified_bessel_k0", _k_kernel(0, True), k32(0, True)),
    ("scaled_modified_bessel_k1", _k_kernel(1, True), k32(1, True)),
    ("spherical_bessel_j0", _spherical_j0_64, spherical_j0_32))}
FUNCTIONS["airy_ai"] = _declare("airy_ai", in_blocks(
    _airy_kernel(_A64, 20, np.float64), _airy_kernel(_A32, 6, np.float32)))
FUNCTIONS.update({"modified_bessel_i0": _declare("modified_bessel_i0", bessel_i(0, False)),
                  "modified_bessel_i1": _declare("modified_bessel_i1", bessel_i(1, False))})
