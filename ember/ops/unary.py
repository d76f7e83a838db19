"""Elementwise functions of one tensor, with derivatives: roots, exponentials and logarithms,
trigonometric and hyperbolic functions, the error-function family, rounding, and
floating-point classification.

Most ops are one ``_unary`` line: the forward on raw arrays and the rule of its one input (see
``registry.py``). As in PyTorch, the transcendental functions turn integer and bool inputs
into the default float dtype, and the rounding functions return integers unchanged.

NumPy has no error function, so ``erf``, ``erfc`` and ``erfinv`` are computed here (W. J.
Cody's rational approximations, then Halley's iteration for the inverse) and registered as
namespace extras: derivative rules anywhere may call ``xp.erf`` on arrays and Tensors alike.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes, _recording, _xp
from .._tensor import Tensor
from . import pointwise as _pw
from ._blocks import _BLOCK, _blockwise  # noqa: F401 - (_BLOCK: the tests size by it)
from ._select import _select, _zero_where
from .registry import defop, public

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_SQRT_PI = math.sqrt(math.pi)
_TWO_OVER_SQRT_PI = 2 / _SQRT_PI

# --------------------------------------------------------------------------- error function
# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969), with the coefficients of Netlib's CALERF: erf(x) = x R(x²) for |x| <= 0.46875;
# erfc(y) exp(y²) = R(y) on (0.46875, 4]; and (1/sqrt(pi) - R(1/y²)/y²) / y beyond.
_ERF_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
          3.20937758913846947e03, 1.85777706184603153e-1)
_ERF_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
          2.84423683343917062e03)
_ERF_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
          2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
          2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8)
_ERF_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03)
_ERF_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
          1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2)
_ERF_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3)
_ERF_SMALL = 0.46875  # below: the erf series; above: erfc
_ERFC_ZERO = 27.3     # erfc is below half the least float64 beyond this: 0


def _erf_small(xp, x):
    """erf(x) for |x| <= 0.46875."""
    z = x * x
    num, den = _ERF_A[4] * z, z
    for a, b in zip(_ERF_A[:3], _ERF_B[:3]):
        num, den = (num + a) * z, (den + b) * z
    return x * (num + _ERF_A[3]) / (den + _ERF_B[3])


def _erfcx_positive(xp, y):
    """erfc(y) exp(y²) for y = |x| > 0.46875 (0 at inf, NaN at NaN): ``special.erfcx``."""
    num, den = _ERF_C[8] * y, y
    for c, d in zip(_ERF_C[:7], _ERF_D[:7]):
        num, den = (num + c) * y, (den + d) * y
    middle = (num + _ERF_C[7]) / (den + _ERF_D[7])
    w = 1 / (y * y)
    num, den = _ERF_P[5] * w, w
    for p, q in zip(_ERF_P[:4], _ERF_Q[:4]):
        num, den = (num + p) * w, (den + q) * w
    far = (1 / _SQRT_PI - w * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / y
    return xp.where(y <= 4, middle, far)


def _erfc_positive(xp, y):
    """erfc(y) for y = |x| > 0.46875 (infinities and NaN included)."""
    scaled = _erfcx_positive(xp, y)  # erfc(y) * exp(y²)
    # exp(-y²) as exp(-t²) exp(-(y - t)(y + t)), t = y cut to sixteenths: t² is exact, so the
    # large exponent carries no rounding error.
    t = xp.trunc(y * 16) / 16
    out = xp.exp(-t * t) * xp.exp(-(y - t) * (y + t)) * scaled
    return xp.where(y > _ERFC_ZERO, 0.0, out)  # also where y is inf (and out NaN)


def _erf64(xp, x):
    y = xp.abs(x)
    return xp.where(y <= _ERF_SMALL, _erf_small(xp, x),
                    xp.copysign(1 - _erfc_positive(xp, y), x))


def _erfc64(xp, x):
    y = xp.abs(x)
    tail = _erfc_positive(xp, y)
    return xp.where(y <= _ERF_SMALL, 1 - _erf_small(xp, x), xp.where(x < 0, 2 - tail, tail))


def _erfinv64(xp, y):
    # From the rational start (5.9e-8 relative, below), one Halley step on erf(x) = |y|
    # reaches full precision (cubic convergence). Past 0.5 the residual is (1 - a) - erfc(x):
    # 1 - a is exact there, and erfc keeps the relative precision that erf loses near 1.
    a = xp.abs(y)
    x = xp.abs(_erfinv_start(xp, y))
    f = xp.where(a <= 0.5, _erf64(xp, x) - a, (1 - a) - _erfc64(xp, x))
    u = f / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
    x = x - u / (1 + x * u)
    return _erfinv_ends(xp, y, xp.copysign(x, y))


def _in_float64(kernel):
    """A raw function running the float64 ``kernel`` and returning the input's float dtype."""
    def raw(xp, x):
        x = xp.asarray(x)
        dtype = x.dtype if x.dtype.kind == "f" else xp.float64
        return kernel(xp, x.astype(xp.float64)).astype(dtype)
    raw.__name__ = kernel.__name__[:-2]
    return raw


