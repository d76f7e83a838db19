"""The functions of ``torch.special`` that are no other family's: ``entr``, ``erfcx``,
``ndtr`` / ``log_ndtr`` / ``ndtri``, ``xlog1py``, ``i0`` / ``i0e`` / ``i1`` / ``i1e``, the
regularized incomplete gamma functions (``igamma``, ``igammac``) and the Hurwitz zeta function,
each declared once with its derivative (where PyTorch has one). ``ember/special.py`` gives them
their ``torch.special`` names; ``i0``, ``igamma`` and ``igammac`` are also ``ember.<name>`` and
Tensor methods, as in PyTorch.

Every kernel computes in float64 (and rounds to the input's floating dtype: PyTorch computes
float32 in float32, these are within its rounding), written from the math. Float32 inputs of
``erfcx``, ``log_ndtr``, ``ndtri`` and the I functions take the float32 kernels of
``special_kernels.py`` (fewer terms, on blocks; the I functions' float64 ones are there too):

- ``erfcx(x) = exp(x²) erfc(x)``: Cody's rationals for erfc(y) exp(y²) (``unary.py``) for
  y = |x|, and 2 exp(x²) - erfcx(-x) below 0.
- ``log_ndtr``: log(erfcx(-x/√2) / 2) - x²/2 below -1 (no underflow), log1p(-erfc(x/√2) / 2)
  above.
- ``ndtri``: √2 erfinv(2p - 1) in the middle (2p - 1 is exact there); in the tails P. J.
  Acklam's rational start (2003; relative error 1.2e-9), finished by Newton steps on
  log_ndtr(x) = log(p), which keep full relative precision down to the least subnormal.
- ``i0`` / ``i1`` and their scaled forms: ``special_kernels.py``'s polynomials in x²/4 and
  1/|x| (DLMF 10.25.2, 10.40.1).
- ``igamma(a, x)`` = P(a, x) and ``igammac`` = Q = 1 - P: the series x^a e^-x / Gamma(a + 1)
  sum x^k / ((a + 1)...(a + k)) below x = a + 1, the continued fraction of Q above (DLMF
  8.7.1, 8.9.2; Lentz's evaluation), the other as 1 minus it, but Q for a < 1 below x = a + 1
  by its own series (1 - P would lose it); the prefactor x^a e^-x / Gamma(a) in Stirling's
  form from a = 10. Near x = a the sums take ~10 sqrt(a) terms: past a ~ 4e6 there, ember
  refuses (NotImplementedError) rather than return a sum cut short.
- ``zeta(s, q)``: the Hurwitz zeta function (``gamma.py``'s direct sum plus Euler-Maclaurin).
"""
from __future__ import annotations

import math

from .. import _dtypes, _xp
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.graph import Node, gradient_edge, new_node
from . import arithmetic as _arith
from . import gamma as _gamma
from . import operands as _operands
from . import special_kernels as _kernels
from ._blocks import _blockwise
from .registry import defop
from .unary import (
    _ERF_SMALL,
    _erf_small,
    _erfc64,
    _erfcx_positive,
    _erfinv64,
    _numpy_pair,
    erf,
)

_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT1_2 = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _float64_kernel(kernel, narrow=None):
    """A raw forward running the float64 ``kernel`` on its inputs (already of one floating
    dtype: ``promote="float"``) and rounding back to that dtype; ``narrow``: the kernel for
    float32 and narrower inputs (float64 arithmetic to float32's accuracy), if there is one."""
    def raw(xp, *args):
        dtype = next(a.dtype for a in args if hasattr(a, "dtype"))  # (not a Python number's)
        args = [xp.asarray(a, dtype=xp.float64) for a in args]
        if all(a.ndim == 0 for a in args):  # (as one element: NumPy makes 0-d results scalars)
            return raw(xp, *(a.reshape(1).astype(dtype) for a in args)).reshape(())
        chosen = narrow if narrow is not None and xp.dtype(dtype).itemsize < 8 else kernel
        return xp.asarray(chosen(xp, *args)).astype(dtype)
    raw.__name__ = kernel.__name__
    return raw


