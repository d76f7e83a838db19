"""The random draws and special functions the distributions need beyond ember's ops.

- ``noise(like, shape, draw)``: standard draws (uniform, exponential, Cauchy...) from ember's
  generator, in ``like``'s dtype and device: the noise of reparameterised samples.
- ``standard_gamma(alpha)``: Gamma(alpha, 1) draws whose gradient with respect to ``alpha`` is
  the implicit reparameterisation gradient ``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)``
  (F the cdf, f the density: moving alpha while keeping the draw's quantile fixed). It is
  computed exactly (to float64 round-off) from the series of the regularised incomplete gamma
  function, term by term; PyTorch uses fitted approximations, so the two agree to about 1e-3.
  The gradient has no derivative of its own (a second backward raises PyTorch's error).
- ``dirichlet(alpha)``: normalised gamma draws; the gradient flows through the gammas (a
  valid pathwise gradient, conditioned on the gammas rather than on the normalised draw alone).
- ``gammainc(a, x)``: the regularised lower incomplete gamma function P(a, x) (Gamma's cdf),
  differentiable in ``x`` only (PyTorch's ``igamma`` has no derivative in ``a`` either).
"""
from __future__ import annotations

import numpy as np

from .. import _creation, _device, _random
from ..autograd.function import Function
from ..ops import shape as shape_ops
from ..ops.gamma import _digamma64, _lgamma_raw

__all__ = ["dirichlet", "gammainc", "noise", "standard_gamma"]

_MAX_TERMS = 200_000  # the series needs about x - a + 10 sqrt(x) terms: x up to ~1e5


def noise(like, shape, draw):
    """``draw(rng, shape)`` (a NumPy sampler on ember's default generator) as a tensor of
    ``shape`` in ``like``'s dtype and on its device."""
    values = np.asarray(draw(_random.rng(None), tuple(shape)), dtype=np.float64)
    return _creation.tensor(values, dtype=like.dtype, device=like.device)


def _host64(t):
    return np.asarray(_device.to_numpy(t.detach()._data), dtype=np.float64)


def _lower_gamma_series(a, x, with_derivative):
    """P(a, x) and, optionally, dP/da, by the series
    P = sum_n exp((a+n) log x - x - lgamma(a+n+1)), whose n-th term's derivative in ``a`` is
    the term times ``log x - psi(a+n+1)``. Terms shrink by ``x / (a+n+1)``; elements are
    dropped from the loop as they converge."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    flat_a, flat_x = a.reshape(-1).copy(), x.reshape(-1).copy()
    p = np.zeros_like(flat_a)
    dp = np.zeros_like(flat_a)
    positive = flat_x > 0
    idx = np.flatnonzero(positive)
    aa, xx = flat_a[idx], flat_x[idx]
    logx = np.log(xx)
    term = np.exp(aa * logx - xx - _lgamma_raw(np, aa + 1))
    psi = _digamma64(np, aa + 1)
    n = aa + 1
    tot, dtot = term.copy(), term * (logx - psi)
    for _ in range(_MAX_TERMS):
        if idx.size == 0:
            break
        term = term * xx / n
        psi = psi + 1 / n
        n = n + 1
        tot += term
        dtot += term * (logx - psi)
        done = (term <= 1e-17 * tot) & (xx < n)
        if done.any():
            p[idx[done]], dp[idx[done]] = tot[done], dtot[done]
            keep = ~done
            idx, aa, xx, logx, term, psi, n, tot, dtot = (
                v[keep] for v in (idx, aa, xx, logx, term, psi, n, tot, dtot))
    else:
        raise NotImplementedError("ember's incomplete gamma series did not converge "
                                  f"(arguments up to {xx.max():g})")
    p[flat_x == np.inf] = 1.0
    p = np.minimum(p, 1.0).reshape(a.shape)
    return (p, dp.reshape(a.shape)) if with_derivative else p


def _gamma_draw_derivative(alpha, sample):
    """``dx/dalpha`` at the draws ``sample`` of Gamma(alpha, 1), as a NumPy array."""
    a = _host64(alpha)
    x = np.maximum(_host64(sample), np.finfo(np.float64).tiny)
    _, dp_da = _lower_gamma_series(a, x, with_derivative=True)
    log_density = (a - 1) * np.log(x) - x - _lgamma_raw(np, a)
    dx_da = -dp_da / np.exp(log_density)
    return np.where(np.isfinite(dx_da), dx_da, 0.0)  # an underflowed draw: x stays 0


class _StandardGammaGrad(Function):
    """``dx/dalpha`` as a recorded function of ``alpha`` without a derivative of its own:
    differentiating it raises PyTorch's NotImplementedError (a second derivative of a gamma
    draw is not silently 0)."""

    @staticmethod
    def forward(ctx, alpha, sample):
        values = _gamma_draw_derivative(alpha, sample)
        return _creation.tensor(values, dtype=alpha.dtype, device=alpha.device)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not "
                                  "implemented.")


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws with the implicit reparameterisation gradient."""

    @staticmethod
    def forward(ctx, alpha):
        a = _host64(alpha)
        x = _random.rng(None).standard_gamma(a)
        sample = _creation.tensor(x, dtype=alpha.dtype, device=alpha.device)
        ctx.save_for_backward(alpha, sample)
        return sample

    @staticmethod
    def backward(ctx, grad):
        alpha, sample = ctx.saved_tensors
        return grad * _StandardGammaGrad.apply(alpha, sample.detach())


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws of ``alpha``'s shape (differentiable in ``alpha``)."""
    return _StandardGamma.apply(alpha)


def dirichlet(alpha):
    """Dirichlet(alpha) draws over the last dim: gammas normalised, kept inside ``(0, 1]``."""
    gammas = standard_gamma(alpha)
    tiny = float(np.finfo(np.dtype(alpha.dtype.np)).tiny)
    gammas = gammas.clamp(min=tiny)
    return gammas / gammas.sum(-1, keepdim=True)


class _GammaInc(Function):
    """P(a, x) for a detached ``a``, with dP/dx = x^(a-1) e^-x / Gamma(a) (recorded, so it
    has its own derivative)."""

    @staticmethod
    def forward(ctx, a, x):
        p = _lower_gamma_series(_host64(a), _host64(x), with_derivative=False)
        ctx.save_for_backward(a, x)
        return _creation.tensor(p, dtype=x.dtype, device=x.device)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        density = ((a - 1) * x.log() - x - a.lgamma()).exp()
        return None, grad * density


class _NoDerivative(Function):
    """Zeros shaped like ``a`` whose derivative raises: added to a result, it makes asking
    for the gradient with respect to ``a`` an error (and only asking for that one)."""

    @staticmethod
    def forward(ctx, a):
        return _creation.zeros_like(a)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def gammainc(a, x):
    """The regularised lower incomplete gamma function of broadcast ``a`` and ``x``;
    differentiable in ``x`` only, as PyTorch's."""
    a, x = shape_ops.broadcast_tensors(a, x)
    result = _GammaInc.apply(a.detach(), x)
    return result + _NoDerivative.apply(a) if a.requires_grad else result
