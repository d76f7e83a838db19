"""``linalg.cholesky`` of a matrix whose factorization meets a NaN pivot raises PyTorch's
``_LinAlgError`` naming the leading minor (and the batch element): OpenBLAS's ``potrf``
carries the NaN on without an error, so ember checks the pivots itself. A NaN the lower
triangle never reads (above the diagonal) changes nothing, as in PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import ember

NAN = float("nan")
CASES = {
    "last pivot": np.array([[4.0, 1.0], [1.0, NAN]]),
    "first pivot": np.array([[NAN, 1.0], [1.0, 4.0]]),
    "symmetric off-diagonal": np.array([[4.0, NAN], [NAN, 4.0]]),
    "upper triangle only": np.array([[4.0, NAN], [1.0, 4.0]]),
    "batched": np.stack([2 * np.eye(3), np.array([[4, 1, 0], [1, 4, NAN], [0, NAN, 4.0]])]),
}


def _outcome(lib, a, dtype):
    try:
        return "ok", np.round(lib.linalg.cholesky(lib.tensor(a, dtype=dtype)).numpy(), 5).tolist()
    except Exception as error:  # noqa: BLE001 - compared with PyTorch's
        return type(error).__name__, str(error)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_pivots_raise_as_in_pytorch(torch, name, dtype):
    a = CASES[name]
    ours = _outcome(ember, a, getattr(ember, dtype))
    theirs = _outcome(torch, a, getattr(torch, dtype))
    assert ours == theirs


def test_the_error_names_the_minor_without_torch():
    with pytest.raises(ember.linalg.LinAlgError, match="leading minor of order 2 is not"):
        ember.linalg.cholesky(ember.tensor(CASES["last pivot"]))
