"""``torch.random``: the default generator's seed and state, and ``fork_rng``.

ember has one default generator for every device (a CUDA tensor's numbers are drawn on the
host and copied), so seeding, saving or forking it covers CUDA too. See ``ember._random``
for how ember's streams and states differ from PyTorch's.
"""
from __future__ import annotations

import contextlib

from ._random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed",
           "fork_rng", "Generator", "default_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """A context in which random draws do not disturb the default generator: its state is
    saved on entry and restored on exit (also when an exception leaves the block).
    ``enabled=False`` turns it into a no-op; ``devices`` and ``device_type`` are accepted
    for PyTorch's signature (ember's one generator serves every device)."""
    if not enabled or device_type == "meta":
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
