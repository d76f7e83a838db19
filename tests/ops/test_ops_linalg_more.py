"""``linalg.multi_dot``, ``linalg.vecdot``, ``linalg.matrix_rank`` against PyTorch: values,
grad_fns, gradients (finite differences, second order, PyTorch), and the errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import Spec, op_tests

SPECS = [
    Spec("multi_dot", lambda L, *ts: L.linalg.multi_dot(ts),
         [((2, 3), (3, 4), (4, 2)), ((3,), (3, 4), (4,)), ((5, 2), (2, 6), (6, 1), (1, 4))]),
    Spec("vecdot", lambda L, x, y: L.linalg.vecdot(x, y), [((3, 4), (4,)), ((2, 3), (2, 3))]),
    Spec("vecdot_dim", lambda L, x, y: L.linalg.vecdot(x, y, dim=0), [((3, 2), (3, 1))]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


@pytest.mark.parametrize("kwargs", [{}, dict(atol=0.5), dict(atol=0.5, rtol=0.1),
                                    dict(rtol=0.3), dict(hermitian=True), dict(tol=1e-3)])
def test_matrix_rank_matches_torch(torch, kwargs):
    rng = np.random.default_rng(0)
    low = rng.standard_normal((3, 5, 2)) @ rng.standard_normal((3, 2, 5))
    cases = [np.ones((3, 3)), np.eye(4) * np.array([1, 1e-9, 0.4, 2.0]), low,
             low + low.swapaxes(-1, -2), np.zeros((2, 0, 3))]
    for data in cases:
        if kwargs.get("hermitian") and data.shape[-1] != data.shape[-2]:
            continue
        for dtype in ("float32", "float64"):
            outs = [lib.linalg.matrix_rank(lib.tensor(data, dtype=getattr(lib, dtype)), **kwargs)
                    for lib in (ember, torch)]
            assert str(outs[0].dtype) == str(outs[1].dtype)
            np.testing.assert_array_equal(to_np(outs[0]), to_np(outs[1]))


ERRORS = [
    lambda L: L.linalg.multi_dot([L.ones(2, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 2, 2), L.ones(2, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2), L.ones(2, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(4, 2)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, dtype=L.float64)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2, dtype=L.int16)]),  # "short int"
    lambda L: L.linalg.multi_dot([L.ones(2, 2, dtype=L.bfloat16), L.ones(2, 2, dtype=L.int8)]),
    lambda L: L.linalg.vecdot(L.ones(2), L.ones(2, dtype=L.float64)),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(torch, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