def split(xp, where, x, inside, outside):
    """``inside(x)`` where ``where`` holds, ``outside(x)`` elsewhere, each computed on its own
    elements only (gathered, then scattered back): the branches are series and quadratures
    of dozens of passes each, and a ``where`` over both would pay for both everywhere."""
    flat, mask = x.reshape(-1), where.reshape(-1)
    hits = int(xp.count_nonzero(mask))
    if hits in (0, mask.size):  # one branch for all: no gather or scatter
        return (inside if hits else outside)(x)
    out = xp.empty_like(flat)
    for at, branch in ((xp.flatnonzero(mask), inside), (xp.flatnonzero(~mask), outside)):
        if at.size:
            out[at] = branch(flat[at])
    return out.reshape(x.shape)


def _elementwise(name, kernel, *, method=False, inplace=False, narrow=None):
    """An elementwise op of one input computed by the float64 ``kernel`` (``narrow`` for
    float32 and narrower inputs, see ``_float64_kernel``; its rule is added with
    ``defvjp``)."""
    forward = _float64_kernel(kernel, narrow)
    return defop(name, promote="float", jvp="elementwise", batch="pointwise", method=method,
                 inplace=inplace)(lambda xp, input: forward(xp, input))


_HALF = (_dtypes.float16, _dtypes.bfloat16)


def refuse_half(kernel, *operands):
    """PyTorch's NotImplementedError where its CPU ``kernel`` has no half-precision form and
    the operands' result dtype is float16 or bfloat16."""
    dtype = _dtypes.result_type(*operands)
    if dtype in _HALF:
        raise _operands._unsupported(kernel, dtype)


def _unary_public(op, label, half=True):
    """The public function of a one-input op (PyTorch's TypeError for a non-tensor; with
    ``half=False``, its refusal of float16 and bfloat16)."""
    kernel = label.removeprefix("special_") + "_cpu"

    def fn(input):
        if not isinstance(input, Tensor):
            _operands._check_tensor(label, input)
        if not half:
            refuse_half(kernel, input)
        return op(input)
    fn.__name__ = fn.__qualname__ = label.removeprefix("special_")
    return fn


def _exp_square(xp, y):
    """exp(y²) with y² split as t² + (y - t)(y + t), t = y cut to sixteenths (t² exact), so
    the large exponent carries no rounding error (as ``_erfc_positive`` does for exp(-y²))."""
    t = xp.trunc(y * 16) / 16
    return xp.exp(t * t) * xp.exp((y - t) * (y + t))


def _blocked(name, raw, inplace=False):
    """An elementwise op of one input computed by the raw function ``raw`` (``special_kernels.
    in_blocks``: float32 and float64 kernels on L2-sized blocks)."""
    return defop(name, promote="float", jvp="elementwise", batch="pointwise", inplace=inplace)(
        lambda xp, input: raw(xp, input))


# --------------------------------------------------------------------------- entr, erfcx


def _entr64(xp, x):
    out = -x * xp.log(xp.where(x > 0, x, 1.0))
    out = xp.where(x == 0, 0.0, out)
    return xp.where(x < 0, -math.inf, out)  # (NaN stays NaN)


_entr = _elementwise("special_entr", _entr64)
_entr.defvjp(lambda xp, g, ans, input: g * -(1 + xp.log(input)))
entr = _unary_public(_entr, "special_entr")


def _erfcx64(xp, x):
    y = xp.abs(x)
    small = y <= _ERF_SMALL
    scaled = xp.where(small, xp.exp(y * y) * (1 - _erf_small(xp, xp.where(small, y, 0.0))),
                      _erfcx_positive(xp, xp.where(small, 1.0, y)))
    out = xp.where(x < 0, 2 * _exp_square(xp, y) - scaled, scaled)
    return xp.where(x == -math.inf, math.inf, out)


