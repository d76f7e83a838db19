"""``ember.special``: PyTorch's ``torch.special`` namespace.

Most of its functions are ember ops under another name (``expit`` is ``sigmoid``, ``gammaln``
is ``lgamma``, ``psi`` is ``digamma``, ``multigammaln`` is ``mvlgamma``...): they are the same
functions here, so their results, graphs and ``grad_fn`` names are those ops', as in PyTorch.
The others are declared in ``ember/ops/special_functions.py`` (with derivatives),
``ember/ops/bessel.py`` and ``ember/ops/polynomials.py`` (no derivatives, as in PyTorch).
"""
from __future__ import annotations

from ._out import add_out as _add_out
from .ops.bessel import FUNCTIONS as _BESSEL
from .ops.gamma import digamma, polygamma
from .ops.gamma import lgamma as gammaln
from .ops.gamma import mvlgamma as multigammaln
from .ops.pointwise import xlogy
from .ops.polynomials import FUNCTIONS as _POLYNOMIALS
from .ops.reduction.sums import log_softmax as _log_softmax
from .ops.reduction.sums import logsumexp, softmax
from .ops.special_functions import (
    entr,
    erfcx,
    gammainc,
    gammaincc,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    ndtr,
    ndtri,
    xlog1py,
    zeta,
)
from .ops.unary import erf, erfc, erfinv, exp2, expm1, log1p, logit, sinc
from .ops.unary import round as _round
from .ops.unary import sigmoid as expit

psi = digamma
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
    return _round(input, decimals=decimals)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))``, computed stably (``ember.log_softmax``)."""
    return _log_softmax(input, dim, dtype=dtype)


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
