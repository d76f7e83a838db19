"""The three discrete Fourier transforms every ``torch.fft`` function is made of, as PyTorch
builds them (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``): their forwards on raw arrays
(``xp.fft``, NumPy's or CuPy's) and their derivatives, which are Fourier transforms again.
The public functions (``ember/fft.py``) resize the input to the requested lengths first, with
ordinary differentiable ops, and hand these ops the dims (non-negative, sorted as given) and
the normalisation (``"backward"``, ``"ortho"`` or ``"forward"``, as NumPy reads them: the scale
of the transform in its own direction).

Derivatives (PyTorch's convention for complex numbers; the rules state ``g * f'(z)`` and the
engine conjugates around them, see ``registry.py``):

- ``fft_c2c``: a DFT matrix is symmetric, so the transposed transform is the same transform.
- ``fft_r2c``: the transposed one-sided transform zero-fills the missing half of the spectrum
  and runs the full transform; the input is real, so the real part is its gradient.
- ``fft_c2r``: the spectrum's interior bins stand for two bins of the full Hermitian spectrum,
  so the gradient is the one-sided forward transform of ``g`` (same scale) with those bins
  doubled; the DC bin (and the Nyquist bin of an even length) are not.

All three are linear (over the reals), so their forward-mode tangents are the op applied to
the tangents (``jvp="linear"``). Under vmap their ``dim`` moves past the batch dims
(``batch="moved"``), so a batch is one transform.
"""
from __future__ import annotations

from .. import _xp
from .registry import defop

__all__ = []

# The normalisation that scales the opposite direction's transform as much as ``norm`` scales
# this one (the scale of a transform, not its direction, is what its transpose keeps).
FLIPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _take(d, s):
    """An index selecting ``s`` (a slice) along dim ``d``."""
    return (slice(None),) * d + (s,)


@defop("fft_c2c", n_in=1, jvp="linear", batch="moved")
def _fft_c2c(xp, input, dim, norm, forward):
    """The complex transform of ``input`` over ``dim`` (forward: ``exp(-2πi jk/n)``)."""
    return (xp.fft.fftn if forward else xp.fft.ifftn)(input, axes=dim, norm=norm)


_fft_c2c.defvjp(lambda xp, g, ans, input, dim, norm, forward: xp.fft_c2c(g, dim, norm, forward))


@defop("fft_r2c", n_in=1, jvp="linear", batch="moved")
def _fft_r2c(xp, input, dim, norm, onesided):
    """The forward transform of a real ``input``: the whole spectrum, or (``onesided``: the
    length of the last dim, kept for the derivative) its first ``n // 2 + 1`` bins there.
    (The inverse of a real input is the conjugate of this one, see ``ember/fft.py``.)"""
    if onesided is None:
        return xp.fft.fftn(input, axes=dim, norm=norm)
    return xp.fft.rfftn(input, axes=dim, norm=norm)


def _r2c_vjp(xp, g, ans, input, dim, norm, onesided):
    if onesided is not None and onesided > g.shape[dim[-1]]:
        d = dim[-1]
        shape = list(g.shape)
        shape[d] = onesided - g.shape[d]
        g = xp.concatenate([g, xp.zeros(tuple(shape), dtype=g.dtype)], axis=d)
    return xp.real(xp.fft_c2c(g, dim, norm, True))


_fft_r2c.defvjp(_r2c_vjp)


@defop("fft_c2r", n_in=1, jvp="linear", batch="moved")
def _fft_c2r(xp, input, dim, norm, last_size):
    """The real inverse transform of the one-sided spectrum ``input`` (``last_size // 2 + 1``
    bins along the last of ``dim``), ``last_size`` long there."""
    shape = [input.shape[d] for d in dim[:-1]] + [last_size]
    return xp.fft.irfftn(input, s=shape, axes=dim, norm=norm)


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
