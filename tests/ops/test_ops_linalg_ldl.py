"""``torch.linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve`` against PyTorch: the very
same factors and pivots (Bunch-Kaufman, 1 x 1 and 2 x 2 blocks), ``info``, solutions,
the missing derivative, and PyTorch's errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..oracle import same_error

torch = pytest.importorskip("torch")


def _symmetric_cases():
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 9))
        a = rng.standard_normal((n, n))
        a = a + a.T
        if seed % 3 == 0:  # small and zero pivots: interchanges and 2 x 2 blocks
            a[0, 0], a[n // 2, n // 2] = 0.0, 1e-3
        yield a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldl_matches_torch(dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    for a in _symmetric_cases():
        e, t = (lib.linalg.ldl_factor_ex(lib.tensor(a, dtype=getattr(lib, dtype)))
                for lib in (ember, torch))
        np.testing.assert_array_equal(to_np(e.pivots), to_np(t.pivots))
        assert str(e.pivots.dtype) == str(t.pivots.dtype) and int(e.info) == int(t.info)
        np.testing.assert_allclose(to_np(e.LD), to_np(t.LD), **tol)
        b = np.random.default_rng(0).standard_normal((a.shape[0], 2))
        xe = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b, dtype=e.LD.dtype))
        xt = torch.linalg.ldl_solve(t.LD, t.pivots, torch.tensor(b, dtype=t.LD.dtype))
        np.testing.assert_allclose(to_np(xe), to_np(xt), **tol)


def test_ldl_batched_matches_torch_and_broadcasts():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5, 5))
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((2, 5, 2))
    outs = []
    for lib in (ember, torch):
        LD, pivots = lib.linalg.ldl_factor(lib.tensor(a))
        outs.append((LD, pivots, lib.linalg.ldl_solve(LD, pivots, lib.tensor(b))))
    for e, t in zip(*outs):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(to_np(e), to_np(t), rtol=1e-9, atol=1e-11)
    # broadcasting batch dims (PyTorch 2.13 crashes on it: compared with ember's own loop)
    LD, pivots = outs[0][:2]
    rhs = ember.tensor(rng.standard_normal((3, 1, 5, 2)))
    got = ember.linalg.ldl_solve(LD, pivots, rhs)
    assert tuple(got.shape) == (3, 2, 5, 2)
    for i in range(3):
        for j in range(2):
            np.testing.assert_allclose(to_np(got[i, j]),
                                       to_np(ember.linalg.ldl_solve(LD[j], pivots[j], rhs[i, 0])))


# ops without a derivative (tests/ops/test_core_ops.py: test_every_op_without_derivative...)
NO_DERIVATIVE = {
    "linalg_ldl_factor_ex": lambda L, a: L.linalg.ldl_factor(a @ a.mT).LD,
    "linalg_ldl_solve": lambda L, a: L.linalg.ldl_solve(
        *L.linalg.ldl_factor((a @ a.mT).detach()), a),
}


@pytest.mark.parametrize("name", sorted(NO_DERIVATIVE))
def test_no_derivative_node_like_torch(name):
    a = np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)
    e, t = (NO_DERIVATIVE[name](lib, lib.tensor(a, requires_grad=True)) for lib in (ember, torch))
    assert e.requires_grad and t.requires_grad
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "NotImplemented"
    np.testing.assert_allclose(to_np(e), to_np(t), rtol=1e-10)


def test_no_derivative_like_torch():
    """PyTorch's factors and solutions require grad but have no derivative: so ember's."""
    for lib in (ember, torch):
        a = lib.tensor([[4.0, 1.0], [1.0, -3.0]], requires_grad=True)
        LD, pivots = lib.linalg.ldl_factor(a)
        assert LD.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is "
                                               "not implemented"):
            LD.sum().backward()
        x = lib.linalg.ldl_solve(LD.detach(), pivots, lib.ones(2, 1, requires_grad=True))
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not "
                                               "implemented"):
            x.sum().backward()


def test_singular_is_reported():
    e = ember.linalg.ldl_factor_ex(ember.zeros(3, 3))
    t = torch.linalg.ldl_factor_ex(torch.zeros(3, 3))
    assert int(e.info) == int(t.info) == 1
    np.testing.assert_array_equal(to_np(e.pivots), to_np(t.pivots))
    # (PyTorch 2.13 raises an internal assertion for it; ember says what is wrong)
    with pytest.raises(RuntimeError, match="singular"):
        ember.linalg.ldl_factor(ember.zeros(3, 3))


ERRORS = [
    lambda L: L.linalg.ldl_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32), L.ones(3)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32),
                                 L.ones(3, 1, dtype=L.float64)),
    lambda L: L.linalg.ldl_solve(L.ones(2, 3), L.tensor([1, 2], dtype=L.int32), L.ones(2, 1)),
    lambda L: L.linalg.ldl_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32), L.ones(2, 1)),
    lambda L: L.linalg.ldl_factor(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.ldl_factor(L.ones(3)),
    lambda L: L.linalg.ldl_factor_ex(L.ones(2, 3)),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    same_error(make, torch)