# ------------------------------------------------------------- error functions for float32
# Cody's branches, each evaluated over the whole array and selected by ``where``, cost 20-100x
# PyTorch's float32 kernels at 1M elements; selecting per element is no cheaper (a boolean-mask
# gather or a ``where`` over a random mask takes 10-20 ms on 1M floats). Inputs of float32 and
# narrower therefore get one branch-free rational over the whole range instead, evaluated in
# float64 (float32 arithmetic would add ~6 ulp of rounding error; these stay within 1 ulp of
# the exact value) and rounded once; float64 inputs keep Cody's full-precision branches.
# The coefficients are minimax-style fits of our own (relative error on Chebyshev nodes
# against mpmath; tests/ops/test_ops_special_float32.py checks the results against math).
# erf(x) / x = P(x²) / Q(x²) for |x| <= 4 (relative error 2.1e-9); erf(±4) rounds to ±1 in
# float32, so inputs are clipped to [-4, 4].
_ERF32_P = (1.1283791693709382, 0.18520410951450383, 0.054316903487058671,
            0.0038496317388473002, 0.00037960399619717527, 4.6846248271581364e-06,
            -1.3201497583990482e-08)
_ERF32_Q = (1, 0.49746628229629758, 0.11395867184411575, 0.015462113224433605,
            0.0013075674814309742, 6.3109143299866949e-05)
# erfc(y) exp(y²) = P(y) / Q(y) for 0 <= y <= 10.5 (relative error 3.2e-9); erfc(10.5) is
# below float32's least subnormal, so y is clipped there.
_ERFCX32_P = (1.000000003117262, 1.1611950370642952, 0.64356951248502969, 0.18141072997654387,
              0.01954560540953449, -0.0014500429840887572)
_ERFCX32_Q = (1, 2.2895745320857905, 2.2270721684750705, 1.1571077116094384,
              0.32033649040736889, 0.034639657182995082, -0.0025700451171131156)
# erfinv(y) / y = P(s) / Q(s), s = sqrt(-log(1 - y²)): for float32, s <= 4.1 (every float32
# y below 1), relative error 1.6e-9; for float64's Halley start (below), s <= 6.1 (every
# float64 y below 1), relative error 5.9e-8, which one step takes to full precision.
_ERFINV32_P = (0.88622692680023252, -0.85837247382764892, 1.165545038096178,
               -0.71407947399918004, 0.43372556983712213, -0.16543723581296443,
               0.058908300771753921, -0.012092207837744642, 0.0020793029519557311)
_ERFINV32_Q = (1, -0.96856939392133001, 1.0533717936647837, -0.55212627890808008,
               0.2003143302420663, -0.028603808575606564, 0.0011084070659694823,
               0.00097681384976106272, 4.0321442554559048e-05)
_ERFINV64_P = (0.88622687402750233, -0.70976492365145349, 0.55955185180862099,
               -0.24866259923894909, 0.10317161007322043, -0.025379643116447081,
               0.0051563046679623204, -0.00018375237087286567)
_ERFINV64_Q = (1, -0.80088591951935173, 0.36959224807304353, -0.070840217919329776,
               0.0061334609668905532, 0.0016737532599457243, 3.4915052852555449e-05,
               -6.0015214090246801e-06)
# Central ranges, where most data lies: rationals of lower degree (fits of our own, as above;
# Q monic), 17 to 25 float64 passes fewer than the whole range's on a block, and ``_central``
# redoes the elements beyond with the rationals above. erf(x) / x = P(x²) / Q(x²) for |x| <=
# 2 (relative error 6.7e-10); erfc(y) exp(y²) = P(y) / Q(y) for 0 <= y <= 2.5 (1.4e-9);
# erfinv(y) / y = P(y²) / Q(y²) for |y| <= 0.9 (3.4e-10).
_ERF_MID, _ERFC_MID, _ERFINV_MID = 2.0, 2.5, 0.9
_ERF_MID_P = (1355.7058322338657, 260.72820505366536, 59.778401752496826, 4.594099241955059,
              0.10151352553250938)
_ERF_MID_Q = (1201.463012328715, 631.5519829884903, 143.34863467714243, 17.304068732703076, 1)
_ERFCX_MID_P = (10.789424412713453, 8.737173163592857, 3.5520614116492593, 0.55908528780708,
                0.0002990950049663951)