_erfcx = _blocked("special_erfcx", _kernels.in_blocks(_erfcx64, _kernels.erfcx32))
_erfcx.defvjp(_kernels.rule_in_blocks(
    lambda xp, g, ans, input: g * (2 * input * ans - _TWO_OVER_SQRT_PI), _kernels.erfcx_slope))
erfcx = _unary_public(_erfcx, "special_erfcx", half=False)

# --------------------------------------------------------------------------- the normal CDF


def ndtr(input):
    """The standard normal distribution function, ``(1 + erf(x / sqrt(2))) / 2``, composed as
    PyTorch composes it (its graph: MulBackward1, AddBackward1, ErfBackward0, MulBackward1)."""
    if not isinstance(input, Tensor):
        _operands._check_tensor("special_ndtr", input)
    return _arith.mul_scalar(_arith.add_scalar(erf(_arith.mul_scalar(input, _SQRT1_2)), 1), 0.5)


def _log_ndtr64(xp, x):
    t = x * _SQRT1_2
    low = x < -1
    below = xp.log(_erfcx64(xp, -xp.where(low, t, 0.0)) / 2) - t * t
    above = xp.log1p(-_erfc64(xp, xp.where(low, 0.0, t)) / 2)
    return xp.where(low, below, above)


_log_ndtr = _blocked("special_log_ndtr",
                     _kernels.in_blocks(_log_ndtr64, _kernels.log_ndtr32))
_log_ndtr.defvjp(_kernels.rule_in_blocks(
    lambda xp, g, ans, input: g / _SQRT_2PI * xp.exp(-(ans + input * input / 2)),
    _kernels.log_ndtr_slope))
log_ndtr = _unary_public(_log_ndtr, "special_log_ndtr", half=False)


def _poly(xp, u, coeffs):
    out = xp.zeros_like(u) + coeffs[-1]
    for c in coeffs[-2::-1]:
        out = out * u + c
    return out


def _ndtri64(xp, p):
    q = xp.minimum(p, 1 - p)  # (1 - p is exact for p >= 1/2)
    out = split(xp, q < _kernels.NDTRI_TAIL, p, lambda pt: _ndtri_tail(xp, pt),
                lambda pm: _SQRT2 * _erfinv64(xp, 2 * pm - 1))
    return _kernels.ndtri_ends(xp, p, out)


def _ndtri_tail(xp, p):
    q = xp.minimum(p, 1 - p)
    qt = xp.where(q > 0, q, _kernels.NDTRI_TAIL)
    log_q = xp.log(qt)
    r = xp.sqrt(-2 * log_q)
    x = _poly(xp, r, _kernels.ACKLAM_C) / _poly(xp, r, _kernels.ACKLAM_D)  # (lower tail)
    for _ in range(3):  # Newton on log_ndtr(x) = log q: quadratic from 1e-9
        lx = _log_ndtr64(xp, x)
        x = x - (lx - log_q) * _SQRT_2PI * xp.exp(x * x / 2 + lx)
    return xp.where(p > 0.5, -x, x)


_ndtri = _blocked("special_ndtri", _kernels.in_blocks(_ndtri64, _kernels.ndtri32))
_ndtri.defvjp(_kernels.rule_in_blocks(lambda xp, g, ans, _: g * _SQRT_2PI * xp.exp(ans * ans / 2),
                                      _kernels.ndtri_slope, reads_input=False))
ndtri = _unary_public(_ndtri, "special_ndtri", half=False)

# --------------------------------------------------------------------------- xlog1py


