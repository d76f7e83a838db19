"""The classical orthogonal polynomials of ``torch.special``: Chebyshev T, U, V, W (and their
shifted forms on [0, 1]), Hermite H and He, Laguerre L and Legendre P, each ``p(input, n)``.

As in PyTorch: the degree ``n`` (a tensor or a number, broadcast against ``input``) is cut
toward zero to an integer; a negative (or NaN, or infinite) degree gives 0; the result is the
two operands' dtype, integers promoted to the default float dtype; and none has a derivative
(the result never requires grad, as PyTorch's does not).

Each is evaluated by its three-term recurrence p_{k+1} = (a_k x + b_k) p_k - c_k p_{k-1}
(DLMF 18.9.1 and table 18.9.1), vectorised over the elements: one step per degree up to the
largest ``n`` asked, each element keeping the value at its own degree. The Chebyshev
polynomials above degree ``_CLOSED_FORM_ABOVE`` on (-1, 1) come from their closed forms
instead (DLMF 18.5.1-18.5.4: T_n(cos t) = cos(n t), U_n = sin((n+1) t) / sin t, V_n =
cos((n+1/2) t) / cos(t/2), W_n = sin((n+1/2) t) / sin(t/2)), so a huge degree costs no more
than a small one there (PyTorch does the same above degree 6); the recurrence runs in the
input's dtype, as PyTorch's does.
"""
from __future__ import annotations

import math

from .. import _dtypes, _xp
from .._tensor import Tensor
from . import operands as _operands
from .registry import defop
from .special_functions import refuse_half

_CLOSED_FORM_ABOVE = 64
_INT64_LIMIT = 2.0 ** 63


def _degrees(xp, n):
    """``n`` as float64 integers (cut toward zero), -1 where PyTorch's int64 cast of it is
    negative (negative, NaN, infinite or out of int64's range)."""
    n = xp.asarray(n, dtype=xp.float64)
    ok = xp.isfinite(n) & (xp.abs(n) < _INT64_LIMIT)
    return xp.where(ok, xp.trunc(xp.where(ok, n, 0.0)), -1.0)


# (p_0, p_1(x), step(x, k, p_k, p_{k-1}) -> p_{k+1})
_RECURRENCES = {
    "chebyshev_polynomial_t": (lambda x: x, lambda x, k, p, q: 2 * x * p - q),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda x, k, p, q: 2 * x * p - q),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda x, k, p, q: 2 * x * p - q),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda x, k, p, q: 2 * x * p - q),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda x, k, p, q: 2 * x * p - 2 * k * q),
    "hermite_polynomial_he": (lambda x: x, lambda x, k, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1 - x,
                              lambda x, k, p, q: ((2 * k + (1 - x)) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x,
                              lambda x, k, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


def _chebyshev_closed(xp, kind, x, n):
    """The Chebyshev polynomial ``kind`` (t, u, v, w) of degree ``n`` on (-1, 1) by its
    closed form."""
    t = xp.arccos(xp.clip(x, -1.0, 1.0))  # (|x| < 1 where it is used)
    with_half = n + 0.5
    if kind == "t":
        trig = xp.cos(n * t)
    elif kind == "u":
        trig = xp.sin((n + 1) * t) / xp.sin(t)
    elif kind == "v":
        trig = xp.cos(with_half * t) / xp.cos(t / 2)
    else:
        trig = xp.sin(with_half * t) / xp.sin(t / 2)
    return trig


def _polynomial(xp, name, x, n):
    """The polynomial ``name`` of degrees ``n`` at ``x``, in ``x``'s dtype (as PyTorch computes
    it: where the recurrence overflows, its inf - inf gives NaN, as PyTorch's does)."""
    dtype = x.dtype
    n = _degrees(xp, n)
    x, n = xp.broadcast_arrays(x, n)
    first, step = _RECURRENCES[name]
    closed = name.startswith("chebyshev") & (n > _CLOSED_FORM_ABOVE) & (xp.abs(x) < 1)
    recurred = xp.where(closed, 0.0, n)
    top = int(recurred.max()) if n.size else 0
    out = xp.where(n == 0, 1.0, 0.0).astype(dtype)
    if top >= 1:
        prev, cur = xp.ones_like(x), first(x).astype(dtype)
        out = xp.where(n == 1, cur, out)
        for k in range(1, top):
            prev, cur = cur, step(x, k, cur, prev).astype(dtype)
            out = xp.where(recurred == k + 1, cur, out)
            # (past an overflow every later degree is NaN: stop once all that remain are)
            if k % 16 == 0 and bool(xp.isnan(cur)[recurred > k + 1].all()):
                out = xp.where(recurred > k + 1, math.nan, out)
                break
    if bool(closed.any()):
        far = _chebyshev_closed(xp, name[-1], x.astype(xp.float64), xp.where(closed, n, 0.0))
        out = xp.where(closed, far.astype(dtype), out)
    return xp.where(xp.isnan(x) & (n >= 1), math.nan, out).astype(dtype)


def _shifted(xp, name, x, n):
    return _polynomial(xp, name.removeprefix("shifted_"), 2 * x - 1, n)


def _declare(name):
    """The op ``special_<name>`` (no derivative) and its public function."""
    kernel = _shifted if name.startswith("shifted_") else _polynomial

    def forward(xp, input, n):
        return kernel(xp, name, xp.asarray(input), n)

    op = defop("special_" + name, n_in=2, promote="float", batch="pointwise",
               method=False)(forward)

    def public(input, n):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise _operands._invalid_arguments("special_" + name, [(0, input), (1, n)], [
                "Tensor x, Tensor n, *, Tensor out = None",
                "Number x, Tensor n, *, Tensor out = None",
                "Tensor x, Number n, *, Tensor out = None"])
        if not isinstance(input, Tensor):
            input = _number_tensor(input, n)
        elif not isinstance(n, Tensor):
            n = _number_tensor(n, input)
        refuse_half(name + "_cpu", input, n)
        return op(input, n)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = f"The {name.replace('_', ' ')} of degree ``n`` at ``input``."
    return public


def _number_tensor(value, beside):
    """A Python number operand as a 0-d tensor of the dtype it takes beside the tensor
    ``beside`` (a float beside an integer tensor: the default float dtype)."""
    value = _operands._python_number(value)
    dtype = _dtypes.result_type(beside, value)
    xp = _xp.namespace_of(beside._data)
    return Tensor._make(xp.asarray(value, dtype=dtype.np), None, False)


NAMES = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p")
FUNCTIONS = {name: _declare(name) for name in NAMES}
