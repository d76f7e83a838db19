"""Random numbers: ``torch.Generator`` and the default generator (global state, as in PyTorch).

Every random function of ember (``rand``, ``randint``, ``normal``, ``multinomial``, the
in-place fills, dropout, samplers...) draws from a ``Generator``: the one passed as
``generator=``, else ``default_generator``.

Where ember differs from PyTorch:

- ember draws from NumPy's PCG64, so a seeded sequence is reproducible within ember but is
  not PyTorch's (PyTorch's CPU generator is a Mersenne Twister with transforms of its own).
  Distributions, shapes, dtypes and errors are PyTorch's; the numbers are not.
- ``get_state()`` returns a uint8 tensor too, but in ember's own format (a tag, the PCG64
  state and the initial seed: ``STATE_SIZE`` bytes, not PyTorch's 5056). States do not
  travel between ember and PyTorch; ``set_state`` refuses one of another size or format.

As in PyTorch, the default generator is seeded from the operating system at start-up (so
two runs differ until ``manual_seed`` is called), while ``Generator()`` starts from the
fixed seed 67280421310721.
"""
from __future__ import annotations

import secrets

import numpy as np

from . import _device, _errors
from ._dispatch import vmap as _vmap  # (vmap's randomness='error')
from ._tensor import Tensor

_DEFAULT_SEED = 67280421310721  # PyTorch's seed of a fresh Generator(), so initial_seed() agrees
_TAG = b"emberPCG64\x00\x01"  # ember's state format, version 1
STATE_SIZE = len(_TAG) + 16 + 16 + 1 + 4 + 8  # tag, state, increment, cached half, seed
_U64 = 1 << 64


class Generator:
    """``torch.Generator``: a seedable source of random numbers, passed as ``generator=``.

    ``Generator(device='cpu')`` starts from seed 67280421310721, as PyTorch's does. On a
    CUDA device ember draws on the host and copies, so a cuda Generator is the same kind of
    object (its numbers differ from PyTorch's Philox ones, as the CPU ones do).
    """

    __slots__ = ("_device", "_seed", "_rng")

    def __init__(self, device="cpu"):
        dev = _device.canonical(device)
        self._device = dev
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        """The device this generator's numbers are for."""
        return self._device

    def manual_seed(self, seed):
        """Seed this generator with an integer in ``[-2**63, 2**64)`` (a negative seed stands
        for ``seed + 2**64``, as in PyTorch); returns the generator."""
        if isinstance(seed, np.integer):
            raise TypeError("an integer is required")  # PyTorch's parser: Python ints only
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise RuntimeError(f"manual_seed expected a long, but got {_type_word(seed)}")
        seed = int(seed)
        if not -(1 << 63) <= seed < _U64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % _U64
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        """Seed this generator from the operating system's entropy; returns the seed (64
        bits)."""
        s = secrets.randbits(64)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """This generator's state as a uint8 tensor of ember's format (``STATE_SIZE`` bytes;
        not interchangeable with PyTorch's states)."""
        bits = self._rng.bit_generator.state
        raw = (_TAG + bits["state"]["state"].to_bytes(16, "little")
               + bits["state"]["inc"].to_bytes(16, "little")
               + bytes([bits["has_uint32"]]) + int(bits["uinteger"]).to_bytes(4, "little")
               + self._seed.to_bytes(8, "little"))
        return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy(), None, False)

    def set_state(self, new_state):
        """Restore a state from ``get_state()`` (the seed included); returns the generator.
        A tensor that is not uint8, or not of ember's size and format, is refused."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {_type_word(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = _device.to_numpy(new_state._data).tobytes()
        if len(raw) != STATE_SIZE:
            raise RuntimeError(
                f"Expected an ember generator state of size {STATE_SIZE} but found the input "
                f"RNG state size to be {len(raw)} (ember's states are its own format: a "
                "state saved by PyTorch cannot be restored in ember, nor the reverse)")
        if raw[:len(_TAG)] != _TAG:
            raise RuntimeError("Invalid ember generator state: it does not start with ember's "
                               "format tag (was it saved by ember's get_state()?)")
        at = len(_TAG)
        bits = {"bit_generator": "PCG64",
                "state": {"state": int.from_bytes(raw[at:at + 16], "little"),
                          "inc": int.from_bytes(raw[at + 16:at + 32], "little")},
                "has_uint32": raw[at + 32],
                "uinteger": int.from_bytes(raw[at + 33:at + 37], "little")}
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = bits
        self._rng = rng
        self._seed = int.from_bytes(raw[at + 37:at + 45], "little")
        return self

    def clone_state(self):
        """A new generator in this one's state (drawing the same numbers from here on)."""
        twin = Generator(self._device)
        return twin.set_state(self.get_state())

    def __reduce__(self):
        return _rebuild, (str(self._device), self.get_state())


def _rebuild(device, state):
    return Generator(device).set_state(state)


def _type_word(obj):
    return "Tensor" if isinstance(obj, Tensor) else type(obj).__name__


default_generator = Generator()
default_generator.seed()  # from the OS, as PyTorch seeds its default CPU generator


def manual_seed(seed):
    """Seed the default generator (``int(seed)``, so ``1.5`` or ``'3'`` pass, as in PyTorch);
    returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the default generator from the operating system; returns the 64-bit seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state (a uint8 tensor of ember's format)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


def check_generator(generator, name):
    """PyTorch's TypeError for a ``generator=`` that is not a Generator (or None)."""
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not "
                        f"{_type_word(generator)}")


def rng(generator=None):
    """The NumPy generator behind ``generator`` (the default one for None), for one draw."""
    if _vmap.levels and _vmap.levels[-1][2] == "error":
        raise RuntimeError(_errors.VMAP_RANDOM)
    if generator is None:
        return default_generator._rng
    try:
        return generator._rng
    except AttributeError:
        raise TypeError(f"expected a torch.Generator, but got {_type_word(generator)}") \
            from None

