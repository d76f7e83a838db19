"""``torch.accelerator`` and ``torch.version`` against PyTorch (a CPU-only build here: no
accelerator); with a GPU, ember's accelerator is CUDA through CuPy."""
import pytest

import ember

from .oracle import outcome

NO_ARGS = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "synchronize", "current_stream", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_stats", "reset_peak_memory_stats"]


@pytest.mark.skipif(ember.cuda.is_available(), reason="PyTorch here has no accelerator")
@pytest.mark.parametrize("name", NO_ARGS)
def test_without_an_accelerator_as_pytorch(torch, name):
    got = outcome(getattr(ember.accelerator, name))
    want = outcome(getattr(torch.accelerator, name))
    assert got == want


@pytest.mark.skipif(ember.cuda.is_available(), reason="PyTorch here has no accelerator")
def test_device_index_and_setting_as_pytorch(torch):
    for lib in (ember, torch):
        with lib.accelerator.device_index(None):  # None: nothing to switch
            pass
    assert outcome(ember.accelerator.set_device_index, 0) == \
        outcome(torch.accelerator.set_device_index, 0)

    def enter(lib):
        with lib.accelerator.device_index(0):
            pass
    assert outcome(enter, ember) == outcome(enter, torch)


def test_the_usual_guard_picks_the_same_device(torch):
    """word_language_model's idiom: the accelerator if there is one, else the CPU."""
    def pick(lib):
        acc = lib.accelerator
        return str(acc.current_accelerator() if acc.is_available() else lib.device("cpu"))
    if not ember.cuda.is_available():
        assert pick(ember) == pick(torch) == "cpu"
    else:
        assert pick(ember) == "cuda"


def test_version_module(torch):
    assert ember.version.hip is None and ember.version.debug is False
    if not ember.cuda.is_available():
        assert ember.version.cuda is torch.version.cuda is None
    else:
        assert isinstance(ember.version.cuda, str)
    assert ember.version.__version__ == ember.__version__
