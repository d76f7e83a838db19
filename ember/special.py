"""``ember.special``: PyTorch's ``torch.special`` namespace.

Most of its functions are ember ops under another name (``expit`` is ``sigmoid``, ``gammaln``
is ``lgamma``, ``psi`` is ``digamma``, ``multigammaln`` is ``mvlgamma``...): here they call
those functions, so their results, graphs and ``grad_fn`` names are those ops', as in PyTorch;
only PyTorch's TypeError for a non-tensor names them as ``torch.special`` does.
The others are declared in ``ember/ops/special_functions.py`` (with derivatives),
``ember/ops/bessel.py`` and ``ember/ops/polynomials.py`` (no derivatives, as in PyTorch).
"""
from __future__ import annotations

import functools

from ._out import add_out as _add_out
from ._tensor import Tensor as _Tensor
from .ops import gamma as _gamma
from .ops import unary as _unary
from .ops.bessel import FUNCTIONS as _BESSEL
from .ops.binary_math import xlogy as _xlogy
from .ops.incomplete_gamma import gammainc, gammaincc
from .ops.operands import _check_tensor, _invalid_arguments
from .ops.polynomials import FUNCTIONS as _POLYNOMIALS
from .ops.reduction.sums import log_softmax as _log_softmax
from .ops.reduction.sums import logsumexp as _logsumexp
from .ops.reduction.sums import softmax as _softmax
from .ops.special_functions import (
    entr,
    erfcx,
    i0e,
    i1,
    i1e,
    log_ndtr,
    ndtr,
    ndtri,
    xlog1py,
    zeta,
)
from .ops.special_functions import i0 as _i0


def _special(fn, name, position=1):
    """``fn`` under its ``torch.special`` name: PyTorch's TypeError for a non-tensor input
    names it ``special_<name>`` (the rest, and the graph, are ``fn``'s own)."""
    @functools.wraps(fn)
    def function(*args, **kwargs):
        value = args[position - 1] if len(args) >= position else kwargs.get("input")
        if not isinstance(value, _Tensor):
            _check_tensor("special_" + name, value, "input", position)
        return fn(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    return function


digamma = _special(_gamma.digamma, "digamma")
psi = _special(_gamma.digamma, "psi")
polygamma = _special(_gamma.polygamma, "polygamma", position=2)
gammaln = _special(_gamma.lgamma, "gammaln")
multigammaln = _special(_gamma.mvlgamma, "multigammaln")
erf = _special(_unary.erf, "erf")
erfc = _special(_unary.erfc, "erfc")
erfinv = _special(_unary.erfinv, "erfinv")
exp2 = _special(_unary.exp2, "exp2")
expm1 = _special(_unary.expm1, "expm1")
log1p = _special(_unary.log1p, "log1p")
logit = _special(_unary.logit, "logit")
sinc = _special(_unary.sinc, "sinc")
expit = _special(_unary.sigmoid, "expit")
i0 = _special(_i0, "i0")
softmax = _special(_softmax, "softmax")
logsumexp = _special(_logsumexp, "logsumexp")
airy_ai = _BESSEL["airy_ai"]
bessel_j0 = _BESSEL["bessel_j0"]
bessel_j1 = _BESSEL["bessel_j1"]
bessel_y0 = _BESSEL["bessel_y0"]
bessel_y1 = _BESSEL["bessel_y1"]
modified_bessel_i0 = _BESSEL["modified_bessel_i0"]
modified_bessel_i1 = _BESSEL["modified_bessel_i1"]
modified_bessel_k0 = _BESSEL["modified_bessel_k0"]
modified_bessel_k1 = _BESSEL["modified_bessel_k1"]
scaled_modified_bessel_k0 = _BESSEL["scaled_modified_bessel_k0"]
scaled_modified_bessel_k1 = _BESSEL["scaled_modified_bessel_k1"]
spherical_bessel_j0 = _BESSEL["spherical_bessel_j0"]
chebyshev_polynomial_t = _POLYNOMIALS["chebyshev_polynomial_t"]
chebyshev_polynomial_u = _POLYNOMIALS["chebyshev_polynomial_u"]
chebyshev_polynomial_v = _POLYNOMIALS["chebyshev_polynomial_v"]
chebyshev_polynomial_w = _POLYNOMIALS["chebyshev_polynomial_w"]
shifted_chebyshev_polynomial_t = _POLYNOMIALS["shifted_chebyshev_polynomial_t"]
shifted_chebyshev_polynomial_u = _POLYNOMIALS["shifted_chebyshev_polynomial_u"]
shifted_chebyshev_polynomial_v = _POLYNOMIALS["shifted_chebyshev_polynomial_v"]
shifted_chebyshev_polynomial_w = _POLYNOMIALS["shifted_chebyshev_polynomial_w"]
hermite_polynomial_h = _POLYNOMIALS["hermite_polynomial_h"]
hermite_polynomial_he = _POLYNOMIALS["hermite_polynomial_he"]
laguerre_polynomial_l = _POLYNOMIALS["laguerre_polynomial_l"]
legendre_polynomial_p = _POLYNOMIALS["legendre_polynomial_p"]


def round(input, *, decimals=0):  # noqa: A001 - PyTorch's name
    """Round half to even, to ``decimals`` places: ``ember.round`` with ``decimals`` always
    given, as PyTorch's (its graph: RoundBackward1; integers refused)."""
    if not isinstance(input, _Tensor):
        _check_tensor("special_round", input)
    return _unary.round(input, decimals=decimals)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))``, computed stably (``ember.log_softmax``)."""
    if not isinstance(input, _Tensor):
        _check_tensor("special_log_softmax", input)
    return _log_softmax(input, dim, dtype=dtype)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (``ember.xlogy``)."""
    if not isinstance(input, _Tensor) and not isinstance(other, _Tensor):
        raise _invalid_arguments("special_xlogy", [(0, input), (1, other)], [
            "Tensor input, Tensor other, *, Tensor out = None",
            "Number self, Tensor other, *, Tensor out = None",
            "Tensor input, Number other, *, Tensor out = None"])
    return _xlogy(input, other)


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]

_add_out(globals(), "special.")  # out= on every function (ember/_out_rules.py)