_ERFCX_MID_Q = (10.789424427298723, 20.911733186960003, 16.35903425930233, 6.22266898056213, 1)
_ERFINV_MID_P = (5.95545118817365, -14.779965771239358, 12.559982670934392,
                 -4.0635944206273535, 0.33118425455267697, 0.010842173820658925)
_ERFINV_MID_Q = (6.720007053649912, -18.436699480786206, 18.031923275789445,
                 -7.3087475927072845, 1)


def _horner(xp, u, coeffs):
    """``sum(c_k u^k)`` in one new buffer (in place: a temporary fewer per coefficient; a
    leading coefficient 1, a monic polynomial, a pass fewer)."""
    out = u + coeffs[-2] if coeffs[-1] == 1 else u * coeffs[-1]
    if coeffs[-1] != 1:
        out += coeffs[-2]
    for c in coeffs[-3::-1]:
        out *= u
        out += c
    return out


def _rational(xp, u, p, q):
    out = _horner(xp, u, p)
    out /= _horner(xp, u, q)
    return out


def _odd_rational(xp, x, p, q, top=None):
    """x P(x²) / Q(x²) of a float32 (or narrower) array in float64, rounded once to its
    dtype (x clipped to [-top, top] first unless ``top`` is None; NaN stays NaN)."""
    v = x.astype(xp.float64)
    if top is not None:
        v = xp.clip(v, -top, top)
    out = _rational(xp, v * v, p, q)
    out *= v
    return out.astype(x.dtype)


def _erf_fast(xp, x):
    """erf of a float32 (or narrower) array, in its dtype."""
    return _odd_rational(xp, x, _ERF32_P, _ERF32_Q, 4.0)


def _erf_mid(xp, x):
    """erf where |x| <= ``_ERF_MID``."""
    return _odd_rational(xp, x, _ERF_MID_P, _ERF_MID_Q)


def _erfc_mid(xp, x):
    """erfc where |x| <= ``_ERFC_MID``."""
    return _erfc_fast(xp, x, _ERFCX_MID_P, _ERFCX_MID_Q, None)


def _erfinv_mid(xp, y):
    """erfinv where |y| <= ``_ERFINV_MID``."""
    return _odd_rational(xp, y, _ERFINV_MID_P, _ERFINV_MID_Q)


def _central(mid, full, bound, share):
    """A float32 block kernel: ``mid``, a rational of lower degree that holds where |x| <=
    ``bound``, over the block, and ``full`` redone on the elements beyond, gathered (none in
    most blocks of most data: the bound's check is one float32 pass and a max); ``full``
    over the whole block where more than 1/``share`` of it lies beyond: the gather, the
    scatter and ``full`` on a few elements cost ~2x ``full`` per element, so the break-even
    is where ``mid`` saves that (erf: mid 3/4 of full, 1/64; erfc 4/5, 1/16; erfinv 1/3,
    1/4), and the worst case is ``full`` and the check (4%)."""
    def run(xp, x):
        a = xp.abs(x)
        if not a.size or a.max() <= bound:  # (False at NaN: the mask leaves NaN to ``mid``)
            return mid(xp, x)
        beyond = a > bound
        del a
        if int(xp.count_nonzero(beyond)) > x.size // share:
            return full(xp, x)
        at = xp.flatnonzero(beyond)
        out = mid(xp, x)
        out.reshape(-1)[at] = full(xp, x.reshape(-1)[at])
        return out
    run.__name__ = full.__name__
    return run


def _erfc_fast64(xp, v, p=_ERFCX32_P, q=_ERFCX32_Q, top=10.5):
    """erfc of the float64 array ``v`` to ~3e-9 relative (enough for float32), branch-free:
    erfc(|v|) = exp(-v²) R(|v|), and 2 - erfc(|v|) where v < 0 blended in by bits (``p``,
    ``q``, ``top``: R and where |v| is cut, as for ``_erf_fast``)."""
    y = xp.abs(v)
    if top is not None:
        xp.minimum(y, top, out=y)
    out = _horner(xp, y, p)
    den = _horner(xp, y, q)
    y *= y
    xp.exp(y, out=y)  # (exp(y²) into the divisor: no negation pass; e^110 at the cut)
    den *= y
    out /= den  # e = erfc(|v|) in (0, 1], NaN for NaN
    # 2 - e where v < 0 (-0 too), e elsewhere, by bits: v's sign bit ORed into e, and the
    # same bit shifted right once is 2.0 (or +0.0) to add: 4 integer passes, not a multiply
    # by a bool mask (a mixed-type loop) and 4 more.
    sign = xp.bitwise_and(v.view(xp.uint64), xp.uint64(0x8000000000000000))
    bits = out.view(xp.uint64)
    bits |= sign
    sign >>= xp.uint64(1)
    out += sign.view(xp.float64)
    return out


