"""The three discrete Fourier transforms every ``torch.fft`` function is made of, as PyTorch
builds them (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``): their forwards on raw arrays
(``xp.fft``, NumPy's or CuPy's) and their derivatives, which are Fourier transforms again.
The public functions (``ember/fft.py``) resize the input to the requested lengths first, with
ordinary differentiable ops, and hand these ops the dims (non-negative, sorted as given) and
the normalisation (``"backward"``, ``"ortho"`` or ``"forward"``, as NumPy reads them: the scale
of the transform in its own direction).

Derivatives (PyTorch's convention for complex numbers, see ``registry.py``):

- ``fft_c2c``: the adjoint of a DFT matrix (symmetric) is its conjugate, the transform the
  other way at the same scale.
- ``fft_r2c``: the adjoint one-sided transform zero-fills the missing half of the spectrum
  and runs the full transform the other way; the input is real, so the real part is its
  gradient.
- ``fft_c2r``: the spectrum's interior bins stand for two bins of the full Hermitian spectrum,
  so the gradient is the one-sided forward transform of ``g`` (same scale) with those bins
  doubled; the DC bin (and the Nyquist bin of an even length) are not.

All three are linear (over the reals), so their forward-mode tangents are the op applied to
the tangents (``jvp="linear"``). Under vmap their ``dim`` moves past the batch dims
(``batch="moved"``), so a batch is one transform.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import _xp
from .registry import defop

__all__ = []

# The normalisation that scales the opposite direction's transform as much as ``norm`` scales
# this one (the scale of a transform, not its direction, is what its transpose keeps).
FLIPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# NumPy 2's pocketfft computes in single precision, but its Python layer hands the gufunc the
# scale 1 (a forward transform's "backward" norm, an inverse's "forward") as the int ``1``,
# which selects the double-precision loop: the input is cast to complex128 and the result back,
# in buffered chunks (a 500 x 1000 complex64 fft: 10 ms, against 1.4 ms for its ifft). Those
# transforms call the gufunc here, with the scale a float32 1: the same transform, in float32.
_POCKET = getattr(np.fft, "_pocketfft_umath", None)
_SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


# pocketfft transforms a prime length by a direct O(n^2) pass up to ~120 points (Bluestein's
# algorithm beyond). The same DFT as a product with its matrix runs in BLAS: 1.3-2x faster
# from 17 points up (83 points over 55 x 110 lanes of complex64: 25 -> 14 ms), slower past
# ~120 where Bluestein takes over.
_DFT_PRIMES = range(17, 101)


@functools.lru_cache(maxsize=32)
def _dft_matrix(n, forward, norm):
    """The complex64 matrix of the ``n``-point DFT (``fft`` if ``forward``, else ``ifft``) at
    ``norm``'s scale, from float64 twiddles (each entry correctly rounded)."""
    k = np.arange(n)
    scale = {"backward": 1.0 if forward else 1.0 / n, "ortho": n ** -0.5,
             "forward": 1.0 / n if forward else 1.0}[norm]
    angle = (-2 if forward else 2) * np.pi * (np.outer(k, k) % n) / n
    return (np.exp(1j * angle) * scale).astype(np.complex64)


def _dft_by_product(a, axis, forward, norm):
    """The DFT of complex64 ``a`` along ``axis`` as a matrix product (``_DFT_PRIMES``)."""
    n = a.shape[axis]
    W = _dft_matrix(n, forward, norm)  # symmetric: the product from either side
    a = np.ascontiguousarray(a)
    before, after = math.prod(a.shape[:axis]), math.prod(a.shape[axis + 1:])
    if after == 1:
        return np.matmul(a.reshape(before, n), W).reshape(a.shape)
    return np.matmul(W, a.reshape(before, n, after)).reshape(a.shape)


def _transform(xp, a, n, axis, kind, norm):
    """``xp.fft.<kind>(a, n, axis, norm)`` (kind: fft, ifft, rfft, irfft), in ``a``'s
    precision."""
    if kind in ("fft", "ifft") and a.dtype == _SINGLE[0] and type(a) is np.ndarray:
        # a real input cast first: the gufunc's own buffered cast makes the transform 3x
        # slower (447 x 1119 float32: 36 ms -> 12 ms)
        a = a.astype(np.complex64)
    if (kind in ("fft", "ifft") and type(a) is np.ndarray and a.dtype == _SINGLE[1]
            and n == a.shape[axis] and n in _DFT_PRIMES and _is_prime(n)):
        return _dft_by_product(a, axis % a.ndim, kind == "fft", norm)
    unit = norm == ("forward" if kind[0] == "i" else "backward")
    if not (unit and _POCKET is not None and type(a) is np.ndarray and a.dtype in _SINGLE):
        return getattr(xp.fft, kind)(a, n=n, axis=axis, norm=norm)
    axis = axis % a.ndim
    if kind == "rfft":
        ufunc, out_n = (_POCKET.rfft_n_even if n % 2 == 0 else _POCKET.rfft_n_odd), n // 2 + 1
    else:
        ufunc, out_n = getattr(_POCKET, kind), n
    out = np.empty(a.shape[:axis] + (out_n,) + a.shape[axis + 1:],
                   dtype=np.float32 if kind == "irfft" else np.complex64)
    return ufunc(a, np.float32(1), axes=[(axis,), (), (axis,)], out=out)


