"""``gcd``, ``lcm`` (and in-place), ``isreal`` against PyTorch: values, promotion,
broadcasting, signs and zeros, and the errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np

NO_DERIVATIVE = ("gcd", "lcm")

A = [12, -18, 0, 7, 0, -4]
B = [8, 4, 0, -21, 5, -6]


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "int64"), ("int16", "int8"),
                                    ("uint8", "uint8")])
def test_matches_torch(torch, name, dtypes):
    outs = []
    for lib in (ember, torch):
        a = lib.tensor(np.abs(A) if "uint8" in dtypes else A, dtype=getattr(lib, dtypes[0]))
        b = lib.tensor(np.abs(B) if "uint8" in dtypes else B, dtype=getattr(lib, dtypes[1]))
        r = getattr(lib, name)(a, b)
        bc = getattr(a.reshape(6, 1), name)(b[:3])
        c = a.clone()
        assert getattr(c, name + "_")(b) is c
        outs.append((to_np(r), str(r.dtype), to_np(bc), to_np(c)))
    for x, y in zip(*outs):
        np.testing.assert_array_equal(x, y)


def test_isreal_matches_torch(torch):
    for data in ([1 + 0j, 2 + 1j, -0j], [1.0, float("nan")], [1, 2], [True]):
        outs = [to_np(lib.isreal(lib.tensor(data))) for lib in (ember, torch)]
        np.testing.assert_array_equal(*outs)


ERRORS = [
    (NotImplementedError, lambda L: L.gcd(L.tensor([1.0]), L.tensor([2.0]))),
    (NotImplementedError, lambda L: L.lcm(L.tensor([True]), L.tensor([True]))),
    (NotImplementedError, lambda L: L.gcd(L.tensor([1]), L.tensor([2.0]))),
    (TypeError, lambda L: L.gcd(L.tensor([1]), 2)),
    (RuntimeError, lambda L: L.tensor([1], dtype=L.int32).gcd_(L.ones(2, 1).long())),
]


@pytest.mark.parametrize("kind,make", ERRORS)
def test_errors_match_torch(torch, kind, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(kind) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