def _erfc_fast(xp, x, p=_ERFCX32_P, q=_ERFCX32_Q, top=10.5):
    """erfc of a float32 (or narrower) array, in its dtype."""
    return _erfc_fast64(xp, x.astype(xp.float64), p, q, top).astype(x.dtype)


def _erfinv_start(xp, y, p=_ERFINV64_P, q=_ERFINV64_Q):
    """erfinv of the float64 array ``y`` by the rational in s (``p``, ``q``: float64's start,
    or float32's); NaN at ±1 and beyond."""
    a = xp.abs(y)
    s = 1 - a
    s *= 1 + a  # 1 - y² with 1 - |y| exact near 1
    xp.log(s, out=s)
    xp.negative(s, out=s)
    xp.sqrt(s, out=s)
    out = _rational(xp, s, p, q)
    out *= y
    return out


def _erfinv_fast(xp, y):
    """erfinv of a float32 (or narrower) array, in its dtype."""
    out = _erfinv_start(xp, y.astype(xp.float64), _ERFINV32_P, _ERFINV32_Q)
    return _erfinv_ends(xp, y, out).astype(y.dtype)


def _erfinv_ends(xp, y, out):
    """``out`` with ±inf at ±1 (the rational's inf / inf gives NaN there)."""
    ends = xp.abs(y) == 1
    if ends.any():  # (rare: the masked copy and its copysign cost 10% of erfinv's float32 time)
        xp.copyto(out, xp.copysign(xp.asarray(math.inf, dtype=out.dtype), y), where=ends)
    return out


def _narrow(x):
    """Whether ``x`` (a raw array) takes the float32 kernels: float32 and narrower floats."""
    return x.dtype.kind == "f" and x.dtype.itemsize < 8


def _dispatch(fast, exact):
    """A raw function: ``fast`` for float32 and narrower, ``exact`` (Cody, in float64)
    otherwise. A 0-d input runs as one element: the in-place steps need arrays (NumPy makes
    0-d results scalars)."""
    exact = _in_float64(exact)

    def raw(xp, x):
        x = xp.asarray(x)
        if x.ndim == 0:
            return raw(xp, x.reshape(1)).reshape(())
        return fast(xp, x) if _narrow(x) else exact(xp, x)
    raw.__name__ = exact.__name__
    return raw


_erf_raw = _dispatch(_blockwise(_central(_erf_mid, _erf_fast, _ERF_MID, 64)), _erf64)
_erfc_raw = _dispatch(_blockwise(_central(_erfc_mid, _erfc_fast, _ERFC_MID, 16)), _erfc64)
_erfinv_raw = _dispatch(_blockwise(_central(_erfinv_mid, _erfinv_fast, _ERFINV_MID, 4)),
                        _erfinv64)

# --------------------------------------------------------------------------- declaring ops


def _unary(name, forward, rule=None, *, promote="float", refuse="", kernel=None, doc=None,
           inplace=True, aliases=()):
    """Declare the op ``name`` and return its public function: ``ember.<name>``, a Tensor
    method, and (``inplace``) its in-place form; ``aliases``: NumPy's names for it.

    ``refuse``: dtype kinds ('b' bool, 'iu' integers) PyTorch's ``kernel`` does not handle.
    """
    op = defop(name, promote=promote, jvp="elementwise", batch="pointwise", inplace=inplace,
               aliases=aliases)(forward)
    if rule is not None:
        op.defvjp(rule)

    def public(input):
        if not isinstance(input, Tensor):
            _pw._check_tensor(name, input)
        if refuse and input._data.dtype.kind in refuse:
            raise _pw._unsupported(kernel, input.dtype)
        return op(input)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = doc
    return op.public(public)


def _keep_integers(fn):
    """A rounding forward: integer tensors are returned as they are (copied)."""
    return lambda xp, input: fn(xp, input) if input.dtype.kind == "f" else input.copy()


def _zero(xp, g, ans, input):
    return xp.zeros_like(g)


@_recording.on_metadata
def _numpy_pair(g, ans):
    """Whether a rule got NumPy arrays ``g`` and ``ans`` of one shape (not 0-d: NumPy makes
    scalars of those) and dtype, as in an ordinary backward, so that it may build its result
    in place in a temporary of its own: on 4M floats one buffer for ``g * (1 - ans * ans)``
    instead of three takes 6 ms, not 10. Under ``create_graph`` rules get Tensors and must stay
    expressions (they are recorded); ``g`` and ``ans`` themselves are never written (others
    may hold them)."""
    return (type(g) is np.ndarray and type(ans) is np.ndarray and g.shape == ans.shape
            and g.ndim > 0 and g.dtype == ans.dtype)


# --------------------------------------------------------------------------- roots, exp, log


def _rsqrt_raw(xp, x):
    return 1 / xp.sqrt(x)


sqrt = _unary("sqrt", lambda xp, input: xp.sqrt(input),
              lambda xp, g, ans, input: g / (2 * ans), doc="Square root.")
