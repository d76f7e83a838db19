"""``torch.cuda.random``: seeding and saving the random state of CUDA devices.

ember draws the numbers of CUDA tensors on the host, from the same generators as CPU ones,
so with a GPU these act on ``ember.default_generator`` (seeding the CUDA stream seeds the CPU
one too, unlike PyTorch, whose devices have generators of their own). Without a GPU they do
what PyTorch's do without CUDA: seeding and setting states are silently ignored ("safe to
call when CUDA is not available"), ``get_rng_state_all`` is empty, and ``get_rng_state`` and
``initial_seed`` raise PyTorch's AssertionError.
"""
from __future__ import annotations

from .. import _device, _random

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def _available():
    return _device.cuda_available()


def manual_seed(seed):
    """Seed the generator of CUDA draws (ignored without a GPU)."""
    if _available():
        _random.default_generator.manual_seed(int(seed))


def manual_seed_all(seed):
    """Seed the generators of all CUDA devices (ember has one; ignored without a GPU)."""
    manual_seed(seed)


def seed():
    """Seed the generator of CUDA draws from the OS (ignored without a GPU)."""
    if _available():
        _random.default_generator.seed()


def seed_all():
    seed()


def initial_seed():
    """The seed of the generator of CUDA draws."""
    _device.canonical("cuda")  # PyTorch's AssertionError without CUDA
    return _random.default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The state of the generator of CUDA draws (ember's format, see ``ember._random``)."""
    _device.canonical("cuda")
    return _random.default_generator.get_state()


def get_rng_state_all():
    return [get_rng_state()] if _available() else []


def set_rng_state(new_state, device="cuda"):
    """Restore the generator of CUDA draws (ignored without a GPU)."""
    if _available():
        _random.default_generator.set_state(new_state)


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)
