"""What the hostile-file tests share (test_serialization_hostile.py for ember's own zip
format, test_serialization_pickle.py for PyTorch's): loading a file from its bytes,
asserting the one kind of refusal, and measuring the peak allocation of a load."""
import io
import tracemalloc

import pytest

import ember
from ember.serialization import CheckpointError

MiB = 1 << 20


def load_bytes(data, **kwargs):
    """``ember.load`` of the file whose bytes are ``data``."""
    return ember.load(io.BytesIO(data), **kwargs)


def refused(data, match, **kwargs):
    """Assert that loading ``data`` raises exactly CheckpointError with ``match`` in it."""
    with pytest.raises(CheckpointError, match=match) as info:
        load_bytes(data, **kwargs)
    assert type(info.value) is CheckpointError
    assert str(info.value).startswith("ember.load: ")
    return info.value


def peak_allocation(fn):
    """(result or exception, peak bytes traced while running ``fn``)."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned for the caller to check
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
