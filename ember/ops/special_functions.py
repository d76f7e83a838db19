"""The functions of ``torch.special`` that are no other family's: ``entr``, ``erfcx``,
``ndtr`` / ``log_ndtr`` / ``ndtri``, ``xlog1py``, ``i0`` / ``i0e`` / ``i1`` / ``i1e`` and the
Hurwitz zeta function, each declared once with its derivative (where PyTorch has one; the
incomplete gamma functions are ``incomplete_gamma.py``'s). ``ember/special.py`` gives them
their ``torch.special`` names; ``i0`` is also ``ember.i0`` and a Tensor method, as in PyTorch.

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
- ``zeta(s, q)``: the Hurwitz zeta function (``gamma.py``'s direct sum plus Euler-Maclaurin,
  each element summed until its rest is below the result dtype's precision).
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


# A float64 result's sums stop where the rest is below 1e-17 of them, a float32 one's below
# 1e-10, its terms as exp(-s log(q + k)) (``_hurwitz_zeta64``)
_ZETA_TOLERANCE = {8: 1e-17, 4: 1e-10, 2: 1e-10}


@_blockwise
def _zeta_raw(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s, in float64 on blocks that stay in L2,
    rounded once; with PyTorch's values off its domain, in its order: inf at s = 1, NaN below
    1, inf at the non-positive integers q (-inf included), NaN at the other negative q unless
    s is an integer; at s = inf the sum's first term (inf for |q| < 1 and negative q, 1 at q =
    1) or NaN; NaN at q = inf and at NaN."""
    dtype = next(v.dtype for v in (s, q) if hasattr(v, "dtype"))
    s, q = xp.broadcast_arrays(xp.asarray(s, dtype=xp.float64), xp.asarray(q, dtype=xp.float64))
    shape = s.shape
    s, q = s.reshape(-1), q.reshape(-1)
    pole = (q <= 0) & (q == xp.floor(q))
    off = (q < 0) & (s != xp.floor(s))
    plain = (s > 1) & (s < math.inf) & ~pole & ~off & (q < math.inf)  # (NaN: False)
    size = xp.dtype(dtype).itemsize
    tol = _ZETA_TOLERANCE[size]
    if bool(plain.all()):
        out = _gamma._hurwitz_zeta64(xp, s, q, tol, fast_pow=size < 8)
        return out.reshape(shape).astype(dtype)
    out = _gamma._hurwitz_zeta64(xp, xp.where(plain, s, 2.0), xp.where(plain, q, 1.0), tol,
                                 fast_pow=size < 8)
    out = xp.where(plain, out, math.nan)
    at_inf = xp.where((xp.abs(q) < 1) | (q < 0), math.inf, xp.where(q == 1, 1.0, math.nan))
    out = xp.where(s == math.inf, at_inf, out)
    out = xp.where(off, math.nan, out)
    out = xp.where(pole, math.inf, out)
    out = xp.where(s < 1, math.nan, out)
    out = xp.where(s == 1, math.inf, out)
    return out.reshape(shape).astype(dtype)


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

__all__ = ["entr", "erfcx", "ndtr", "log_ndtr", "ndtri", "xlog1py", "zeta", "i0", "i0e", "i1",
           "i1e"]