rsqrt = _unary("rsqrt", lambda xp, input: _pw._opmath(xp, _rsqrt_raw, input),
               lambda xp, g, ans, input: -0.5 * g * ans ** 3, doc="``1 / sqrt(input)``.")
exp = _unary("exp", lambda xp, input: xp.exp(input),
             lambda xp, g, ans, input: g * ans, doc="``e ** input``.")
exp2 = _unary("exp2", lambda xp, input: xp.exp2(input),
              lambda xp, g, ans, input: g * ans * _LN2, doc="``2 ** input``.")
expm1 = _unary("expm1", lambda xp, input: xp.expm1(input),
               lambda xp, g, ans, input: g * (ans + 1),
               doc="``exp(input) - 1``, accurate near 0.")
log = _unary("log", lambda xp, input: xp.log(input),
             lambda xp, g, ans, input: g / input, doc="Natural logarithm.")
log2 = _unary("log2", lambda xp, input: xp.log2(input),
              lambda xp, g, ans, input: g / (input * _LN2), doc="Base-2 logarithm.")
log10 = _unary("log10", lambda xp, input: xp.log10(input),
               lambda xp, g, ans, input: g / (input * _LN10), doc="Base-10 logarithm.")
log1p = _unary("log1p", lambda xp, input: xp.log1p(input),
               lambda xp, g, ans, input: g / (input + 1),
               doc="``log(1 + input)``, accurate near 0.")


@public(inplace=True)
def square(input):
    """``input * input``, recorded as ``pow(input, 2)``; bool tensors square to int64."""
    _pw._check_tensor("square", input)
    if input._data.dtype.kind == "b":
        input = input.to(_dtypes.int64)
    return _pw.pow(input, 2)


# --------------------------------------------------------------------------- trigonometric

sin = _unary("sin", lambda xp, input: xp.sin(input),
             lambda xp, g, ans, input: g * xp.cos(input), doc="Sine.")
cos = _unary("cos", lambda xp, input: xp.cos(input),
             lambda xp, g, ans, input: g * -xp.sin(input), doc="Cosine.")
tan = _unary("tan", lambda xp, input: xp.tan(input),
             lambda xp, g, ans, input: g * (1 + ans * ans), doc="Tangent.")
asin = _unary("asin", lambda xp, input: xp.arcsin(input),
              lambda xp, g, ans, input: g / xp.sqrt(1 - input * input),
              doc="Arcsine.", aliases=("arcsin",))
acos = _unary("acos", lambda xp, input: xp.arccos(input),
              lambda xp, g, ans, input: -g / xp.sqrt(1 - input * input),
              doc="Arccosine.", aliases=("arccos",))
atan = _unary("atan", lambda xp, input: xp.arctan(input),
              lambda xp, g, ans, input: g / (input * input + 1),
              doc="Arctangent.", aliases=("arctan",))
sinh = _unary("sinh", lambda xp, input: xp.sinh(input),
              lambda xp, g, ans, input: g * xp.cosh(input), doc="Hyperbolic sine.")
cosh = _unary("cosh", lambda xp, input: xp.cosh(input),
              lambda xp, g, ans, input: g * xp.sinh(input), doc="Hyperbolic cosine.")


def _tanh_rule(xp, g, ans, input):
    """``g * (1 - ans²)`` (PyTorch's tanh_backward), in one buffer on NumPy arrays."""
    if not _numpy_pair(g, ans):
        return g * (1 - ans * ans)
    out = xp.multiply(ans, ans)
    xp.subtract(_xp.constant(1, ans.dtype), out, out=out)
    out *= g
    return out


tanh = _unary("tanh", lambda xp, input: xp.tanh(input), _tanh_rule, doc="Hyperbolic tangent.")
asinh = _unary("asinh", lambda xp, input: xp.arcsinh(input),
               lambda xp, g, ans, input: g / xp.sqrt(input * input + 1),
               doc="Inverse hyperbolic sine.", aliases=("arcsinh",))
acosh = _unary("acosh", lambda xp, input: xp.arccosh(input),
               lambda xp, g, ans, input: g / xp.sqrt(input * input - 1),
               doc="Inverse hyperbolic cosine.", aliases=("arccosh",))
atanh = _unary("atanh", lambda xp, input: xp.arctanh(input),
               lambda xp, g, ans, input: g / (1 - input * input),
               doc="Inverse hyperbolic tangent.", aliases=("arctanh",))

# --------------------------------------------------------------------------- sigmoid, erf


