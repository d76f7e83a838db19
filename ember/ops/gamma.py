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
from .unary import _unary

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
    x, x64 = _float64(xp, x)
    return _back(x, _digamma64(xp, x64))


# --------------------------------------------------------------------------- polygamma

# Euler-Maclaurin tail of the Hurwitz zeta: B_2j / (2j)!
_EM = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000,
       1 / 74724249600, -3617 / 10670622842880000, 43867 / 5109094217170944000,
       -174611 / 802857662698291200000, 77683 / 14631321524098560000000,
       -236364091 / 1561572651638476800000000)


def _hurwitz_zeta64(xp, s, q):
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2 and float64 ``q`` (inf at the
    non-positive integers)."""
    a = q
    total = xp.zeros_like(q)
    pole = (q <= 0) & (q == xp.floor(q))
    a = xp.where(pole, 10.0, a)
    while True:  # the direct sum while a <= 9 (any q, negative ones included)
        small = a <= 9
        if not bool(small.any()):
            break
        total = total + xp.where(small, a ** (-s), 0.0)
        a = xp.where(small, a + 1, a)
    finite = xp.isfinite(a)
    b = xp.where(finite, a, 10.0)
    tail = b ** (1 - s) / (s - 1) + 0.5 * b ** (-s)
    rising, power = float(s), b ** (-s - 1)  # s (s+1)...(s+2j-2) and b^(-s-2j+1)
    for j, c in enumerate(_EM):
        tail = tail + c * rising * power
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2)
        power = power / (b * b)
    out = total + xp.where(finite, tail, 0.0)
    out = xp.where(pole, xp.inf, out)
    return xp.where(xp.isnan(q) | (q == xp.inf), xp.nan, out)  # NaN at +inf, as PyTorch


def _trigamma64(xp, x):
    low = x < 0.5
    y = xp.where(low, 1 - x, x)
    out = _hurwitz_zeta64(xp, 2, y)
    reflect = (math.pi * math.pi) / xp.sin(math.pi * x) ** 2
    return xp.where(x == xp.inf, 0.0, xp.where(low, reflect - out, out))


def _polygamma_raw(xp, n, x):
    x, x64 = _float64(xp, x)
    if n == 0:
        out = _digamma64(xp, x64)
    elif n == 1:
        out = _trigamma64(xp, x64)
    else:
        out = (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta64(xp, n + 1, x64)
    return _back(x, out)


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
