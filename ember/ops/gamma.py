"""The gamma-function family: ``lgamma``, ``digamma``, ``polygamma`` and ``mvlgamma``, with
derivatives (each the next function of the family: lgamma' = digamma, digamma' =
polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .)), so derivatives of any order exist.

NumPy has none of them. Here:

- ``lgamma``: the C library's ``lgamma`` (Python's ``math.lgamma``), element by element, as
  PyTorch's CPU kernel calls it; poles (0, -1, -2, ...) and infinities give ``inf``.
- ``digamma``: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
  series; below 0 the reflection psi(x) = psi(1 - x) - pi / tan(pi x). PyTorch's values at
  the poles: -inf at +0, +inf at -0, NaN at negative integers and at -inf.
- ``polygamma(n, x)``, n >= 1: (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta summed
  directly until x + k > 9 and finished by the Euler-Maclaurin formula (12 Bernoulli
  terms). For ``n = 1`` below 0.5 it first reflects, psi1(x) = pi^2 / sin^2(pi x) -
  psi1(1 - x), as PyTorch does (so its huge finite values next to the negative poles agree
  too); at +inf PyTorch gives 0 for n = 1 and NaN for n >= 2, and so does this. PyTorch's
  own trigamma is accurate to about 5e-10 only; these are accurate to a few ulp.
- ``mvlgamma(x, p)``: the multivariate log-gamma, sum_i lgamma(x - i/2) + p(p-1)/4 log(pi).

All compute in float64 and round to the input's floating dtype; integer and bool inputs give
the default float dtype. The raw functions are registered as namespace extras (like ``erf``),
so derivative rules call ``xp.digamma`` and ``xp.polygamma`` on arrays and Tensors alike.

Each function is ``ember.<name>``, a Tensor method (``polygamma``'s takes ``n`` second) and has
an in-place form, as its declaration says (``_unary``'s, ``@op.public``: ``_surface.py``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _xp
from .._out import write_out
from .._tensor import Tensor
from . import pointwise as _pw
from .registry import defop
from .unary import _blockwise, _horner, _narrow, _unary

_LOG_PI = math.log(math.pi)


def _float64(xp, x):
    x = xp.asarray(x)
    return x, x.astype(xp.float64)


def _back(x, out):
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64)


# --------------------------------------------------------------------------- lgamma


def _lgamma1(v):
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # poles, and values past the float64 range
        return math.inf


_lgamma_each = np.frompyfunc(_lgamma1, 1, 1)


def _lgamma_raw(xp, x):
    x = xp.asarray(x)
    if _narrow(x):
        return _lgamma_narrow(xp, x.reshape(-1)).reshape(x.shape)
    x, x64 = _float64(xp, x)
    host = x64 if xp is np or getattr(xp, "name", "") == "numpy" else xp.asnumpy(x64)
    out = np.asarray(_lgamma_each(host), dtype=np.float64)
    return _back(x, out if host is x64 else xp.asarray(out))


# --------------------------------------------------------------------------- digamma

# Asymptotic psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k), coefficients B_2k / 2k
_PSI_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma64(xp, x):
    neg = x < 0
    y = xp.where(neg, 1 - x, x)  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
    y = xp.where(y == 0, 1.0, y)  # (zeros: set below)
    acc = xp.zeros_like(y)
    for _ in range(10):  # psi(y) = psi(y + 1) - 1/y until y >= 10
        small = y < 10
        acc = acc - xp.where(small, 1 / y, 0.0)
        y = xp.where(small, y + 1, y)
    z = 1 / (y * y)
    poly = xp.zeros_like(y)
    for c in reversed(_PSI_SERIES):
        poly = (poly + c) * z
    out = acc + xp.log(y) - 0.5 / y - poly
    out = xp.where(y == xp.inf, xp.inf, out)
    out = xp.where(neg, out - math.pi / xp.tan(math.pi * x), out)
    out = xp.where(neg & (x == xp.floor(x)), xp.nan, out)  # negative integers, -inf
    return xp.where(x == 0, xp.where(xp.signbit(x), xp.inf, -xp.inf), out)


def _digamma_raw(xp, x):
    x = xp.asarray(x)
    if _narrow(x):  # (1-d: the in-place steps need arrays, NumPy makes 0-d results scalars)
        return _digamma_narrow(xp, x.reshape(-1)).reshape(x.shape)
    x, x64 = _float64(xp, x)
    return _back(x, _digamma64(xp, x64))


# --------------------------------------------------------------------------- polygamma

# Euler-Maclaurin tail of the Hurwitz zeta: B_2j / (2j)!
_EM = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
       1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000,
       -174611 / 802857662698291200000, 854513 / (138 * 1124000727777607680000),
       -236364091 / (2730 * 620448401733239439360000))  # (B_22 = 854513/138, B_24 = ...)


def _hurwitz_zeta64(xp, s, q, tol=0.0, fast_pow=False):
    """zeta(s, q) = sum_k (q + k)^-s for float64 ``q`` and an integer s >= 2 or a float64
    array ``s > 1`` beside ``q`` (``special.zeta``); inf at the non-positive integers q.

    Summed directly while q + k <= 9 (for a large s up to q + k > s, at most 64: Euler-
    Maclaurin's terms shrink like (s / (2 pi (q + k)))^2j), then Euler-Maclaurin's tail; each
    element leaves the loop when it is done (the rest are summed on alone). With ``tol``, an
    element also leaves once the rest of its sum, below (q + k)^(1-s) / (s - 1), is under
    ``tol`` of it (a large s: after a term or two; ``special.zeta``). ``fast_pow``: the terms
    as exp(-s log(q + k)) where every q > 0 (2.5x faster than ``power``, ~1e-14 relative: for
    float32 results)."""
    shape = q.shape
    q = q.reshape(-1)
    scalar_s = isinstance(s, int)
    s = s if scalar_s else xp.broadcast_to(s, shape).reshape(-1)
    out = xp.full(q.shape, xp.inf)
    pole = (q <= 0) & (q == xp.floor(q))
    out[xp.isnan(q) | (q == xp.inf)] = xp.nan  # (NaN at +inf, as PyTorch)
    at = xp.flatnonzero(~pole & xp.isfinite(q))
    a, total = q[at], xp.zeros(at.shape)
    # (a negative q's sum cancels, -0.5^-15 against 0.5^-15: its terms need power's precision)
    fast_pow = fast_pow and bool((a > 0).all())
    if not scalar_s:
        s = s[at]
    limit = 9 if scalar_s else xp.maximum(9.0, xp.minimum(s, 64.0))
    stop = tol * (s - 1) if tol else None  # (per element, or one number)
    checks = 0
    while at.size:
        # steps between the checks (a check costs about two steps): one at first, when a
        # large s may end the sum, then four (summing a few terms past the limit is exact)
        for _ in range(1 if checks < 2 else 4):
            if fast_pow:
                term = xp.log(a)
                term *= -s
                xp.exp(term, out=term)
            else:
                term = a ** (-s)
            total += term
            a += 1
        checks += 1
        over = a > limit  # the direct sum is done: Euler-Maclaurin's tail
        done = over
        if tol:  # or the rest, below (a - 1) term / (s - 1), is below tol of the sum
            done = over | ((a > 1) & (term * (a - 1) <= stop * xp.abs(total)))
        if bool(done.any()):
            tail = xp.zeros(total.shape)
            if bool(over.any()):
                tail[over] = _zeta_tail(xp, s if scalar_s else s[over], a[over], tol)
            out[at[done]] = total[done] + tail[done]
            keep = ~done
            at, a, total = at[keep], a[keep], total[keep]
            if not scalar_s:
                s, limit = s[keep], limit[keep]
                stop = stop[keep] if tol else None
    return out.reshape(shape)


def _zeta_tail(xp, s, b, tol):
    """sum_k (b + k)^-s by Euler-Maclaurin (b > 9, and b > s up to s = 64), its terms down
    to ``tol`` of the sum (all 12 for 0)."""
    power = b ** (-s)  # b^-s; then b^(-s-2j+1)
    tail = power * b / (s - 1) + 0.5 * power
    power = power / b
    rising = s * 1.0  # s (s+1)...(s+2j-2)
    for j, c in enumerate(_EM):
        term = c * rising * power
        tail = tail + term
        if tol and not bool((xp.abs(term) > tol * tail).any()):
            break
        rising = rising * ((s + 2 * j + 1) * (s + 2 * j + 2))
        power = power / (b * b)
    return tail


def _trigamma64(xp, x):
    low = x < 0.5
    y = xp.where(low, 1 - x, x)
    out = _hurwitz_zeta64(xp, 2, y)
    reflect = (math.pi * math.pi) / xp.sin(math.pi * x) ** 2
    return xp.where(x == xp.inf, 0.0, xp.where(low, reflect - out, out))


def _polygamma_raw(xp, n, x):
    x = xp.asarray(x)
    if n <= 1 and _narrow(x):
        kernel = _trigamma_narrow if n else _digamma_narrow
        return kernel(xp, x.reshape(-1)).reshape(x.shape)
    x, x64 = _float64(xp, x)
    if n == 0:
        out = _digamma64(xp, x64)
    elif n == 1:
        out = _trigamma64(xp, x64)
    else:
        out = (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta64(xp, n + 1, x64)
    return _back(x, out)


# ------------------------------------------------------------------ float32: branch-free
# The float64 kernels above take ``where`` over the whole array once per recurrence step (and
# lgamma calls the C library per element): 5-10x PyTorch at 1M float32 elements. For float32
# (and narrower) inputs each function is one branch-free formula instead, in float64 on L2-
# sized blocks (``_blockwise``), rounded once:
#   y = x, or 1 - x where x < 0.5 (reflection);  z = y + 8 >= 8.5;
#   the function at z by its asymptotic (Stirling) series, 8 terms (error < 1e-15 for
#   z >= 8.5), brought down to y by the recurrence over y, y + 1, ..., y + 7;
#   the reflection formula's term added where x < 0.5, computed on those elements only
#   (gathered by index: a ``where`` on a random mask costs 10x a multiply); the poles and
#   infinities set afterwards (rare elements: ``copyto`` with a mask).
# Float32's largest value shifted by 8 and multiplied 8 times stays below float64's largest.
_SHIFT = 8
# Coefficients in w = 1/z² (B_2k the Bernoulli numbers): lgamma's B_2k / (2k (2k - 1)),
# digamma's B_2k / 2k, trigamma's B_2k.
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_LGAMMA_W = tuple(b / (2 * k * (2 * k - 1)) for k, b in enumerate(_B2K, 1))
_DIGAMMA_W = tuple(b / (2 * k) for k, b in enumerate(_B2K, 1))
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _reflect(xp, x):
    """``(v, y, at, f)``: ``v`` = x in float64, ``at`` the flat indices where x < 0.5, ``y``
    = 1 - x there (else x), ``f`` = x - rint(x) there (exact; sin(pi x) = ±sin(pi f)). The
    reflection formulas' terms are computed at ``at`` only: a gather and a scatter cost less
    than the ~30 passes of sin(pi f) and its logarithm over a whole block (lgamma on
    (0.2, 6): 30% faster), and give the same bits as the terms times a 0/1 factor did."""
    v = x.astype(xp.float64)
    flat = v.reshape(-1)
    at = xp.flatnonzero(flat < 0.5)
    y = v.copy()
    below = flat[at]
    y.reshape(-1)[at] = 1 - below
    f = below - xp.rint(below)
    return v, y, at, f


# sin(pi f) = pi f (1 - (pi f)² / 3! + ...) for |f| <= 1/2: the Taylor series to (pi f)^21
# (error below 3e-16 there). NumPy's float64 ``sin`` calls the C library per element, ~75 ns
# each: 30x these 22 multiply-adds.
_SIN_TAYLOR = tuple((-1) ** k * math.pi ** (2 * k + 1) / math.factorial(2 * k + 1)
                    for k in range(11))


def _sin_pi(xp, f):
    """sin(pi f) for float64 |f| <= 1/2, as f P(f²)."""
    out = _horner(xp, f * f, _SIN_TAYLOR)
    out *= f
    return out


# NumPy's float64 division costs ~11 multiplications here: the recurrences' sums of 1/(y + k)
# are accumulated as one fraction each (multiplications), divided once.
def _shifted(xp, y):
    """``(z, 1 / z, product)``: z = y + 8 and y (y + 1) ... (y + 7)."""
    prod = _paired_product(xp, y)
    z = y + _SHIFT
    return z, 1 / z, prod


def _sum_of_inverses(xp, y, power, start, stop):
    """sum 1 / (y + k)^power over start <= k < stop, as one fraction N / D (all terms are
    positive: no cancellation)."""
    den = y + start
    if power == 2:
        den *= den
    num = xp.ones_like(y)
    for k in range(start + 1, stop):
        c = y + k
        if power == 2:
            c *= c
        num *= c
        num += den
        den *= c
    num /= den
    return num


# sum_{k=0}^{7} 1 / (y + k), its terms paired: 1 / (y + k) + 1 / (y + 7 - k) = (2y + 7) /
# (P + k (7 - k)) with P = y (y + 7), so the sum is (2y + 7) D'(P) / D(P) for D(P) = P (P + 6)
# (P + 10) (P + 12) = P^4 + 28 P^3 + 252 P^2 + 720 P: 16 passes, not the 30 of adding the
# eight fractions (every coefficient positive and P > 0 for y >= 0.5: no cancellation; D is
# about y^8, below float64's largest for float32's largest y).
_D_PRIME = (720.0, 504.0, 84.0, 4.0)


def _paired_product(xp, y, p=None):
    """y (y + 1) ... (y + 7) as D(P) (see below), 9 passes, not 15."""
    if p is None:
        p = y + 7
        p *= y
    den = p + 28
    for c in (252.0, 720.0):
        den *= p
        den += c
    den *= p
    return den


def _eight_inverses(xp, y):
    p = y + 7
    p *= y
    num = _horner(xp, p, _D_PRIME)
    num /= _paired_product(xp, y, p)
    p = y + y
    p += 7
    num *= p
    return num


def _poles(xp, x, out, at_pole, at_inf, at_neginf):
    """``out`` with its values at the poles (0, -1, -2, ...: ``at_pole(x there)``) and at
    ``inf`` and ``-inf``, as PyTorch gives them."""
    if x.size == 0 or (x.min() > 0 and x.max() < xp.inf):  # (no pole, inf or NaN: skip)
        return out
    pole = (x <= 0) & (x == xp.floor(x))  # (-inf included)
    if pole.any():
        out[pole] = at_pole(x[pole])
    xp.copyto(out, at_inf, where=x == xp.inf)
    xp.copyto(out, at_neginf, where=x == -xp.inf)
    return out


@_blockwise
def _lgamma_narrow(xp, x):
    v, y, at, f = _reflect(xp, x)
    z, iz, prod = _shifted(xp, y)
    out = _horner(xp, iz * iz, _LGAMMA_W)
    out *= iz
    out += _HALF_LOG_2PI
    out -= z
    out += (z - 0.5) * xp.log(z)
    out -= xp.log(prod)  # lgamma(y)
    # where x < 0.5: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    if at.size:
        below = out.reshape(-1)[at]
        s = xp.abs(_sin_pi(xp, f))
        xp.log(s, out=s)
        s += below
        s += below
        xp.subtract(_LOG_PI, s, out=s)  # log(pi) - log|sin(pi x)| - 2 lgamma(y)
        below += s
        out.reshape(-1)[at] = below
    out = _poles(xp, v, out, lambda p: xp.inf, xp.inf, xp.inf)
    xp.copyto(out, 0.0, where=(v == 1) | (v == 2))  # exact zeros (the sums leave ~1e-15)
    return out.astype(x.dtype)


@_blockwise
def _digamma_narrow(xp, x):
    v, y, at, f = _reflect(xp, x)
    z = y + _SHIFT
    iz = 1 / z
    w = iz * iz
    out = _horner(xp, w, _DIGAMMA_W)
    out *= -w
    iz *= 0.5
    out -= iz
    out += xp.log(z)
    out -= _eight_inverses(xp, y)  # psi(y) = psi(y + 8) - sum 1 / (y + k)
    # where x < 0.5: psi(x) = psi(1 - x) - pi / tan(pi x)
    if at.size:
        t = xp.tan(math.pi * f)
        xp.divide(-math.pi, t, out=t)
        t += out.reshape(-1)[at]
        out.reshape(-1)[at] = t
    # -inf at +0, inf at -0, NaN at the negative integers
    out = _poles(xp, v, out, lambda p: xp.where(xp.signbit(p), xp.inf, -xp.inf)
                 * xp.where(p == 0, 1.0, xp.nan), xp.inf, xp.nan)
    return out.astype(x.dtype)


@_blockwise
def _trigamma_narrow(xp, x):
    v, y, at, f = _reflect(xp, x)
    iz = 1 / (y + _SHIFT)
    w = iz * iz
    out = _horner(xp, w, _B2K)
    out *= w
    out += 1
    out *= iz
    out += 0.5 * w
    # psi1(y) = psi1(y + 8) + sum 1 / (y + k)^2, in two fractions of four terms (one of eight
    # would overflow float64 for float32's largest y)
    out += _sum_of_inverses(xp, y, 2, 0, _SHIFT // 2)
    out += _sum_of_inverses(xp, y, 2, _SHIFT // 2, _SHIFT)
    # where x < 0.5: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
    if at.size:
        below = out.reshape(-1)[at]
        s = _sin_pi(xp, f)
        s *= s
        xp.divide(math.pi ** 2, s, out=s)
        s -= 2 * below
        below += s
        out.reshape(-1)[at] = below
    out = _poles(xp, v, out, lambda p: xp.inf, 0.0, xp.nan)
    return out.astype(x.dtype)


# --------------------------------------------------------------------------- the ops

lgamma = _unary("lgamma", lambda xp, input: xp.lgamma(input),
                lambda xp, g, ans, input: g * xp.digamma(input),
                doc="``log |gamma(input)|``.")
digamma = _unary("digamma", lambda xp, input: xp.digamma(input),
                 lambda xp, g, ans, input: g * xp.polygamma(1, input),
                 doc="The logarithmic derivative of the gamma function, ``psi``.")


def _polygamma_method(self, n):
    return polygamma(n, self)


@defop("polygamma", n_in=1, promote="float", jvp="elementwise", batch="pointwise",
       method=_polygamma_method, inplace=True)  # (the method takes ``n`` second)
def _polygamma(xp, input, n):
    return xp.polygamma(n, input)


_polygamma.defvjp(lambda xp, g, ans, input, n: g * xp.polygamma(n + 1, input))


@_polygamma.public
def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of ``digamma``: ``polygamma(0, x)`` is ``digamma(x)``."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if not isinstance(input, Tensor):
        _pw._check_tensor("polygamma", input, position=2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    result = _polygamma(input, n)
    return result if out is None else write_out("polygamma", out, result)


@defop("mvlgamma", n_in=1, promote="float", jvp="elementwise", batch="pointwise",
       inplace=True)
def _mvlgamma(xp, input, p):
    out = sum(xp.lgamma(input - i / 2) for i in range(p))
    return out + p * (p - 1) / 4 * _LOG_PI


_mvlgamma.defvjp(lambda xp, g, ans, input, p: g * sum(xp.digamma(input - i / 2)
                                                      for i in range(p)))


@_mvlgamma.public
def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension ``p``:
    ``sum(lgamma(input - i / 2) for i < p) + p (p - 1) / 4 * log(pi)``."""
    if not isinstance(input, Tensor):
        _pw._check_tensor("mvlgamma", input)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    result = _mvlgamma(input, p)
    return result if out is None else write_out("mvlgamma", out, result)


# --------------------------------------------------------------------------- namespace extras
_xp.register_extra("lgamma", _lgamma_raw, lgamma)
_xp.register_extra("digamma", _digamma_raw, digamma)
_xp.register_extra("polygamma", _polygamma_raw, polygamma)