def _sigmoid_raw(xp, x):
    """``1 / (1 + exp(-x))`` in one buffer (raw arrays only: a forward, or a plain backward)."""
    # (an array of its own to work in: NumPy makes a 0-d result a scalar)
    e = xp.negative(x) if x.ndim else xp.negative(x, out=xp.empty_like(x))
    xp.exp(e, out=e)
    e += _xp.constant(1, x.dtype) if type(x) is np.ndarray else 1  # (e: x's type and dtype)
    return xp.reciprocal(e, out=e)


def _sigmoid_rule(xp, g, ans, input):
    """``g * (1 - ans) * ans``, PyTorch's sigmoid_backward (in its order of rounding), in one
    buffer on NumPy arrays."""
    if not _numpy_pair(g, ans):
        return g * (1 - ans) * ans
    return _sigmoid_grad_blocks(xp, g, ans)


def _sigmoid_grad_buffer(xp, g, ans):
    out = xp.subtract(_xp.constant(1, ans.dtype), ans)
    out *= g
    out *= ans
    return out


# (both over L2-sized blocks on large arrays: forward 1.12 -> 1.01 ms, rule 0.82 -> 0.59 ms
# at 1M; the same values)
_sigmoid_blocks = _blockwise(_sigmoid_raw)
_sigmoid_grad_blocks = _blockwise(_sigmoid_grad_buffer)
sigmoid = _unary("sigmoid", lambda xp, input: _pw._opmath(xp, _sigmoid_blocks, input),
                 _sigmoid_rule, doc="Logistic function ``1 / (1 + exp(-input))``.")
def _gauss(xp, g, x, scale, sign):
    """``g * scale * exp(sign * x²)``: the rules of erf and erfc (``x`` the input, ``sign``
    -1) and erfinv (``x`` the output, ``sign`` 1), in one buffer on NumPy arrays (4
    temporaries fewer)."""
    if not _numpy_pair(g, x):
        return g * scale * xp.exp(sign * (x * x))
    return _gauss_blocks(xp, g, x, scale, sign)


def _gauss_buffer(xp, g, x, scale, sign):
    out = xp.multiply(x, x)
    if sign < 0:
        xp.negative(out, out=out)
    xp.exp(out, out=out)
    out *= _xp.constant(scale, out.dtype)
    out *= g
    return out


# (over L2-sized blocks on large arrays: 1.3 -> 1.15 ms at 1M float32; the same values)
_gauss_blocks = _blockwise(_gauss_buffer)
erf = _unary("erf", lambda xp, input: xp.erf(input),
             lambda xp, g, ans, input: _gauss(xp, g, input, _TWO_OVER_SQRT_PI, -1),
             doc="Error function.")
erfc = _unary("erfc", lambda xp, input: xp.erfc(input),
              lambda xp, g, ans, input: _gauss(xp, g, input, -_TWO_OVER_SQRT_PI, -1),
              doc="Complementary error function ``1 - erf(input)``, accurate in the tails.")
erfinv = _unary("erfinv", lambda xp, input: xp.erfinv(input),
                lambda xp, g, ans, input: _gauss(xp, g, ans, _SQRT_PI / 2, 1),
                doc="Inverse error function on [-1, 1].")


@defop("logit", n_in=1, promote="float", jvp="elementwise", batch="pointwise", inplace=True)
def _logit(xp, input, eps):
    return _pw._opmath(xp, _logit_raw, input, eps)


def _logit_raw(xp, p, eps):
    if type(p) is np.ndarray and p.ndim and p.dtype.char in "fd":  # (small: run whole)
        return _logit_block(xp, p, eps=eps)
    return _logit_buffer(xp, p, eps)


def _logit_buffer(xp, p, eps):
    if eps is not None and eps >= 0:  # clamped in the computing precision, as in PyTorch
        low = xp.asarray(eps, dtype=p.dtype)
        high = 1 - low
        if eps <= 0.5:  # the two where()s below, NaN kept: 5x faster at 1M
            p = xp.clip(p, low, high)
        else:  # (low above high: clip would take high)
            p = xp.where(p < low, low, xp.where(p > high, high, p))
    q = xp.asarray(1 - p)  # log(p / (1 - p)), in place on one buffer
    xp.divide(p, q, out=q)
    return xp.log(q, out=q)


# (logit's 3-4 passes and its rule's 4-8 over L2-sized blocks: 2x faster at 1M)
_logit_block = _blockwise(_logit_buffer)


def _logit_rule(xp, g, ans, input, eps):
    if _numpy_pair(g, input) and input.dtype.char in "fd":  # (small: run whole)
        return _logit_grad_block(xp, g, input, eps=eps)
    grad = g / (input * (1 - input))
    if eps is None or eps < 0:
        return _select(xp, (input < 0) | (input > 1), math.nan, grad)
    return _zero_where(xp, (input < eps) | (input > 1 - eps), grad)  # zero where clamped


