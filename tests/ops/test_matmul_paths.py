"""``ops/linalg/products._matmul``, the product behind mm/addmm/Linear: ``np.matmul`` for NumPy
matrices (the faster BLAS call), ``np.dot`` where the inner dimension is 1 (an outer product,
where NumPy's matmul leaves BLAS), the product of a stride-0 (expanded) operand computed once;
every layout and dtype against float64 products and PyTorch's Linear, forward and backward."""
import numpy as np
import pytest

import ember
from ember import _xp
from ember.ops.linalg.products import _matmul

from ..conftest import to_np

XP = _xp.NUMPY


def _layouts(rng, n, k, dtype):
    a = rng.standard_normal((n, k)).astype(dtype)
    return {"C": a, "F": np.asfortranarray(a), "strided": np.repeat(a, 2, axis=1)[:, ::2],
            "expanded": np.broadcast_to(a[:1], (n, k))}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int64])
@pytest.mark.parametrize("n, k, m", [(512, 192, 64), (512, 1, 64), (1, 192, 64), (7, 3, 1),
                                     (0, 4, 5), (4, 0, 5)])
def test_every_layout_is_the_product(dtype, n, k, m):
    rng = np.random.default_rng(0)
    for name_a, a in _layouts(rng, n, k, dtype).items():
        for name_b, b in _layouts(rng, k, m, dtype).items():
            got = _matmul(XP, a, b)
            want = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64) @ b
            assert got.dtype == np.dtype(dtype) and got.shape == (n, m)
            tol = 1e-5 * max(k, 1) if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10,
                                       err_msg=f"{name_a} @ {name_b}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(32, 16, 192), (512, 1), (1, 64), (3, 5)])
def test_linear_matches_pytorch(torch, dtype, shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal((27, shape[-1])), rng.standard_normal(27)
    g = rng.standard_normal(shape[:-1] + (27,))
    out = []
    for L in (ember, torch):
        ts = [L.tensor(a, dtype=getattr(L, dtype), requires_grad=True) for a in (x, w, b)]
        y = L.nn.functional.linear(*ts)
        (y * L.tensor(g, dtype=y.dtype)).sum().backward()
        out.append([to_np(y)] + [to_np(t.grad) for t in ts])
    tol = 1e-4 if dtype == "float32" else 1e-12
    for a, c in zip(*out):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol)
