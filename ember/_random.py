"""Random numbers: one default generator (global state, as in PyTorch), seeded by ``manual_seed``.

ember draws from NumPy's PCG64, so seeded sequences are reproducible within ember but are not
PyTorch's (PyTorch's CPU generator is a Mersenne Twister with its own transforms).
"""
from __future__ import annotations

import numpy as np

_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed, so initial_seed() agrees


class Generator:
    """``torch.Generator``: a seedable source of random numbers."""

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed += 1 << 64
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        import secrets
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def get_state(self):
        from . import _dtypes
        from ._creation import tensor
        state = self._rng.bit_generator.state
        raw = repr(state).encode()
        return tensor(list(raw), dtype=_dtypes.uint8)

    def set_state(self, new_state):
        import ast
        state = ast.literal_eval(bytes(new_state.tolist()).decode())
        self._rng.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def rng(generator=None):
    """The NumPy generator behind ``generator`` (the default one for None), for one draw."""
    if _vmap.levels and _vmap.levels[-1][2] == "error":
        raise RuntimeError(_errors.VMAP_RANDOM)
    return (generator or default_generator)._rng


from . import _errors  # noqa: E402
from .ops.registry import vmap_state as _vmap  # noqa: E402  (vmap's randomness='error')