@_blockwise
def _logit_grad_block(xp, g, x, eps):
    """The rule's values on one block, in place; outside [0, 1] is where ``x (1 - x)`` is
    below 0 (NaN aside, which gives NaN either way), and a block with no such element (or
    none clamped) skips the select."""
    d = 1 - x
    d *= x
    if eps is None or eps < 0:
        outside = d < 0
        out = xp.divide(g, d, out=d)
        return _select(xp, outside, math.nan, out) if outside.any() else out
    clamped = x < eps
    clamped |= x > 1 - eps
    out = xp.divide(g, d, out=d)
    return _zero_where(xp, clamped, out) if clamped.any() else out


_logit.defvjp(_logit_rule)


@_logit.public
def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    _pw._check_tensor("logit", input)
    return _logit(input, eps)


# --------------------------------------------------------------------------- rounding

floor = _unary("floor", _keep_integers(lambda xp, x: xp.floor(x)), _zero, promote=False,
               refuse="b", kernel="floor_vml_cpu", doc="Round down; zero gradient.")
ceil = _unary("ceil", _keep_integers(lambda xp, x: xp.ceil(x)), _zero, promote=False,
              refuse="b", kernel="ceil_vml_cpu", doc="Round up; zero gradient.")
trunc = _unary("trunc", _keep_integers(lambda xp, x: xp.trunc(x)), _zero, promote=False,
               refuse="b", kernel="trunc_vml_cpu", doc="Round toward zero; zero gradient.",
               aliases=("fix",))
frac = _unary("frac", lambda xp, input: input - xp.trunc(input),
              lambda xp, g, ans, input: g, promote=False, refuse="biu", kernel="frac_cpu",
              doc="``input - trunc(input)``; floating tensors only.")
fix = trunc
_round = defop("round", promote=False, jvp="elementwise",
               batch="pointwise")(_keep_integers(lambda xp, x: xp.rint(x)))
_round.defvjp(_zero)


@defop("round", n_in=1, overload=1, jvp="elementwise", batch="pointwise")
def _round_decimals(xp, input, decimals):
    return _pw._opmath(xp, _round_raw, input, decimals)


def _round_raw(xp, x, decimals):
    """Scale by ``10 ** |decimals|`` (in ``x``'s precision), round half to even, scale back."""
    scale = xp.asarray(10.0 ** abs(decimals) if abs(decimals) < 309 else math.inf,
                       dtype=x.dtype)
    return xp.rint(x * scale) / scale if decimals >= 0 else xp.rint(x / scale) * scale


_round_decimals.defvjp(lambda xp, g, ans, input, decimals: xp.zeros_like(g))


@public(inplace=True)  # (the op of each overload above)
def round(input, *, decimals=None):  # noqa: A001 - PyTorch's name
    """Round half to even, to ``decimals`` decimal places when given; zero gradient."""
    _pw._check_tensor("round", input)
    if decimals is None:
        if input._data.dtype.kind == "b":
            raise _pw._unsupported("round_vml_cpu", input.dtype)
        return _round(input)
    if not isinstance(decimals, int):
        raise _pw._invalid_arguments("round", [(0, input), ("decimals", decimals)], [
            "Tensor input, *, Tensor out = None",
            "Tensor input, *, int decimals, Tensor out = None"])
    if not _dtypes.is_floating(input._data.dtype):  # (decimals=0 takes the other kernel)
        raise _pw._unsupported("round_vml_cpu" if decimals == 0 else "round_cpu", input.dtype)
    return _round_decimals(input, decimals)


# --------------------------------------------------------------------------- non-finite values


@defop("nan_to_num", n_in=1, jvp="elementwise", batch="pointwise", inplace=True)
def _nan_to_num(xp, input, nan, posinf, neginf):
    if input.dtype.kind != "f":
        return input.copy()
    info = xp.finfo(input.dtype)

    def fill(value, default):
        return xp.asarray(default if value is None else value, dtype=input.dtype)
    out = xp.where(xp.isnan(input), fill(nan, 0.0), input)
    out = xp.where(input == math.inf, fill(posinf, info.max), out)
    return xp.where(input == -math.inf, fill(neginf, info.min), out)


_nan_to_num.defvjp(lambda xp, g, ans, input, nan, posinf, neginf: g * xp.isfinite(input))


@_nan_to_num.public
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0 and the
    dtype's largest and lowest finite values); the gradient passes at finite elements only."""
    _pw._check_tensor("nan_to_num", input)
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not _pw._is_number(value):
            raise TypeError(f"nan_to_num(): argument '{name}' must be float, not "
                            f"{type(value).__name__}")
    return _nan_to_num(input, nan, posinf, neginf)


def _floats_only(test, kinds="fc", name=None):
    """A classification forward: floating (and complex: either part) tensors are tested,
    integer and bool ones give ``False``; complex input refused where PyTorch refuses it."""
    def forward(xp, input):
        kind = input.dtype.kind
        if kind == "c" and "c" not in kinds:
            raise RuntimeError(f"{name} does not support complex inputs.")
        return test(xp, input) if kind in kinds else xp.zeros(input.shape, dtype=bool)
    return forward


