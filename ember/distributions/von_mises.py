"""``VonMises``: the circular normal distribution on angles, density
``exp(concentration cos(x - loc)) / (2 pi I0(concentration))``.

``log I0`` and ``log I1`` use the polynomial approximations of Abramowitz & Stegun 9.8.1-9.8.4
(relative error below ~2e-7), as PyTorch does, written with ember ops so gradients flow.
Samples come from Best & Fisher's (1979) rejection sampler (no reparameterisation).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation, _random
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..ops import selection
from . import constraints
from ._samplers import _host64
from .distribution import _EMPTY, Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1/9.8.3 (x < 3.75, in (x/3.75)^2) and 9.8.2/9.8.4 (x >= 3.75, in
# 3.75/x; I(x) sqrt(x) e^-x), for I0 and I1 (I1's small form is I1(x) / x)
_SMALL = ((1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813),
          (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411))
_LARGE = ((0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
           0.02635537, -0.01647633, 0.00392377),
          (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
           -0.02895312, 0.01787654, -0.00420059))


def _poly(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = result * y + c
    return result


def _log_bessel_i(x, order):
    """``log I_order(x)`` for ``x > 0`` and order 0 or 1."""
    small = _poly((x / 3.75).pow(2), _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _poly(3.75 / x, _LARGE[order]).log()
    return selection.where(x < 3.75, small.log(), large)


def _best_fisher(rng, loc, kappa, r):
    """Angles in ``[-pi, pi)`` from VonMises(loc, kappa) by rejection from a wrapped Cauchy
    envelope whose parameter ``r`` suits ``kappa``; NumPy arrays in and out."""
    out = np.empty(kappa.shape)
    todo = np.ones(kappa.shape, dtype=bool)
    while todo.any():
        k, rr = kappa[todo], r[todo]
        u1, u2, u3 = rng.random((3,) + k.shape)
        z = np.cos(math.pi * u1)
        f = (1 + rr * z) / (rr + z)
        c = k * (rr - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = (c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)
        theta = np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1))
        idx = np.flatnonzero(todo)[accept]
        out.reshape(-1)[idx] = theta[accept]
        todo.reshape(-1)[idx] = False
    return np.mod(out + loc + math.pi, 2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution with mean direction ``loc`` and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def set_params(new, batch_shape):
            new.loc = self.loc.expand(batch_shape)
            new.concentration = self.concentration.expand(batch_shape)
        return self._expanded(VonMises, batch_shape, _instance, set_params)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = self.concentration * (value - self.loc).cos()
        return result - math.log(2 * math.pi) - _log_bessel_i(self.concentration, 0)

    @lazy_property
    def _proposal_r(self):
        """The envelope's parameter: ``1/rho + rho`` with ``rho`` from Best & Fisher (in
        float64; for tiny concentrations its limit ``1/kappa + kappa``)."""
        kappa = self.concentration.detach().double()
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        large = (1 + rho**2) / (2 * rho)
        small = 1 / kappa + kappa
        return selection.where(kappa < 1e-5, small, large)

    def sample(self, sample_shape=_EMPTY):
        shape = tuple(self._extended_shape(Size(sample_shape)))
        with no_grad():
            kappa = np.broadcast_to(_host64(self.concentration), shape)
            r = np.broadcast_to(_host64(self._proposal_r), shape)
            loc = np.broadcast_to(_host64(self.loc), shape)
            angles = _best_fisher(_random.rng(None), loc, kappa, r)
            return _creation.tensor(angles, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """``1 - I1(kappa) / I0(kappa)`` (the circular variance)."""
        c = self.concentration
        return 1 - (_log_bessel_i(c, 1) - _log_bessel_i(c, 0)).exp()