def _xlog1py_raw(xp, x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` unless ``y`` is NaN (a number operand takes the
    tensor's dtype)."""
    dtype = (x if hasattr(x, "dtype") else y).dtype
    x, y = xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype)
    return xp.where((x == 0) & ~xp.isnan(y), xp.zeros((), dtype), x * xp.log1p(y))


def _xlog1py_input_rule(xp, g, ans, input, other):
    """``log1p(other)``; zero where ``input == 0`` and ``other <= -1`` (PyTorch's choice)."""
    return xp.where((input == 0) & (other <= -1), 0, xp.special_xlog1py(g, other))


def _xlog1py_other_rule(xp, g, ans, input, other):
    return g * input / (other + 1)


@defop("special_xlog1py", promote="float", jvp="elementwise", batch="pointwise", method=False)
def _xlog1py(xp, input, other):
    return _operands._opmath(xp, _xlog1py_raw, input, other)


_xlog1py.defvjp(_xlog1py_input_rule, _xlog1py_other_rule)


@defop("special_xlog1py", n_in=1, promote="float", overload=1, jvp="elementwise",
       batch="pointwise", method=False)
def _xlog1py_scalar_self(xp, other, input):
    return _operands._opmath(xp, _xlog1py_raw, input, other)


_xlog1py_scalar_self.defvjp(lambda xp, g, ans, other, input: g * input / (other + 1))


@defop("special_xlog1py", n_in=1, promote="float", overload=2, jvp="elementwise",
       batch="pointwise", method=False)
def _xlog1py_scalar_other(xp, input, other):
    return _operands._opmath(xp, _xlog1py_raw, input, other)


_xlog1py_scalar_other.defvjp(_xlog1py_input_rule)


def _tensor_or_number(label, input, other, tensor_op, self_op, other_op):
    """A binary function taking a number on either side (PyTorch's three overloads)."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise _operands._invalid_arguments(label, [(0, input), (1, other)], [
                "Tensor input, Tensor other, *, Tensor out = None",
                "Number self, Tensor other, *, Tensor out = None",
                "Tensor input, Number other, *, Tensor out = None"])
        return self_op(other, _operands._python_number(input))
    if not isinstance(other, Tensor):
        return other_op(input, _operands._python_number(other))
    return tensor_op(input, other)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    return _tensor_or_number("special_xlog1py", input, other, _xlog1py, _xlog1py_scalar_self,
                             _xlog1py_scalar_other)

# --------------------------------------------------------------------------- zeta


def _zeta64(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s, with PyTorch's values off its domain, in
    its order: inf at s = 1, NaN below 1, inf at the non-positive integers q (-inf included),
    NaN at the other negative q unless s is an integer; at s = inf the sum's first term (inf
    for |q| < 1 and negative q, 1 at q = 1) or NaN; NaN at q = inf and at NaN."""
    s, q = xp.broadcast_arrays(s, q)
    pole = (q <= 0) & (q == xp.floor(q))
    off = (q < 0) & (s != xp.floor(s))
    plain = (s > 1) & (s < math.inf) & ~pole & ~off & (q < math.inf)  # (NaN: False)
    out = _gamma._hurwitz_zeta64(xp, xp.where(plain, s, 2.0), xp.where(plain, q, 1.0))
    out = xp.where(plain, out, math.nan)
    at_inf = xp.where((xp.abs(q) < 1) | (q < 0), math.inf, xp.where(q == 1, 1.0, math.nan))
    out = xp.where(s == math.inf, at_inf, out)
    out = xp.where(off, math.nan, out)
    out = xp.where(pole, math.inf, out)
    out = xp.where(s < 1, math.nan, out)
    return xp.where(s == 1, math.inf, out)


_zeta_raw = _float64_kernel(_zeta64)


def _zeta_s_rule(xp, g, ans, input, other):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_q_rule(xp, g, ans, input, other):
    return g * -input * xp.special_zeta(input + 1.0, other)


@defop("special_zeta", promote="float", jvp="elementwise", batch="pointwise", method=False)
def _zeta(xp, input, other):
    return _operands._opmath(xp, _zeta_raw, input, other)


_zeta.defvjp(_zeta_s_rule, _zeta_q_rule)


@defop("special_zeta", n_in=1, promote="float", overload=1, jvp="elementwise",
       batch="pointwise", method=False)
def _zeta_scalar_self(xp, other, input):
    return _operands._opmath(xp, _zeta_raw, input, other)


_zeta_scalar_self.defvjp(lambda xp, g, ans, other, input: _zeta_q_rule(xp, g, ans, input,
                                                                         other))


# zeta(Tensor, Number) has a derivative for its tensor, ``s``, in no direction: the op has no
# rule, and a result from an ``s`` that requires grad gets PyTorch's node, which refuses.
@defop("special_zeta", n_in=1, promote="float", overload=2, batch="pointwise", method=False)
def _zeta_scalar_other(xp, input, other):
    return _operands._opmath(xp, _zeta_raw, input, other)


class SpecialZetaBackward2(Node):
    __slots__ = ()

    def apply(self, grad_outputs, create_graph):
        _zeta_s_rule(None, None, None, None, None)

    def release(self):
        pass


def _zeta_number_q(input, other):
    out = _zeta_scalar_other(input, other)
    if input.requires_grad and grad_mode._state.grad:
        return Tensor._make(out._data, new_node(SpecialZetaBackward2,
                                                (gradient_edge(input),)), True)
    return out


def zeta(input, other):
    """The Hurwitz zeta function ``sum_k (other + k) ** -input``."""
    if isinstance(input, Tensor) or isinstance(other, Tensor):
        refuse_half("zeta_cpu", input, other)
    return _tensor_or_number("special_zeta", input, other, _zeta, _zeta_scalar_self,
                             _zeta_number_q)

# --------------------------------------------------------------------------- igamma, igammac

# The series and the fraction take up to ~10 sqrt(a) steps near x = a; past this many (a above
# ~4e6 there) the result is refused rather than cut short
_IGAMMA_STEPS = 20000


def _converged(active, name):
    if bool(active.any()):
        raise NotImplementedError(
            f"ember: {name} for a above about 4e6 with x near a is not implemented (its series "
            f"would need more than {_IGAMMA_STEPS} terms)")


def _igamma_series(xp, a, x):
    """P(a, x) by its series (for x < a + 1)."""
    term = 1 / a
    total = term
    k = 0
    active = xp.ones(a.shape, dtype=bool)
    while bool(active.any()) and k < _IGAMMA_STEPS:
        k += 1
        term = term * x / (a + k)
        total = total + xp.where(active, term, 0.0)
        active = active & (xp.abs(term) > 1e-17 * xp.abs(total))
    _converged(active, "igamma")
    return total * _igamma_prefactor(xp, a, x)


# d - log(1 + d) = d² sum_{k>=2} (-d)^(k-2) / k for |d| < 0.4 (the closed form cancels there)
_PHI = tuple((-1) ** k / (k + 2) for k in range(40))
_PHI_SERIES_BELOW = 0.4


def _igamma_prefactor(xp, a, x):
    """x^a e^-x / Gamma(a) (the series' total is already divided by a once). From a = 10 as
    exp(-a phi(x/a - 1) - S(a)) sqrt(a / (2 pi)), phi(d) = d - log(1 + d) and S Stirling's
    correction to lgamma (DLMF 5.11.1): the plain exponent's terms are each ~a log a, and their
    cancellation would cost 1e-9 of relative error at a = 1e6."""
    plain = xp.exp(a * xp.log(x) - x - xp.lgamma(a))
    big = a >= 10
    ab = xp.where(big, a, 10.0)
    d = (x - ab) / ab
    ds = xp.where(xp.abs(d) < _PHI_SERIES_BELOW, d, 0.0)
    phi = xp.where(xp.abs(d) < _PHI_SERIES_BELOW, ds * ds * _poly(xp, ds, _PHI),
                   d - xp.log1p(xp.where(d > -1, d, 0.0)))
    phi = xp.where(d <= -1, math.inf, phi)
    w = 1 / ab
    stirling = w * _poly(xp, w * w, _gamma._LGAMMA_W)
    scaled = xp.exp(-ab * phi - stirling) * xp.sqrt(ab / (2 * math.pi))
    return xp.where(big, scaled, plain)


_TINY = 1e-300


def _igammac_fraction(xp, a, x):
    """Q(a, x) by its continued fraction (for x >= a + 1), evaluated by modified Lentz."""
    b = x + 1 - a
    c = xp.full(a.shape, 1 / _TINY)
    d = 1 / b
    h = d
    k = 0
    active = xp.ones(a.shape, dtype=bool)
    while bool(active.any()) and k < _IGAMMA_STEPS:
        k += 1
        an = -k * (k - a)
        b = b + 2
        d = an * d + b
        d = xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = d * c
        h = xp.where(active, h * delta, h)
        active = active & (xp.abs(delta - 1) > 1e-16)
    _converged(active, "igammac")
    return h * _igamma_prefactor(xp, a, x)


# lgamma(1 + a) = -gamma a + sum_k (-1)^k zeta(k) a^k / k for |a| < 1 (DLMF 5.7.3): the
# zeta(k) / k, k = 2..40 (at |a| <= 1/2 the terms fall below 1e-17 of the sum)
_ZETA_K = (1.6449340668482264, 1.2020569031595942, 1.0823232337111381, 1.03692775514337,
           1.0173430619844492, 1.008349277381923, 1.0040773561979444, 1.0020083928260821,
           1.000994575127818, 1.0004941886041194, 1.000246086553308, 1.0001227133475785,
           1.0000612481350588, 1.000030588236307, 1.0000152822594086, 1.0000076371976379,
           1.000003817293265, 1.0000019082127165, 1.0000009539620338, 1.0000004769329869,
           1.0000002384505027, 1.000000119219926, 1.000000059608189, 1.0000000298035034,
           1.0000000149015549, 1.0000000074507118, 1.000000003725334, 1.0000000018626598,
           1.0000000009313275, 1.0000000004656628, 1.000000000232831, 1.0000000001164155,
           1.0000000000582077, 1.0000000000291038, 1.000000000014552, 1.000000000007276,
           1.000000000003638, 1.000000000001819, 1.0000000000009095)
_EULER = 0.5772156649015329


def _lgamma1p(xp, a):
    """lgamma(1 + a), accurate for small a (|a| <= 1/2; lgamma elsewhere)."""
    total = xp.zeros_like(a)
    for k in range(len(_ZETA_K) + 1, 1, -1):
        total = (total + (-1) ** k * _ZETA_K[k - 2] / k) * a
    series = (total - _EULER) * a
    return xp.where(xp.abs(a) <= 0.5, series, xp.lgamma(1 + a))


def _igammac_small_a(xp, a, x):
    """Q(a, x) for 0 < a < 1, x < a + 1: 1 - x^a / Gamma(a + 1) - x^a / Gamma(a) sum_{k>=1}
    (-x)^k / (k! (a + k)) (DLMF 8.7.1 with gamma(a, x) = x^a sum (-x)^k / (k! (a + k)));
    the first difference as -expm1, so Q keeps its relative precision as a -> 0."""
    log_xa = a * xp.log(x)
    head = -xp.expm1(log_xa - _lgamma1p(xp, a))
    term = xp.ones_like(x)
    total = xp.zeros_like(x)
    for k in range(1, 60):  # (x < 2: the alternating terms fall below 1e-17 by k = 30)
        term = term * (-x) / k
        total = total + term / (a + k)
    return head - a * xp.exp(log_xa - _lgamma1p(xp, a)) * total


def _igamma_pair(xp, a, x, upper):
    """P(a, x) (``upper``: Q) with PyTorch's values off the domain, in its order: NaN below 0;
    at a = 0, P = 1 for x > 0 (else NaN); at x = 0, P = 0; at a = inf, P = 0 (NaN at x =
    inf too); at x = inf, P = 1 (so a NaN argument meets some of these first)."""
    a, x = xp.broadcast_arrays(a, x)
    plain = (a > 0) & (x > 0) & (a < math.inf) & (x < math.inf)  # (NaN: False)
    series = plain & (x < a + 1)
    aa = xp.where(plain, a, 1.0)
    p_series = _igamma_series(xp, aa, xp.where(series, x, 0.5))
    q_fraction = _igammac_fraction(xp, aa, xp.where(plain & ~series, x, 2.0))
    if upper:  # 1 - P loses Q's digits where P is near 1: a small, x < a + 1 (Q ~ a E1(x))
        small = series & (a < 1)
        q_small = _igammac_small_a(xp, xp.where(small, a, 0.5), xp.where(small, x, 0.5))
        out = xp.where(small, q_small, xp.where(series, 1 - p_series, q_fraction))
    else:
        out = xp.where(series, p_series, 1 - q_fraction)
    out = xp.where(plain, out, math.nan)
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)  # (P's 1 and 0 as this function's)
    out = xp.where(x == math.inf, one, out)
    out = xp.where(a == math.inf, xp.where(x == math.inf, math.nan, zero), out)
    out = xp.where(x == 0, zero, out)
    out = xp.where(a == 0, xp.where(x > 0, one, math.nan), out)
    return xp.where((x < 0) | (a < 0), math.nan, out)


_igamma_raw = _float64_kernel(lambda xp, a, x: _igamma_pair(xp, a, x, False))
_igammac_raw = _float64_kernel(lambda xp, a, x: _igamma_pair(xp, a, x, True))


def _no_input_rule(name):
    def rule(xp, g, ans, input, other):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return rule


def _density(xp, input, other):
    """x^(a-1) e^-x / Gamma(a): d/dx P(a, x), PyTorch's formula."""
    return xp.exp((input - 1) * xp.log(other) - other - xp.lgamma(input))


_igamma = defop("igamma", promote="float", jvp="elementwise", batch="pointwise",
                inplace=True)(lambda xp, input, other: _igamma_raw(xp, input, other))
_igamma.defvjp(_no_input_rule("igamma"),
               lambda xp, g, ans, input, other: g * _density(xp, input, other))
_igammac = defop("igammac", promote="float", jvp="elementwise", batch="pointwise",
                 inplace=True)(lambda xp, input, other: _igammac_raw(xp, input, other))
_igammac.defvjp(_no_input_rule("igammac"),
                lambda xp, g, ans, input, other: -g * _density(xp, input, other))


def _incomplete_gamma(op, label, input, other):
    _operands._check_tensor(label, input)
    _operands._check_tensor(label, other, "other", 2)
    if input._data.dtype.kind in "biu" and other._data.dtype.kind in "biu":
        raise _operands._unsupported(op.name + "_cpu", _dtypes.result_type(input, other))
    return op(input, other)


@_igamma.public
def igamma(input, other):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _incomplete_gamma(_igamma, "igamma", input, other)


@_igammac.public
def igammac(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    return _incomplete_gamma(_igammac, "igammac", input, other)


def gammainc(input, other):
    """``torch.special.gammainc``: :func:`igamma`."""
    return _incomplete_gamma(_igamma, "special_gammainc", input, other)


def gammaincc(input, other):
    """``torch.special.gammaincc``: :func:`igammac`."""
    return _incomplete_gamma(_igammac, "special_gammaincc", input, other)

# --------------------------------------------------------------------------- i0, i1 and scaled

# (the kernels: ``special_kernels.py``)
_i0_raw = _kernels.bessel_i(0, scaled=False)
_i0e_raw = _kernels.bessel_i(0, scaled=True)
_i1_raw = _kernels.bessel_i(1, scaled=False)
_i1e_raw = _kernels.bessel_i(1, scaled=True)


def _i_op(name, raw, inplace=False):
    return defop(name, promote="float", jvp="elementwise", batch="pointwise", inplace=inplace)(
        lambda xp, input: raw(xp, input))


def _i0_rule(xp, g, ans, input):
    """I0' = I1."""
    return g * xp.special_i1(input)


def _i0e_rule(xp, g, ans, input):
    """(e^-|x| I0)' = I1e(x) - sgn(x) I0e(x)."""
    if not _numpy_pair(g, ans):
        return g * (xp.special_i1e(input) - xp.sign(input) * ans)
    return _i_slope_blocks(xp, g, ans, input, other=_i1e_raw, slope=_i0e_slope)


def _i1_rule(xp, g, ans, input):
    """I1'(x) = I0(x) - I1(x) / x, 1/2 at 0."""
    if not _numpy_pair(g, ans):
        safe = xp.where(input == 0, 1.0, input)
        return g * xp.where(input == 0, 0.5, xp.special_i0(input) - ans / safe)
    return _i_slope_blocks(xp, g, ans, input, other=_i0_raw, slope=_i1_slope)


def _i1e_rule(xp, g, ans, input):
    """(e^-|x| I1)' = I0e(x) - I1e(x) (sgn(x) + 1/x), 1/2 at 0."""
    if not _numpy_pair(g, ans):
        safe = xp.where(input == 0, 1.0, input)
        return g * xp.where(input == 0, 0.5,
                            xp.special_i0e(input) - ans * (xp.sign(input) + 1 / safe))
    return _i_slope_blocks(xp, g, ans, input, other=_i0e_raw, slope=_i1e_slope)


# The same rules on NumPy arrays, on blocks in one buffer (the other function's value, then
# the terms in place: 3 temporaries fewer, and each block's passes stay in the cache)
def _i0e_slope(xp, out, ans, x):
    q = xp.sign(x)
    q *= ans
    out -= q


def _i1_slope(xp, out, ans, x):
    out -= xp.divide(ans, x)  # (NaN at 0: set after)


def _i1e_slope(xp, out, ans, x):
    q = xp.divide(1, x)
    q += xp.sign(x)
    q *= ans
    out -= q


@_blockwise
def _i_slope_blocks(xp, g, ans, x, other, slope):
    out = other(xp, x)
    slope(xp, out, ans, x)
    if slope is not _i0e_slope:
        zero = x == 0
        if zero.any():
            out[zero] = 0.5
    out *= g
    return out


_i0 = _i_op("i0", _i0_raw, inplace=True)
_i0.defvjp(_i0_rule)
_i0e = _i_op("special_i0e", _i0e_raw)
_i0e.defvjp(_i0e_rule)
_i1 = _i_op("special_i1", _i1_raw)
_i1.defvjp(_i1_rule)
_i1e = _i_op("special_i1e", _i1e_raw)
_i1e.defvjp(_i1e_rule)


@_i0.public
def i0(input):
    """The modified Bessel function of the first kind of order 0."""
    if not isinstance(input, Tensor):
        _operands._check_tensor("i0", input)
    return _i0(input)


i0e = _unary_public(_i0e, "special_i0e")
i1 = _unary_public(_i1, "special_i1")
i1e = _unary_public(_i1e, "special_i1e")

# --------------------------------------------------------------------------- namespace extras
# (the rules above call these on arrays and, under create_graph, on Tensors)
_xp.register_extra("special_i0", _i0_raw, i0)
_xp.register_extra("special_i0e", _i0e_raw, i0e)
_xp.register_extra("special_i1", _i1_raw, i1)
_xp.register_extra("special_i1e", _i1e_raw, i1e)
_xp.register_extra("special_zeta", _zeta_raw, zeta)
_xp.register_extra("special_xlog1py", _xlog1py_raw, xlog1py)

__all__ = ["entr", "erfcx", "ndtr", "log_ndtr", "ndtri", "xlog1py", "zeta", "igamma",
           "igammac", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e"]