isnan = _unary("isnan", _floats_only(lambda xp, x: xp.isnan(x)), promote=False,
               doc="Whether each element is NaN.", inplace=False)
isinf = _unary("isinf", _floats_only(lambda xp, x: xp.isinf(x)), promote=False,
               doc="Whether each element is +inf or -inf.", inplace=False)
isposinf = _unary("isposinf", _floats_only(lambda xp, x: x == math.inf, "f", "isposinf"),
                  promote=False, doc="Whether each element is +inf.", inplace=False)
isneginf = _unary("isneginf", _floats_only(lambda xp, x: x == -math.inf, "f", "isneginf"),
                  promote=False, doc="Whether each element is -inf.", inplace=False)
isfinite = _unary("isfinite", lambda xp, input: xp.isfinite(input), promote=False,
                  doc="Whether each element is neither infinite nor NaN.", inplace=False)
signbit = _unary("signbit", lambda xp, input: input < 0 if input.dtype.kind in "iub" else
                 xp.signbit(input), promote=False,
                 doc="Whether each element's sign bit is set (true for -0.0 and -NaN).",
                 inplace=False)

# --------------------------------------------------------------------------- angles, sinc

deg2rad = _unary("deg2rad", lambda xp, input: xp.deg2rad(input),
                 lambda xp, g, ans, input: g * (math.pi / 180), doc="Degrees to radians.")
rad2deg = _unary("rad2deg", lambda xp, input: xp.rad2deg(input),
                 lambda xp, g, ans, input: g * (180 / math.pi), doc="Radians to degrees.")


# d/dy (sin y / y) = y * sum_k (-1)^k 2k y^(2k-2) / (2k+1)!, k = 1..8: within float64's
# rounding for |y| <= 1/2, where the closed form loses digits to cancellation (at y = 3e-4 in
# float32 its error is 7x the slope itself).
_SINC_SLOPE = tuple((-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(8, 0, -1))
_SINC_SERIES_BELOW = 0.5


def _sinc_rule(xp, g, ans, input):
    """``(pi x cos(pi x) - sin(pi x)) / (pi x^2)``, PyTorch's formula (it reads the input
    only), by its Taylor series near 0 (0 at ``x = 0``, with the right second derivative)."""
    y = math.pi * input
    z = y * y
    series = _SINC_SLOPE[0]
    for c in _SINC_SLOPE[1:]:
        series = series * z + c
    small = xp.abs(y) <= _SINC_SERIES_BELOW
    safe = xp.where(small, 1, y)  # (no 0/0 in the branch not taken)
    closed = (safe * xp.cos(safe) - xp.sin(safe)) / (safe * safe)
    return g * (math.pi * xp.where(small, y * series, closed))


sinc = _unary("sinc", lambda xp, input: xp.sinc(input), _sinc_rule,
              doc="The normalised sinc: ``sin(pi x) / (pi x)``, 1 at 0.")


@defop("angle", promote="float", jvp="transpose", holomorphic=False, batch="pointwise")
def _angle(xp, input):
    if input.dtype.kind == "c":
        return xp.angle(input)
    if type(input) is np.ndarray and input.ndim:  # (x < 0) * pi, NaN kept: 8x the wheres
        out = np.multiply(input < 0, input.dtype.type(math.pi), dtype=input.dtype)
        nan = np.isnan(input)
        if nan.any():
            np.copyto(out, input, where=nan)
        return out
    return xp.where(input < 0, math.pi, xp.where(input == input, 0, input))  # -0.0 gives 0


def _angle_rule(xp, g, ans, input):
    """PyTorch's angle_backward: ``g * z / |z|^2 * i`` (0 at z = 0); zeros for a real input."""
    if not (input.is_complex() if isinstance(input, Tensor) else input.dtype.kind == "c"):
        return xp.zeros_like(input)
    return xp.where(input == 0, 0, g * input / (xp.abs(input) ** 2) * 1j)


_angle.defvjp(_angle_rule)


@_angle.public
def angle(input):
    """The argument of each element, ``atan2(imag, real)``: 0 or pi for real numbers (NaN
    stays NaN); integers give the default float dtype."""
    if not isinstance(input, Tensor):
        _pw._check_tensor("angle", input)
    return _angle(input)


# --------------------------------------------------------------------------- namespace extras
_xp.register_extra("sigmoid", _sigmoid_raw, sigmoid)
_xp.register_extra("erf", _erf_raw, erf)
_xp.register_extra("erfc", _erfc_raw, erfc)
_xp.register_extra("erfinv", _erfinv_raw, erfinv)