def _is_prime(n):
    return n > 1 and all(n % p for p in range(2, math.isqrt(n) + 1))


def _fftn(xp, a, axes, norm, forward):
    """``xp.fft.fftn`` (``ifftn``): one axis at a time, the last first, as NumPy does."""
    for axis in reversed(axes):
        a = _transform(xp, a, a.shape[axis], axis, "fft" if forward else "ifft", norm)
    return a


def _take(d, s):
    """An index selecting ``s`` (a slice) along dim ``d``."""
    return (slice(None),) * d + (s,)


# ``fft_c2c`` and ``fft_r2c`` state their rules in PyTorch's convention (``holomorphic=False``):
# the gradient of ``F x`` is ``F^H g = conj(F) g``, the transform the other way at the same
# scale; stated as ``F^T g`` (``F`` is symmetric) the engine would conjugate around it, two
# more passes over a complex gradient.
@defop("fft_c2c", n_in=1, jvp="linear", batch="moved", holomorphic=False)
def _fft_c2c(xp, input, dim, norm, forward):
    """The complex transform of ``input`` over ``dim`` (forward: ``exp(-2πi jk/n)``)."""
    return _fftn(xp, input, dim, norm, forward)


_fft_c2c.defvjp(lambda xp, g, ans, input, dim, norm, forward:
                xp.fft_c2c(g, dim, FLIPPED[norm], not forward))


@defop("fft_r2c", n_in=1, jvp="linear", batch="moved", holomorphic=False)
def _fft_r2c(xp, input, dim, norm, onesided):
    """The forward transform of a real ``input``: the whole spectrum, or (``onesided``: the
    length of the last dim, kept for the derivative) its first ``n // 2 + 1`` bins there.
    (The inverse of a real input is the conjugate of this one, see ``ember/fft.py``.)"""
    if onesided is None:
        return _fftn(xp, input, dim, norm, True)
    out = _transform(xp, input, input.shape[dim[-1]], dim[-1], "rfft", norm)
    return _fftn(xp, out, dim[:-1], norm, True)  # (NumPy's rfftn, step for step)


def _r2c_vjp(xp, g, ans, input, dim, norm, onesided):
    if onesided is not None and onesided > g.shape[dim[-1]]:
        d = dim[-1]
        shape = list(g.shape)
        shape[d] = onesided - g.shape[d]
        g = xp.concatenate([g, xp.zeros(tuple(shape), dtype=g.dtype)], axis=d)
    return xp.real(xp.fft_c2c(g, dim, FLIPPED[norm], False))


_fft_r2c.defvjp(_r2c_vjp)


@defop("fft_c2r", n_in=1, jvp="linear", batch="moved")
def _fft_c2r(xp, input, dim, norm, last_size):
    """The real inverse transform of the one-sided spectrum ``input`` (``last_size // 2 + 1``
    bins along the last of ``dim``), ``last_size`` long there."""
    for d in dim[:-1]:  # (NumPy's irfftn, step for step)
        input = _transform(xp, input, input.shape[d], d, "ifft", norm)
    return _transform(xp, input, last_size, dim[-1], "irfft", norm)


def _c2r_vjp(xp, g, ans, input, dim, norm, last_size):
    gi = xp.fft_r2c(g, dim, FLIPPED[norm], last_size)
    d = dim[-1]
    twice = last_size - gi.shape[d]  # bins 1..twice appear twice in the full spectrum
    if twice <= 0:
        return gi
    return xp.concatenate([gi[_take(d, slice(0, 1))], gi[_take(d, slice(1, 1 + twice))] * 2,
                           gi[_take(d, slice(1 + twice, None))]], axis=d)


_fft_c2r.defvjp(_c2r_vjp)

_xp.register_extra("fft_c2c", _fft_c2c.forward, _fft_c2c)
_xp.register_extra("fft_r2c", _fft_r2c.forward, _fft_r2c)
_xp.register_extra("fft_c2r", _fft_c2r.forward, _fft_c2r)
