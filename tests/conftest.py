import numpy as np
import pytest

import ember


@pytest.fixture
def torch():
    """Real PyTorch as the oracle; tests using it skip cleanly when it is not installed."""
    return pytest.importorskip("torch")


def both(torch_mod):
    """ember and (when importable) PyTorch, for tests that run the same code on each."""
    return [ember] + ([torch_mod] if torch_mod is not None else [])


def to_np(t):
    """A NumPy copy of an ember or PyTorch tensor (None stays None)."""
    if t is None:
        return None
    return np.array(t.detach().cpu().numpy() if hasattr(t, "detach") else t)
