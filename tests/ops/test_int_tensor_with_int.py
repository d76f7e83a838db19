"""An integer tensor beside a Python int (index arithmetic such as ``data[i:i + 8]`` with a
tensor ``i``) takes a short path in ``ops/operands.py`` when its dtype holds the int: the
same dtypes, values and wrapping as PyTorch, in range, at the bounds and past them (where
the general path wraps modulo 2**bits), for every integer dtype and both operand orders."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import ember

DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
OPS = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
       operator.and_, operator.or_, operator.xor, operator.lt, operator.eq]


def _numbers(dtype):
    info = np.iinfo(dtype)
    return [0, 1, 3, -1, int(info.max), int(info.min), int(info.max) + 1, int(info.min) - 1,
            -7, 300]


@pytest.mark.parametrize("dtype", DTYPES)
def test_int_tensor_with_python_int_like_torch(torch, dtype):
    data = [0, 1, 5, 100, 7]
    for op in OPS:
        for number in _numbers(dtype):
            for swap in (False, True):
                results = []
                for lib in (ember, torch):
                    t = lib.tensor(data, dtype=getattr(lib, dtype))
                    try:
                        out = op(number, t) if swap else op(t, number)
                        results.append((str(out.dtype), out.tolist()))
                    except Exception as error:  # noqa: BLE001 - compared with torch's
                        results.append((type(error).__name__, None))
                assert results[0] == results[1], (op.__name__, number, swap, results)
