"""``ember.cuda``: whether a GPU backend (CuPy with a visible GPU) is available."""
from .. import _device


def is_available():
    """True when CuPy is installed and sees at least one GPU."""
    return _device.cuda_available()


def device_count():
    if not is_available():
        return 0
    return _device._load_cupy().cuda.runtime.getDeviceCount()


from .random import (  # noqa: E402, F401  (torch.cuda re-exports its random functions)
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
