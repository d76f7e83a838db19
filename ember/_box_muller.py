"""Normal samples in float32 by the Box-Muller transform, for ``normal``, ``normal_``.

NumPy's normal samplers are ziggurats, ~9 ms per million samples here in float32 and float64
alike, where PyTorch's CPU kernel (a vectorised Box-Muller) takes 2.5-3. From two independent
uniforms ``u1`` in (0, 1] and ``u2`` in [0, 1), ``r = sqrt(-2 log u1)`` and ``t = 2 pi u2``
give two independent N(0, 1) samples ``r cos t`` and ``r sin t`` (Box and Muller, 1958): with
NumPy's float32 uniforms (1.5 ms per million) and float32 log, sqrt, sin and cos, ~3.5 ms.

Exactness: ``u1 = 1 - u`` with ``u`` on NumPy's float32 grid of [0, 1) (multiples of 2**-24)
is never 0, so the log is finite. The grid alone would leave the radius only a few discrete
values far out (u1 = 2**-24, 2 * 2**-24, ...: r = 5.77, 5.65, ...) and none beyond 5.77:
a truncated tail. So the draws with u1 <= 2**-8 (exactly the grid's lowest 2**16 values,
probability 2**-8) are drawn again uniform on (0, 2**-8] at float64's resolution, their
radius computed in float64: conditioned on that event u1 is uniform on that interval, so the
distribution is unchanged and its tail is no longer cut (float64 uniforms reach past 9
standard deviations, where the ziggurat's float32 results end too).

Float64 samples stay NumPy's ziggurat (``Generator.standard_normal``): ember's float64
sequences are as before; its float32 ones are these.
"""
from __future__ import annotations

import math

import numpy as np

_TAIL = 2.0 ** -8  # u1 at or below this is drawn again at float64 resolution (see above)
_TWO_PI = np.float32(2 * math.pi)


def standard_normal(rng, shape, dtype):
    """N(0, 1) samples of ``shape`` from NumPy Generator ``rng``, as NumPy dtype ``dtype``
    (float32 drawn here; any other dtype from NumPy's float64 ziggurat, then cast)."""
    if np.dtype(dtype) != np.float32:
        return rng.standard_normal(shape).astype(dtype, copy=False)
    return normal32(rng, shape)


def normal32(rng, shape, mean=0.0, std=1.0):
    """``mean + std * N(0, 1)`` samples in float32, a new C-contiguous array of ``shape``."""
    n = math.prod(shape)
    half = (n + 1) // 2
    u = rng.random(2 * half, dtype=np.float32)
    r, t = u[:half], u[half:]
    np.subtract(np.float32(1), r, out=r)  # u1 in (0, 1]
    tail = np.flatnonzero(r <= _TAIL)
    np.log(r, out=r)
    r *= np.float32(-2)
    np.sqrt(r, out=r)
    if tail.size:
        fine = _TAIL * (1.0 - rng.random(tail.size))  # uniform on (0, 2**-8], float64
        r[tail] = np.sqrt(-2.0 * np.log(fine))
    if std != 1:
        r *= np.float32(std)
    t *= _TWO_PI
    out = np.empty(2 * half, np.float32)
    np.cos(t, out=out[:half])
    np.sin(t, out=out[half:])
    out[:half] *= r
    out[half:] *= r
    if mean != 0:
        out += np.float32(mean)
    return out[:n].reshape(shape)
