"""``torch.cuda.random``: the seeds of the GPUs' generators.

Without a GPU, seeding is accepted and does nothing, as in PyTorch (which seeds lazily, when
CUDA starts); reading a seed or a state raises PyTorch's "Torch not compiled with CUDA enabled".

With CuPy, ember draws random numbers for CUDA tensors from the default generator (on the host,
then copies them over), so ``torch.manual_seed`` is what makes GPU runs reproducible. The seeds
set here are recorded per device and read back by ``initial_seed``; they do not change the
numbers drawn. (PyTorch keeps a separate generator per GPU; ember does not.)
"""
from .. import _random
from ._common import cupy, device_index, require

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all"]

_seeds = {}  # GPU index -> the seed last set for it


def _default_seed(index):
    return _seeds.get(index, _random._DEFAULT_SEED)


def manual_seed(seed):
    """Seed the current GPU's generator (silently nothing without a GPU)."""
    seed = int(seed)
    if cupy() is not None:
        _seeds[device_index(None)] = seed


def manual_seed_all(seed):
    """Seed every GPU's generator (silently nothing without a GPU)."""
    seed = int(seed)
    cp = cupy()
    if cp is not None:
        for index in range(cp.cuda.runtime.getDeviceCount()):
            _seeds[index] = seed


def _random_seed():
    import secrets
    return secrets.randbits(63)


def seed():
    """Seed the current GPU's generator with a random number."""
    if cupy() is not None:
        manual_seed(_random_seed())


def seed_all():
    """Seed every GPU's generator with one random number."""
    if cupy() is not None:
        manual_seed_all(_random_seed())


def initial_seed():
    """The current GPU's seed."""
    require()
    return _default_seed(device_index(None))


def get_rng_state(device="cuda"):
    """The state that CUDA draws come from: the default generator's (see the module note)."""
    require()
    return _random.get_rng_state()


def get_rng_state_all():
    cp = cupy()
    count = cp.cuda.runtime.getDeviceCount() if cp is not None else 0
    return [get_rng_state(i) for i in range(count)]


def set_rng_state(new_state, device="cuda"):
    """Restore a state from ``get_rng_state`` (nothing without a GPU, as in PyTorch)."""
    if cupy() is not None:
        _random.set_rng_state(new_state)


def set_rng_state_all(new_states):
    for index, state in enumerate(new_states):
        set_rng_state(state, index)
